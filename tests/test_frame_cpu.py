"""What a frame repeats on the CPU: once the showcase has run a few frames, a frame makes no GPU
object (bind group, pipeline, render bundle, buffer, texture, view) and rewrites no look uniform
whose fields did not change; an edit of those fields still reaches the GPU on the next frame.
(Speed itself is measured by ``emberfx bench frame``, never asserted here.)"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import wgpu

from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

SIZE = (96, 54)
WARM_FRAMES = 8    # every ping-pong parity of the cloth and swarm draws has been recorded
CREATORS = ("create_bind_group", "create_render_bundle_encoder", "create_compute_pipeline",
            "create_render_pipeline", "create_buffer", "create_buffer_with_data",
            "create_texture", "create_sampler")


def frame(engine: Engine, output) -> None:
    engine.step(1)
    engine.draw_to(output)


@pytest.fixture
def showcase(gpu, scenes_dir):
    with Engine(load_scene(scenes_dir / "showcase.toml"), size=SIZE, scripts=False) as engine:
        output = engine.device.create_texture(
            size=(*SIZE, 1), format="rgba8unorm-srgb",
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        for _ in range(WARM_FRAMES):
            frame(engine, output)
        yield engine, output
        output.destroy()


def test_later_frames_create_no_gpu_objects(showcase, monkeypatch):
    engine, output = showcase
    made: Counter = Counter()

    def counting(name, original):
        def call(*args, **kwargs):
            made[name] += 1
            return original(*args, **kwargs)
        return call

    for name in CREATORS:
        monkeypatch.setattr(engine.device, name, counting(name, getattr(engine.device, name)))
    texture_class = type(output)
    monkeypatch.setattr(texture_class, "create_view",
                        counting("create_view", texture_class.create_view))
    for _ in range(4):
        frame(engine, output)
    assert dict(made) == {}
    # the counting works: a frame into a new texture makes its view
    other = engine.device.create_texture(size=(*SIZE, 1), format="rgba8unorm-srgb",
                                         usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    engine.draw_to(other)
    other.destroy()
    assert made["create_view"] == 1 and made["create_texture"] == 1


def edit_looks(engine: Engine) -> None:
    engine.entity("flag").cloth.color = "#20ff40"
    engine.entity("swarm").particle_life.size = 0.05


def test_unchanged_looks_are_not_rewritten_and_an_edit_is(showcase, scenes_dir, monkeypatch):
    """The oracle of the edit: an engine edited before its first frame, after as many frames,
    gives the same bytes (both fields change only how things are drawn)."""
    engine, output = showcase
    written: Counter = Counter()
    queue = engine.device.queue
    original = queue.write_buffer

    def write_buffer(buffer, offset, data, *args):
        written[buffer.label] += 1
        return original(buffer, offset, data, *args)

    monkeypatch.setattr(queue, "write_buffer", write_buffer)
    for _ in range(3):
        frame(engine, output)
    assert written["flag/params"] == 3 and written["swarm/params"] == 3   # the counting works
    assert written["flag/look"] == 0 and written["swarm/look"] == 0
    before = engine.render()
    written.clear()
    edit_looks(engine)
    frame(engine, output)
    assert written["flag/look"] == 1 and written["swarm/look"] == 1
    after = engine.render()
    monkeypatch.undo()
    with Engine(load_scene(scenes_dir / "showcase.toml"), size=SIZE, scripts=False) as fresh:
        edit_looks(fresh)
        for _ in range(WARM_FRAMES + 4):
            frame(fresh, output)
        np.testing.assert_array_equal(after, fresh.render())
    assert not np.array_equal(before, after)


def compute_runs(passes) -> int:
    """The oracle: maximal runs of consecutive compute passes in encoding order."""
    kinds = [p.kind for p in passes]
    return sum(1 for i, kind in enumerate(kinds)
               if kind == "compute" and (i == 0 or kinds[i - 1] != "compute"))


def test_each_run_of_compute_passes_is_one_gpu_compute_pass(showcase, monkeypatch):
    """Consecutive dispatches share one GPUComputePass, and the drawing phases' compute work
    runs before draws it does not touch, so the showcase's draws need three render passes:
    the scene, its soft particles (read-only depth) and the output."""
    engine, output = showcase
    begun: Counter = Counter()
    encoder_class = type(engine.device.create_command_encoder())

    def counting(name, original):
        def call(self, *args, **kwargs):
            begun[name] += 1
            return original(self, *args, **kwargs)
        return call

    for name in ("begin_compute_pass", "begin_render_pass"):
        monkeypatch.setattr(encoder_class, name, counting(name, getattr(encoder_class, name)))
    from emberfx.core.frame_graph import DRAWING_PHASES, SIMULATION_PHASES

    engine.step(1)
    simulation = engine.frame_passes(SIMULATION_PHASES)
    assert begun["begin_compute_pass"] == compute_runs(simulation) < len(
        [p for p in simulation if p.kind == "compute"]) / 10
    assert begun["begin_render_pass"] == 0
    begun.clear()
    engine.draw_to(output)
    drawing = engine.frame_passes(DRAWING_PHASES)
    assert begun["begin_compute_pass"] == compute_runs(drawing)
    assert begun["begin_render_pass"] == 3


def test_an_unchanged_frame_compiles_sorts_and_checks_nothing(showcase, monkeypatch):
    """The frame graph is sorted, checked and compiled once per distinct pass list: not for an
    unchanged frame, nor when the systems are asked for their passes again and give the same
    ones (the graph is rebuilt then, as after a live edit that changes passes)."""
    import emberfx.core.frame_order
    import emberfx.core.frame_plan

    engine, output = showcase
    work: Counter = Counter()

    def counting(name, original):
        def call(*args):
            work[name] += 1
            return original(*args)
        return call

    for module, name in ((emberfx.core.frame_order, "sorted_passes"),
                         (emberfx.core.frame_order, "check_reads"),
                         (emberfx.core.frame_plan, "compute_calls")):
        monkeypatch.setattr(module, name, counting(name, getattr(module, name)))
    frame(engine, output)
    assert dict(work) == {}
    engine.passes_changed()
    frame(engine, output)
    assert work["sorted_passes"] == work["check_reads"] == 0
    # the counting works: a pass list of another shape is sorted and checked
    engine.entity("flag").cloth.wireframe = True
    frame(engine, output)
    assert work["sorted_passes"] == work["check_reads"] == 1 and work["compute_calls"] > 0


def test_a_frame_writes_each_buffer_once_at_most(showcase, monkeypatch):
    engine, output = showcase
    written: Counter = Counter()
    queue = engine.device.queue
    original = queue.write_buffer

    def write_buffer(buffer, offset, data, *args):
        written[id(buffer), buffer.label] += 1
        return original(buffer, offset, data, *args)

    monkeypatch.setattr(queue, "write_buffer", write_buffer)
    frame(engine, output)
    assert written and max(written.values()) == 1, written.most_common(3)
