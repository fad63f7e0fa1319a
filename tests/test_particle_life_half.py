"""precision = "half" (forces_half.wgsl, sort_gather_half.wgsl): one step against the all-pairs
float64 numpy step within a tolerance derived per particle from the 16-bit positions, its order
pass alone against numpy, determinism, and the field's checks. (The exact kernels keep their
bits: tests/test_particle_life_tiled.py.)

The tolerance. Positions reach the law as 16-bit fixed-point coordinates in units of
cell * 2^-FRACTION_BITS (particle_life/half_positions.wgsl), each rounded to the nearest unit, so
an offset d (both ends rounded) is off by at most one unit per axis; delta = 2 units * sqrt(dims)
leaves the f32 arithmetic around the rounding room to spare. Coincident particles stay exactly
coincident (no term, as in the exact law).
A term f(|d| / r_max) d / |d| then moves by at most delta * (L / r_max + 2 / |d|), where
L = max(1 / beta, 2 / (1 - beta)) bounds the slope of f (|a| <= 1) and 2 delta / |d| the turn of
the direction d / |d| (|f| <= 1), and by at most 2 in any case; f is continuous and zero at r_max,
so pairs up to r_max + delta count. The velocity bound is dt * r_max * force * the sum over a
particle's pairs, plus F32_SLACK for the f32 arithmetic both ways (the exact grid test's 1e-4
covers the float32 sums; the division-free law adds a few ulps per term); positions move by the
velocity times dt."""

from __future__ import annotations

import numpy as np
import particle_life_model as model
import pytest
from test_particle_life import DT, boundary_particles, put_particles, swarm_engine
from test_particle_life_order import crafted_runs, expected_order, run_order_pass
from test_particle_life_tiled import crowded_particles

from emberfx.core import wgsl
from emberfx.core.errors import SceneError
from emberfx.model.scene import loads_scene
from emberfx.systems.particle_life.system import attraction_matrix, grid_for

F32_SLACK = 1e-4
FRACTION_BITS = wgsl.int_constant("particle_life/half_positions.wgsl", "FRACTION_BITS")
UNIT = 2.0 ** -FRACTION_BITS    # of a cell: the records' resolution


def velocity_bounds(position, box, r_max, beta, force):
    """Per particle: the bound on |v_half - v_exact| per axis after one step (module doc)."""
    box = np.asarray(box, np.float64)
    cell = (box / np.asarray(grid_for(tuple(box), r_max)[:len(box)])).max()
    delta = 2.0 * cell * UNIT * np.sqrt(len(box))
    slope = max(1.0 / beta, 2.0 / (1.0 - beta))
    x = np.asarray(position, np.float64)
    bounds = np.zeros(len(x))
    for start in range(0, len(x), 512):
        d = x[None, :, :] - x[start:start + 512, None, :]
        d -= box * np.round(d / box)
        dist = np.sqrt((d * d).sum(axis=2))
        pair = np.where(dist > 0, delta * (slope / r_max + 2.0 / np.maximum(dist, 1e-30)), 0.0)
        pair = np.where(dist < r_max + delta, np.minimum(pair, 2.0), 0.0)
        pair[np.arange(len(pair)), np.arange(start, start + len(pair))] = 0.0   # itself
        bounds[start:start + 512] = pair.sum(axis=1)
    return DT * r_max * abs(force) * bounds + F32_SLACK


CASES = {   # dims, box, count, crowd (particles packed into cell (2, 2[, 2]))
    "2d": ((1.0, 0.9), 3000, 0), "3d": ((0.6, 0.5, 0.55), 2000, 0),
    "one": ((1.0, 0.9), 1, 0), "ragged": ((1.0, 0.9), 333, 0),
    "crowded_2d": ((1.0, 0.9), 1500, 1100), "crowded_3d": ((0.6, 0.5, 0.55), 1200, 700),
    "three_cells": ((0.31, 0.45), 400, 0), "three_cells_3d": ((0.31, 0.6, 0.45), 500, 40)}


@pytest.mark.parametrize("case", list(CASES))
def test_half_step_within_its_derived_bound_of_all_pairs_numpy(gpu, case):
    box, count, crowd = CASES[case]
    dims, r_max, beta, force = len(box), 0.1, 0.3, 1.0
    engine = swarm_engine(count=count, species=5, box=box, r_max=r_max, beta=beta, force=force,
                          friction_half_life=0.04, precision="half")
    rng = np.random.default_rng(count + dims)
    position = (crowded_particles(count, box, r_max, crowd, rng) if crowd else
                boundary_particles(count, box, r_max, rng))
    velocity = rng.normal(0, 0.05, (count, dims)).astype(np.float32)
    species = rng.integers(0, 5, count)
    put_particles(engine, position, velocity, species)
    matrix = attraction_matrix(engine.entity("swarm").particle_life, 5, 0).astype(np.float64)
    engine.step(1)
    state = engine.state("swarm")
    x, v = model.step(position, velocity, species, matrix, box=box, r_max=r_max, beta=beta,
                      force=force, half_life=0.04, dt=DT)
    bound = velocity_bounds(position, box, r_max, beta, force)[:, None]
    np.testing.assert_array_equal(state["species"], species)
    error = np.abs(state["velocity"] - v)
    assert (error <= bound).all(), (error.max(), bound[np.unravel_index(
        np.argmax(error - bound), error.shape)[0]])
    half = 0.5 * np.asarray(box)
    wrapped = np.abs((state["position"] - x + half) % np.asarray(box) - half)
    assert (wrapped <= bound * DT + 1e-6).all(), wrapped.max()   # 1e-6: f32 positions < 1
    if count > 1000:
        # the bound is not vacuous: for most particles it is below what the forces changed
        forced = np.abs(v - velocity * 0.5 ** (DT / 0.04)).max(axis=1)
        assert (bound[:, 0] < forced).mean() > 0.75


def test_half_is_not_exact_but_close(gpu):
    """The opt-in really runs the 16-bit path (its bits differ from the exact default's), and
    one step stays within a few 1e-5 of it on a uniform swarm."""
    fields = dict(count=4000, species=6, box=(1.2, 1.0), r_max=0.1, reorder_every=0)
    exact, half = swarm_engine(**fields), swarm_engine(precision="half", **fields)
    exact.step(1)
    half.step(1)
    a, b = exact.state("swarm")["velocity"], half.state("swarm")["velocity"]
    assert a.tobytes() != b.tobytes()
    assert np.abs(a - b).max() < 5e-4


def test_half_runs_are_deterministic_and_keep_identities(gpu):
    fields = dict(count=2000, species=6, box=(1.2, 1.0), r_max=0.1, reorder_every=3,
                  precision="half")
    a, b = swarm_engine(**fields), swarm_engine(**fields)
    species = a.state("swarm")["species"]
    a.step(10)
    b.step(10)
    sa, sb = a.state("swarm"), b.state("swarm")
    np.testing.assert_array_equal(sa["species"], species)
    for key in sa:
        assert sa[key].tobytes() == sb[key].tobytes(), key


GRID = (7, 5, 3)          # cells per axis of the order-pass test
CELL = np.array([0.13, 0.11, 0.17], np.float32)   # cell size per axis


@pytest.mark.parametrize("lengths", [[0, 1, 2, 31, 32, 33, 0, 1023, 1024, 5] + [3] * 95,
                                     [2100, 1, 0, 17] + [0] * 101, [0] * 105],
                         ids=["ragged", "past_capacity", "all_empty"])
def test_sort_gather_half_orders_and_packs_records(gpu, lengths):
    """Each run sorted like numpy; each record holds the particle's fixed-point coordinates
    (cell << FRACTION_BITS plus the position in its cell rounded to units of
    cell * 2^-FRACTION_BITS, modulo 2^16) and its species exactly."""
    assert len(lengths) == np.prod(GRID)
    rng = np.random.default_rng(len(lengths) + sum(lengths))
    ids, starts = crafted_runs(lengths, rng, "reversed")
    cell_of = np.repeat(np.arange(len(lengths)), lengths)          # by slot
    coords = np.stack([cell_of % GRID[0], cell_of // GRID[0] % GRID[1],
                       cell_of // (GRID[0] * GRID[1])], axis=1)
    positions = np.zeros((len(ids), 4), np.float32)
    inside = rng.uniform(0, 1, (len(ids), 3)) * CELL
    inside[::7] = 0.0                                             # on the corner itself
    inside[3::7] = np.nextafter(CELL, 0)                          # at the far corner
    positions[ids, :3] = coords * CELL + inside.astype(np.float32)
    positions[ids, 3] = rng.integers(0, 16, len(ids))
    result, records = run_order_pass(gpu, "particle_life/sort_gather_half.wgsl", ids, starts,
                                     positions, grid=GRID, cell_size=tuple(CELL))
    want = expected_order(ids, starts)
    np.testing.assert_array_equal(result, want)
    corner = (coords * CELL).astype(np.float32)                    # as the shader: f32 product
    rel = (positions[want, :3] - corner).astype(np.float64)       # f32, as the shader takes it
    exact = rel / CELL * 2.0 ** FRACTION_BITS                     # units past the corner
    words = np.stack([records[:, 0] & 0xFFFF, records[:, 0] >> 16, records[:, 1] & 0xFFFF], 1)
    past_corner = (words.astype(np.int64) - (coords << FRACTION_BITS) + 32768) % 65536 - 32768
    assert (np.abs(past_corner - exact) <= 0.5 + 1e-3).all(), np.abs(past_corner - exact).max()
    np.testing.assert_array_equal(records[:, 1] >> 16, positions[want, 3].astype(np.uint32))


@pytest.mark.parametrize("text", ['precision = "half"\ngrid_kernel = "cell_tiled"',
                                  'precision = "half"\nneighbours = "all_pairs"'])
def test_half_needs_the_gathered_grid_kernel(text):
    with pytest.raises(SceneError) as info:
        loads_scene(f'[[entity]]\nname = "swarm"\n[entity.particle_life]\n{text}\n', path="pl.toml")
    message = str(info.value)
    assert "\n" not in message and "entity 'swarm'" in message
    for piece in ("particle_life.precision", '"gathered"', "found"):
        assert piece in message, (piece, message)
