"""Prewarm of particle life, cloth and Life: an entity with prewarm = P holds, when created, the
state of one without prewarm stepped round(P / fixed_dt) times (bit for bit: the same kernels in
the same order, batched into few submissions), the work is bounded with a one-line scene error,
and prewarm = 0 changes nothing."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import cloth_model
import life_model
import numpy as np
import pytest

from emberfx.core import step_batches
from emberfx.core.errors import SceneError
from emberfx.core.step_batches import StepBatching
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings, loads_scene
from emberfx.systems.cloth.component import MAX_PREWARM_WORK as CLOTH_MAX
from emberfx.systems.cloth.component import Cloth
from emberfx.systems.colliders.component import Collider
from emberfx.systems.forces.forces import ForceField
from emberfx.systems.life.component import MAX_PREWARM_WORK as LIFE_MAX
from emberfx.systems.life.component import Life
from emberfx.systems.particle_life.component import MAX_PREWARM_WORK as SWARM_MAX
from emberfx.systems.particle_life.component import ParticleLife

DT = 0.02
STEPS = 31                 # prime: no batch size above 1 divides it, so the last batch is partial
PREWARM = STEPS * DT


def engine_of(*entities: tuple[str, dict], batching: StepBatching | None = None) -> Engine:
    scene = Scene(SceneSettings(seed=7, fixed_dt=DT), Camera(kind="orthographic"),
                  [EntitySpec(name, components) for name, components in entities])
    return Engine(scene, size=(32, 32), step_batching=batching)


def small_batches(work_per_step: int, steps_per_batch: int) -> StepBatching:
    """Submissions of ``steps_per_batch`` steps, so the prewarm runs in several batches."""
    batching = StepBatching(work=work_per_step * steps_per_batch)
    assert step_batches.batch_steps(work_per_step, batching) == steps_per_batch
    return batching


def assert_same_state(warm: dict, stepped: dict) -> None:
    assert warm.keys() == stepped.keys()
    for key, value in stepped.items():
        assert warm[key].dtype == value.dtype and warm[key].shape == value.shape, key
        assert np.array_equal(warm[key], value), f"{key} differs"


# ---------------------------------------------------------------------------- particle life

SWARM: dict[str, Any] = dict(count=700, species=4, box=(1.0, 1.0), r_max=0.1, force=2.0,
                             reorder_every=4)


@pytest.mark.parametrize("neighbours", ["grid", "all_pairs"])
def test_particle_life_prewarm_equals_stepping(gpu, neighbours):
    batching = small_batches(SWARM["count"], 7)
    with engine_of(("swarm", {"particle_life": ParticleLife(**SWARM, neighbours=neighbours,
                                                            prewarm=PREWARM)}),
                   batching=batching) as warm, \
            engine_of(("swarm", {"particle_life": ParticleLife(
                **SWARM, neighbours=neighbours)})) as stepped:
        start = stepped.state("swarm")
        stepped.step(STEPS)
        warm_state = warm.state("swarm")
        assert np.abs(warm_state["position"] - start["position"]).max() > 1e-3   # it ran
        assert_same_state(warm_state, stepped.state("swarm"))
        assert warm.system_of("swarm", "particle_life").swarms["swarm"].steps == STEPS
        warm.step(5)   # parities and the reorder cadence carry on as stepping's
        stepped.step(5)
        assert_same_state(warm.state("swarm"), stepped.state("swarm"))


# ---------------------------------------------------------------------------- cloth

CLOTH: dict[str, Any] = dict(resolution=(13, 9), size=(1.2, 0.8), position=(-0.6, 0.2, 0.0),
                             substeps=8, stiffness=600.0, mass=0.02, damping=0.2, drag=0.1)
BALL = Collider(shape="sphere", center=(0.0, 0.5, 0.25), radius=0.3)   # the sheet cuts it


@pytest.mark.parametrize("with_ball", [False, True], ids=["free", "sphere"])
def test_cloth_prewarm_equals_stepping(gpu, with_ball):
    n = CLOTH["resolution"][0] * CLOTH["resolution"][1] * CLOTH["substeps"]
    batching = small_batches(n, 4)
    extra = [("ball", {"collider": BALL})] if with_ball else []
    with engine_of(*extra, ("flag", {"cloth": Cloth(**CLOTH, prewarm=PREWARM)}),
                   batching=batching) as warm, \
            engine_of(*extra, ("flag", {"cloth": Cloth(**CLOTH)})) as stepped:
        start = stepped.state("flag")
        stepped.step(STEPS)
        warm_state = warm.state("flag")
        assert np.abs(warm_state["position"] - start["position"]).max() > 0.01   # it sagged
        assert_same_state(warm_state, stepped.state("flag"))
        warm.step(3)
        stepped.step(3)
        assert_same_state(warm.state("flag"), stepped.state("flag"))


def test_cloth_prewarm_lies_before_t0_under_a_gusting_wind(gpu):
    """Each prewarm step gets its own wind record (staged, not the batch's last), at the times
    [-P, 0) before the scene starts: positions equal the float64 replica within 1e-5 (float32
    over 31 x 8 substeps; the replica with the times [0, P) is off by far more)."""
    fields = dict(CLOTH, resolution=(11, 9), size=(1.0, 0.8), pins="top-edge")
    batching = small_batches(11 * 9 * 8, 4)
    gust = ForceField(kind="wind", direction=(0.3, 0.0, 1.0), strength=4.0, gust=0.9,
                      frequency=2.0)
    with engine_of(("gust", {"force_field": gust}),
                   ("flag", {"cloth": Cloth(**fields, prewarm=PREWARM)}),
                   batching=batching) as warm, \
            engine_of(("flag", {"cloth": Cloth(**fields)})) as cold:
        start = cold.state("flag")
        warm_position = warm.state("flag")["position"]
    pinned = np.zeros((9, 11), bool)
    pinned[8, :] = True

    def replica(first_step: int) -> np.ndarray:
        x, v = start["position"].astype(np.float64), start["velocity"].astype(np.float64)
        rest = x.copy()
        for k in range(first_step, first_step + STEPS):
            for _ in range(8):
                x, v = cloth_model.substep(
                    x, v, pinned, rest, dx=0.1, dy=0.1, stiffness=600.0, damping=0.2, drag=0.1,
                    mass=0.02, gravity=(0.0, -9.81, 0.0), h=DT / 8,
                    wind=gust.wind_velocity(k * DT))
        return x

    np.testing.assert_allclose(warm_position, replica(-STEPS), atol=1e-5, rtol=0)
    assert np.abs(warm_position - replica(0)).max() > 1e-2


# ---------------------------------------------------------------------------- Life

LIFE: dict[str, Any] = dict(size=(70, 45), density=0.35, steps_per_frame=3, trail_color="#ff8000",
            trail_fade=0.8)   # 70 wide: a ragged last word; 3 generations per step


def life_trail(engine) -> np.ndarray:
    from emberfx.core.readback import read_array

    layer = engine.system_of("life", "life").layers["life"]
    w, h = layer.texture_size
    return read_array(engine.device, layer.buffers["trail"], np.float32, w * h)


@pytest.mark.parametrize("memory", ["pingpong", "inplace"])
def test_life_prewarm_equals_numpy_and_stepping(gpu, memory):
    batching = small_batches(70 * 45 * 3, 5)
    with engine_of(("life", {"life": Life(**LIFE, memory=memory, prewarm=PREWARM)}),
                   batching=batching) as warm, \
            engine_of(("life", {"life": Life(**LIFE, memory=memory)})) as stepped:
        start = stepped.state("life")["cells"]
        stepped.step(STEPS)
        cells = warm.state("life")["cells"]
        # the independent oracle: numpy Life, round(P / fixed_dt) x steps_per_frame generations
        np.testing.assert_array_equal(cells, life_model.step(start, "B3/S23", True, STEPS * 3))
        assert not np.array_equal(cells, start)
        np.testing.assert_array_equal(cells, stepped.state("life")["cells"])
        assert np.array_equal(life_trail(warm), life_trail(stepped))   # aged once per step
        layer = warm.system_of("life", "life").layers["life"]
        assert layer.generation == STEPS * 3
        warm.step(2)
        stepped.step(2)
        np.testing.assert_array_equal(warm.state("life")["cells"], stepped.state("life")["cells"])


def test_a_paused_life_layer_prewarms_nothing(gpu):
    with engine_of(("life", {"life": Life(**LIFE, paused=True, prewarm=PREWARM)})) as warm, \
            engine_of(("life", {"life": Life(**LIFE, paused=True)})) as cold:
        np.testing.assert_array_equal(warm.state("life")["cells"], cold.state("life")["cells"])


# ---------------------------------------------------------------------------- prewarm = 0

ZERO = [("particle_life", "swarm", lambda **k: ParticleLife(**SWARM, **k)),
        ("cloth", "flag", lambda **k: Cloth(**CLOTH, **k)),
        ("life", "life", lambda **k: Life(**LIFE, **k))]


@pytest.mark.parametrize("key, name, make", ZERO, ids=[z[0] for z in ZERO])
def test_prewarm_zero_or_under_half_a_step_changes_nothing(gpu, key, name, make):
    with engine_of((name, {key: make()})) as plain:
        before = plain.state(name)
        plain.step(2)
        after = plain.state(name)
    for prewarm in (0.0, 0.49 * DT):   # rounds to 0 steps
        with engine_of((name, {key: make(prewarm=prewarm)})) as engine:
            assert_same_state(engine.state(name), before)
            engine.step(2)
            assert_same_state(engine.state(name), after)


# ---------------------------------------------------------------------------- the work bound

HEAD = f"""
[scene]
name = "warm"
fixed_dt = {DT!r}
[camera]
kind = "orthographic"
"""
STEPS_60 = round(60.0 / DT)
# (family, fields over the bound at 60 s, the numbers the message must hold)
OVER = [
    ("particle_life", "count = 100000\nprewarm = 60.0",
     [f"<= {SWARM_MAX:,} particle-steps", f"100,000 particles x {STEPS_60:,} steps",
      f"= {100_000 * STEPS_60:,}", "count x prewarm steps"]),
    ("cloth", "resolution = [256, 256]\nsubsteps = 18\nprewarm = 60.0",   # 18: stable at DT
     [f"<= {CLOTH_MAX:,} vertex-substeps", f"256x256 vertices x 18 substeps x {STEPS_60:,} steps",
      f"= {256 * 256 * 18 * STEPS_60:,}"]),
    ("life", "size = [8192, 8192]\nsteps_per_frame = 4\nprewarm = 60.0",
     [f"<= {LIFE_MAX:,} cell-generations",
      f"8192x8192 cells x 4 generations per step (steps_per_frame) x {STEPS_60:,} steps",
      f"= {8192 * 8192 * 4 * STEPS_60:,}"]),
]


def scene_text(family: str, fields: str) -> str:
    return HEAD + f'\n[[entity]]\nname = "big"\n[entity.{family}]\n{fields}\n'


@pytest.mark.parametrize("family, fields, numbers", OVER, ids=[o[0] for o in OVER])
def test_a_prewarm_over_the_bound_is_a_one_line_scene_error(family, fields, numbers):
    with pytest.raises(SceneError) as caught:
        loads_scene(scene_text(family, fields), path="big.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("big.toml") and f"entity 'big': {family}.prewarm: expected" in message
    for number in numbers:
        assert number in message, (number, message)
    # the longest prewarm allowed is named, and is allowed
    longest = float(message.rsplit("prewarm at most ", 1)[1].split(" s")[0])
    allowed = fields.replace("prewarm = 60.0", f"prewarm = {longest * 0.99!r}")   # 3 digits
    loads_scene(scene_text(family, allowed), path="big.toml")


def test_the_engine_refuses_it_for_a_scene_built_in_code(gpu):
    scene = loads_scene(HEAD, path="big.toml")
    scene.add("big", particle_life=ParticleLife(count=100_000, prewarm=60.0))
    with pytest.raises(SceneError, match=r"entity 'big': particle_life\.prewarm: .*100,000 "
                                         r"particles"):
        Engine(scene)


def test_the_bound_is_on_work_not_seconds():
    allowed = SWARM_MAX // 20_000          # steps a 20,000-particle swarm may take
    assert allowed >= 3000 and ParticleLife(prewarm=50.0).timestep_problem(1 / 60) is None
    big = ParticleLife(count=1 << 20, prewarm=60.0)
    assert big.timestep_problem(1 / 60) is not None
    assert big.timestep_problem(1.0) is None   # the same seconds at a coarse timestep: 60 steps
    # exactly at the bound is allowed, one step more is not (cloth: vertices x substeps)
    per_step = 64 * 64 * 16
    steps = CLOTH_MAX // per_step
    dt = 60.0 / (2 * steps)
    assert Cloth(resolution=(64, 64), prewarm=steps * dt).timestep_problem(dt) is None
    problem = Cloth(resolution=(64, 64), prewarm=(steps + 1) * dt).timestep_problem(dt)
    assert problem is not None
    field, why = problem
    assert field == "prewarm" and f"{per_step * (steps + 1):,}" in why
    # Life counts generations: steps_per_frame multiplies, a paused layer does nothing
    life = Life(size=(4096, 4096), prewarm=60.0, steps_per_frame=2)
    assert LIFE_MAX // (4096 * 4096) < 7200 and life.timestep_problem(1 / 60) is not None
    assert Life(size=(4096, 4096), prewarm=60.0, paused=True).timestep_problem(1 / 60) is None


def test_validate_refuses_it_in_one_line(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text(scene_text(*OVER[2][:2]))
    result = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "entity 'big': life.prewarm: expected" in lines[0]


# ---------------------------------------------------------------------------- progress

def test_a_long_prewarm_says_that_it_runs(gpu, capsys):
    work = SWARM["count"] * STEPS
    with engine_of(("swarm", {"particle_life": ParticleLife(**SWARM, prewarm=PREWARM)}),
                   batching=StepBatching(notice_work=work)):
        pass
    assert (f"emberfx: entity 'swarm': prewarming {PREWARM:g} s = {STEPS} steps of 700 "
            f"particles ({work:,} particle-steps)") in capsys.readouterr().err
    with engine_of(("swarm", {"particle_life": ParticleLife(**SWARM, prewarm=PREWARM)}),
                   batching=StepBatching(notice_work=work + 1)):
        pass
    assert "prewarming" not in capsys.readouterr().err
