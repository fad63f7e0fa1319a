"""What every benchmark shares: waiting for the GPU, timing encoded work (warm-up, best of
REPEATS), the copy-bandwidth rooflines, and the few helpers that build timed work from an
Engine's public surface (its frame passes, an output texture of its own).

GPU time is measured around many iterations encoded into one command buffer, closed by a
blocking read of a tiny buffer, so per-submit overhead is amortised the way a frame amortises it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

import numpy as np

WARMUP_SECONDS = 0.5     # the least warm-up: a hardware GPU idles at a low clock
# A hardware GPU that comes from light work (small launch-bound cases) ramps its clock for longer:
# on the H200 the first 1M-particle step after a 256k one measured 0.44-0.48 of the roofline,
# and 0.54 from the next 1 s of the same work on. So on hardware the warm-up goes on until the
# fastest submission of a WARMUP_WINDOW is within STEADY of the window's before, for at most
# WARMUP_MAX_SECONDS.
WARMUP_WINDOW = 0.25
STEADY = 0.02
WARMUP_MAX_SECONDS = 3.0
REPEATS = 3              # measurements per figure; the fastest is reported


def sync(device) -> None:
    """Wait until all submitted work is done: map a buffer that a new submission writes.

    Mapping waits for the last submission that used the buffer, and one queue completes its
    submissions in order. (A buffer no submission touched would map at once.)"""
    import wgpu

    usage = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
    probe = device.create_buffer(size=4, usage=usage)
    source = device.create_buffer(size=4, usage=wgpu.BufferUsage.COPY_SRC)
    encoder = device.create_command_encoder()
    encoder.copy_buffer_to_buffer(source, 0, probe, 0, 4)
    device.queue.submit([encoder.finish()])
    probe.map_sync("READ")
    probe.unmap()
    probe.destroy()
    source.destroy()


def timed(device, encode, iterations: int, timestamps: bool = True) -> float:
    """Seconds per iteration of ``encode(encoder)``: the best of REPEATS submissions of
    ``iterations`` each, after at least WARMUP_SECONDS of the same work (at least one
    submission), and on a hardware GPU until its speed is steady (``warm_up``).

    The warm-up matters on a hardware GPU: the H200's SM clock starts near 345 MHz when idle and
    reaches 1980 MHz only under sustained load, so a cold measurement of a few milliseconds runs
    2-4x slow. GPU time comes from timestamp queries written by two empty compute passes around
    the work (when the device has timestamp-query); otherwise wall time around submit +
    completion."""
    import wgpu

    def submission() -> float:
        begin = time.perf_counter()
        encoder = device.create_command_encoder()
        for _ in range(iterations):
            encode(encoder)
        device.queue.submit([encoder.finish()])
        sync(device)
        return time.perf_counter() - begin

    from emberfx.core.gpu import get_context

    warm_up(submission, hardware=not get_context().is_software)
    stamps = None
    if timestamps and "timestamp-query" in device.features:
        stamps = device.create_query_set(type="timestamp", count=2)
        resolved = device.create_buffer(
            size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
    best = float("inf")
    for _ in range(REPEATS):
        encoder = device.create_command_encoder()
        if stamps is not None:
            encoder.begin_compute_pass(timestamp_writes={
                "query_set": stamps, "end_of_pass_write_index": 0}).end()
        for _ in range(iterations):
            encode(encoder)
        if stamps is not None:
            encoder.begin_compute_pass(timestamp_writes={
                "query_set": stamps, "beginning_of_pass_write_index": 1}).end()
            encoder.resolve_query_set(stamps, 0, 2, resolved, 0)
        begin = time.perf_counter()
        device.queue.submit([encoder.finish()])
        sync(device)
        seconds = (time.perf_counter() - begin) / iterations
        if stamps is not None:
            t0, t1 = np.frombuffer(device.queue.read_buffer(resolved), np.uint64)
            gpu = float(t1 - t0) * 1e-9 / iterations
            seconds = gpu if gpu > 0 else seconds
        best = min(best, seconds)
    return best


def warm_up(submission, hardware: bool) -> int:
    """Run ``submission()`` (it returns its seconds) for WARMUP_SECONDS and, on a hardware GPU,
    on until a WARMUP_WINDOW's fastest submission is within STEADY of the window's before (at
    most WARMUP_MAX_SECONDS): pipelines, first touch of memory, clocks. Returns how many ran."""
    start = window_start = time.perf_counter()
    count, fastest, before = 0, float("inf"), None
    while True:
        fastest = min(fastest, submission())
        count += 1
        now = time.perf_counter()
        if not hardware:
            if now - start >= WARMUP_SECONDS:
                return count
            continue
        if now - window_start < WARMUP_WINDOW:
            continue
        steady = before is not None and fastest >= before * (1 - STEADY)
        if now - start >= WARMUP_MAX_SECONDS or (steady and now - start >= WARMUP_SECONDS):
            return count
        before, fastest, window_start = fastest, float("inf"), now


def timed_passes(device, passes, iterations: int, timestamps: bool = True,
                 prologue=None) -> float:
    """``timed`` for a list of frame-graph passes (e.g. ``engine.frame_passes(...)``), encoded
    in their order as a graph of their own; what they read counts as uploaded. ``prologue``
    (encoder -> None), when given, is encoded once before the iterations of every submission
    (warm-up included) and counts in the time: e.g. copies that restore a starting state."""
    from emberfx.core.frame_graph import FrameGraph

    graph = FrameGraph(list(passes), uploaded={r for p in passes for r in p.reads})
    if prologue is None:
        return timed(device, lambda encoder: graph.encode(encoder, {}), iterations, timestamps)

    def submission(encoder) -> None:
        prologue(encoder)
        for _ in range(iterations):
            graph.encode(encoder, {})

    return timed(device, submission, 1, timestamps) / iterations


def output_texture(engine):
    """A texture the engine can draw a whole frame into (its size, ``OUTPUT_FORMAT``)."""
    import wgpu

    from emberfx.engine.engine import OUTPUT_FORMAT

    w, h = engine.size
    return engine.device.create_texture(
        label="bench/output", size=(w, h, 1), format=OUTPUT_FORMAT,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)


def copy_bandwidth(device, nbytes: int) -> float:
    """Device-to-device copy, bytes read + written per second (the roofline of a streaming
    pass)."""
    import wgpu

    usage = wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.STORAGE
    a = device.create_buffer(size=nbytes, usage=usage)
    b = device.create_buffer(size=nbytes, usage=usage)
    seconds = timed(device, lambda enc: enc.copy_buffer_to_buffer(a, 0, b, 0, nbytes), 20)
    a.destroy()
    b.destroy()
    return 2 * nbytes / seconds


def compute_copy_bandwidth(ctx, nbytes: int) -> float:
    """A vec4 copy in a compute shader (shaders/bench/copy.wgsl), bytes read + written per
    second."""
    import wgpu

    from emberfx.core.bindings import bind
    from emberfx.core.resources import Resources

    device = ctx.device
    scratch = Resources(ctx)   # the benchmark's own buffers, outside any Engine
    a = scratch.buffer("bench", "copy_src", nbytes, wgpu.BufferUsage.STORAGE)
    b = scratch.buffer("bench", "copy_dst", nbytes, wgpu.BufferUsage.STORAGE)
    pipeline = ctx.compute_pipeline("bench/copy.wgsl")
    group = bind(ctx, scratch, "bench:copy", "bench/copy.wgsl", {"src": a, "dst": b}).group(0)
    grid = ctx.grid((nbytes // 16 + 255) // 256)

    def encode(encoder):
        cp = encoder.begin_compute_pass(label="bench:copy")
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, group)
        cp.dispatch_workgroups(*grid)
        cp.end()

    seconds = timed(device, encode, 20)
    scratch.release_all()
    return 2 * nbytes / seconds


def copy_size(ctx) -> int:
    """Bytes for the compute-copy roofline: 256 MiB, or the largest storage binding below that."""
    return min(256 << 20, ctx.limits["max-storage-buffer-binding-size"] // 16 * 16)


def copy_row(ctx) -> tuple[dict, float]:
    """The compute-copy roofline as a row, and its bytes per second."""
    size = copy_size(ctx)
    bandwidth = compute_copy_bandwidth(ctx, size)
    return ({"name": f"compute vec4 copy ({size >> 20} MiB)", "value": bandwidth / 1e9,
             "unit": "GB/s"}, bandwidth)


def row_line(row: dict) -> str:
    """A row as the bench table prints it: name, value, unit, then its other keys."""
    value = "-" if row["value"] is None else f"{row['value']:.3f}"
    extra = "  ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                      for k, v in row.items() if k not in ("name", "value", "unit"))
    return f"  {row['name']:<58} {value:>10} {row['unit']:<19} {extra}"


def report(rows: list[dict], row: dict) -> None:
    """Appends ``row`` to ``rows`` and prints it to stderr at once, so that a run cut short
    (a timeout) still shows what it measured; the table or JSON on stdout comes at the end."""
    rows.append(row)
    print(f"[bench] {row_line(row).strip()}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def stdout_to_stderr():
    """Native libraries (Taichi's logger, lifelib's build) print to file descriptor 1;
    `bench --json` must keep stdout for the JSON, so those lines go to stderr."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
