"""Shader loading (includes, compile errors that name file and line) and WGSL-derived layouts."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx import layout, wgsl
from emberfx.errors import ShaderError


@pytest.fixture
def fake_shaders(monkeypatch):
    files = {}
    real = wgsl.read_text

    def read_text(name):
        return files[name] if name in files else real(name)

    monkeypatch.setattr(wgsl, "read_text", read_text)
    wgsl.load.cache_clear()
    layout.struct_dtype.cache_clear()
    yield files
    wgsl.load.cache_clear()
    layout.struct_dtype.cache_clear()


def test_includes_expand_once_and_remember_origins(fake_shaders):
    fake_shaders["t/a.wgsl"] = "// a\n//! include t/b.wgsl\n//! include t/b.wgsl\nfn a() {}\n"
    fake_shaders["t/b.wgsl"] = "// b\nfn b() {}\n"
    src = wgsl.load("t/a.wgsl")
    assert src.code.count("fn b()") == 1
    line = src.code.splitlines().index("fn a() {}") + 1
    assert src.origin(line) == ("t/a.wgsl", 4)
    assert src.origin(src.code.splitlines().index("fn b() {}") + 1) == ("t/b.wgsl", 2)


def test_include_cycle_is_reported(fake_shaders):
    fake_shaders["t/x.wgsl"] = "//! include t/y.wgsl\n"
    fake_shaders["t/y.wgsl"] = "//! include t/x.wgsl\n"
    with pytest.raises(ShaderError, match="include cycle"):
        wgsl.load("t/x.wgsl")


def test_compile_error_names_the_included_file_and_line(gpu, fake_shaders):
    fake_shaders["t/main.wgsl"] = ("// header\n//! include t/lib.wgsl\n"
                                   "@compute @workgroup_size(1) fn main() { let v = helper(); }\n")
    fake_shaders["t/lib.wgsl"] = "// lib\n\nfn helper() -> u32 {\n    return 1u\n}\n"
    with pytest.raises(ShaderError) as info:
        wgsl.create_module(gpu.device, "t/main.wgsl")
    message = str(info.value)
    assert message.startswith("shaders/t/lib.wgsl:5:1:") or message.startswith("shaders/t/lib.wgsl:4:")
    assert "expected" in message and "\n" not in message


def test_missing_shader_file_is_a_shader_error():
    with pytest.raises(ShaderError, match="not found: shaders/nope/missing.wgsl"):
        wgsl.load("nope/missing.wgsl")


def test_every_shipped_shader_compiles_and_opens_with_a_header(gpu):
    import importlib.resources

    root = importlib.resources.files("emberfx.shaders")
    names = sorted(f"{d.name}/{f.name}" for d in root.iterdir() if d.is_dir()
                   for f in d.iterdir() if f.name.endswith(".wgsl"))
    assert "emitter/update.wgsl" in names and "common/random.wgsl" in names
    for name in names:
        assert wgsl.read_text(name).startswith("// "), name
        wgsl.create_module(gpu.device, name)


def test_layout_follows_wgsl_alignment_rules(fake_shaders):
    fake_shaders["t/s.wgsl"] = """
    struct Inner { a: vec2f, b: u32, };
    struct S {
        x: f32,            // 0
        v: vec3f,          // 16 (vec3 aligns to 16)
        y: f32,            // 28 (fills the vec3's tail)
        inner: Inner,      // 32 (align 8, size 16)
        m: mat4x4f,        // 48
        list: array<vec4<f32>, 3>, // 112
        count: atomic<u32>, // 160
    };"""
    dt = layout.struct_dtype("t/s.wgsl", "S")
    offsets = {name: dt.fields[name][1] for name in dt.names}
    assert offsets == {"x": 0, "v": 16, "y": 28, "inner": 32, "m": 48, "list": 112, "count": 160}
    assert dt.itemsize == 176                      # rounded up to the struct's 16-byte alignment


def test_layout_matches_what_the_gpu_writes(gpu, fake_shaders):
    """A shader fills the emitter's Particle struct; the WGSL-derived dtype reads it back."""
    assert layout.struct_dtype("emitter/types.wgsl", "Particle").itemsize == 32
    device = gpu.device
    fake_shaders["t/fill.wgsl"] = """// test
//! include common/random.wgsl
//! include emitter/types.wgsl
@group(0) @binding(0) var<storage, read_write> out: array<Particle>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
    if (g.x >= arrayLength(&out)) { return; }
    let f = f32(g.x);
    out[g.x] = Particle(vec4f(f, f + 0.5, -f, 2.0 * f), vec4f(vec3f(1.0, 2.0, 3.0) * f, f + 0.25));
}"""
    module = wgsl.create_module(device, "t/fill.wgsl")
    pipe = device.create_compute_pipeline(layout="auto",
                                          compute={"module": module, "entry_point": "main"})
    particle = layout.struct_dtype("emitter/types.wgsl", "Particle")
    n = 77
    buf = device.create_buffer(size=n * particle.itemsize,
                               usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    group = device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}])
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipe)
    cp.set_bind_group(0, group)
    cp.dispatch_workgroups(2)
    cp.end()
    device.queue.submit([enc.finish()])
    rows = np.frombuffer(device.queue.read_buffer(buf), particle)
    f = np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(rows["position_age"], np.stack([f, f + 0.5, -f, 2 * f], axis=1))
    np.testing.assert_array_equal(rows["velocity_lifetime"][:, :3],
                                  f[:, None] * np.float32([1, 2, 3]))
    np.testing.assert_array_equal(rows["velocity_lifetime"][:, 3], f + 0.25)
