"""The READBACK phase's gather (runtime/engine/gather.py, shaders/frame/gather.wgsl): regions of
ragged sizes and offsets in many buffers land in the gather buffer exactly where the layout puts
them, checked against numpy slicing of the same bytes; more buffers than the shader's source
bindings, or more regions than its table, split into further passes; and an engine with many
lone emitters reads every emitter's counters back right."""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx.core.frame_graph import FrameGraph
from emberfx.core.readback import GatherLayout, read_buffer
from emberfx.core.resources import Resources
from emberfx.core.system import Readback
from emberfx.engine.gather import MAX_REGIONS, SOURCES, _Chunk, gather_passes

STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC


def _buffers(gpu, rng, count: int, words: int):
    """``count`` buffers of random words, with their contents."""
    out = []
    for _ in range(count):
        data = rng.integers(0, 2**32, words, dtype=np.uint32)
        out.append((gpu.device.create_buffer_with_data(data=data.tobytes(), usage=STORAGE), data))
    return out


def _gathered(gpu, regions: list[tuple[str, Readback]]):
    """Run the gather passes of ``regions`` ((entity, Readback)); the gather buffer's words, the
    layout and the passes."""
    layout = GatherLayout()
    for entity, region in regions:
        layout.add(entity, [region])
    gather = gpu.device.create_buffer(size=max(256, layout.end),
                                      usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    passes = gather_passes(gpu, Resources(gpu), layout, gather)
    encoder = gpu.device.create_command_encoder()
    FrameGraph(passes, uploaded={r for p in passes for r in p.reads}).encode(encoder, {})
    gpu.device.queue.submit([encoder.finish()])
    words = np.frombuffer(read_buffer(gpu.device, gather, gather.size), np.uint32)
    return words, layout, passes


def _expected(layout: GatherLayout, contents: dict[int, np.ndarray], size: int) -> np.ndarray:
    out = np.zeros(size // 4, np.uint32)
    for region, at in layout:
        words = contents[id(region.buffer)][region.offset // 4:(region.offset + region.size) // 4]
        out[at // 4:at // 4 + len(words)] = words
    return out


def test_ragged_regions_of_many_buffers_land_where_the_layout_says(gpu):
    rng = np.random.default_rng(7)
    buffers = _buffers(gpu, rng, len(SOURCES) + 3, 1024)   # more buffers than source bindings
    contents = {id(b): data for b, data in buffers}
    # (buffer, byte offset, bytes): one word, a 36-byte record at an offset off every alignment,
    # a region longer than a workgroup's 64 lanes, two regions of one buffer far apart, and an
    # empty region (nothing to copy)
    shapes = [(0, 4, 4), (1, 260, 36), (2, 1028, 300 * 4), (3, 0, 64), (3, 3000, 12),
              (4, 512, 0), (5, 16, 128), (6, 4092, 4), (7, 8, 8), (8, 256, 256), (9, 100, 40)]
    regions = [(f"e{k}", Readback(f"e{k}", "test", f"e{k}/counters", buffers[b][0], offset, size))
               for k, (b, offset, size) in enumerate(shapes)]
    words, layout, passes = _gathered(gpu, regions)
    np.testing.assert_array_equal(words, _expected(layout, contents, len(words) * 4))
    # ten buffers hold regions: the first pass binds as many as it may, the second the rest
    assert len(passes) == 2
    assert [p.name for p in passes] == ["scene:frame:readback", "scene:frame:readback1"]
    assert {r for p in passes for r in p.reads} == {
        region.resource for _, region in regions if region.size}
    assert all(p.writes == ("readback/gather",) for p in passes)


def test_more_regions_than_the_table_holds_take_another_pass(gpu):
    rng = np.random.default_rng(11)
    (buffer, data), = _buffers(gpu, rng, 1, 4 * (MAX_REGIONS + 40))
    regions = [(f"e{k}", Readback(f"e{k}", "test", "one/counters", buffer, 16 * k, 8 + 4 * (k % 3)))
               for k in range(MAX_REGIONS + 40)]
    words, layout, passes = _gathered(gpu, regions)
    np.testing.assert_array_equal(words, _expected(layout, {id(buffer): data}, len(words) * 4))
    assert len(passes) == 2


def test_an_empty_layout_has_no_pass(gpu):
    gather = gpu.device.create_buffer(size=256, usage=wgpu.BufferUsage.STORAGE)
    assert gather_passes(gpu, Resources(gpu), GatherLayout(), gather) == []


def test_regions_of_one_buffer_share_a_binding_only_while_it_fits():
    buffer = object()   # a stand-in: only its identity matters here
    chunk = _Chunk()
    near = Readback("a", "test", "a/c", buffer, 1000, 16)
    also_near = Readback("b", "test", "b/c", buffer, 1500, 16)
    far = Readback("c", "test", "c/c", buffer, 5000, 16)
    limit, alignment = 2048, 256
    assert chunk.source_for(near, alignment, limit) == 0
    assert chunk.source_for(also_near, alignment, limit) == 0    # [768, 1516) fits in 2048
    assert (chunk.sources[0].start, chunk.sources[0].end) == (768, 1516)
    assert chunk.source_for(far, alignment, limit) == 1          # [768, 5016) would not
    for k in range(len(SOURCES) - 2):
        other = Readback("d", "test", "d/c", object(), 0, 4)
        assert chunk.source_for(other, alignment, limit) == 2 + k
    assert chunk.source_for(Readback("e", "test", "e/c", object(), 0, 4), alignment,
                            limit) is None                        # every binding taken


def test_an_engine_reads_back_every_lone_emitters_counters(gpu):
    """Emitter k, alone (no batching: its counters record at its own offset of a shared page),
    gives k + 1 particles a step (rate 2 (k + 1) /s, fixed_dt 0.5 s, long lives), so the read
    back of frame f holds (f + 1)(k + 1)."""
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    count = len(SOURCES) + 2
    entities = "".join(f"""
[[entity]]
name = "e{k}"
[entity.emitter]
capacity = {256 + 37 * k}
rate = {2.0 * (k + 1)}
lifetime = 1000.0
""" for k in range(count))
    engine = Engine(loads_scene(f'[scene]\nname = "many"\nfixed_dt = 0.5\nsize = [32, 32]\n'
                                f'{entities}'), batching=False)
    assert [p for p in engine.passes() if p.startswith("scene:frame:readback")] == [
        "scene:frame:readback"]
    seen = 0
    for _ in range(12):
        engine.step()
        stats = engine.stats()
        frame = stats["readback_frame"]
        if frame is None:
            continue
        seen += 1
        alive = {name: info["alive"] for name, info in stats["entities"].items()}
        assert alive == {f"e{k}": (frame + 1) * (k + 1) for k in range(count)}, frame
    assert seen >= 5
    engine.close()
