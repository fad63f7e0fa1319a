"""The order passes of the neighbour grid particle life builds (common/neighbours_sort.wgsl,
common/neighbours_order.wgsl; particle_life/sort_gather_half.wgsl) run alone on crafted cell
runs, against numpy's sort: empty cells, one particle, runs inside workgroup memory, and runs
longer than it, up to several times longer, reversed or shuffled, so the workgroup's bitonic
branch is exercised on its worst inputs, not on whatever order a scatter happens to leave.
(A one-invocation insertion sort needs one loop iteration per inversion; llvmpipe silently
leaves a loop after 65535 iterations, so a reversed run of 1,200 indices came out unsorted.)"""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.core import wgsl
from emberfx.core.bindings import PassBuilder
from emberfx.core.frame_graph import FrameGraph, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.readback import read_array
from emberfx.core.resources import Resources

CAPACITY = wgsl.int_constant("common/neighbours_runs.wgsl", "CAPACITY")
USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST


def crafted_runs(lengths, rng, how):
    """Particle indices 0..n-1 dealt into cells of ``lengths``, each run reversed or shuffled."""
    ids = rng.permutation(sum(lengths)).astype(np.uint32)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.uint32)
    for s, n in zip(starts, lengths):
        run = np.sort(ids[s:s + n])
        ids[s:s + n] = run[::-1] if how == "reversed" else rng.permutation(run)
    return ids, starts


def run_order_pass(gpu, shader, ids, starts, positions=None, grid=None, cell_size=(1, 1, 1)):
    """The order pass alone; with ``positions``, also what it gathers (vec4f, or for
    sort_gather_half.wgsl its 8-byte records as uint32 pairs). ``grid``: cells per axis (default
    one row of len(starts))."""
    resources = Resources(gpu)
    params = np.zeros((), struct_dtype("particle_life/types.wgsl", "PLParams"))
    params["grid"] = (*(grid or (len(starts), 1, 1)), len(starts))
    params["cell_size"][:3] = cell_size
    half = shader.endswith("_half.wgsl")
    params["count"] = len(ids)
    # the grid's record: the same cells, records of LifeParticle (2 vec4f, position first)
    grid_params = np.zeros((), struct_dtype("common/neighbours.wgsl", "GridParams"))
    grid_params["grid"], grid_params["cell_size"] = params["grid"], params["cell_size"]
    grid_params["count"], grid_params["stride"], grid_params["copy"] = len(ids), 2, 1
    uniform = wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
    # each cell's first slot and, past the last cell, the end of its run (as the grid's scan
    # leaves them)
    bounds = np.append(starts, len(ids)).astype(np.uint32)
    buffers = {"grid": resources.buffer("t", "grid", grid_params.nbytes, USAGE),
               "cell_start": resources.buffer("t", "cell_start", bounds.nbytes, USAGE),
               "cell_particles": resources.buffer("t", "cell_particles", max(ids.nbytes, 4),
                                                  USAGE)}
    resources.write(buffers["grid"], grid_params.tobytes())
    if half:
        buffers["params"] = resources.buffer("t", "params", params.nbytes, uniform)
        resources.write(buffers["params"], params.tobytes())
    for name, data in (("cell_start", bounds), ("cell_particles", ids)):
        if data.size:
            resources.write(buffers[name], data.tobytes())
    if positions is not None:
        particles = np.zeros(len(ids), struct_dtype("particle_life/types.wgsl", "LifeParticle"))
        particles["position"] = positions
        buffers["particles_in" if half else "points"] = resources.buffer(
            "t", "particles", max(particles.nbytes, 32), USAGE)
        buffers["gathered_half" if half else "snapshot"] = resources.buffer(
            "t", "gathered", max(len(ids) * 16, 16), USAGE)
        if len(ids):
            resources.write(buffers["particles_in" if half else "points"], particles.tobytes())
    build = PassBuilder(gpu, resources)
    order = build.compute("t:order", Phase.SIMULATE, shader, gpu.grid(len(starts)), buffers)
    graph = FrameGraph([order], uploaded=resources.persistent())
    encoder = gpu.device.create_command_encoder()
    graph.encode(encoder, {})
    gpu.device.queue.submit([encoder.finish()])
    result = read_array(gpu.device, buffers["cell_particles"].buffer, np.uint32, len(ids))
    gathered = (None if positions is None else
                read_array(gpu.device, buffers["gathered_half"].buffer, np.uint32,
                           2 * len(ids)).reshape(-1, 2) if half else
                read_array(gpu.device, buffers["snapshot"].buffer, np.float32,
                           4 * len(ids)).reshape(-1, 4))
    resources.release_all()
    return result, gathered


def expected_order(ids, starts):
    ends = np.append(starts[1:], len(ids))
    return np.concatenate([np.sort(ids[s:e]) for s, e in zip(starts, ends)] or [ids])


LENGTH_SETS = {
    "ragged": [0, 1, 2, 31, 32, 33, 0, CAPACITY - 1, CAPACITY, 5],
    "past_capacity": [3, CAPACITY + 1, 0, 17],
    "far_past": [CAPACITY * 4 + 123, 1, CAPACITY * 2, 0],
    "one_cell": [2 * CAPACITY + 300],
    "all_empty": [0, 0, 0],
}


@pytest.mark.parametrize("how", ["reversed", "shuffled"])
@pytest.mark.parametrize("lengths", list(LENGTH_SETS.values()), ids=list(LENGTH_SETS))
def test_sort_cells_orders_every_run_like_numpy(gpu, lengths, how):
    rng = np.random.default_rng(sum(lengths) + len(how))
    ids, starts = crafted_runs(lengths, rng, how)
    result, _ = run_order_pass(gpu, "common/neighbours_sort.wgsl", ids, starts)
    np.testing.assert_array_equal(result, expected_order(ids, starts))


@pytest.mark.parametrize("lengths", [LENGTH_SETS["ragged"], LENGTH_SETS["far_past"]],
                         ids=["ragged", "far_past"])
def test_sort_gather_orders_and_copies_positions(gpu, lengths):
    rng = np.random.default_rng(len(lengths))
    ids, starts = crafted_runs(lengths, rng, "reversed")
    positions = rng.uniform(0, 1, (len(ids), 4)).astype(np.float32)
    result, gathered = run_order_pass(gpu, "common/neighbours_order.wgsl", ids, starts,
                                      positions)
    want = expected_order(ids, starts)
    np.testing.assert_array_equal(result, want)
    np.testing.assert_array_equal(gathered, positions[want])
