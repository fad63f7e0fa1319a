"""Attractors, force fields and kill zones acting on emitters, against the numpy model."""

from __future__ import annotations

import emitter_model as model
import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene

DT = 1.0 / 60.0

HEAD = f"""
[scene]
name = "forces"
seed = 11
fixed_dt = {DT!r}
size = [32, 32]
[camera]
kind = "orthographic"
height = 8.0
"""


def emitter(name="jet", capacity=500, rate=1200.0, extra=""):
    return f"""
[[entity]]
name = "{name}"
[entity.emitter]
capacity = {capacity}
rate = {rate}
lifetime = [2.0, 3.0]
speed = [1.0, 2.5]
position = [-1.0, 0.0, 0.2]
direction = [1.0, 0.6, 0.0]
spread_deg = 30.0
gravity = [0.0, -2.0, 0.0]
drag = 0.2
{extra}
"""


TWO_ATTRACTORS = """
[[entity]]
name = "well"
[entity.attractor]
position = [1.0, 1.0, 0.0]
strength = 4.0
softening = 0.5
[[entity]]
name = "pusher"
[entity.attractor]
position = [-0.5, 2.0, 0.5]
strength = -1.5
softening = 0.4
radius = 3.0
"""


def run_against_model(text: str, steps: int, entity: str = "jet", tol: float = 2e-4):
    """Step the GPU and the numpy model side by side (births are copied from the GPU state, the
    motion of every particle alive before the step is predicted by the model)."""
    engine = Engine(loads_scene(HEAD + text), size=(32, 32))
    # particles the model saw killed by a zone or kill radius; a test-only tally on the engine
    engine.kills = 0  # type: ignore[attr-defined]
    match_model(engine, entity, steps, tol)
    return engine


def match_model(engine, entity: str, steps: int, tol: float = 2e-4) -> None:
    """``steps`` steps of ``engine`` against the model, with the forces acting now."""
    comp = engine.entity(entity).emitter
    system = engine.system_of(entity, "emitter")
    forces = system.forces_on(system.pools[entity])
    checked = 0
    for _ in range(steps):
        before = engine.state(entity)
        engine.step()
        after = engine.state(entity)
        alive = before["alive"]
        x, v, killed = model.integrate_with_forces(
            before["position"][alive].astype(np.float64),
            before["velocity"][alive].astype(np.float64),
            DT, comp.substeps, comp.gravity, comp.drag, forces)
        aged = before["age"][alive] + np.float32(DT)
        still = ~killed & (aged < before["lifetime"][alive])
        # a slot that died this step may be born again in the same step (age 0), never survive
        reborn = after["alive"][alive] & (after["age"][alive] == 0.0)
        np.testing.assert_array_equal(after["alive"][alive] & ~reborn, still)
        np.testing.assert_allclose(after["velocity"][alive][still], v[still], rtol=tol, atol=tol)
        np.testing.assert_allclose(after["position"][alive][still], x[still], rtol=tol, atol=tol)
        checked += int(still.sum())
        engine.kills += int(killed.sum())
    assert checked > 10 * steps          # the comparison covered real particles


def test_two_attractors_gravity_and_drag_match_numpy(gpu):
    """Tolerance: 2e-4 absolute + relative per step (float32 GPU against a float64 model)."""
    run_against_model(emitter(extra="substeps = 3") + TWO_ATTRACTORS, steps=25)


def test_fields_vortex_drag_gravity_turbulence_match_numpy(gpu):
    fields = """
[[entity]]
name = "spin"
[entity.force_field]
kind = "vortex"
center = [0.0, 0.0, 0.0]
axis = [0.2, 1.0, 0.1]
strength = 1.5
pull = 0.7
[[entity]]
name = "air"
[entity.force_field]
kind = "drag"
coefficient = 0.4
[[entity]]
name = "down"
[entity.force_field]
kind = "gravity"
acceleration = [0.5, -1.0, 0.0]
[[entity]]
name = "wind"
[entity.force_field]
kind = "turbulence"
frequency = 1.3
strength = 2.0
octaves = 3
"""
    run_against_model(emitter(extra="substeps = 2") + fields, steps=20, tol=5e-4)


def test_turbulence_is_divergence_free():
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 3, size=(200, 3))
    e = 1e-4
    div = np.zeros(200)
    for k in range(3):
        d = np.zeros(3)
        d[k] = e
        div += (model.turbulence(x + d, 1.3, 2.0, 3)[:, k]
                - model.turbulence(x - d, 1.3, 2.0, 3)[:, k]) / (2 * e)
    magnitude = np.abs(model.turbulence(x, 1.3, 2.0, 3)).mean()
    assert magnitude > 0.1 and np.abs(div).max() < 1e-5


def test_affected_by_limits_the_forces(gpu):
    text = (emitter("jet", extra='affected_by = ["well"]')
            + emitter("free", extra="affected_by = []") + TWO_ATTRACTORS)
    engine = run_against_model(text, steps=10, entity="jet")
    system = engine.system_of("jet", "emitter")
    assert [type(f).__name__ for f in system.forces_on(system.pools["jet"])] == ["Attractor"]
    assert system.forces_on(system.pools["free"]) == []
    run_against_model(text, steps=5, entity="free")


@pytest.mark.parametrize("zone", [
    '[entity.kill_zone]\nshape = "sphere"\ncenter = [0.3, 0.6, 0.2]\nradius = 0.5',
    '[entity.kill_zone]\nshape = "box"\ncenter = [0.4, 0.5, 0.2]\nhalf_size = [0.3, 0.6, 0.8]',
    '[entity.attractor]\nposition = [0.3, 0.6, 0.2]\nstrength = 0.5\nkill_radius = 0.4',
])
def test_kill_zones_leave_no_live_particle_inside(gpu, zone):
    text = emitter(extra="substeps = 2") + f'[[entity]]\nname = "zone"\n{zone}\n'
    engine = run_against_model(text, steps=40)
    zone_component = next(iter(engine.components_of("zone").values()))
    state = engine.state("jet")
    inside = model.kills(state["position"].astype(np.float64), [zone_component])
    assert not (inside & state["alive"]).any()
    assert engine.kills > 10                       # the zone did kill something


@pytest.mark.parametrize("text,pieces", [
    ('[[entity]]\nname = "w"\n[entity.attractor]\nsoftening = 0.0\n',
     ["entity 'w'", "attractor.softening", "expected float > 0.0", "found 0.0"]),
    ('[[entity]]\nname = "w"\n[entity.attractor]\nstrength = nan\n',
     ["entity 'w'", "attractor.strength", "finite", "nan"]),
    ('[[entity]]\nname = "w"\n[entity.force_field]\nkind = "vortx"\n',
     ["entity 'w'", "force_field.kind", "vortex"]),
    ('[[entity]]\nname = "w"\n[entity.kill_zone]\nshape = "cube"\n',
     ["entity 'w'", "kill_zone.shape", "sphere", "box"]),
    ('[[entity]]\nname = "w"\n[entity.attractor]\nfollow_mouse = "yes"\n',
     ["entity 'w'", "attractor.follow_mouse", "bool"]),
    (emitter(extra='affected_by = ["wel"]') + '[[entity]]\nname = "well"\n[entity.attractor]\n',
     ["entity 'jet'", "emitter.affected_by[0]", "no entity named 'wel'", "did you mean 'well'"]),
    (emitter(extra='affected_by = ["other"]') + emitter("other"),
     ["emitter.affected_by[0]", "expected an entity with attractor or force_field or kill_zone"]),
])
def test_bad_force_input_is_one_line(text, pieces):
    with pytest.raises(SceneError) as info:
        loads_scene(HEAD + text, path="forces.toml")
    message = str(info.value)
    assert "\n" not in message
    for piece in pieces:
        assert piece in message, (piece, message)


def test_kind_bits_name_the_kinds_present():
    from emberfx.systems.forces.forces import KINDS, Attractor, ForceField, KillZone, kind_bits

    assert kind_bits([]) == 0
    assert kind_bits([Attractor(), Attractor(kill_radius=0.2)]) == 1 << KINDS["attractor"]
    assert kind_bits([ForceField(kind="turbulence"), ForceField(kind="drag")]) == (
        1 << KINDS["turbulence"] | 1 << KINDS["drag"])
    # a kill zone's shape is live: both shapes stay compiled in
    assert kind_bits([KillZone(shape="box")]) == 1 << KINDS["kill_sphere"] | 1 << KINDS["kill_box"]


def test_forces_of_a_new_kind_act_at_once(gpu):
    """The update compiles only the kinds in the scene (FORCE_KINDS): a force of a new kind,
    spawned or made by a live edit of force_field.kind, acts from the next step, as the model
    says; a kill zone edited from a sphere to a box kills in the box."""
    engine = run_against_model(emitter() + TWO_ATTRACTORS, steps=3)
    engine.spawn("swirl", {"force_field": {"kind": "turbulence", "frequency": 1.5,
                                           "strength": 3.0, "octaves": 2}})
    match_model(engine, "jet", steps=4)
    engine.entity("swirl").force_field.kind = "vortex"
    engine.entity("swirl").force_field.strength = 2.0
    match_model(engine, "jet", steps=4)
    engine.spawn("zone", {"kill_zone": {"shape": "sphere", "center": [9.0, 9.0, 9.0]}})
    engine.step(2)
    zone = engine.entity("zone").kill_zone
    zone.shape, zone.center, zone.half_size = "box", (0.0, 0.5, 0.2), (0.6, 0.8, 0.8)
    engine.kills = 0
    match_model(engine, "jet", steps=6)
    state = engine.state("jet")
    inside = model.kills(state["position"].astype(np.float64), [zone])
    assert not (inside & state["alive"]).any()
    assert engine.kills > 0


def test_arrange_puts_accelerating_forces_first_and_kill_zones_last():
    from emberfx.systems.forces.forces import Attractor, ForceField, KillZone, arrange

    well, killer = Attractor(), Attractor(kill_radius=0.2)
    field, zone = ForceField(kind="drag"), KillZone()
    ordered, accelerate_end, kill_start = arrange([zone, killer, field, well])
    assert ordered == [field, well, killer, zone]
    assert (accelerate_end, kill_start) == (3, 2)


def test_follow_mouse_round_trips_and_defaults_off():
    scene = loads_scene(HEAD + '[[entity]]\nname = "w"\n[entity.attractor]\nfollow_mouse = true\n'
                        '[[entity]]\nname = "v"\n[entity.attractor]\n')
    assert scene.entity("w").components["attractor"].follow_mouse is True
    assert scene.entity("v").components["attractor"].follow_mouse is False
    again = loads_scene(scene.to_toml())
    assert again.entity("w").components["attractor"] == scene.entity("w").components["attractor"]
    assert again.entity("v").components["attractor"].follow_mouse is False
