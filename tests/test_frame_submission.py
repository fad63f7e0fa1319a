"""Engine.frame(): the last step and the draw in one submission, with the same results.

The oracle is the same Engine driven without the block (each step and draw its own
submission): images, particle state and counters compare byte for byte. The hazards of holding a
step's encoder open (core/submission.py) are each made to happen: a write into a buffer the
step binds, an Engine call, a live edit and a rebuild between the step and the draw.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from emberfx.bench.harness import output_texture
from emberfx.core.readback import read_texture
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

SIZE = (96, 54)


class _Submits:
    """Counts ``queue.submit`` calls (an instance attribute over the class's method)."""

    def __init__(self, queue):
        self.queue, self.count = queue, 0
        original = queue.submit

        def counted(buffers):
            self.count += 1
            return original(buffers)

        queue.submit = counted

    def close(self):
        del self.queue.submit


def _state(engine, name):
    return {key: np.asarray(value).copy() for key, value in engine.state(name).items()}


def _same_state(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert np.array_equal(a[key], b[key]), key


def _run(scene_path, frames: int, one_submission: bool, between=None):
    """Images and states of ``frames`` frames (step + draw); ``between(fountain, i)`` runs after
    each step, before its draw, with the fountain's entity view."""
    engine = Engine(load_scene(scene_path), size=SIZE)
    try:
        engine.readback_every = 4   # as the window: steps with and without a readback
        fountain = engine.entity("fountain")   # edited through this view: no Engine call
        texture = output_texture(engine)
        submits = _Submits(engine.device.queue)
        images, frame_submits = [], 0
        for i in range(frames):
            before = submits.count
            with engine.frame() if one_submission else contextlib.nullcontext():
                engine.step(1)
                if between is not None:
                    between(fountain, i)
                engine.draw_to(texture)
            frame_submits += submits.count - before
            images.append(read_texture(engine.device, texture, 4))
        submits.close()
        states = {name: _state(engine, name) for name in ("fountain", "rockets", "swarm")}
        texture.destroy()
        return images, states, frame_submits, engine.stats()
    finally:
        engine.close()


def test_one_submission_a_frame_gives_the_same_frames(gpu, scenes_dir):
    frames = 9
    held = _run(scenes_dir / "sampler.toml", frames, one_submission=True)
    apart = _run(scenes_dir / "sampler.toml", frames, one_submission=False)
    assert held[0] == apart[0]                           # every frame's image, byte for byte
    for name in held[1]:
        _same_state(held[1][name], apart[1][name])
    # one submission a frame, the readback steps' (0, 4, 8) too
    assert apart[2] == 2 * frames
    assert held[2] == frames
    assert held[3]["entities"]["fountain"] == apart[3]["entities"]["fountain"]


def test_edits_and_rebuilds_between_the_step_and_the_draw(gpu, scenes_dir):
    def edit(fountain, i):
        emitter = fountain.emitter
        if i == 2:
            emitter.rate = emitter.rate * 0.5           # a live field: applied by draw_to
        if i == 4:
            emitter.capacity = emitter.capacity + 1000  # rebuilds the emitter's buffers

    held = _run(scenes_dir / "sampler.toml", 7, one_submission=True, between=edit)
    apart = _run(scenes_dir / "sampler.toml", 7, one_submission=False, between=edit)
    assert held[0] == apart[0]
    for name in held[1]:
        _same_state(held[1][name], apart[1][name])


@pytest.mark.parametrize("write_bound", [True, False])
def test_a_write_into_a_buffer_the_held_step_binds_submits_it_first(gpu, scenes_dir,
                                                                    write_bound):
    """Zeros written into the fountain's parameters after its step must not reach that step;
    a write elsewhere leaves the step held for the draw."""

    def run(one_submission):
        engine = Engine(load_scene(scenes_dir / "fountain.toml"), size=SIZE)
        try:
            engine.readback_every = 1000   # no readback: every step may be held
            engine.step(30)
            view = engine.resources.buffer_view("fountain/params")
            spare = engine.resources.buffer("test", "spare", 256, 8 | 64)   # COPY_DST | UNIFORM
            with engine.frame() if one_submission else contextlib.nullcontext():
                engine.step(1)
                was_held = engine.resources.held is not None
                target = view if write_bound else spare
                engine.resources.write(target, bytes(target.size))
                still_held = engine.resources.held is not None
            return _state(engine, "fountain"), was_held, still_held
        finally:
            engine.close()

    held_state, was_held, still_held = run(True)
    apart_state, _, _ = run(False)
    assert was_held and still_held != write_bound
    _same_state(held_state, apart_state)


def test_leaving_the_block_or_calling_the_engine_submits_the_step(gpu, scenes_dir):
    def run(how):
        engine = Engine(load_scene(scenes_dir / "fountain.toml"), size=SIZE)
        try:
            engine.readback_every = 1000
            engine.step(20)
            if how == "apart":
                engine.step(3)
                return _state(engine, "fountain")
            with engine.frame():
                engine.step(3)          # each step submits the one held before it
                assert engine.resources.held is not None
                if how == "call":
                    return _state(engine, "fountain")   # state() submits the held step first
            assert engine.resources.held is None
            return _state(engine, "fountain")
        finally:
            engine.close()

    reference = run("apart")
    _same_state(run("call"), reference)
    _same_state(run("exit"), reference)


def test_a_failed_draw_leaves_nothing_held(gpu, scenes_dir):
    from emberfx.core.errors import EmberError

    engine = Engine(load_scene(scenes_dir / "fountain.toml"), size=SIZE)
    try:
        engine.readback_every = 1000
        with pytest.raises(EmberError):
            with engine.frame():
                engine.step(1)
                engine.draw_to(_Huge())
        assert engine.resources.held is None and engine.clock.steps == 1
        image = engine.render()             # the engine goes on
        assert image.shape == (SIZE[1], SIZE[0], 4)
    finally:
        engine.close()


class _Huge:
    """A texture whose size no device allows: draw_to refuses it with a one-line error."""
    size = (1 << 20, 1 << 20, 1)
    format = "rgba8unorm"


def test_the_draw_records_into_the_held_steps_last_compute_pass(gpu, scenes_dir):
    """A held step that ends with compute work leaves that pass open and the draw's first
    compute work records into it: the frame begins one compute pass fewer than the same step
    and draw submitted apart (whose images and states match: the tests above), and leaving
    the block ends the pass before the submission."""
    from emberfx.bench.frame_calls import call_counts, record_calls

    engine = Engine(load_scene(scenes_dir / "sampler.toml"), size=SIZE)
    try:
        engine.readback_every = 1000   # no readback: every step may be held
        texture = output_texture(engine)
        engine.step(2)

        def held():
            with engine.frame():
                engine.step(1)
                held_step = engine.resources.held
                assert held_step is not None and held_step.compute is not None
                engine.draw_to(texture)

        def apart():
            engine.step(1)
            engine.draw_to(texture)

        passes = {how: call_counts(record_calls(run))["begin_compute_pass"]
                  for how, run in (("held", held), ("apart", apart))}
        assert passes["apart"] >= 2 and passes["held"] == passes["apart"] - 1
        # a step with a readback is held too: its copy into the ring is recorded after the
        # draw's passes (so the draw still continues its compute pass), in one submission
        engine.readback_every = 1
        calls = {how: record_calls(run) for how, run in (("held", held), ("apart", apart))}
        counts = {how: call_counts(made) for how, made in calls.items()}
        assert counts["held"]["begin_compute_pass"] == counts["apart"]["begin_compute_pass"] - 1
        assert (counts["held"]["submit"], counts["apart"]["submit"]) == (1, 2)
        names = [call.method.__name__ for call in calls["held"]]
        last_render = max(i for i, name in enumerate(names) if name == "begin_render_pass")
        assert names.index("copy_buffer_to_buffer") > last_render
        assert engine.stats()["readback_frame"] is not None
        with engine.frame():
            engine.step(1)   # no draw: leaving the block ends the open pass and submits
        assert engine.resources.held is None
        texture.destroy()
    finally:
        engine.close()
