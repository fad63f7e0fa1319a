"""The named-binding core on the real device: runtime/core/bindings.py (bind groups from the WGSL's
declarations, reads and writes from their access modes, variants picked at encode time),
runtime/core/resources.py (names, views, release by owner and family) and wgsl.bindings, checked
with the project's own shaders and dispatches whose results are read back."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.core import wgsl
from emberfx.core.bindings import BindingError, PassBuilder, bind
from emberfx.core.errors import EmberError, FrameGraphError
from emberfx.core.frame_graph import FrameGraph, Phase
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.readback import read_array
from emberfx.core.resources import VIEW_ALIGNMENT, ResourceError, Resources

COPY = "bench/copy.wgsl"        # src: storage read; dst: storage read_write; 256 vec4f per group
TONEMAP = "post/tonemap.wgsl"   # settings: uniform; source: sampled; output_image: storage write
STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST


@pytest.fixture
def resources(gpu):
    """A registry of its own (outside any Engine), released after the test."""
    registry = Resources(gpu)
    yield registry
    registry.release_all()


@pytest.fixture
def build(gpu, resources):
    return PassBuilder(gpu, resources)


def filled(resources, owner: str, key: str, values: np.ndarray, **kw):
    view = resources.buffer(owner, key, values.nbytes, STORAGE, **kw)
    resources.write(view, values.tobytes())
    return view


def run(gpu, passes, uploaded) -> None:
    encoder = gpu.device.create_command_encoder()
    FrameGraph(passes, uploaded).encode(encoder, {})
    gpu.device.queue.submit([encoder.finish()])


def hdr_texture(resources, owner: str, key: str, usage: int):
    return resources.texture(owner, key, size=(8, 8), format="rgba16float", usage=usage)


# ------------------------------------------------------------------------------ refused bindings
def test_a_missing_binding_is_refused_with_its_name(build, resources):
    src = resources.buffer("t", "src", 64, STORAGE)
    with pytest.raises(BindingError) as info:
        build.compute("t:copy", Phase.SIMULATE, COPY, (1, 1, 1), {"src": src})
    message = str(info.value)
    assert "\n" not in message and "'t:copy'" in message and "'dst'" in message
    assert "shaders/bench/copy.wgsl" in message


def test_an_unknown_binding_is_refused_with_a_did_you_mean(build, resources):
    src, dst = (resources.buffer("t", k, 64, STORAGE) for k in ("src", "dst"))
    with pytest.raises(BindingError) as info:
        build.compute("t:copy", Phase.SIMULATE, COPY, (1, 1, 1), {"src": src, "dest": dst})
    message = str(info.value)
    assert "\n" not in message
    assert "no binding 'dest'" in message and "did you mean 'dst'?" in message


def test_a_buffer_given_to_a_texture_binding_is_refused(build, resources):
    usage = wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.TEXTURE_BINDING
    settings = resources.buffer("t", "settings", 16, wgpu.BufferUsage.UNIFORM)
    out = hdr_texture(resources, "t", "out", usage)
    resources.buffer("t", "pixels", 8 * 8 * 8, STORAGE)
    with pytest.raises(BindingError) as info:
        build.compute("t:tonemap", Phase.POST, TONEMAP, (1, 1, 1),
                      {"settings": settings, "source": "t/pixels", "output_image": out})
    message = str(info.value)
    assert "\n" not in message and "binding 'source'" in message
    assert "texture_2d<f32>" in message and "BufferView 't/pixels'" in message
    assert isinstance(info.value, EmberError)   # a user mistake: one line, no traceback


def test_a_name_the_registry_lacks_is_refused_with_a_did_you_mean(build, resources):
    resources.buffer("t", "src", 64, STORAGE)
    resources.buffer("t", "dst", 64, STORAGE)
    with pytest.raises(ResourceError, match=r"no GPU resource named 't/srx'; did you mean "
                                            r"'t/src'\?"):
        build.compute("t:copy", Phase.SIMULATE, COPY, (1, 1, 1), {"src": "t/srx", "dst": "t/dst"})


# ------------------------------------------------------------------------ reads and writes
def test_the_declarations_give_kind_and_access():
    copy, tone = wgsl.bindings(COPY), wgsl.bindings(TONEMAP)
    assert [(b.name, b.group, b.index, b.kind, b.access) for b in copy.values()] == [
        ("src", 0, 0, "storage", "read"), ("dst", 0, 1, "storage", "read_write")]
    assert [(b.name, b.kind, b.reads, b.writes) for b in tone.values()] == [
        ("settings", "uniform", True, False), ("source", "texture", True, False),
        ("output_image", "storage-texture", False, True)]


def test_reads_and_writes_come_from_the_access_modes(build, resources):
    src, dst = (resources.buffer("t", k, 64, STORAGE) for k in ("src", "dst"))
    copy = build.compute("t:copy", Phase.SIMULATE, COPY, (1, 1, 1), {"src": src, "dst": dst})
    assert (copy.reads, copy.writes) == (("t/src", "t/dst"), ("t/dst",))   # read; read_write
    usage = wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.TEXTURE_BINDING
    settings = resources.buffer("t", "settings", 16, wgpu.BufferUsage.UNIFORM)
    image, out = (hdr_texture(resources, "t", k, usage) for k in ("image", "out"))
    tone = build.compute("t:tonemap", Phase.POST, TONEMAP, (1, 1, 1),
                         {"settings": settings, "source": image, "output_image": out})
    # uniform and sampled texture: read; write-only storage texture: written, not read
    assert (tone.reads, tone.writes) == (("t/settings", "t/image"), ("t/out",))


def test_a_draw_reads_its_sampled_texture_and_writes_its_target(gpu, build, resources):
    usage = wgpu.TextureUsage.TEXTURE_BINDING
    hdr_texture(resources, "t", "image", usage)
    shader = "frame/present.wgsl"
    pipeline = render_pipeline(gpu.device, RenderKey(shader, "rgba8unorm-srgb"))
    draw = build.draw("t:present", shader, pipeline, {"scene": "t/image"}, target="output")
    assert (draw.reads, draw.writes) == (("t/image",), ("output/color",))


# ----------------------------------------------------------------------------- variants and pick
def test_pick_chooses_the_variant_when_the_frame_is_encoded(gpu, build, resources):
    n = 512   # vec4f elements: two workgroups
    a = filled(resources, "t", "a", np.arange(4 * n, dtype=np.float32))
    b = filled(resources, "t", "b", -np.arange(4 * n, dtype=np.float32) - 1)
    out = resources.buffer("t", "out", 16 * n, STORAGE)
    chosen = {"variant": 0}
    copy = build.compute("t:copy", Phase.SIMULATE, COPY, (2, 1, 1),
                         [{"src": a, "dst": out}, {"src": b, "dst": out}],
                         pick=lambda: chosen["variant"])
    assert set(copy.reads) == {"t/a", "t/b", "t/out"} and copy.writes == ("t/out",)
    graph = FrameGraph([copy], resources.persistent())
    for variant, expected in ((0, a), (1, b), (0, a)):
        chosen["variant"] = variant   # the same graph: the choice is made while encoding
        encoder = gpu.device.create_command_encoder()
        graph.encode(encoder, {})
        gpu.device.queue.submit([encoder.finish()])
        np.testing.assert_array_equal(read_array(gpu.device, out, np.float32),
                                      read_array(gpu.device, expected, np.float32))


def test_a_repeated_dispatch_picks_a_variant_per_repeat(gpu, build, resources):
    n = 256
    src = filled(resources, "t", "src", np.arange(1, 4 * n + 1, dtype=np.float32))
    outs = [resources.buffer("t", f"out{i}", 16 * n, STORAGE) for i in range(3)]
    copy = build.compute("t:copy", Phase.SIMULATE, COPY, (1, 1, 1),
                         [{"src": src, "dst": o} for o in outs], repeat=2,
                         pick=lambda k: (k + 1) % 3)   # repeats 0, 1 -> variants 1, 2
    run(gpu, [copy], resources.persistent())
    sums = [read_array(gpu.device, o, np.float32).sum() for o in outs]
    total = float(np.arange(1, 4 * n + 1).sum())
    assert sums == [0.0, total, total]


# ----------------------------------------------------------------------------------- views
def test_a_view_must_start_at_an_aligned_offset(resources):
    resources.buffer("t", "arena", 4096, STORAGE)
    with pytest.raises(ResourceError, match=r"multiple of 256, found 100"):
        resources.view("t/arena", "slice", 100, 512)
    assert "t/slice" not in resources


@pytest.mark.parametrize("offset,size", [(3840, 512), (4096, 16), (0, 4097), (256, 0)])
def test_a_view_beyond_its_buffer_is_refused(resources, offset, size):
    resources.buffer("t", "arena", 4096, STORAGE)
    with pytest.raises(ResourceError, match=r"do not fit in its 4096 bytes"):
        resources.view("t/arena", "slice", offset, size)
    assert "t/slice" not in resources


def test_a_view_binding_writes_at_its_offset_in_the_arena(gpu, build, resources):
    n, offset = 64, 6 * VIEW_ALIGNMENT   # 64 vec4f = 1024 bytes at byte 1536 of 4096
    source = filled(resources, "t", "src", np.arange(1, 4 * n + 1, dtype=np.float32))
    arena = resources.buffer("t", "arena", 4096, STORAGE)
    view = resources.view("t/arena", "slice", offset, 16 * n)
    copy = build.compute("t:copy", Phase.SIMULATE, COPY, (1, 1, 1), {"src": source,
                                                                       "dst": "t/slice"})
    assert copy.writes == ("t/slice",)
    run(gpu, [copy], resources.persistent())
    whole = read_array(gpu.device, arena, np.float32)
    expected = np.zeros(4096 // 4, np.float32)
    expected[offset // 4: offset // 4 + 4 * n] = np.arange(1, 4 * n + 1)
    np.testing.assert_array_equal(whole, expected)
    np.testing.assert_array_equal(read_array(gpu.device, view, np.float32), expected[
        offset // 4: offset // 4 + 4 * n])


def test_a_write_to_a_view_lands_at_its_offset(gpu, resources):
    arena = resources.buffer("t", "arena", 1024, STORAGE)
    view = resources.view("t/arena", "slice", 512, 256)
    resources.write(view, np.full(4, 7, np.uint32).tobytes(), offset=16)
    words = read_array(gpu.device, arena, np.uint32)
    assert np.flatnonzero(words).tolist() == [132, 133, 134, 135] and words[132] == 7


# -------------------------------------------------------------------------------- releasing
def test_release_of_an_owner_and_family_removes_only_those_names(gpu, resources):
    resources.buffer("e", "params", 64, STORAGE, family="emitter")
    resources.buffer("e", "arena", 1024, STORAGE, family="emitter")
    resources.view("e/arena", "particles", 256, 512)
    kept = filled(resources, "e", "ring", np.arange(16, dtype=np.uint32), family="trail")
    resources.buffer("f", "params", 64, STORAGE, family="emitter")
    frame = gpu.device.create_buffer(size=64, usage=wgpu.BufferUsage.UNIFORM)
    resources.adopt("frame", frame)   # the Engine's own: no entity's release takes it
    resources.release("e", "emitter")
    assert sorted(resources.names()) == ["e/ring", "f/params", "frame"]
    # what stays still works: written and read back after its neighbours were destroyed
    np.testing.assert_array_equal(read_array(gpu.device, kept, np.uint32), np.arange(16))
    resources.release("e", "emitter")   # what is gone already: nothing happens
    resources.release("e")
    assert sorted(resources.names()) == ["f/params", "frame"]
    frame.destroy()


def test_a_taken_name_is_refused(resources):
    resources.buffer("e", "params", 64, STORAGE, family="emitter")
    with pytest.raises(ResourceError, match=r"'e/params' exists already"):
        resources.buffer("e", "params", 64, STORAGE, family="trail")


# ------------------------------------------------------------------------------ frame graph
def test_a_frame_resource_read_before_any_writer_is_refused(gpu, build, resources):
    scratch = resources.buffer("t", "scratch", 4096, STORAGE, persistent=False)
    out = resources.buffer("t", "out", 4096, STORAGE)
    copy = build.compute("t:copy", Phase.SIMULATE, COPY, (1, 1, 1),
                         {"src": scratch, "dst": out})
    assert resources.persistent() == {"t/out"}
    with pytest.raises(FrameGraphError, match=r"pass 't:copy' reads 't/scratch' but no earlier "
                                              r"pass writes it"):
        FrameGraph([copy], resources.persistent())
    # written earlier in the frame (a clear in an earlier phase): accepted, and run
    clear = build.clear("t:clear", Phase.CLEAR, scratch)
    graph = FrameGraph([copy, clear], resources.persistent())
    assert graph.names() == ["t:clear", "t:copy"]


def test_bind_gives_named_groups_for_code_outside_passes(gpu, resources):
    a = filled(resources, "t", "a", np.full(1024, 3, np.float32))
    out = resources.buffer("t", "out", 4096, STORAGE)
    groups = bind(gpu, resources, "t:copy", COPY, {"src": a, "dst": out})
    assert (groups.reads, groups.writes) == (("t/a", "t/out"), ("t/out",))
    gpu.dispatch_now("t:copy", gpu.compute_pipeline(COPY), groups.group(0), (1, 1, 1))
    assert read_array(gpu.device, out, np.float32).tolist() == [3.0] * 1024
