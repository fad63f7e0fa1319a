"""A readback layout of one region has no gather pass: the ring slot copies the region from its
own buffer, at the offset the layout gives it (runtime/engine/telemetry.py). Checked against
the buffers' bytes (numpy slicing) for the region copied directly and for the cases that must
still be gathered (two regions, a buffer that does not allow copying, a region a drawing pass
writes), and in engines whose layout changes between the two as entities come and go, against
the emitters' known birth counts."""

from __future__ import annotations

import time

import numpy as np
import pytest
import wgpu

from emberfx.core.frame_graph import FrameGraph
from emberfx.core.resources import Resources
from emberfx.core.system import Readback
from emberfx.engine.telemetry import Telemetry

COPYABLE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
NOT_COPYABLE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST


class _Declares:
    """A system as the telemetry sees it: only its readback regions."""

    def __init__(self, regions: list[Readback]):
        self.regions = regions

    def readbacks(self) -> list[Readback]:
        return self.regions


def _buffer(gpu, rng, words: int, usage: int):
    data = rng.integers(0, 2**32, words, dtype=np.uint32)
    return gpu.device.create_buffer_with_data(data=data.tobytes(), usage=usage), data


def _read_back(gpu, regions: list[Readback], drawn: frozenset[str] = frozenset(),
               spawned_before_copy: Readback | None = None):
    """One step's readback of ``regions`` through a Telemetry: its READBACK passes and each
    entity's bytes as ``Engine.stats`` would see them. ``spawned_before_copy``: a region whose
    entity comes after the step was encoded and before its copy is recorded (a held step)."""
    telemetry = Telemetry(gpu, Resources(gpu))
    telemetry.lay_out([_Declares(regions)])
    passes = telemetry.readback_passes(drawn)
    slot = telemetry.acquire_slot()
    encoder = gpu.device.create_command_encoder()
    if passes:
        FrameGraph(passes, uploaded={r for p in passes for r in p.reads}).encode(encoder, {})
    copy = telemetry.readback_copy(slot)
    if spawned_before_copy is not None:
        telemetry.entity_changed(spawned=(spawned_before_copy.entity, [[spawned_before_copy]]))
        assert telemetry.readback_passes(drawn)   # two regions now: the next step gathers
    copy(encoder)
    gpu.device.queue.submit([encoder.finish()])
    telemetry.submitted(slot, 0)
    deadline = time.monotonic() + 20
    frame, per_entity = telemetry.latest()
    while frame is None and time.monotonic() < deadline:
        time.sleep(0.01)
        frame, per_entity = telemetry.latest()
    telemetry.destroy()
    assert frame == 0
    return passes, per_entity


def _words(data: np.ndarray, region: Readback) -> np.ndarray:
    return data[region.offset // 4:(region.offset + region.size) // 4]


@pytest.mark.parametrize("usage,drawn,gathered", [
    (COPYABLE, frozenset(), False),                      # the slot copies it
    (COPYABLE, frozenset({"a/counters"}), True),         # a drawing pass writes it
    (NOT_COPYABLE, frozenset(), True),                   # its buffer cannot be copied from
], ids=["copied", "drawn", "not-copyable"])
def test_one_region_is_copied_by_the_slot_unless_it_must_be_gathered(gpu, usage, drawn,
                                                                      gathered):
    rng = np.random.default_rng(3)
    buffer, data = _buffer(gpu, rng, 512, usage)
    # a 40-byte record at an offset off every storage alignment, and an empty region, which
    # neither needs a pass nor counts as a second region
    region = Readback("a", "test", "a/counters", buffer, 36, 40)
    empty = Readback("b", "test", "b/counters", buffer, 0, 0)
    passes, per_entity = _read_back(gpu, [empty, region], drawn)
    assert [p.name for p in passes] == (["scene:frame:readback"] if gathered else [])
    np.testing.assert_array_equal(np.frombuffer(per_entity["a"], np.uint32),
                                  _words(data, region))
    assert per_entity["b"] == b""
    buffer.destroy()


def test_a_held_steps_copy_keeps_the_layout_it_was_encoded_with(gpu):
    """The step of a frame() block is recorded before the draw and submitted after it; an
    entity spawned in between makes the layout two regions, but the step encoded no gather,
    so its copy must still take the lone region from its own buffer."""
    rng = np.random.default_rng(5)
    buffer, data = _buffer(gpu, rng, 128, COPYABLE)
    region = Readback("a", "test", "a/counters", buffer, 64, 256)
    later = Readback("b", "test", "b/counters", buffer, 0, 4)
    passes, per_entity = _read_back(gpu, [region], spawned_before_copy=later)
    assert passes == []
    np.testing.assert_array_equal(np.frombuffer(per_entity["a"], np.uint32),
                                  _words(data, region))
    assert per_entity["b"] == bytes(4)   # not read back yet: zeros, never another's bytes
    buffer.destroy()


def test_two_regions_are_gathered(gpu):
    rng = np.random.default_rng(4)
    (first, data1), (second, data2) = (_buffer(gpu, rng, 256, COPYABLE) for _ in range(2))
    regions = [Readback("a", "test", "a/counters", first, 260, 4),
               Readback("b", "test", "b/counters", second, 0, 1020)]
    passes, per_entity = _read_back(gpu, regions)
    assert [p.name for p in passes] == ["scene:frame:readback"]
    for region, data in zip(regions, (data1, data2)):
        np.testing.assert_array_equal(np.frombuffer(per_entity[region.entity], np.uint32),
                                      _words(data, region))
    first.destroy()
    second.destroy()


def _emitter(births_per_step: int) -> dict:
    # fixed_dt 0.5 s: a rate of 2k per second gives k births a step, and nobody dies
    return {"emitter": {"capacity": 512, "rate": 2.0 * births_per_step, "lifetime": 1000.0}}


def _alive_matches(engine, born_at: dict[str, tuple[int, int]]) -> int:
    """Steps each entity of ``born_at`` (name: (first step, births a step)) and checks the
    readbacks: after step f an entity holds (f - first + 1) * births. Returns how many
    readbacks arrived."""
    seen = 0
    for _ in range(8):
        engine.step()
        stats = engine.stats()
        frame = stats["readback_frame"]
        if frame is None or frame < max(first for first, _ in born_at.values()):
            continue
        seen += 1
        alive = {name: info["alive"] for name, info in stats["entities"].items()}
        assert alive == {name: (frame - first + 1) * births
                         for name, (first, births) in born_at.items()}, frame
    return seen


def test_engines_switch_between_copying_and_gathering_as_entities_come_and_go(gpu):
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    engine = Engine(loads_scene('[scene]\nname = "one"\nfixed_dt = 0.5\nsize = [32, 32]\n'
                                '[[entity]]\nname = "first"\n[entity.emitter]\ncapacity = 512\n'
                                'rate = 6.0\nlifetime = 1000.0\n'), batching=False)

    def gathers() -> bool:
        return any(p.startswith("scene:frame:readback") for p in engine.passes())

    assert not gathers()
    assert _alive_matches(engine, {"first": (0, 3)}) >= 4
    engine.spawn("second", _emitter(5))          # two regions: gathered
    assert gathers()
    assert _alive_matches(engine, {"first": (0, 3), "second": (8, 5)}) >= 4
    engine.delete("first")                                  # one again: copied by the slot
    assert not gathers()
    assert _alive_matches(engine, {"second": (8, 5)}) >= 4
    engine.close()
