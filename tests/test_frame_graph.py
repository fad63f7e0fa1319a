"""Frame graph: ordering, validation, and how it encodes (one compute pass for consecutive work)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import wgpu

from emberfx.core.errors import FrameGraphError
from emberfx.core.frame_graph import (
    ClearBuffer,
    CopyBuffer,
    Dispatch,
    Draw,
    FrameGraph,
    Pass,
    Phase,
    RenderTarget,
)


def p(name, phase, reads=(), writes=(), op=None):
    return Pass(name, phase, op or Dispatch(pipeline=None), tuple(reads), tuple(writes))


def test_phase_order_then_read_after_write_then_declaration_order():
    passes = [
        p("a:draw", Phase.RENDER, reads=["a/args"], writes=["scene/color"]),
        p("a:use", Phase.SIMULATE, reads=["a/grid"], writes=["a/out"]),
        p("a:prepare", Phase.PREPARE, reads=["a/out"], writes=["a/args"]),
        p("a:build", Phase.SIMULATE, writes=["a/grid"]),
        p("b:step", Phase.SIMULATE, reads=["b/x"], writes=["b/x"]),
        p("a:clear", Phase.CLEAR, writes=["a/counters"]),
    ]
    graph = FrameGraph(passes, uploaded={"b/x"})
    assert graph.names() == ["a:clear", "a:build", "a:use", "b:step", "a:prepare", "a:draw"]


def test_read_modify_write_passes_keep_declaration_order():
    passes = [p("x:second", Phase.SIMULATE, reads=["s"], writes=["s"]),
              p("x:first", Phase.SIMULATE, reads=["s"], writes=["s"])]
    assert FrameGraph(passes, uploaded={"s"}).names() == ["x:second", "x:first"]


def test_a_read_without_an_earlier_writer_is_an_error():
    passes = [p("a:prepare", Phase.PREPARE, reads=["a/counters"], writes=["a/args"]),
              p("a:update", Phase.READBACK, writes=["a/counters"])]
    with pytest.raises(FrameGraphError, match="'a:prepare' reads 'a/counters'"):
        FrameGraph(passes)
    # the same graph is fine once the counters are declared uploaded
    FrameGraph(passes, uploaded={"a/counters"})


def test_cycles_and_duplicate_names_are_errors():
    cycle = [p("a:one", Phase.SIMULATE, reads=["z"], writes=["x"]),
             p("a:two", Phase.SIMULATE, reads=["x"], writes=["y"]),
             p("a:three", Phase.SIMULATE, reads=["y"], writes=["z"])]
    with pytest.raises(FrameGraphError, match="cycle"):
        FrameGraph(cycle, uploaded={"x", "y", "z"})
    with pytest.raises(FrameGraphError, match="unique"):
        FrameGraph([p("a:x", Phase.CLEAR), p("a:x", Phase.SIMULATE)])


def test_a_graph_of_the_same_shape_reuses_the_order_with_the_new_passes():
    def passes(tag):
        return [p("a:draw", Phase.RENDER, reads=["a/args"], writes=["scene/color"],
                  op=Dispatch(pipeline=tag)),
                p("a:prepare", Phase.PREPARE, reads=["a/out"], writes=["a/args"]),
                p("a:use", Phase.SIMULATE, reads=["a/grid"], writes=["a/out"]),
                p("a:build", Phase.SIMULATE, writes=["a/grid"])]

    first = FrameGraph(passes("old"))
    again = FrameGraph(passes("new"), previous=first)
    assert again.names() == first.names() == FrameGraph(passes("new")).names()
    assert again.order[-1].op.pipeline == "new"          # the new passes, in the old order
    # a different shape is sorted (and checked) afresh
    changed = passes("new")[:3]                           # a:build gone: a:use reads nothing
    with pytest.raises(FrameGraphError, match="'a:use' reads 'a/grid'"):
        FrameGraph(changed, previous=first)
    moved = [p("a:build", Phase.SIMULATE, writes=["a/grid"])] + passes("x")[:3]
    assert FrameGraph(moved, previous=first).names() == first.names()


class Recorder:
    """Stands in for a GPUCommandEncoder and records what the graph asks of it."""

    def __init__(self):
        self.log = []

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.log.append(name)
            if name in ("begin_compute_pass", "begin_render_pass"):
                return self
            return None
        return call


@pytest.mark.parametrize("labels", [False, True])
def test_consecutive_compute_work_shares_one_compute_pass(monkeypatch, labels):
    import emberfx.core.frame_graph

    monkeypatch.setattr(emberfx.core.frame_graph, "DEBUG_GROUPS", labels)
    passes = [
        Pass("a:clear", Phase.CLEAR, ClearBuffer(None), writes=("c",)),
        p("a:update", Phase.SIMULATE, reads=["c"], writes=["c"]),
        p("b:update", Phase.SIMULATE, writes=["d"]),
        p("a:prepare", Phase.PREPARE, reads=["c"], writes=["args"]),
        Pass("a:draw", Phase.RENDER, Draw(None, indirect=(None, 0)),
             reads=("args",), writes=("img",)),
        Pass("a:readback", Phase.READBACK, CopyBuffer(None, None, 16), reads=("c",), writes=("g",)),
    ]
    graph = FrameGraph(passes)
    rec = Recorder()
    graph.encode(rec, {"scene": RenderTarget(None, (0, 0, 0, 1))})
    assert rec.log.count("begin_compute_pass") == 1 == graph.compute_pass_count()
    assert rec.log.count("dispatch_workgroups") == 3
    assert rec.log.count("begin_render_pass") == 1 and rec.log.count("draw_indirect") == 1
    assert rec.log.index("clear_buffer") < rec.log.index("begin_compute_pass")
    assert rec.log.index("copy_buffer_to_buffer") > rec.log.index("draw_indirect")
    # debug groups only for GPU captures (EMBERFX_DEBUG_GROUPS=1): two calls per pass otherwise
    assert rec.log.count("push_debug_group") == rec.log.count("pop_debug_group") == \
        (len(passes) if labels else 0)


def test_a_repeated_dispatch_alternates_its_bind_groups():
    even, odd = object(), object()
    op = Dispatch(pipeline="step", bind_groups=(lambda k: (even, odd)[k % 2],), groups=(2, 1, 1),
                  repeat=5)
    rec = Recorder()
    calls = []
    rec.set_bind_group = lambda index, group: calls.append(group)
    FrameGraph([Pass("c:substeps", Phase.SIMULATE, op, writes=("s",))]).encode(rec, {})
    assert rec.log.count("dispatch_workgroups") == 5 and rec.log.count("set_pipeline") == 1
    assert calls == [even, odd, even, odd, even]


@pytest.mark.parametrize("labels", [False, True])
def test_the_encoding_runs_on_a_real_gpu(gpu, monkeypatch, labels):
    """The graph's encoding runs on the device, with and without debug groups: a clear, three
    dispatches (one repeated) in one compute pass and a copy, checked against the numbers the
    shader must produce."""
    import emberfx.core.frame_graph

    monkeypatch.setattr(emberfx.core.frame_graph, "DEBUG_GROUPS", labels)
    device = gpu.device
    code = """
    @group(0) @binding(0) var<storage, read_write> data: array<u32>;
    override ADD: u32 = 1u;
    @compute @workgroup_size(64)
    fn main(@builtin(global_invocation_id) gid: vec3u) {
        if (gid.x < arrayLength(&data)) { data[gid.x] = data[gid.x] * 2u + ADD; }
    }"""
    module = device.create_shader_module(code=code)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    n = 1000                                      # not a multiple of the workgroup size
    data = device.create_buffer_with_data(data=np.arange(n, dtype=np.uint32), usage=usage)
    out = device.create_buffer(size=4 * n, usage=usage)

    def step(add):
        pipe = device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "main",
                                    "constants": {"ADD": add}})
        group = device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
            {"binding": 0, "resource": {"buffer": data, "offset": 0, "size": 4 * n}}])
        return Dispatch(pipe, (group,), ((n + 63) // 64, 1, 1))

    thrice = dataclasses.replace(step(3), repeat=3)
    passes = [Pass("t:clear", Phase.CLEAR, ClearBuffer(data, 0, 400), writes=("data",)),
              Pass("t:one", Phase.SIMULATE, step(1), reads=("data",), writes=("data",)),
              Pass("t:two", Phase.SIMULATE, step(5), reads=("data",), writes=("data",)),
              Pass("t:thrice", Phase.SIMULATE, thrice, reads=("data",), writes=("data",)),
              Pass("t:copy", Phase.READBACK, CopyBuffer(data, out, 4 * n), reads=("data",),
                   writes=("out",))]
    encoder = device.create_command_encoder()
    FrameGraph(passes).encode(encoder, {})
    device.queue.submit([encoder.finish()])
    result = np.frombuffer(device.queue.read_buffer(out), np.uint32)
    start = np.arange(n, dtype=np.uint32)
    start[:100] = 0
    expected = (start * 2 + 1) * 2 + 5
    for _ in range(3):                            # the repeated dispatch sees its own writes
        expected = expected * 2 + 3
    np.testing.assert_array_equal(result, expected)


def test_mutual_read_write_hazards_follow_declaration_order():
    """Sort keys computed from a list that the sort then rewrites: keys first, as declared."""
    passes = [p("s:depth", Phase.RENDER, reads=["list"], writes=["keys"]),
              p("s:sort", Phase.RENDER, reads=["keys", "list"], writes=["keys", "list"]),
              p("s:draw", Phase.RENDER, reads=["list"], writes=["img"])]
    assert FrameGraph(passes, uploaded={"list"}).names() == ["s:depth", "s:sort", "s:draw"]


def test_order_hint_puts_backgrounds_first_and_callable_groups_are_resolved():
    passes = [Pass("a:draw", Phase.RENDER, Draw(None), writes=("img",)),
              Pass("bg:draw", Phase.RENDER, Draw(None), writes=("img",), order=-1),
              Pass("c:draw", Phase.RENDER, Draw(None), writes=("img",), order=5)]
    graph = FrameGraph(passes)
    assert graph.names() == ["bg:draw", "a:draw", "c:draw"]
    picked = []
    op = Dispatch(pipeline=None, bind_groups=(lambda: picked.append(1) or "group",))
    rec = Recorder()
    FrameGraph([Pass("x:step", Phase.SIMULATE, op)]).encode(rec, {})
    assert picked == [1]


def test_draws_replayed_from_render_bundles_match_direct_draws(gpu, scenes_dir):
    """The sampler's draws (indirect particles, an indexed cloth mesh with ping-pong bind groups,
    a Life quad with its trail, a swarm, the present pass) from bundles give the same images, byte
    for byte, as an identical engine that records them directly; once every parity has been seen,
    no new bundle is recorded."""
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import load_scene

    scene = load_scene(scenes_dir / "sampler.toml")
    bundled, direct = Engine(scene, size=(96, 54)), Engine(scene, size=(96, 54))
    direct._renderer.bundles = None
    try:
        recorded = []
        for _ in range(6):
            bundled.step(1)
            direct.step(1)
            image = bundled.render()
            np.testing.assert_array_equal(image, direct.render())
            recorded.append(bundled._renderer.bundles.recorded)
        assert image[..., :3].std() > 0
        assert recorded[-1] == recorded[-3] <= 8     # reused, one bundle per parity combination
    finally:
        bundled.close()
        direct.close()


def test_compute_in_a_drawing_phase_moves_before_the_draws_it_shares_nothing_with():
    """A compute pass between draws runs before them when it touches nothing they touch, so the
    draws share one render pass; one that reads a draw's output, or the target's depth (which
    draws write without declaring it), stays where it is."""
    def draw(name, reads=(), order=0):
        return Pass(name, Phase.RENDER, Draw(None), reads=tuple(reads),
                    writes=("scene/color",), order=order)

    passes = [draw("a:draw", reads=["a/list"], order=-10),
              p("b:keys", Phase.RENDER, reads=["b/list"], writes=["b/keys"]),
              p("b:sort", Phase.RENDER, reads=["b/keys"], writes=["b/keys", "b/list"]),
              draw("b:draw", reads=["b/list"]),
              p("c:fade", Phase.RENDER, reads=["scene/depth"], writes=["c/alpha"]),
              draw("c:draw", reads=["c/alpha"]),
              p("d:blur", Phase.RENDER, reads=["scene/color"], writes=["d/out"]),
              draw("d:draw", reads=["d/out"]),
              p("e:glow", Phase.POST, reads=["b/keys"], writes=["e/glow"])]
    graph = FrameGraph(passes, uploaded={"a/list", "b/list", "scene/depth"})
    assert graph.names() == ["b:keys", "b:sort", "a:draw", "b:draw", "c:fade", "c:draw",
                             "d:blur", "d:draw", "e:glow"]
    rec = Recorder()
    graph.encode(rec, {"scene": RenderTarget(None, (0, 0, 0, 1))})
    assert rec.log.count("begin_compute_pass") == graph.compute_pass_count() == 4
    assert rec.log.count("begin_render_pass") == 3


def test_the_compiled_encoding_sets_what_changed_and_is_reused_for_the_same_passes(monkeypatch):
    """Fixed groups already set are not set again; a group picked when the frame is encoded is
    set every frame, and the fixed group after it again; a graph of the very same Pass objects
    reuses the compiled calls (and sorts nothing)."""
    import emberfx.core.frame_order
    import emberfx.core.frame_plan

    fixed, picked = object(), [object(), object()]
    frame = [0]
    ops = [Dispatch("one", (fixed,)), Dispatch("one", (fixed,)),
           Dispatch("one", (lambda: picked[frame[0] % 2],)), Dispatch("one", (fixed,)),
           Dispatch("two", (fixed,), groups=lambda: (frame[0], 1, 1))]
    passes = [Pass(f"x:{i}", Phase.SIMULATE, op, writes=(f"r{i}",)) for i, op in enumerate(ops)]
    graph = FrameGraph(passes)
    log = []
    for frame[0] in range(2):
        rec = Recorder()
        rec.set_bind_group = lambda index, group: log.append(group)
        graph.encode(rec, {})
        assert rec.log.count("set_pipeline") == 2 and rec.log.count("begin_compute_pass") == 1
        assert rec.log.count("dispatch_workgroups") == 4 + frame[0]   # counts (0, 1, 1): none
    assert log == [fixed, picked[0], fixed, fixed, fixed, picked[1], fixed, fixed]
    compiled, sorted_ = [], []
    monkeypatch.setattr(emberfx.core.frame_plan, "compute_calls",
                        lambda ops, f=emberfx.core.frame_plan.compute_calls:
                        compiled.append(1) or f(ops))
    monkeypatch.setattr(emberfx.core.frame_order, "sorted_passes",
                        lambda ps, f=emberfx.core.frame_order.sorted_passes:
                        sorted_.append(1) or f(ps))
    same = FrameGraph(list(passes), previous=graph)
    same.encode(Recorder(), {})
    assert compiled == [] and sorted_ == [] and same.names() == graph.names()
    FrameGraph([dataclasses.replace(x) for x in passes], previous=graph).encode(Recorder(), {})
    assert compiled == [1] and sorted_ == []   # equal, not the same: same order, compiled anew
