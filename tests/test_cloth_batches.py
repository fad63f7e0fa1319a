"""Batches of cloth patches of one shape (systems/cloth/batches.py): one substeps dispatch and
one normals dispatch for all, byte-identical to the same patches run alone (Engine(batching=
False), which runs every patch as a batch of one over its own buffers).

The oracle is the unbatched run of the same scene: every patch's positions and velocities and
the rendered image must be equal to the byte, through ragged patches (different pins, sizes,
stiffness, colours, a prewarm, winds and colliders acting on some only through affected_by, a
patch of another shape and one of another substep count that run alone), spawns and deletes at
run time that regroup the batches (an odd substep count, so patches spawned at odd steps join
with the other ping-pong parity), a wind spawned later that changes what every step compiles
to, and live edits that move a patch out of its batch. Grids of 19 x 13 are not multiples of
the 16 x 16 workgroup, and 247 vertices are no multiple of the 16 vertices in a 256-byte view
alignment, so every batched patch starts at a padded offset."""

from __future__ import annotations

import cloth_model
import numpy as np
import pytest

from emberfx.core.frame_graph import Phase
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.cloth.tuning import ClothTuning

HEADER = """
[scene]
name = "cloth batches"
seed = 5
size = [160, 96]
[camera]
kind = "perspective"
position = [0.0, 1.0, 9.0]
target = [0.0, 0.5, 0.0]
"""

WORLD = """
[[entity]]
name = "breeze"
[entity.force_field]
kind = "wind"
direction = [0.3, 0.0, 1.0]
strength = 3.0
gust = 0.8
[[entity]]
name = "ball"
[entity.collider]
shape = "sphere"
center = [0.0, 0.2, 0.4]
radius = 0.4
[[entity]]
name = "floor"
[entity.collider]
shape = "plane"
point = [0.0, -1.0, 0.0]
normal = [0.0, 1.0, 0.0]
[[entity]]
name = "wall"
[entity.collider]
shape = "plane"
point = [0.0, 0.0, 0.05]
normal = [0.0, 0.0, 1.0]
"""


def patch(name: str, x: float, extra: str = "", resolution=(19, 13), substeps: int = 12) -> str:
    """A patch's entity; ``extra``: TOML lines that add fields or replace the defaults here."""
    fields = {"resolution": f"[{resolution[0]}, {resolution[1]}]", "size": "[1.2, 0.9]",
              "position": f"[{x}, 0.0, 0.0]", "substeps": str(substeps), "stiffness": "900.0",
              "mass": "0.02"}
    for line in filter(None, extra.splitlines()):
        key, value = line.split("=", 1)
        fields[key.strip()] = value.strip()
    body = "\n".join(f"{key} = {value}" for key, value in fields.items())
    return f'\n[[entity]]\nname = "{name}"\n[entity.cloth]\n{body}\n'


RAGGED = (HEADER + WORLD
          + patch("a", -3.0)                                           # wind and colliders
          + patch("b", -2.0, 'pins = "top-edge"\nstiffness = 1200.0\nprewarm = 0.1')
          + patch("c", -1.0, 'pins = [[0, 12], [9, 12], [18, 6]]\ncolor = "#3060ff"')
          + patch("d", 0.0, 'affected_by = ["ball"]\ndrag = 0.3')     # colliders, no wind
          + patch("e", 1.0, 'affected_by = ["floor", "wall"]\ngravity = [0.5, -9.81, 0.0]')
          + patch("f", 2.0, 'affected_by = []\nwireframe = true')      # nothing acts
          + patch("g", 3.0, 'affected_by = []\ndamping = 0.1\nsize = [0.8, 1.1]')
          + patch("h", -0.5, "", resolution=(10, 7))                   # another shape: alone
          + patch("i", 0.5, "", substeps=13))                          # other substeps: alone
PATCHES = "abcdefghi"


def snapshot(engine: Engine) -> dict[str, tuple[bytes, bytes]]:
    out = {}
    for name in engine.entity_names():
        if "cloth" in engine.components_of(name):
            state = engine.state(name)
            out[name] = (state["position"].tobytes(), state["velocity"].tobytes())
    return out


def cloth_passes(engine: Engine) -> list[str]:
    return [p.name for p in engine.frame_passes() if ":cloth:" in p.name]


def run(text: str, batching: bool, steps: int = 10, between=None):
    with Engine(loads_scene(text, path="<cloth batches>"), batching=batching) as engine:
        engine.step(steps)
        if between is not None:
            between(engine)
            engine.step(steps)
        return snapshot(engine), engine.render(), cloth_passes(engine)


def assert_identical(batched: dict, alone: dict) -> None:
    assert batched.keys() == alone.keys()
    for name in alone:
        assert batched[name] == alone[name], name


def test_batched_patches_are_byte_identical_to_each_patch_alone(gpu):
    batched, image, passes = run(RAGGED, True)
    alone, image_alone, passes_alone = run(RAGGED, False)
    assert set(alone) == set(PATCHES)
    assert_identical(batched, alone)
    assert np.array_equal(image, image_alone)
    assert (image.reshape(-1, 4)[:, :3].max(axis=1) > 0).mean() > 0.05   # the patches drew
    # three batches (a b c: wind and colliders; d e: colliders; f g: nothing acts) and two
    # lone patches: 5 substeps + 5 normals passes instead of 9 + 9; a shadow draw and a draw
    # per patch, a wire
    assert len(passes_alone) == 9 * 4 + 1
    assert len(passes) == 5 * 2 + 9 * 2 + 1
    assert sum(n.endswith(":cloth:substeps") for n in passes) == 5


@pytest.mark.parametrize("resident", [True, False])
def test_one_dispatch_over_all_patches_and_views_into_one_arena(gpu, resident):
    tuning = ClothTuning(resident_up_to_vertices=19 * 13 if resident else 0)
    text = HEADER + "".join(patch(f"p{k}", k - 2.0, f"stiffness = {700 + 100 * k}")
                            for k in range(5))
    with Engine(loads_scene(text, path="<cloth batches>"), cloth_tuning=tuning) as engine:
        names = cloth_passes(engine)
        substeps = [n for n in names if n.endswith(":cloth:substeps")]
        assert len(substeps) == 1 and substeps[0].startswith("~cloth")
        assert sum(n.endswith(":cloth:normals") for n in names) == 1
        assert sum(n.endswith(":cloth:draw") for n in names) == 5
        step = next(p for p in engine.frame_passes() if p.name == substeps[0])
        if resident:   # a workgroup per patch, every substep in it: one dispatch a step
            assert (step.op.groups, step.op.repeat) == ((5, 1, 1), 1)
        else:          # ceil(19 / 16), ceil(13 / 16), one z per patch; once per substep
            assert (step.op.groups, step.op.repeat) == ((2, 1, 5), 12)
        views = [engine.resources[f"p{k}/pos0"] for k in range(5)]
        assert len({id(v.buffer) for v in views}) == 1
        # 247 vertices of 16 bytes, each patch at a multiple of 256 bytes: 256 vertices apart
        assert [v.offset for v in views] == [k * 256 * 16 for k in range(5)]
        assert all(v.size == 19 * 13 * 16 for v in views)
        # the shared pass declares what it writes under every patch's name too
        assert {f"p{k}/pos0" for k in range(5)} <= set(step.writes)


def test_resident_substeps_equal_a_dispatch_per_substep_to_the_byte(gpu):
    """cloth/step_resident.wgsl (every substep of a step in one workgroup per patch) against
    cloth/step.wgsl (a dispatch per substep), which share their substep code: the ragged scene
    (batches, lone patches, 13 substeps, a prewarm, winds and colliders) plus a soft patch of a
    single substep and patches of 1200 vertices (the limit here, past the 1024 invocations a
    workgroup may have: some step two) and 1230 (past the limit: a dispatch per substep either
    way), byte for byte, and the image."""
    text = (RAGGED + patch("j", 1.5, "stiffness = 5.0\ndamping = 0.01", substeps=1)
            + patch("k", -1.5, "", resolution=(40, 30), substeps=7)
            + patch("m", 2.5, "", resolution=(41, 30), substeps=7))
    runs = {}
    for limit in (40 * 30, 0):
        tuning = ClothTuning(resident_up_to_vertices=limit)
        with Engine(loads_scene(text, path="<cloth resident>"), cloth_tuning=tuning) as engine:
            repeats = {p.name: p.op.repeat for p in engine.frame_passes()
                       if p.name.endswith(":cloth:substeps")}
            engine.step(9)
            runs[limit] = snapshot(engine), engine.render(), repeats
    (resident, image, repeats), (per_substep, image_per_substep, repeats_per_substep) = (
        runs[40 * 30], runs[0])
    assert repeats["k:cloth:substeps"] == 1 and repeats_per_substep["k:cloth:substeps"] == 7
    assert repeats["m:cloth:substeps"] == repeats_per_substep["m:cloth:substeps"] == 7
    assert repeats["j:cloth:substeps"] == repeats_per_substep["j:cloth:substeps"] == 1
    assert set(resident) == set(PATCHES + "jkm")
    assert_identical(resident, per_substep)
    assert np.array_equal(image, image_per_substep)
    # the patches moved (the velocities of the largest resident one are not still zero)
    assert np.abs(np.frombuffer(resident["k"][1], np.float32)).max() > 0.1


def test_each_batched_patch_equals_the_numpy_replica_with_its_own_parameters(gpu):
    """Two batched 9 x 7 patches with different stiffness, damping, drag, gravity and pins: each
    matches the float64 replica run with its own parameters (so no entry reads another's
    record or vertices)."""
    fields: list[dict] = [
        dict(stiffness=500.0, damping=0.2, drag=0.1, gravity=(0.0, -9.81, 0.0)),
        dict(stiffness=800.0, damping=0.4, drag=0.0, gravity=(0.4, -9.0, 0.2))]
    text = HEADER + "".join(
        patch(f"q{k}", 2.0 * k, f"stiffness = {f['stiffness']}\ndamping = {f['damping']}\n"
              f"drag = {f['drag']}\ngravity = {list(f['gravity'])}\n"
              f"pins = \"{'top-corners' if k == 0 else 'top-edge'}\"",
              resolution=(9, 7), substeps=10)
        for k, f in enumerate(fields))
    with Engine(loads_scene(text, path="<cloth batches>")) as engine:
        assert engine.system_of("q0", "cloth").patches["q0"].sim.batched
        starts = {k: engine.state(f"q{k}") for k in range(2)}
        engine.step(4)
        for k, f in enumerate(fields):
            x = starts[k]["position"].astype(np.float64)
            v = starts[k]["velocity"].astype(np.float64)
            rest = x.copy()
            pinned = np.zeros((7, 9), bool)
            if k == 0:
                pinned[6, 0] = pinned[6, 8] = True
            else:
                pinned[6, :] = True
            for _ in range(40):
                x, v = cloth_model.substep(x, v, pinned, rest, dx=1.2 / 8, dy=0.9 / 6,
                                           mass=0.02, h=1.0 / 60.0 / 10, **f)
            state = engine.state(f"q{k}")
            assert np.abs(x - rest).max() > 20 * 2e-5   # it moved far beyond the tolerance
            np.testing.assert_allclose(state["position"], x, atol=2e-5, rtol=0)
            np.testing.assert_allclose(state["velocity"], v, atol=2e-3, rtol=0)


def test_spawns_deletes_and_a_new_wind_regroup_and_stay_identical(gpu):
    """At run time: a batch member deleted (its entry idles), SPAWN_GROUP + 1 patches of an odd
    substep count spawned at an odd step (so they join the lone patch i with the other
    ping-pong parity), more than half of a batch deleted (it is packed again), and a second
    wind spawned (every patch that any wind reaches now compiles its wind code)."""
    from emberfx.systems.cloth.batches import SPAWN_GROUP

    def script(engine):
        engine.delete("b")
        engine.step(2)    # 7 steps of 13 substeps: i's state lies in the other pair
        for k in range(SPAWN_GROUP + 1):
            engine.spawn(f"s{k}", {"cloth": {"resolution": [19, 13], "substeps": 13,
                                             "position": [0.3 * k - 1.0, 1.5, 0.0],
                                             "mass": 0.02, "stiffness": 800.0 + 10 * k,
                                             "pins": "top-edge" if k % 2 else "top-corners"}})
        engine.step(3)
        for k in range(1, SPAWN_GROUP):
            engine.delete(f"s{k}")
        engine.step(2)
        engine.spawn("gale", {"force_field": {"kind": "wind", "direction": [0.0, 0.0, -1.0],
                                              "strength": 2.0}})

    batched, image, _ = run(RAGGED, True, steps=5, between=script)
    alone, image_alone, _ = run(RAGGED, False, steps=5, between=script)
    assert set(alone) == (set(PATCHES) - {"b"}) | {"s0", f"s{SPAWN_GROUP}"}
    assert_identical(batched, alone)
    assert np.array_equal(image, image_alone)


# the scene's patches' key (19 x 13 vertices, 13 substeps), stable at 13 substeps
SPAWNED = {"resolution": [19, 13], "substeps": 13, "stiffness": 900.0, "mass": 0.02}


def test_spawned_patches_wait_then_batch_with_the_odd_parity_lone_one(gpu):
    from emberfx.systems.cloth.batches import SPAWN_GROUP

    with Engine(loads_scene(RAGGED, path="<cloth batches>")) as engine:
        system = engine.system_of("a", "cloth")
        engine.step(1)    # 13 substeps: i's state now lies in the other pair
        assert system.patches["i"].parity == 1

        def batch_of(name: str):
            sim = system.patches[name].sim
            return sim.name if sim.batched else None

        for k in range(SPAWN_GROUP - 1):
            engine.spawn(f"s{k}", {"cloth": SPAWNED})
        assert all(batch_of(f"s{k}") is None for k in range(SPAWN_GROUP - 1))   # waiting
        engine.spawn(f"s{SPAWN_GROUP - 1}", {"cloth": SPAWNED})
        spawned = {batch_of(f"s{k}") for k in range(SPAWN_GROUP)}
        assert len(spawned) == 1 and None not in spawned
        assert batch_of("i") is None   # i (a scene patch, key alike) joins at the next arrange
        engine.spawn("gale", {"force_field": {"kind": "wind", "strength": 1.0}})
        assert batch_of("i") == batch_of("s0") is not None
        assert system.patches["i"].parity == system.patches["s0"].parity


def test_live_edits_move_a_patch_out_of_its_batch_and_stay_identical(gpu):
    def edit(engine):
        engine.entity("a").cloth.substeps = 13          # its own dispatch count now
        engine.entity("d").cloth.affected_by = []       # no collider: another compiled step
        engine.entity("f").cloth.pin_offset = (0.0, 0.2, 0.0)   # live: stays in its batch

    batched, image, _ = run(RAGGED, True, steps=6, between=edit)
    alone, image_alone, _ = run(RAGGED, False, steps=6, between=edit)
    assert_identical(batched, alone)
    assert np.array_equal(image, image_alone)
    with Engine(loads_scene(RAGGED, path="<cloth batches>")) as engine:
        engine.step(2)
        system = engine.system_of("a", "cloth")
        before = system.patches["f"].sim
        edit(engine)
        engine.step(1)
        sims = {name: system.patches[name].sim for name in "abcdefg"}
        # a joins i (13 substeps); d joins f and g (nothing acts); b and c stay together
        assert sims["a"] is system.patches["i"].sim and sims["a"].batched
        assert sims["d"] is sims["f"] is sims["g"] and sims["f"] is not before
        assert sims["b"] is sims["c"] and sims["e"].batched is False


@pytest.mark.parametrize("count", [1, 2])
def test_batching_off_or_a_lone_patch_runs_under_its_own_name(gpu, count):
    tuning = ClothTuning(resident_up_to_vertices=0)   # z: one per patch
    text = HEADER + "".join(patch(f"p{k}", float(k)) for k in range(count))
    for batching in (True, False):
        with Engine(loads_scene(text, path="<cloth batches>"), batching=batching,
                    cloth_tuning=tuning) as engine:
            names = [n for n in cloth_passes(engine) if n.endswith(":cloth:substeps")]
            if batching and count > 1:
                assert names == [names[0]] and names[0].startswith("~cloth")
            else:
                assert names == [f"p{k}:cloth:substeps" for k in range(count)]
            step = next(p for p in engine.frame_passes({Phase.SIMULATE}) if p.name == names[0])
            assert step.op.groups[2] == (count if batching else 1)


def test_the_engine_refuses_a_cloth_tuning_of_another_type(gpu):
    with pytest.raises(TypeError, match=r"^Engine\(cloth_tuning=\.\.\.\): expected a ClothTuning "
                                        r"\(emberfx\.systems\.cloth\.tuning\), found dict$"):
        Engine(loads_scene(HEADER + patch("p0", 0.0), path="<cloth batches>"),
               cloth_tuning={"resident_up_to_vertices": 0})   # type: ignore[arg-type]
