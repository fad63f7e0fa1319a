"""Shader loading (includes, compile errors that name file and line) and WGSL-derived layouts."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.core import layout, wgsl
from emberfx.core.errors import ShaderError

# the shaders as the engine loads them: the emitter family registers the generated parts its
# shipped shaders include (the neighbour query in bind group 2) when it is imported
from emberfx.systems.emitter import neighbours_feature  # noqa: F401


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
    assert (message.startswith("shaders/t/lib.wgsl:5:1:")
            or message.startswith("shaders/t/lib.wgsl:4:"))
    assert "expected" in message and "\n" not in message


def test_missing_shader_file_is_a_shader_error():
    with pytest.raises(ShaderError, match="not found: shaders/nope/missing.wgsl"):
        wgsl.load("nope/missing.wgsl")


def test_every_shipped_shader_compiles_and_opens_with_a_header(gpu):
    """Each pass compiles; a part that calls what its passes define (its header says it has
    "no pass of its own") is included by a shipped shader, or swapped in "in place of" a part
    that is (wgsl.derive: a feature's variant of a pass)."""
    import importlib.resources
    import re

    root = importlib.resources.files("emberfx.shaders")
    names = sorted(f"{d.name}/{f.name}" for d in root.iterdir() if d.is_dir()
                   for f in d.iterdir() if f.name.endswith(".wgsl"))
    assert "emitter/update.wgsl" in names and "common/random.wgsl" in names
    texts = {name: wgsl.read_text(name) for name in names}
    for name in names:
        assert texts[name].startswith("// "), name
        try:
            wgsl.create_module(gpu.device, name)
        except ShaderError as exc:
            header = " ".join(line.lstrip("/ ") for line in
                              texts[name].split("\n\n", 1)[0].splitlines())
            replaced = re.findall(r"in place of (emitter/\w+\.wgsl|common/\w+\.wgsl)", header,
                                  re.I)
            includers = [other for other, text in texts.items()
                         for part in (name, *replaced)
                         if re.search(rf"^//! include {re.escape(part)}$", text, re.M)]
            assert "no pass of its own" in header and includers, f"{name}: {exc}"
            assert "no definition in scope" in str(exc), f"{name}: {exc}"


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


# Offsets worked out by hand from WGSL's layout rules: six vec4f (16 bytes each), then two vec2f
# (align 8) and twenty-two 4-byte scalars (to 200 bytes), then the padding array of three vec4u
# at the next 16-byte boundary (208): 256 bytes, one record of a batch's arena.
EMITTER_PARAMS_OFFSETS = {
    "origin": 0, "direction": 16, "gravity": 32, "inherit": 48, "shape_size": 64, "shape": 80,
    "speed_range": 96, "lifetime_range": 104, "capacity": 112, "budget": 116, "frame": 120,
    "seed": 124, "entity": 128, "block_count": 132, "h": 136, "size": 140, "shape_kind": 144,
    "shape_surface": 148, "radial": 152, "size_in_pixels": 156, "substeps": 160,
    "force_count": 164, "accelerate_end": 168, "kill_start": 172, "age_event_rate": 176,
    "time": 180, "first_block": 184, "alive_base": 188, "batch_blocks": 192, "force_base": 196,
    "shape_x": 208, "shape_y": 224, "shape_z": 240}
# A struct with real padding: a u32 in a vec3f's tail, vec2f at 8-byte alignment, and 8 bytes of
# tail padding (40 -> 48) that an array stride must include.
TAIL_WGSL = "// test\nstruct Tail { a: vec3f, t: u32, b: vec2f, c: u32, d: vec2f, };\n"
TAIL_OFFSETS = {"a": 0, "t": 12, "b": 16, "c": 24, "d": 32}


def marker(row: int, field: int, component: int) -> int:
    """A value unique to (row, field, component), exact in f32, so a misplaced field shows."""
    return row * 1000 + field * 10 + component


def _scalar_shape(field: np.dtype) -> tuple[np.dtype, tuple[int, ...]]:
    """A field's scalar type and full shape (an array of vec4u: (3, 4))."""
    shape: tuple[int, ...] = ()
    while field.subdtype is not None:
        field, inner = field.subdtype
        shape += inner
    return field, shape


def round_trip_shader(struct: str, include: str, dtype: np.dtype) -> str:
    """WGSL that (1) writes every row of `out` with marker values + 0.5 (f32) or + 5 (u32), and
    (2) copies every field component of the host-packed `inp` rows and of the uniform `one` into
    a flat u32 list, in declaration order."""
    assert dtype.names is not None and dtype.fields is not None   # a struct dtype
    build, copy, flat = [], [], 0
    for k, name in enumerate(dtype.names):
        base, shape = _scalar_shape(dtype.fields[name][0])
        kind, extra = ("f32", "0.5") if base == np.float32 else ("u32", "5u")
        cells = list(np.ndindex(shape)) if shape else [()]
        items = [f"{kind}(i * 1000u + {marker(0, k, c)}u) + {extra}" for c in range(len(cells))]
        if len(shape) == 2:   # an array of vectors (a padding array)
            rows, width = shape
            vectors = [f"vec{width}<{kind}>({', '.join(items[r * width:(r + 1) * width])})"
                       for r in range(rows)]
            build.append(f"array<vec{width}<{kind}>, {rows}>({', '.join(vectors)})")
        else:
            build.append(f"vec{shape[0]}<{kind}>({', '.join(items)})" if shape else items[0])
        for cell in cells:
            access = f".{name}" + "".join(f"[{c}]" for c in cell)
            copy.append(f"flat[i * COUNT + {flat}u] = u32(src{access});")
            flat += 1
    body = "\n        ".join(copy)
    return f"""// test: {struct} written by the GPU and read by it from host-packed bytes
//! include {include}
const COUNT: u32 = {flat}u;
@group(0) @binding(0) var<storage, read> inp: array<{struct}>;
@group(0) @binding(1) var<storage, read_write> out: array<{struct}>;
@group(0) @binding(2) var<storage, read_write> flat: array<u32>;
@group(0) @binding(3) var<uniform> one: {struct};
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {{
    let i = g.x;
    if (i > arrayLength(&inp)) {{ return; }}
    if (i < arrayLength(&inp)) {{
        out[i] = {struct}({', '.join(build)});
        let src = inp[i];
        {body}
    }} else {{
        let src = one;
        {body}
    }}
}}"""


def check_round_trip(device, dtype: np.dtype, shader: str, n: int = 77) -> None:
    assert dtype.names is not None and dtype.fields is not None   # a struct dtype
    pipe = device.create_compute_pipeline(layout="auto", compute={
        "module": wgsl.create_module(device, shader), "entry_point": "main"})
    usage = wgpu.BufferUsage
    rows = np.zeros(n + 1, dtype)             # row n goes to the uniform
    expected_flat = []
    for i in range(n + 1):
        for k, name in enumerate(dtype.names):
            shape = _scalar_shape(dtype.fields[name][0])[1]
            values = [marker(i, k, c) for c in range(int(np.prod(shape)))]
            rows[i][name] = np.reshape(values, shape) if shape else values[0]
            expected_flat += values
    inp = device.create_buffer_with_data(data=rows[:n].tobytes(), usage=usage.STORAGE)
    one = device.create_buffer_with_data(data=rows[n:].tobytes(), usage=usage.UNIFORM)
    out = device.create_buffer(size=n * dtype.itemsize, usage=usage.STORAGE | usage.COPY_SRC)
    flat = device.create_buffer(size=len(expected_flat) * 4, usage=usage.STORAGE | usage.COPY_SRC)
    group = device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": b, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        for b, buf in enumerate((inp, out, flat, one))])
    enc = device.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipe)
    cp.set_bind_group(0, group)
    cp.dispatch_workgroups((n + 1 + 63) // 64)
    cp.end()
    device.queue.submit([enc.finish()])
    # host -> GPU: every field component landed where the shader's declaration reads it
    np.testing.assert_array_equal(np.frombuffer(device.queue.read_buffer(flat), np.uint32),
                                  np.array(expected_flat, np.uint32))
    # GPU -> host: the dtype reads each field the shader wrote, fractions included
    written = np.frombuffer(device.queue.read_buffer(out), dtype)
    for k, name in enumerate(dtype.names):
        base, shape = _scalar_shape(dtype.fields[name][0])
        width = int(np.prod(shape))
        want = np.array([[marker(i, k, c) for c in range(width)] for i in range(n)], np.float64)
        want += 0.5 if base == np.float32 else 5
        got = written[name].reshape(n, width).astype(np.float64)
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_emitter_params_layout_matches_the_gpu_both_ways(gpu, fake_shaders):
    """EmitterParams (vec4f block, vec2f pair, u32/f32 tail): hand offsets, then the GPU reads
    host-packed rows (storage array and uniform) and writes rows the dtype reads back."""
    params = layout.struct_dtype("emitter/types.wgsl", "EmitterParams")
    assert {name: params.fields[name][1] for name in params.names} == EMITTER_PARAMS_OFFSETS
    assert params.itemsize == 256
    fake_shaders["t/params.wgsl"] = round_trip_shader("EmitterParams", "emitter/types.wgsl", params)
    check_round_trip(gpu.device, params, "t/params.wgsl")


def test_padded_struct_layout_matches_the_gpu_both_ways(gpu, fake_shaders):
    fake_shaders["t/tail.wgsl"] = TAIL_WGSL
    tail = layout.struct_dtype("t/tail.wgsl", "Tail")
    assert {name: tail.fields[name][1] for name in tail.names} == TAIL_OFFSETS
    assert tail.itemsize == 48                # 40 bytes of fields, rounded to the 16-byte alignment
    fake_shaders["t/tail_trip.wgsl"] = round_trip_shader("Tail", "t/tail.wgsl", tail)
    check_round_trip(gpu.device, tail, "t/tail_trip.wgsl")


def test_field_packer_writes_what_numpy_assigns(fake_shaders):
    """FieldPacker (struct.pack_into per run of adjacent fields) against numpy's field-by-field
    assignment: random values in fields chosen with gaps between them, vectors and scalars of
    each kind, the other fields left as they were; a float past float32's range takes numpy's
    infinity and an integer out of range numpy's error."""
    fake_shaders["t/p.wgsl"] = """
    struct P { a: vec4f, n: u32, k: i32, x: f32, skip: u32, v: vec2f, m: u32, tail: vec4u, };"""
    dtype = layout.struct_dtype("t/p.wgsl", "P")
    names = ("a", "n", "k", "x", "v", "m")
    packer = layout.FieldPacker(dtype, names)
    assert [offset for offset, _, _ in packer.runs] == [0, 32]   # "skip" splits the runs
    rng = np.random.default_rng(3)
    for _ in range(50):
        values = {"a": tuple(rng.normal(size=4) * 1e3), "n": int(rng.integers(0, 2**32)),
                  "k": int(rng.integers(-2**31, 2**31)), "x": float(rng.normal()),
                  "v": tuple(rng.normal(size=2)), "m": int(rng.integers(0, 2**32))}
        ours, theirs = np.zeros(3, dtype), np.zeros(3, dtype)
        for records in (ours, theirs):
            records["skip"], records["tail"] = 7, 9
        packer.pack(layout.record_view(ours, 1), values)
        for name, value in values.items():
            theirs[1][name] = value
        assert ours.tobytes() == theirs.tobytes()
    record = layout.record_view(ours, 2)
    with np.errstate(over="ignore"):
        packer.pack(record, {**values, "x": 1e300})
    assert np.isinf(ours[2]["x"]) and ours[2]["n"] == values["n"]
    with pytest.raises(OverflowError):
        packer.pack(record, {**values, "m": 2**32})
