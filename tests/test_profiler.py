"""PassProfiler: per-pass GPU timestamps (or CPU encode times) for the frame graph's passes.

Timing checks run on a device of their own that never renders: on lavapipe, once a device has
executed a render pass, its compute-pass stamps go wrong for an irregular number of later submits
(see runtime/core/profiler.py), and the shared device renders in other tests. They assert ordering
with a wide margin (100x the work must read as more than 3x the time), never wall-clock values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import wgpu

import emberfx
from emberfx.core.errors import EmberError
from emberfx.core.frame_graph import (
    SIMULATION_PHASES,
    ClearBuffer,
    CopyBuffer,
    Dispatch,
    Draw,
    FrameGraph,
    Pass,
    Phase,
    RenderTarget,
)
from emberfx.core.profiler import CPU_ENCODE, GPU_TIMESTAMPS, PassProfiler

N = 4000                      # elements; not a multiple of the workgroup size
# rounds per element: the heavy pass does 1000x the work, so its time stands out of lavapipe's
# per-dispatch overhead even while other processes share the CPU
LIGHT, HEAVY = 20, 20000
USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST

ROUNDS_WGSL = """
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
override ROUNDS: u32 = 1u;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    if (gid.x >= arrayLength(&data)) { return; }
    var x = data[gid.x];
    for (var i = 0u; i < ROUNDS; i++) { x = x * 1664525u + 1013904223u; }
    data[gid.x] = x;
}"""

# a rectangle over the top half of the target, from x = X0 to X0 + 1 in clip space
RECT_WGSL = """
override X0: f32 = -1.0;
override RED: f32 = 1.0;
override GREEN: f32 = 0.0;
@vertex fn vs_main(@builtin(vertex_index) i: u32) -> @builtin(position) vec4f {
    var corners = array<vec2f, 6>(vec2f(0.0, 0.0), vec2f(1.0, 0.0), vec2f(0.0, 1.0),
                                  vec2f(1.0, 0.0), vec2f(1.0, 1.0), vec2f(0.0, 1.0));
    let c = corners[i];
    return vec4f(X0 + c.x, c.y, 0.0, 1.0);
}
@fragment fn fs_main() -> @location(0) vec4f { return vec4f(RED, GREEN, 0.0, 1.0); }
"""


def lcg_oracle(start: np.ndarray, rounds: int) -> np.ndarray:
    x = start.astype(np.uint32)
    for _ in range(rounds):
        x = x * np.uint32(1664525) + np.uint32(1013904223)
    return x


class SpyEncoder:
    """Forwards to a real GPUCommandEncoder; records the passes begun and the buffers copied
    into."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.passes: list[tuple[str, dict]] = []
        self.copy_targets: list = []

    def begin_compute_pass(self, **kwargs):
        self.passes.append(("compute", kwargs))
        return self.encoder.begin_compute_pass(**kwargs)

    def begin_render_pass(self, **kwargs):
        self.passes.append(("render", kwargs))
        return self.encoder.begin_render_pass(**kwargs)

    def copy_buffer_to_buffer(self, source, source_offset, destination, destination_offset, size):
        self.copy_targets.append(destination)
        self.encoder.copy_buffer_to_buffer(source, source_offset, destination, destination_offset,
                                           size)

    def __getattr__(self, name):
        return getattr(self.encoder, name)


def stamp_indices(spy: SpyEncoder) -> list[tuple[int, int] | None]:
    out = []
    for _, kwargs in spy.passes:
        writes = kwargs.get("timestamp_writes")
        out.append(None if writes is None else (writes["beginning_of_pass_write_index"],
                                                writes["end_of_pass_write_index"]))
    return out


def submit(device, graph: FrameGraph, profiler=None, targets=None) -> SpyEncoder:
    """One frame, submitted the way the engine does it; also checks that the submit touches no
    buffer that is mapped or waiting for a map (that would abort the process, not raise)."""
    spy = SpyEncoder(device.create_command_encoder())
    graph.encode(spy, targets or {}, profiler=profiler)
    for buffer in spy.copy_targets:
        assert buffer.map_state == "unmapped"
    device.queue.submit([spy.finish()])
    if profiler is not None:
        profiler.submitted()
    return spy


def rounds_pass(device, name: str, buffer, rounds: int, phase=Phase.SIMULATE) -> Pass:
    module = device.create_shader_module(code=ROUNDS_WGSL)
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main",
                                "constants": {"ROUNDS": rounds}})
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": buffer, "offset": 0, "size": buffer.size}}])
    resource = f"{name}/data"
    return Pass(name, phase, Dispatch(pipeline, (group,), ((N + 63) // 64, 1, 1)),
                reads=(resource,), writes=(resource,))


def light_and_heavy(device):
    light = device.create_buffer_with_data(data=np.arange(N, dtype=np.uint32), usage=USAGE)
    heavy = device.create_buffer_with_data(data=np.arange(N, dtype=np.uint32), usage=USAGE)
    graph = FrameGraph([rounds_pass(device, "t:light", light, LIGHT),
                        rounds_pass(device, "t:heavy", heavy, HEAVY)],
                       uploaded={"t:light/data", "t:heavy/data"})
    return graph, light, heavy


@pytest.fixture(scope="module")
def quiet_device(gpu):
    """A device with timestamp queries that only ever runs compute work (see the module doc)."""
    if "timestamp-query" not in gpu.adapter.features:
        pytest.skip(f"{gpu.label} has no timestamp-query")
    return gpu.adapter.request_device_sync(label="profiler-test",
                                           required_features=["timestamp-query"])


def test_each_pass_gets_its_own_stamps_and_heavy_work_reads_longer(quiet_device):
    device = quiet_device
    graph, light, heavy = light_and_heavy(device)
    profiler = PassProfiler(device)
    assert profiler.source == GPU_TIMESTAMPS
    submit(device, graph, profiler)   # a first dispatch on a fresh device pays one-off costs:
    profiler.wait()                   # real GPU time, but not what this test compares
    profiler.reset()
    frames = 8
    for _ in range(frames):
        spy = submit(device, graph, profiler)
    assert [kind for kind, _ in spy.passes] == ["compute", "compute"]
    assert stamp_indices(spy) == [(0, 1), (2, 3)]
    assert [kwargs["label"] for _, kwargs in spy.passes] == ["t:light", "t:heavy"]
    profiler.wait()
    times = profiler.times()
    assert set(times) == {"t:light", "t:heavy"}
    assert all(math.isfinite(ms) and ms > 0 for ms in times.values()), times
    assert times["t:heavy"] > 3 * times["t:light"], times
    assert profiler.frames_measured + profiler.frames_skipped == frames
    assert profiler.frames_measured >= 1
    # the split passes computed what the kernel must compute
    start = np.arange(N, dtype=np.uint32)
    np.testing.assert_array_equal(np.frombuffer(device.queue.read_buffer(light), np.uint32),
                                  lcg_oracle(start, LIGHT * (frames + 1)))
    np.testing.assert_array_equal(np.frombuffer(device.queue.read_buffer(heavy), np.uint32),
                                  lcg_oracle(start, HEAVY * (frames + 1)))


def test_query_set_grows_when_an_encoding_outgrows_it(quiet_device):
    device = quiet_device
    buffers = [device.create_buffer_with_data(data=np.arange(N, dtype=np.uint32), usage=USAGE)
               for _ in range(5)]
    names = [f"g:pass{i}" for i in range(5)]
    graph = FrameGraph([rounds_pass(device, n, b, LIGHT) for n, b in zip(names, buffers)],
                       uploaded={f"{n}/data" for n in names})
    profiler = PassProfiler(device, capacity_passes=2)
    for _ in range(3):
        spy = submit(device, graph, profiler)
    assert profiler.capacity >= 5
    # every later frame stamps into the grown set from index 0
    assert stamp_indices(spy) == [(2 * i, 2 * i + 1) for i in range(5)]
    profiler.wait()
    times = profiler.times()
    assert set(times) == set(names)
    assert all(math.isfinite(ms) and ms > 0 for ms in times.values()), times
    for b in buffers:
        np.testing.assert_array_equal(np.frombuffer(device.queue.read_buffer(b), np.uint32),
                                      lcg_oracle(np.arange(N, dtype=np.uint32), 3 * LIGHT))


def _mixed_frame(device):
    """A clear, two compute passes, a copy and two draws into one target: enough to show that
    splitting passes keeps results and the clear-then-load order of a render target."""
    size = (20, 12)
    data = device.create_buffer_with_data(data=np.arange(N, dtype=np.uint32), usage=USAGE)
    other = device.create_buffer_with_data(data=np.arange(N, dtype=np.uint32)[::-1].copy(),
                                           usage=USAGE)
    out = device.create_buffer(size=4 * N, usage=USAGE)
    texture = device.create_texture(size=(*size, 1), format="rgba8unorm",
                                    usage=wgpu.TextureUsage.RENDER_ATTACHMENT
                                    | wgpu.TextureUsage.COPY_SRC)
    module = device.create_shader_module(code=RECT_WGSL)

    def rect(x0, red, green):
        return device.create_render_pipeline(
            layout="auto", vertex={"module": module, "entry_point": "vs_main",
                                   "constants": {"X0": x0}},
            primitive={"topology": "triangle-list"},
            fragment={"module": module, "entry_point": "fs_main",
                      "constants": {"X0": x0, "RED": red, "GREEN": green},
                      "targets": [{"format": "rgba8unorm"}]})

    passes = [Pass("m:clear", Phase.CLEAR, ClearBuffer(data, 0, 400), writes=("m:a/data",)),
              rounds_pass(device, "m:a", data, 7),
              rounds_pass(device, "m:b", other, 11),
              Pass("m:copy", Phase.READBACK, CopyBuffer(data, out, 4 * N), reads=("m:a/data",),
                   writes=("out",)),
              Pass("m:left", Phase.RENDER, Draw(rect(-1.0, 1.0, 0.0), target="img", vertices=6),
                   writes=("img",)),
              Pass("m:right", Phase.RENDER, Draw(rect(0.0, 0.0, 1.0), target="img", vertices=6),
                   writes=("img",))]
    graph = FrameGraph(passes, uploaded={"m:b/data"})
    targets = {"img": RenderTarget(texture.create_view(), (0.0, 0.0, 1.0, 1.0))}

    def results():
        image = device.queue.read_texture(
            {"texture": texture, "origin": (0, 0, 0), "mip_level": 0},
            {"offset": 0, "bytes_per_row": size[0] * 4, "rows_per_image": size[1]}, (*size, 1))
        return (np.frombuffer(image, np.uint8).reshape(size[1], size[0], 4),
                np.frombuffer(device.queue.read_buffer(other), np.uint32),
                np.frombuffer(device.queue.read_buffer(out), np.uint32))
    return graph, targets, results


def test_profiled_encoding_gives_the_same_results_as_the_shared_one(gpu):
    device = gpu.device
    graph, targets, results = _mixed_frame(device)
    shared = submit(device, graph, None, targets)
    expected = results()
    graph, targets, results = _mixed_frame(device)
    profiler = PassProfiler(device)
    split = submit(device, graph, profiler, targets)
    profiled = results()
    for a, b in zip(expected, profiled):
        np.testing.assert_array_equal(a, b)

    assert [k for k, _ in shared.passes] == ["compute", "render"]
    assert stamp_indices(shared) == [None, None]
    assert [k for k, _ in split.passes] == ["compute", "compute", "render", "render"]
    assert stamp_indices(split) == [(0, 1), (2, 3), (4, 5), (6, 7)]
    load_ops = [kw["color_attachments"][0]["load_op"] for k, kw in split.passes if k == "render"]
    assert load_ops == ["clear", "load"]
    # independent of both encodings: the second draw kept the first, the clear shows elsewhere
    image = profiled[0]
    assert tuple(image[2, 2]) == (255, 0, 0, 255)
    assert tuple(image[2, 15]) == (0, 255, 0, 255)
    assert tuple(image[9, 5]) == (0, 0, 255, 255)
    start = np.arange(N, dtype=np.uint32)
    start[:100] = 0
    np.testing.assert_array_equal(profiled[2], lcg_oracle(start, 7))
    np.testing.assert_array_equal(profiled[1], lcg_oracle(np.arange(N, dtype=np.uint32)[::-1], 11))

    profiler.wait()
    times = profiler.times()
    # buffer operations are encoder commands, not passes: no stamps, not listed
    assert set(times) == {"m:a", "m:b", "m:left", "m:right"}
    assert all(math.isfinite(ms) and ms >= 0 for ms in times.values()), times


def test_cpu_fallback_times_the_encoding_and_keeps_passes_shared(gpu):
    device = gpu.device
    graph, light, _ = light_and_heavy(device)
    profiler = PassProfiler(device, use_timestamps=False)
    assert profiler.source == CPU_ENCODE
    for _ in range(3):
        spy = submit(device, graph, profiler)
    assert [k for k, _ in spy.passes] == ["compute"] and stamp_indices(spy) == [None]
    assert graph.compute_pass_count(profiler=profiler) == 1 == graph.compute_pass_count()
    times = profiler.times()   # no GPU round trip: there the moment encoding ends
    assert set(times) == {"t:light", "t:heavy"}
    assert all(math.isfinite(ms) and ms > 0 for ms in times.values()), times
    assert profiler.frames_measured == 3
    np.testing.assert_array_equal(np.frombuffer(device.queue.read_buffer(light), np.uint32),
                                  lcg_oracle(np.arange(N, dtype=np.uint32), 3 * LIGHT))


def test_a_device_without_timestamp_queries_falls_back_to_cpu(gpu):
    plain = gpu.adapter.request_device_sync(label="profiler-test-plain")
    assert "timestamp-query" not in plain.features
    assert PassProfiler(plain).source == CPU_ENCODE
    with pytest.raises(EmberError, match="timestamp-query"):
        PassProfiler(plain, use_timestamps=True)


def test_the_ring_never_touches_a_slot_in_flight(gpu):
    """Many frames without waiting: full rings skip frames instead of reusing a mapped slot
    (``submit`` asserts that every copy target is unmapped; a violation aborts the process)."""
    device = gpu.device
    graph, _, _ = light_and_heavy(device)
    profiler = PassProfiler(device, ring_slots=2)
    frames = 40
    for _ in range(frames):
        submit(device, graph, profiler)
    # an encoding that is never reported submitted (e.g. recorded by a tool that submits it
    # itself, later): its slot must not be mapped while that submit can still come
    stray = SpyEncoder(device.create_command_encoder())
    graph.encode(stray, {}, profiler=profiler)
    submit(device, graph, profiler)
    for buffer in stray.copy_targets:
        assert buffer.map_state == "unmapped"
    device.queue.submit([stray.finish()])
    submit(device, graph, profiler)
    profiler.wait()
    assert profiler.frames_measured >= 1
    # the stray encoding counts as neither measured nor skipped, unless the ring was full for it
    assert frames + 2 <= profiler.frames_measured + profiler.frames_skipped <= frames + 3
    assert set(profiler.times()) == {"t:light", "t:heavy"}


def _timed_kinds(engine) -> set[str]:
    return {p.name for p in engine.frame_passes() if p.kind in ("compute", "render")}


def test_engine_times_every_pass_of_steps_and_draws(scenes_dir, gpu):
    scene = emberfx.load_scene(scenes_dir / "fountain.toml")
    with emberfx.Engine(scene, size=(64, 36)) as plain, \
            emberfx.Engine(scene, size=(64, 36)) as engine:
        shared_passes = engine.stats()["compute_passes_per_step"]
        assert not engine.profiling and engine.pass_times() == {}
        assert engine.stats()["pass_time_source"] is None
        engine.profiling = True
        assert engine.profiling
        simulation_compute = [p for p in engine.frame_passes()
                              if p.kind == "compute" and p.phase in SIMULATION_PHASES]
        assert engine.stats()["compute_passes_per_step"] == len(simulation_compute)
        for _ in range(4):
            engine.step()
            image = engine.render()
            plain.step()
            expected = plain.render()
            np.testing.assert_array_equal(image, expected)   # splitting passes changes nothing
        engine._telemetry.profiler.wait()
        times = engine.pass_times()
        assert set(times) == _timed_kinds(engine)
        assert {"fountain:emitter:update", "fountain:emitter:draw",
                "scene:frame:present"} <= set(times)
        assert all(math.isfinite(ms) and ms >= 0 for ms in times.values()), times
        stamps = "timestamp-query" in engine.device.features
        assert engine.stats()["pass_time_source"] == (GPU_TIMESTAMPS if stamps else CPU_ENCODE)
        for key, values in plain.state("fountain").items():
            np.testing.assert_array_equal(engine.state("fountain")[key], values, err_msg=key)

        engine.profiling = False
        assert engine.pass_times() == {}
        assert engine.stats()["compute_passes_per_step"] == shared_passes
        engine.step()
        engine.render()


def test_averages_start_as_a_plain_mean_then_move_exponentially(gpu):
    profiler = PassProfiler(gpu.device, use_timestamps=False, smoothing=0.5)
    for ms in (10.0, 0.0):
        profiler._fold({"x": ms})
    assert profiler.times() == {"x": 5.0}        # the mean while fewer than 1/smoothing samples
    profiler._fold({"x": 1.0})
    assert profiler.times() == {"x": 3.0}        # then each new frame weighs `smoothing`
    profiler.reset()
    assert profiler.times() == {} and profiler.frames_measured == 0


def test_passes_beyond_the_largest_query_set_run_untimed(quiet_device, monkeypatch):
    monkeypatch.setattr("emberfx.core.profiler.MAX_QUERIES", 8)   # wgpu allows 4096: 2048 passes
    device = quiet_device
    buffers = [device.create_buffer_with_data(data=np.arange(N, dtype=np.uint32), usage=USAGE)
               for _ in range(6)]
    names = [f"c:pass{i}" for i in range(6)]
    graph = FrameGraph([rounds_pass(device, n, b, LIGHT) for n, b in zip(names, buffers)],
                       uploaded={f"{n}/data" for n in names})
    profiler = PassProfiler(device, capacity_passes=2)
    spy = submit(device, graph, profiler)
    assert profiler.capacity == 4
    assert stamp_indices(spy) == [(0, 1), (2, 3), (4, 5), (6, 7), None, None]
    profiler.wait()
    assert set(profiler.times()) == set(names[:4])
    for b in buffers:
        np.testing.assert_array_equal(np.frombuffer(device.queue.read_buffer(b), np.uint32),
                                      lcg_oracle(np.arange(N, dtype=np.uint32), LIGHT))
