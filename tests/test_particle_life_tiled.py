"""The grid kernels (grid_kernel = "gathered", the default, "per_particle" and "cell_tiled")
against the earliest one ("baseline") and the all-pairs numpy step, including crowded cells that
take the slow branches: a home cell with more particles than its lanes, a neighbourhood longer
than one staged chunk, a cell longer than the order pass's workgroup memory; boxes of 3 and 4
cells a side, where neighbours that are not across the edge can still be nearer through it, and
where gathered's rows of 3 cells wrap in y or z."""

from __future__ import annotations

import math

import numpy as np
import particle_life_model as model
import pytest
from test_particle_life import DT, put_particles, swarm_engine

from emberfx.core import wgsl
from emberfx.core.readback import read_array
from emberfx.systems.particle_life.system import attraction_matrix

# particles of a home cell taken at once, and neighbours staged at once, by forces_tiled.wgsl
CELL_LANES = wgsl.int_constant("particle_life/forces_tiled.wgsl", "CELL_LANES")
CHUNK = wgsl.int_constant("particle_life/forces_tiled.wgsl", "CHUNK")
SORT_CAPACITY = wgsl.int_constant("common/neighbours_runs.wgsl", "CAPACITY")
# the largest species matrix the forces passes hold in workgroup memory
MAX_SPECIES = math.isqrt(wgsl.int_constant("particle_life/forces_gathered.wgsl", "MAX_MATRIX"))


def crowded_particles(n, box, r_max, crowd, rng):
    """``n`` particles: ``crowd`` of them inside grid cell (2, 2[, 2]) (a dense cluster), the
    rest uniform in the box."""
    box = np.asarray(box)
    cell = box / np.floor(box / r_max)
    p = rng.uniform(0, 1, (n, len(box))) * box
    p[:crowd] = (2.0 + rng.uniform(0.001, 0.999, (crowd, len(box)))) * cell
    return p.astype(np.float32)


KERNELS = ("gathered", "cell_tiled", "per_particle", "baseline")


def all_kernels(**fields):
    return [swarm_engine(grid_kernel=kernel, **fields) for kernel in KERNELS]


def load_state(engines, position, velocity, species):
    for engine in engines:
        put_particles(engine, position, velocity, species)


@pytest.mark.parametrize("box,count,crowd", [
    ((1.0, 0.9), 3000, 1100), ((0.6, 0.5, 0.55), 2000, 300), ((1.0, 0.9), 40, 0),
    ((0.31, 0.45), 400, 60), ((0.31, 0.6, 0.45), 500, 40)])
def test_grid_kernels_agree_bit_for_bit(gpu, box, count, crowd):
    """The grid kernels add the same terms in the same order: equal bytes after several steps,
    reorders included."""
    dims = len(box)
    fields = dict(count=count, species=5, box=box, r_max=0.1, force=1.0, reorder_every=2)
    engines = all_kernels(**fields)
    rng = np.random.default_rng(count + dims)
    load_state(engines, crowded_particles(count, box, 0.1, crowd, rng),
               rng.normal(0, 0.05, (count, dims)).astype(np.float32),
               rng.integers(0, 5, count))
    start = engines[0].state("swarm")["position"]
    for engine in engines:
        engine.step(5)
    *others, baseline = (engine.state("swarm") for engine in engines)
    assert np.abs(baseline["position"] - start).max() > 1e-4      # it moved
    for kernel, state in zip(KERNELS, others):
        for key in baseline:
            assert state[key].tobytes() == baseline[key].tobytes(), (kernel, key)


@pytest.mark.parametrize("box", [(0.45, 0.4), (0.45, 0.4, 0.35)])
def test_gathered_agrees_with_coincident_particles_and_every_species(gpu, box):
    """gathered drops the particle itself by its zero offset (no slot test) and indexes the
    attraction by the species' float bits: particles sharing a spot (twins, and 10 at the box's
    origin, seen across the edge from the far corner) give no term to each other, and every
    species of the largest matrix meets the same attraction as in baseline. Equal bytes after 3
    steps."""
    dims = len(box)
    count = 601                     # runs of every length modulo the four slots per iteration
    rng = np.random.default_rng(21 + dims)
    position = rng.uniform(0, 1, (count, dims)) * np.asarray(box)
    position[:150] = position[150:300]          # 150 pairs of twins: one spot, species, velocity
    position[-20:-10] = 0.0                     # 10 at the origin
    position[-10:] = np.asarray(box) * 0.995    # 10 at the far corner, near the origin's image
    position = position.astype(np.float32)
    species = np.arange(count) % MAX_SPECIES
    species[:150] = species[150:300]
    velocity = rng.normal(0, 0.05, (count, dims)).astype(np.float32)
    velocity[:150] = velocity[150:300]
    fields = dict(count=count, species=MAX_SPECIES, box=box, r_max=0.1, force=1.0,
                  reorder_every=2)
    engines = [swarm_engine(grid_kernel=kernel, **fields) for kernel in ("gathered", "baseline")]
    load_state(engines, position, velocity, species)
    for engine in engines:
        engine.step(3)
    gathered, baseline = (engine.state("swarm") for engine in engines)
    assert np.abs(baseline["position"] - position).max() > 1e-4      # it moved
    # twins feel the same forces, so they stay on one spot (and meet a zero offset every step)
    np.testing.assert_array_equal(gathered["position"][:150], gathered["position"][150:300])
    for key in baseline:
        assert gathered[key].tobytes() == baseline[key].tobytes(), key


@pytest.mark.parametrize("kernel", ["gathered", "per_particle", "cell_tiled"])
@pytest.mark.parametrize("dims,count,crowd", [(2, 1500, 1100), (3, 1200, 700)])
def test_crowded_cells_match_all_pairs_numpy(gpu, dims, count, crowd, kernel):
    """One step against the float64 oracle with a cluster far beyond a workgroup and a chunk.
    Tolerance 2e-4 absolute: float32 sums of up to ~1,500 neighbours (the existing grid test
    uses 1e-4 for a few hundred)."""
    box = (1.0, 0.9) if dims == 2 else (0.6, 0.5, 0.55)
    fields = dict(count=count, species=4, box=box, r_max=0.1, beta=0.3, force=0.2,
                  friction_half_life=0.04, grid_kernel=kernel)
    engine = swarm_engine(**fields)
    rng = np.random.default_rng(7 + dims)
    position = crowded_particles(count, box, 0.1, crowd, rng)
    velocity = rng.normal(0, 0.05, (count, dims)).astype(np.float32)
    species = rng.integers(0, 4, count)
    put_particles(engine, position, velocity, species)
    matrix = attraction_matrix(engine.entity("swarm").particle_life, 5, 0).astype(np.float64)
    engine.step(1)
    state = engine.state("swarm")
    x, v = model.step(position, velocity, species, matrix, box=box, r_max=0.1, beta=0.3,
                      force=0.2, half_life=0.04, dt=DT)
    np.testing.assert_array_equal(state["species"], species)
    np.testing.assert_allclose(state["velocity"], v, atol=2e-4, rtol=0)
    half = 0.5 * np.asarray(box)
    wrapped = (state["position"] - x + half) % np.asarray(box) - half
    np.testing.assert_allclose(wrapped, 0.0, atol=2e-4)


@pytest.mark.parametrize("kernel", KERNELS)
def test_order_pass_sorts_runs_longer_than_its_workgroup_memory(gpu, kernel):
    """A cell holding more than SORT_CAPACITY particles takes the workgroup's bitonic branch; for
    gathered, the positions copied into cell order follow the sorted indices there too."""
    count, box = SORT_CAPACITY + 300, (0.5, 0.5)
    engine = swarm_engine(count=count, species=3, box=box, r_max=0.1, reorder_every=0,
                          grid_kernel=kernel)
    rng = np.random.default_rng(3)
    position = crowded_particles(count, box, 0.1, SORT_CAPACITY + 100, rng)
    species = rng.integers(0, 3, count)
    put_particles(engine, position, np.zeros((count, 2), np.float32), species)
    engine.step(1)
    system = engine.system_of("swarm", "particle_life")
    cells = system.cells(engine._ref("swarm"))
    counts = np.bincount(cells["cell_of"], minlength=system.swarms["swarm"].cells)
    assert counts.max() > SORT_CAPACITY and counts.max() > CHUNK > CELL_LANES
    order, starts = cells["cell_particles"], cells["cell_start"]
    assert sorted(order) == list(range(count))
    for c in np.flatnonzero(counts):
        run = order[starts[c]:starts[c] + counts[c]]
        assert (cells["cell_of"][run] == c).all()
        assert (np.diff(run.astype(np.int64)) > 0).all(), c   # uint32 diffs would wrap
    if kernel == "gathered":
        # the step's input: the positions put above, species in w (reorder_every = 0 keeps the
        # buffers in particle order)
        gathered = read_array(engine.device, system.swarms["swarm"].buffers["gathered"],
                              np.float32, count * 4).reshape(count, 4)
        np.testing.assert_array_equal(gathered[:, :2], position[order])
        np.testing.assert_array_equal(gathered[:, 2], 0.0)
        np.testing.assert_array_equal(gathered[:, 3], species[order])
