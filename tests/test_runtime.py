"""Runtime pieces that need little or no GPU: clock, adapter choice, readback ring, cameras."""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.core.clock import FixedClock
from emberfx.core.errors import DeviceLimitError, NoAdapterError
from emberfx.core.gpu import choose_adapter
from emberfx.core.readback import ReadbackRing
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import loads_scene

# ------------------------------------------------------------------------------------- clock

def test_fixed_clock_accumulates_and_caps():
    clock = FixedClock(0.01, max_steps_per_frame=4)
    assert clock.advance(0.025) == 2
    assert clock.accumulator == pytest.approx(0.005)
    assert clock.advance(0.006) == 1                      # 0.011 accumulated
    assert clock.advance(1.0) == 4 and clock.accumulator == 0.0   # a stall drops its backlog
    clock.paused = True
    assert clock.advance(0.5) == 0
    clock.tick(3)
    assert clock.steps == 3 and clock.time == pytest.approx(0.03)


# ----------------------------------------------------------------------------------- adapters

class FakeAdapter:
    def __init__(self, device, backend, kind):
        self.info = {"device": device, "backend_type": backend, "adapter_type": kind,
                     "description": ""}


ADAPTERS = [FakeAdapter("llvmpipe", "OpenGL", "CPU"), FakeAdapter("llvmpipe", "Vulkan", "CPU"),
            FakeAdapter("NVIDIA H200", "Vulkan", "DiscreteGPU")]


def test_adapter_preference_gpu_then_lavapipe_then_gl(monkeypatch):
    monkeypatch.delenv("EMBERFX_ADAPTER", raising=False)
    assert choose_adapter(ADAPTERS).info["device"] == "NVIDIA H200"
    assert choose_adapter(ADAPTERS[:2]).info["backend_type"] == "Vulkan"
    assert choose_adapter(ADAPTERS[:1]).info["backend_type"] == "OpenGL"


def test_adapter_by_name_substring(monkeypatch):
    monkeypatch.setenv("EMBERFX_ADAPTER", "opengl")
    assert choose_adapter(ADAPTERS).info["backend_type"] == "OpenGL"
    monkeypatch.setenv("EMBERFX_ADAPTER", "radeon")
    with pytest.raises(NoAdapterError, match=r"matches no adapter; found: .*NVIDIA H200 \(Vulkan"):
        choose_adapter(ADAPTERS)


def test_no_adapter_says_how_to_get_one(monkeypatch):
    monkeypatch.delenv("EMBERFX_ADAPTER", raising=False)
    with pytest.raises(NoAdapterError, match="apt-get install mesa-vulkan-drivers"):
        choose_adapter([])


# ------------------------------------------------------------------------------ readback ring

def test_readback_ring_never_reuses_a_slot_in_flight(gpu):
    """Submit many steps as fast as possible: each slot is only handed out once its map finished
    and it was unmapped (otherwise wgpu-native aborts the process); busy frames are skipped."""
    device = gpu.device
    import wgpu

    source = device.create_buffer(size=8,
                                  usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
    ring = ReadbackRing(device, 8, slots=2)
    seen = []
    for frame in range(60):
        device.queue.write_buffer(source, 0, np.array([frame, frame * 3], np.uint32).tobytes())
        slot = ring.acquire()
        encoder = device.create_command_encoder()
        if slot is not None:
            assert slot.promise is None and slot.buffer.map_state == "unmapped"
            encoder.copy_buffer_to_buffer(source, 0, slot.buffer, 0, 8)
        device.queue.submit([encoder.finish()])
        if slot is not None:
            ring.submitted(slot, frame)
        latest = ring.poll()
        if latest is not None:
            got_frame, data = latest
            values = np.frombuffer(data, np.uint32)
            assert list(values) == [got_frame, got_frame * 3]   # the bytes of that very frame
            seen.append(got_frame)
    ring.drain()
    assert seen == sorted(seen) and len(seen) > 0
    assert ring.skipped + len({s for s in seen}) <= 60


# ------------------------------------------------------------------------------------ cameras

SINGLE = """
[scene]
name = "dot"
size = [81, 61]
background = "#000000"
[camera]
{camera}
[[entity]]
name = "dot"
[entity.emitter]
capacity = 5
rate = 60.0
lifetime = 100.0
speed = 0.0
position = {position}
gravity = [0.0, 0.0, 0.0]
size = {size}
color = "#ffffff"
blend = "opaque"
"""


def project(camera: Camera, point, size) -> tuple[float, float]:
    w, h = size
    clip = camera.projection_matrix(w / h) @ camera.view_matrix() @ np.append(point, 1.0)
    ndc = clip[:2] / clip[3]
    return ((ndc[0] + 1) * 0.5 * w, (1 - ndc[1]) * 0.5 * h)


@pytest.mark.parametrize("camera_text,size", [
    ('kind = "orthographic"\ncenter = [0.5, -0.25]\nheight = 4.0', 0.3),
    ('kind = "perspective"\nposition = [1.0, 2.0, 5.0]\ntarget = [0.0, 0.5, 0.0]\n'
     'fov_deg = 40.0', 0.3),
])
def test_a_particle_lands_where_the_camera_projects_it(gpu, camera_text, size):
    point = (0.9, 0.6, 0.0)
    scene = loads_scene(SINGLE.format(camera=camera_text, position=list(point), size=size))
    engine = Engine(scene, size=(81, 61))
    engine.step(1)                                     # one particle, at rest at `point`
    image = engine.render()[..., 0].astype(float)
    lit = np.argwhere(image > 128)
    assert len(lit) > 4
    cy, cx = lit.mean(axis=0) + 0.5                    # pixel centres
    ex, ey = project(scene.camera, np.array(point), (81, 61))
    assert abs(cx - ex) < 1.0 and abs(cy - ey) < 1.0, ((cx, cy), (ex, ey))


def test_render_size_beyond_the_device_is_refused(gpu):
    scene = loads_scene(SINGLE.format(camera='kind = "orthographic"', position=[0, 0, 0], size=0.1))
    limit = gpu.limits["max-texture-dimension-2d"]
    with pytest.raises(DeviceLimitError, match=f"outside 1..{limit}"):
        Engine(scene, size=(limit + 1, 10))


def test_a_failed_capacity_edit_keeps_the_last_good_pool(gpu):
    scene = loads_scene(SINGLE.format(camera='kind = "orthographic"', position=[0, 0, 0], size=0.1))
    engine = Engine(scene, size=(16, 16))
    engine.step(2)
    engine.entity("dot").emitter.capacity = 1 << 28
    with pytest.raises(DeviceLimitError):
        engine.step(1)
    assert engine.entity("dot").emitter.capacity == 5
    engine.step(3)
    assert int(engine.state("dot")["alive"].sum()) == 3      # a rebuilt pool, running again
    engine.close()
