"""Particle life on the GPU: the grid neighbour search against an all-pairs numpy step."""

from __future__ import annotations

import numpy as np
import particle_life_model as model
import pytest

from emberfx.core.errors import DeviceLimitError, SceneError
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings, loads_scene
from emberfx.systems.particle_life.component import ParticleLife
from emberfx.systems.particle_life.system import PARTICLE, attraction_matrix

DT = 1.0 / 60.0


def swarm_engine(**fields) -> Engine:
    comp = ParticleLife(**fields)
    scene = Scene(SceneSettings(seed=5, fixed_dt=DT), Camera(kind="orthographic"),
                  [EntitySpec("swarm", {"particle_life": comp})])
    return Engine(scene, size=(32, 32))


def put_particles(engine, position, velocity, species):
    """Replace the swarm's state (e.g. particles on cell and box boundaries)."""
    system = engine.system_of("swarm", "particle_life")
    swarm = system.swarms["swarm"]
    rows = np.zeros(len(position), PARTICLE)
    rows["position"][:, :position.shape[1]] = position
    rows["position"][:, 3] = species
    rows["velocity"][:, :velocity.shape[1]] = velocity
    engine.resources.write(f"swarm/particles{swarm.parity}", rows.tobytes())
    engine.resources.write(f"swarm/ids{swarm.parity}",
                           np.arange(len(position), dtype=np.uint32).tobytes())


def boundary_particles(n, box, r_max, rng):
    """Random particles, a third of them placed exactly on cell and box boundaries."""
    box = np.asarray(box)
    grid = np.floor(box / r_max)
    cell = box / grid
    p = rng.uniform(0, 1, (n, len(box))) * box
    on_edges = rng.random((n, len(box))) < 0.33
    p = np.where(on_edges, np.round(p / cell) * cell, p).astype(np.float32)
    # inside [0, box) as the GPU stores it (float32): the box edge itself wraps to 0
    return np.where(p >= np.float32(box), np.float32(0), p).astype(np.float32)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("count", [1, 100, 5000])
def test_one_grid_step_equals_all_pairs_numpy(gpu, count, dims):
    """Tolerance: 1e-4 absolute on positions and velocities after one step (float32 sums of
    up to a few hundred neighbours against float64)."""
    box = (1.0, 0.9) if dims == 2 else (0.6, 0.5, 0.55)
    fields = dict(count=count, species=5, box=box, r_max=0.1, beta=0.3, force=1.0,
                  friction_half_life=0.04)
    engine = swarm_engine(**fields)
    rng = np.random.default_rng(count + dims)
    position = boundary_particles(count, box, 0.1, rng)
    velocity = rng.normal(0, 0.05, (count, dims)).astype(np.float32)
    species = rng.integers(0, 5, count)
    put_particles(engine, position, velocity, species)
    matrix = attraction_matrix(engine.entity("swarm").particle_life, 5, 0).astype(np.float64)
    engine.step(1)
    state = engine.state("swarm")
    x, v = model.step(position, velocity, species, matrix, box=box, r_max=0.1, beta=0.3,
                      force=1.0, half_life=0.04, dt=DT)
    np.testing.assert_array_equal(state["species"], species)
    np.testing.assert_allclose(state["velocity"], v, atol=1e-4, rtol=0)
    wrapped = ((state["position"] - x + 0.5 * np.asarray(box)) % np.asarray(box)
               - 0.5 * np.asarray(box))
    np.testing.assert_allclose(wrapped, 0.0, atol=1e-4)


def test_counting_sort_groups_particles_by_cell(gpu):
    engine = swarm_engine(count=3001, species=4, box=(1.0, 1.0), r_max=0.07)
    engine.step(1)
    system = engine.system_of("swarm", "particle_life")
    cells = system.cells(engine._ref("swarm"))
    n_cells = system.swarms["swarm"].cells
    counts = np.bincount(cells["cell_of"], minlength=n_cells)
    np.testing.assert_array_equal(cells["cell_start"],
                                  np.concatenate([[0], np.cumsum(counts)[:-1]]))
    order = cells["cell_particles"]
    assert sorted(order) == list(range(3001))                       # a permutation
    # int64: differences of uint32 would wrap and always look non-negative
    assert (np.diff(cells["cell_of"][order].astype(np.int64)) >= 0).all()   # grouped by cell
    for c in range(0, n_cells, 37):                                 # each cell ascending
        run = order[cells["cell_start"][c]:cells["cell_start"][c] + counts[c]]
        assert (np.diff(run.astype(np.int64)) > 0).all()


def test_reorder_keeps_identities_and_runs_are_deterministic(gpu):
    a = swarm_engine(count=2000, species=6, box=(1.2, 1.0), r_max=0.1, reorder_every=3)
    b = swarm_engine(count=2000, species=6, box=(1.2, 1.0), r_max=0.1, reorder_every=3)
    species = a.state("swarm")["species"]
    a.step(10)
    b.step(10)
    sa, sb = a.state("swarm"), b.state("swarm")
    np.testing.assert_array_equal(sa["species"], species)           # rows keep their particle
    for key in sa:
        assert sa[key].tobytes() == sb[key].tobytes(), key


def test_all_pairs_mode_matches_the_grid(gpu):
    grid = swarm_engine(count=700, species=3, box=(0.8, 0.8), r_max=0.1, reorder_every=0)
    pairs = swarm_engine(count=700, species=3, box=(0.8, 0.8), r_max=0.1, neighbours="all_pairs")
    grid.step(3)
    pairs.step(3)
    np.testing.assert_allclose(grid.state("swarm")["position"], pairs.state("swarm")["position"],
                               atol=1e-4)


@pytest.mark.parametrize("text,pieces", [
    ("species = 3\nmatrix = [[0.1, 0.2], [0.3, 0.4]]", ["particle_life.matrix", "3 x 3"]),
    ("species = 2\nmatrix = [[0.1, 2.0], [0.3, 0.4]]", ["particle_life.matrix[0][1]", "[-1, 1]"]),
    ("r_max = 0.0", ["particle_life.r_max", "> 0.0"]),
    ("beta = 1.5", ["particle_life.beta", "< 1.0"]),
    ("species = 1", ["particle_life.species", ">= 2"]),
    ("box = [0.25, 2.0]", ["particle_life.box[0]", "at least 3 cells"]),
    ("box = [1.0]", ["particle_life.box", "2 numbers (2D) or 3 (3D)"]),
    ("colors = []", ["particle_life.colors", "at least one colour"]),
    ('colors = ["#ff0000", "cyan"]', ["particle_life.colors[1]", "found 'cyan'"]),
])
def test_bad_particle_life_fields_are_one_line_errors(text, pieces):
    with pytest.raises(SceneError) as info:
        loads_scene(f'[[entity]]\nname = "swarm"\n[entity.particle_life]\n{text}\n', path="pl.toml")
    message = str(info.value)
    assert "\n" not in message and "entity 'swarm'" in message
    for piece in pieces:
        assert piece in message, (piece, message)


def test_colors_paint_each_species_in_order_and_repeat(gpu):
    """Three species, two colours: species 0 and 2 red, 1 green; opaque sprites 8 px wide at
    world x = -0.5, 0, 0.5 (camera height 4 over 64 px: 16 px per unit)."""
    comp = ParticleLife(count=3, species=3, colors=["#ff0000", "#00ff00"], size=0.5,
                        blend="opaque", box=[2.0, 2.0], r_max=0.1)
    scene = Scene(SceneSettings(seed=5, fixed_dt=DT, background="#000000"),
                  Camera(kind="orthographic", height=4.0),
                  [EntitySpec("swarm", {"particle_life": comp})])
    engine = Engine(scene, size=(64, 64))
    put_particles(engine, np.array([[0.5, 1.0], [1.0, 1.0], [1.5, 1.0]], np.float32),
                  np.zeros((3, 2), np.float32), np.array([0, 1, 2]))
    image = engine.render()[..., :3].astype(int)
    for x, rgb in ((24, (255, 0, 0)), (32, (0, 255, 0)), (40, (255, 0, 0))):
        assert tuple(image[32, x]) == rgb, (x, image[32, x])
    engine.close()


def test_all_pairs_past_the_adapters_loop_limit_is_refused(gpu):
    """forces_all_pairs.wgsl loops over every particle in one invocation: on an adapter that
    silently ends longer loops (lavapipe), more particles than its limit is a one-line error."""
    limit = gpu.loop_iteration_limit
    if limit is None:
        pytest.skip(f"{gpu.label} has no known loop limit")
    with pytest.raises(DeviceLimitError, match=r"particle_life.count = 65,536 with neighbours"):
        swarm_engine(count=limit + 1, species=2, box=(40.0, 40.0), r_max=0.1,
                     neighbours="all_pairs")


def test_the_params_uniform_holds_each_steps_record_though_repeats_are_not_written(gpu):
    """The params record is written only when it changed (an edit, a reorder step), and after
    a prewarm, whose steps wrote their own records there: the oracle is the record of each
    step, read back from the GPU after it, against the one the host packs for it."""
    from emberfx.core.readback import read_array
    from emberfx.core.system import StepInfo

    engine = swarm_engine(count=300, reorder_every=3, prewarm=0.1)
    system = engine.system_of("swarm", "particle_life")
    swarm = system.swarms["swarm"]
    writes = []
    original = system.resources.write

    def write(view, data, offset=0):
        writes.append(view.name)
        original(view, data, offset)

    system.resources.write = write
    for k in range(8):
        if k == 5:
            engine.entity("swarm").particle_life.beta = 0.25
        frame = engine.clock.steps
        engine.step(1)
        got = read_array(engine.device, swarm.buffers["params"], np.uint8)
        want = np.frombuffer(system._params_record(
            swarm, StepInfo(frame=frame, dt=DT, seed=engine.scene.settings.seed)), np.uint8)
        assert np.array_equal(got[:want.size], want), k
    params_writes = [n for n in writes if n.endswith("/params")]
    assert 3 <= len(params_writes) < 8, params_writes
    engine.close()
