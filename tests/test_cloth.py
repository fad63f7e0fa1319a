"""Cloth on the GPU against a numpy replica of the explicit mass-spring step, and its physics."""

from __future__ import annotations

import cloth_model
import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings, loads_scene
from emberfx.systems.cloth.component import Cloth
from emberfx.systems.cloth.tuning import ClothTuning
from emberfx.systems.colliders.component import Collider

DT = 1.0 / 60.0


def cloth_engine(extra: dict | None = None, tuning: ClothTuning | None = None,
                 **fields) -> Engine:
    entities = [EntitySpec("flag", {"cloth": Cloth(**fields)})]
    for name, comp in (extra or {}).items():
        entities.append(EntitySpec(name, {"collider": comp}))
    scene = Scene(SceneSettings(seed=1, fixed_dt=DT), Camera(kind="orthographic"), entities)
    return Engine(scene, size=(48, 32), cloth_tuning=tuning)


@pytest.mark.parametrize("resident", [True, False])
def test_fifty_substeps_equal_the_numpy_replica(gpu, resident):
    """17x13 patch, top corners pinned, 50 substeps (5 steps x 10): positions within 2e-5 and
    velocities within 2e-3 (float32 on the GPU against float64, relative to speeds ~1 m/s),
    every substep of a step in one workgroup (cloth/step_resident.wgsl) or a dispatch each."""
    tuning = ClothTuning(resident_up_to_vertices=17 * 13 if resident else 0)
    fields = dict(resolution=(17, 13), size=(1.6, 1.2), position=(0.1, 0.5, -0.2),
                  pins="top-corners", stiffness=800.0, damping=0.3, drag=0.2, mass=0.02,
                  substeps=10, gravity=(0.3, -9.81, 0.5))
    engine = cloth_engine(tuning=tuning, **fields)
    start = engine.state("flag")
    x, v = start["position"].astype(np.float64), start["velocity"].astype(np.float64)
    rest = x.copy()
    pinned = np.zeros((13, 17), bool)
    pinned[12, 0] = pinned[12, 16] = True
    for _ in range(50):
        x, v = cloth_model.substep(x, v, pinned, rest, dx=1.6 / 16, dy=1.2 / 12, stiffness=800.0,
                                   damping=0.3, mass=0.02, gravity=(0.3, -9.81, 0.5), drag=0.2,
                                   h=DT / 10)
    engine.step(5)
    state = engine.state("flag")
    assert np.abs(x - rest).max() > 0.02                       # it really moved
    np.testing.assert_allclose(state["position"], x, atol=2e-5, rtol=0)
    np.testing.assert_allclose(state["velocity"], v, atol=2e-3, rtol=0)


def test_live_substeps_and_wireframe_take_effect_on_the_next_step(gpu):
    """substeps is a live field: the repeated dispatch and h = dt / substeps follow it (10, then
    7 substeps of an odd count, so the ping-pong parity flips, then a single substep: a dispatch
    not repeated), checked against the replica."""
    fields = dict(resolution=(9, 7), size=(1.0, 0.8), pins="top-corners", stiffness=20.0,
                  damping=0.02, drag=0.1, mass=0.02, substeps=10)   # stable at one substep
    engine = cloth_engine(**fields)
    start = engine.state("flag")
    x, v = start["position"].astype(np.float64), start["velocity"].astype(np.float64)
    rest = x.copy()
    pinned = np.zeros((7, 9), bool)
    pinned[6, 0] = pinned[6, 8] = True
    for substeps in (10, 7, 1, 7):
        engine.entity("flag").cloth.substeps = substeps
        engine.step()
        for _ in range(substeps):
            x, v = cloth_model.substep(x, v, pinned, rest, dx=1.0 / 8, dy=0.8 / 6,
                                       stiffness=20.0, damping=0.02, mass=0.02,
                                       gravity=(0.0, -9.81, 0.0), drag=0.1, h=DT / substeps)
    state = engine.state("flag")
    np.testing.assert_allclose(state["position"], x, atol=2e-5, rtol=0)
    assert "flag:cloth:wire" not in engine.passes()
    engine.entity("flag").cloth.wireframe = True
    engine.render()
    assert "flag:cloth:wire" in engine.passes()


def test_wind_spawned_at_run_time_switches_the_step_variant_and_matches_the_replica(gpu):
    """Without wind the step is compiled without its wind code; a wind spawned later rebuilds the
    pass with it (HAS_WIND), and the result equals the replica with the wind term."""
    fields = dict(resolution=(11, 9), size=(1.0, 0.8), pins="top-edge", stiffness=600.0,
                  damping=0.2, drag=0.1, mass=0.02, substeps=10)
    engine = cloth_engine(**fields)
    patch = engine.system_of("flag", "cloth").patches["flag"]
    engine.step(1)
    assert patch.built_with == (False, False, False)
    engine.spawn("breeze", {"force_field": {"kind": "wind", "direction": [0.3, 0.0, 1.0],
                                            "strength": 4.0, "gust": 0.0}})
    start = engine.state("flag")
    x, v = start["position"].astype(np.float64), start["velocity"].astype(np.float64)
    rest = x.copy()        # only the pinned rows are read: they have not moved
    pinned = np.zeros((9, 11), bool)
    pinned[8, :] = True
    wind = 4.0 * np.array([0.3, 0.0, 1.0]) / np.linalg.norm([0.3, 0.0, 1.0])
    engine.step(3)
    assert patch.built_with == (False, True, False)
    for _ in range(30):
        x, v = cloth_model.substep(x, v, pinned, rest, dx=0.1, dy=0.1, stiffness=600.0,
                                   damping=0.2, mass=0.02, gravity=(0.0, -9.81, 0.0), drag=0.1,
                                   h=DT / 10, wind=wind)
    state = engine.state("flag")
    assert np.abs(state["position"][..., 2]).max() > 0.003    # the wind pushed it along +z
    np.testing.assert_allclose(state["position"], x, atol=3e-5, rtol=0)
    engine.delete("breeze")
    engine.step(1)
    assert patch.built_with == (False, False, False)


def test_pins_never_move_and_follow_pin_offset(gpu):
    engine = cloth_engine(resolution=(20, 15), pins=[[0, 14], [7, 14], [19, 3]], substeps=16)
    start = engine.state("flag")["position"]
    for _ in range(20):
        engine.step()
        now = engine.state("flag")["position"]
        for i, j in [(0, 14), (7, 14), (19, 3)]:
            assert np.array_equal(now[j, i], start[j, i])
    engine.entity("flag").cloth.pin_offset = (0.0, 0.5, 0.0)
    engine.step()
    np.testing.assert_allclose(engine.state("flag")["position"][14, 7], start[14, 7] + [0, 0.5, 0],
                               atol=1e-6)


def test_without_pins_the_centre_of_mass_falls_with_g(gpu):
    engine = cloth_engine(resolution=(12, 9), pins="none", drag=0.0)   # 16 substeps
    com0 = engine.state("flag")["position"].reshape(-1, 3).mean(axis=0)
    engine.step(30)
    t = 30 * DT
    com = engine.state("flag")["position"].reshape(-1, 3).mean(axis=0)
    # semi-implicit Euler: y(n) = -g h^2 n(n+1)/2 after n substeps of h (internal forces cancel)
    n, h = 30 * 16, DT / 16
    np.testing.assert_allclose(com - com0, [0.0, -9.81 * h * h * n * (n + 1) / 2, 0.0], atol=2e-4)
    assert abs(com[1] - com0[1] + 0.5 * 9.81 * t * t) < 0.02


def test_at_rest_without_forces_it_stays_at_rest(gpu):
    engine = cloth_engine(resolution=(9, 7), pins="none", gravity=(0.0, 0.0, 0.0))
    start = engine.state("flag")
    engine.step(20)
    state = engine.state("flag")
    np.testing.assert_allclose(state["position"], start["position"], atol=1e-6)
    np.testing.assert_allclose(state["velocity"], 0.0, atol=1e-6)


def test_kinetic_energy_decays_under_damping(gpu):
    engine = cloth_engine(resolution=(15, 11), pins="none", gravity=(0.0, 0.0, 0.0), damping=1.0,
                          drag=0.5, substeps=32)
    system = engine.system_of("flag", "cloth")
    patch = system.patches["flag"]
    rng = np.random.default_rng(0)
    start = engine.state("flag")
    kick = np.zeros((15 * 11, 4), np.float32)
    kick[:, :3] = rng.normal(0, 0.5, (15 * 11, 3))
    engine.resources.write(patch.buffers[f"vel{patch.parity}"], kick.tobytes())
    energies = []
    for _ in range(12):
        engine.step(5)
        v = engine.state("flag")["velocity"]
        energies.append(float((v ** 2).sum()))
    assert energies[0] > 0 and all(b < a for a, b in zip(energies, energies[1:]))
    assert energies[-1] < 0.5 * energies[0]
    final = engine.state("flag")["position"]
    moved = np.linalg.norm(final - start["position"], axis=-1)
    # the kick moved the sheet, and no vertex flew off
    assert np.isfinite(final).all() and 1e-3 < moved.max() < 1.0


def test_the_sheet_never_ends_inside_the_sphere_or_below_the_floor(gpu):
    colliders = {"ball": Collider(shape="sphere", center=(0.0, 0.5, 0.0), radius=0.5),
                 "floor": Collider(shape="plane", point=(0.0, 0.0, 0.0), normal=(0.0, 1.0, 0.0))}
    engine = cloth_engine(colliders, resolution=(25, 25), size=(1.6, 1.6),
                          position=(-0.8, 1.3, 0.8), rotation_deg=(-90.0, 0.0, 0.0),
                          pins="none", substeps=16, stiffness=1500.0, damping=0.3)
    for _ in range(12):
        engine.step(10)
        x = engine.state("flag")["position"].reshape(-1, 3)
        assert np.isfinite(x).all()
        assert (np.linalg.norm(x - [0.0, 0.5, 0.0], axis=1) >= 0.5 - 1e-5).all()
        assert (x[:, 1] >= -1e-5).all()
    assert x[:, 1].max() < 1.1                                 # it fell onto the ball


def test_colliders_and_winds_spawned_later_act_as_if_declared(gpu):
    """A cloth made in a world without colliders takes more of them (and more winds) spawned
    later, in room sized for MAX_FORCES: the same result, to the byte, as a cloth whose scene
    declared them from the start."""
    colliders = {"ball": Collider(shape="sphere", center=(0.0, 0.5, 0.0), radius=0.5),
                 "floor": Collider(shape="plane", point=(0.0, 0.0, 0.0), normal=(0.0, 1.0, 0.0))}
    fields = dict(resolution=(13, 11), size=(1.6, 1.6), position=(-0.8, 1.3, 0.8),
                  rotation_deg=(-90.0, 0.0, 0.0), pins="none", substeps=16, stiffness=1500.0,
                  damping=0.3)
    declared = cloth_engine(colliders, **fields)
    spawned = cloth_engine(**fields)
    for name, collider in colliders.items():
        spawned.spawn(name, {"collider": collider})
    declared.step(40)
    spawned.step(40)
    x = spawned.state("flag")["position"]
    np.testing.assert_array_equal(x, declared.state("flag")["position"])
    assert (np.linalg.norm(x.reshape(-1, 3) - [0.0, 0.5, 0.0], axis=1) >= 0.5 - 1e-5).all()
    for k in range(3):   # more winds than the world had when the cloth was made
        spawned.spawn(f"wind{k}", {"force_field": {"kind": "wind", "strength": 1.0 + k}})
    spawned.step(5)
    assert np.isfinite(spawned.state("flag")["position"]).all()


def test_defaults_are_stable_for_a_long_run(gpu):
    engine = cloth_engine(resolution=(32, 24), pins="top-edge")
    engine.step(120)
    state = engine.state("flag")
    assert np.isfinite(state["position"]).all() and np.abs(state["velocity"]).max() < 20.0


def test_the_mesh_renders_lit(gpu):
    text = """
[scene]
background = "#000000"
[camera]
kind = "perspective"
position = [1.0, 0.7, 3.0]
target = [1.0, 0.7, 0.0]
[[entity]]
name = "flag"
[entity.cloth]
resolution = [10, 8]
size = [2.0, 1.4]
wireframe = true
"""
    engine = Engine(loads_scene(text), size=(64, 48))
    image = engine.render()
    assert (image[..., 0] > 40).mean() > 0.1                  # the lit cloth covers the middle
    assert image[24, 32, 0] > 40 and image[2, 2, 0] == 0
    assert engine.passes().count("flag:cloth:wire") == 1


@pytest.mark.parametrize("text,pieces", [
    ("resolution = [1, 5]", ["cloth.resolution[0]", ">= 2"]),
    ("pins = [[0, 0], [9, 2]]\nresolution = [8, 6]",
     ["cloth.pins[1]", "[0, 7] x [0, 5]", "[9, 2]"]),
    ("mass = 0.0", ["cloth.mass", "> 0.0"]),
    ("size = [1.0, -2.0]", ["cloth.size[1]", "> 0.0"]),
    ('solver = "implicit"', ["cloth.solver", "explicit"]),
])
def test_bad_cloth_fields_are_one_line_errors(text, pieces):
    with pytest.raises(SceneError) as info:
        loads_scene(f'[[entity]]\nname = "flag"\n[entity.cloth]\n{text}\n', path="cloth.toml")
    message = str(info.value)
    assert "\n" not in message and "entity 'flag'" in message
    for piece in pieces:
        assert piece in message, (piece, message)


@pytest.mark.parametrize("text, field, pieces", [
    ("stiffness = 1e12", "cloth.stiffness", ["need substeps >= 2.66e+05 (at most 256)",
                                             "found stiffness = 1e+12"]),
    ("mass = 1e-30", "cloth.mass", ["(at most 256)", "found mass = 1e-30"]),
    ("damping = 100.0", "cloth.damping", ["need substeps >= 853", "found damping = 100"]),
    ("drag = 1e6", "cloth.drag", ["found drag = 1e+06"]),
    ("mass = 0.001\nsubsteps = 4", "cloth.substeps", ["expected substeps >= 65 for stiffness "
                                                      "2000 N/m, mass 0.001 kg", "found 4"]),
])
def test_values_the_explicit_step_cannot_keep_finite_are_refused(text, field, pieces):
    with pytest.raises(SceneError) as info:
        loads_scene(f'[[entity]]\nname = "flag"\n[entity.cloth]\n{text}\n', path="cloth.toml")
    error = info.value
    assert "\n" not in str(error) and error.entity == "flag" and error.field == field
    assert "at fixed_dt 0.0166667 s" in error.detail
    for piece in pieces:
        assert piece in error.detail, (piece, error.detail)


def test_validate_refuses_a_stiffness_of_1e12_in_one_line(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "cloth.toml"
    path.write_text('[[entity]]\nname = "flag"\n[entity.cloth]\nstiffness = 1e12\n')
    done = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"emberfx: error: {path}: entity 'flag': cloth.stiffness: expected a value the explicit "
        f"integrator can step")


def test_the_stiffest_mode_bounds_the_grid_symbol():
    """81/8 k/m for square cells (the diagonal wave (t, -t) with cos t = -1/8), below 49/4 for any
    cell shape (long thin cells: the x springs and the near-parallel diagonals, cos t = -3/4)."""
    from emberfx.systems.cloth.component import MODE_MARGIN, stiffest_mode

    assert 81 / 8 <= stiffest_mode(1.0) <= 81 / 8 * MODE_MARGIN
    for aspect in (0.01, 0.1, 0.5, 2.0, 10.0, 100.0):
        assert 81 / 8 < stiffest_mode(aspect) <= 49 / 4 * MODE_MARGIN


def _replica_run(cloth: Cloth, substeps: int, steps: int):
    """The numpy replica of a patch hanging from its top corners, stepped ``steps`` fixed steps
    of ``substeps``; the largest speed after each step."""
    nx, ny = cloth.resolution
    dx, dy = cloth.size[0] / (nx - 1), cloth.size[1] / (ny - 1)
    i, j = np.meshgrid(np.arange(nx), np.arange(ny))
    x = np.stack([i * dx, j * dy, np.zeros_like(i, float)], -1)
    rest, v = x.copy(), np.zeros_like(x)
    pinned = np.zeros((ny, nx), bool)
    pinned[ny - 1, 0] = pinned[ny - 1, nx - 1] = True
    speeds = []
    with np.errstate(all="ignore"):
        for _ in range(steps):
            for _ in range(substeps):
                x, v = cloth_model.substep(x, v, pinned, rest, dx=dx, dy=dy,
                                           stiffness=cloth.stiffness, damping=cloth.damping,
                                           mass=cloth.mass, gravity=cloth.gravity,
                                           drag=cloth.drag, h=DT / substeps)
            speeds.append(float(np.nan_to_num(np.abs(v).max(), nan=np.inf)))
    return speeds


@pytest.mark.parametrize("fields", [dict(stiffness=2e4), dict(stiffness=500.0, damping=3.0)])
def test_the_replica_stays_finite_at_the_bound_and_diverges_well_below_it(fields):
    """The derived bound is the integrator's: at ``stable_substeps`` the replica of a small patch
    hangs with bounded speeds; at 60% of them it blows up."""
    cloth = Cloth(resolution=(9, 7), size=(1.0, 0.8), **fields)
    needed = cloth.stable_substeps(DT)
    assert 1 < needed <= 256
    speeds = _replica_run(cloth, needed, 30)
    assert max(speeds) < 5.0
    assert max(_replica_run(cloth, int(needed * 0.6), 30)) > 1e6


def test_a_live_edit_to_an_unstable_stiffness_is_undone_and_the_cloth_stays_finite(gpu):
    engine = cloth_engine(resolution=(8, 6))
    engine.step(2)
    engine.entity("flag").cloth.stiffness = 1e12
    with pytest.raises(SceneError) as info:
        engine.step()
    assert str(info.value).startswith("live edit: entity 'flag': cloth.stiffness: expected a "
                                      "value the explicit integrator can step")
    assert str(info.value).endswith("the edit is undone, the last valid values stay")
    assert engine.entity("flag").cloth.stiffness == 2000.0
    engine.step(30)
    assert np.isfinite(engine.state("flag")["position"]).all()


def test_a_spawned_unstable_cloth_is_refused(gpu):
    engine = cloth_engine(resolution=(8, 6))
    with pytest.raises(SceneError) as info:
        engine.spawn("other", {"cloth": Cloth(resolution=(8, 6), mass=1e-30)})
    assert info.value.field == "cloth.mass" and info.value.entity == "other"
    engine.step(3)
    assert np.isfinite(engine.state("flag")["position"]).all()


def test_the_bundled_scenes_load_with_their_cloth_stable():
    from emberfx.model.scene import bundled_scenes, load_scene

    with_cloth = 0
    for name, path in sorted(bundled_scenes().items()):
        scene = load_scene(path)
        for spec in scene.entities:
            cloth = spec.components.get("cloth")
            if isinstance(cloth, Cloth):
                with_cloth += 1
                assert cloth.substeps >= cloth.stable_substeps(scene.settings.fixed_dt), name
    assert with_cloth >= 3   # drape, flag, showcase
