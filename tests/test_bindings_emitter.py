"""The emitter (and its scan and sort) on named bindings: each pass reads and writes what its
WGSL declarations say, every buffer is a registry resource <entity>/<key> that other code can
find and bind while the entity lives, and deleting or rebuilding the entity leaves no name."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
import wgpu

from emberfx.blocks.sort import stage_plan
from emberfx.core import wgsl
from emberfx.core.frame_graph import FrameGraph
from emberfx.core.readback import read_array
from emberfx.core.resources import ResourceError
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene
from emberfx.systems.emitter.structs import PARTICLE
from emberfx.systems.emitter.tuning import DEFAULT

SCENE = """
[scene]
name = "bindings"
seed = 3
fixed_dt = 0.02
size = [48, 32]
[camera]
kind = "orthographic"
center = [0.0, 1.0]
height = 6.0
[[entity]]
name = "jet"
[entity.emitter]
capacity = 3000
rate = 2000.0
lifetime = [0.5, 1.0]
speed = [1.0, 3.0]
blend = "alpha"
[[entity]]
name = "spray"
[entity.emitter]
capacity = 700
rate = 900.0
allocation = "atomic"
[[entity]]
name = "well"
[entity.attractor]
position = [0.0, 2.0, 0.0]
strength = 1.0
"""

# What each pass must read and write, from the access modes of its shader's declarations
# (var<uniform> and var<storage, read>: read; var<storage, read_write>: read and written; a
# draw also writes the scene target and reads its indirect arguments and index buffer). Keys
# are <entity>/ keys.
CONTACTS = {"collision", "colliders", "volume_refs", "volumes", "/scene/depth"}   # update reads
ORDERED = {   # "jet": ordered allocation, alpha blending (depth + sort)
    "update": ({"params", "particles", "counters", "free_mask", "block_free", "forces",
                "block_owner", *CONTACTS, "event_marks"},
               {"particles", "counters", "free_mask", "block_free", "event_marks"}),
    "ranks": ({"params", "block_free", "counters", "alive_total", "draw_args"},
              {"block_free", "counters", "alive_total", "draw_args"}),
    "spawn": ({"params", "particles", "free_mask", "block_free", "alive_list",
               "block_owner", "counters", "event_links", "event_records"},
              {"particles", "alive_list"}),
    "depth": ({"/frame", "particles", "alive_list", "alive_total", "sort_keys", "params",
               "depth_params"}, {"sort_keys"}),
    "sort:local": ({"sort_keys:sort_params:local", "sort_keys", "alive_list", "alive_total"},
                   {"sort_keys", "alive_list"}),
    "draw": ({"/frame", "params", "particles", "alive_list", "looks", "sprite_look",
              "list_owner", "draw_args", "/~sprites/indices"},
             {"/scene/color"}),
}
ATOMIC = {    # "spray": atomic allocation, additive
    "update": ({"params", "particles", "counters", "alive_mask", "block_alive", "forces",
                "block_owner", *CONTACTS, "event_marks"},
               {"particles", "counters", "alive_mask", "block_alive", "event_marks"}),
    "compact": ({"params", "alive_mask", "block_alive", "alive_list"}, {"alive_list"}),
    "prepare": ({"params", "counters", "block_alive", "block_alive:scan_sums0", "alive_total",
                 "draw_args"}, {"counters", "alive_total", "draw_args"}),
}


def names(entity: str, keys: set[str]) -> set[str]:
    return {k[1:] if k.startswith("/") else f"{entity}/{k}" for k in keys}


@pytest.fixture(scope="module")
def engine(gpu):
    """The tables above are the three-pass ordered step's (update, ranks, spawn); a hardware
    adapter would take the one-pass step for "jet", so the three-pass step is forced."""
    with Engine(loads_scene(SCENE), emitter_tuning=replace(DEFAULT, one_pass=False)) as engine:
        yield engine


@pytest.mark.parametrize("entity, table", [("jet", ORDERED), ("spray", ATOMIC)])
def test_reads_and_writes_follow_the_wgsl_access_modes(engine, entity, table):
    passes = {p.name: p for p in engine.frame_passes()}
    for short, (reads, writes) in table.items():
        p = passes[f"{entity}:emitter:{short}"]
        assert set(p.reads) == names(entity, reads), short
        assert set(p.writes) == names(entity, writes), short


def test_the_update_pass_writes_particles_and_only_reads_params(engine):
    update = next(p for p in engine.frame_passes() if p.name == "jet:emitter:update")
    assert "jet/particles" in update.writes and "jet/particles" in update.reads
    assert "jet/params" in update.reads and "jet/params" not in update.writes
    # and that is what the shader declares, read here with a pattern of the test's own
    source = wgsl.load("emitter/update.wgsl").code
    declared = {name: space for space, name in re.findall(r"var<([^>]*)>\s+(\w+)\s*:", source)}
    assert declared["particles"].replace(" ", "") == "storage,read_write"
    assert declared["emitters"].replace(" ", "") == "storage,read"
    assert declared["params"] == "private"   # a copy of the workgroup's emitter record


def test_no_emitter_pass_writes_what_the_host_uploads(engine):
    """params, looks and forces are written by the queue each step; the GPU only reads them."""
    for p in engine.frame_passes():
        if ":emitter:" in p.name:
            entity = p.name.split(":")[0]
            for key in ("params", "looks", "forces"):
                assert f"{entity}/{key}" not in p.writes, p.name


def test_another_system_finds_and_binds_the_particles_while_the_emitter_lives(engine):
    engine.step(6)
    view = engine.resources["jet/particles"]
    assert (view.owner, view.family) == ("jet", "emitter")
    assert view.size >= 3000 * PARTICLE.itemsize
    # a copy pass of another family's, bound by the name alone, sees the emitter's particles
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    copy_target = engine.resources.buffer("observer", "copy", view.size, usage, family="test")
    try:
        copy = engine.system_of("jet", "emitter").build.copy(
            "observer:test:copy", engine.frame_passes()[0].phase, "jet/particles", copy_target,
            3000 * PARTICLE.itemsize)
        assert (copy.reads, copy.writes) == (("jet/particles",), ("observer/copy",))
        graph = FrameGraph([copy], engine.resources.persistent())
        encoder = engine.device.create_command_encoder()
        graph.encode(encoder, {})
        engine.device.queue.submit([encoder.finish()])
        rows = read_array(engine.device, copy_target, PARTICLE, 3000)
        state = engine.state("jet")
        assert state["alive"].sum() > 0
        np.testing.assert_array_equal(rows["position_age"][:, :3], state["position"])
        np.testing.assert_array_equal(rows["position_age"][:, 3], state["age"])
    finally:
        engine.resources.release("observer")


def registry_names(engine, entity: str) -> set[str]:
    return set(engine.resources.names(entity))


def test_deleting_an_emitter_releases_every_name_it_made(gpu):
    with Engine(loads_scene(SCENE)) as engine:
        engine.step(2)
        jet = registry_names(engine, "jet")
        spray = registry_names(engine, "spray")
        # its own buffers and the ones its sort made for it (its ranks need no scan buffers;
        # the atomic spray's alive scan has them)
        assert {"jet/particles", "jet/alive_list", "jet/counters", "jet/draw_args",
                "jet/sort_keys", "jet/sort_keys:sort_params:local"} <= jet
        assert {"spray/block_alive:scan_sums0", "spray/block_alive:scan_params0"} <= spray
        engine.delete("jet")
        assert registry_names(engine, "jet") == set()
        assert not any(n.startswith("jet/") for n in engine.resources.names())
        assert registry_names(engine, "spray") == spray   # the others keep theirs
        with pytest.raises(ResourceError, match="no GPU resource named 'jet/particles'"):
            engine.resources["jet/particles"]
        engine.step(2)   # the frame graph no longer names them
        assert not any("jet" in r for p in engine.frame_passes() for r in (*p.reads, *p.writes))
        # spawned again, the same names come back (nothing was left behind to collide)
        engine.spawn("jet", {"emitter": {"capacity": 3000, "rate": 100.0, "blend": "alpha"}})
        assert registry_names(engine, "jet") == jet
        engine.step(2)


def test_a_rebuild_replaces_every_name_with_the_new_capacity(gpu):
    with Engine(loads_scene(SCENE)) as engine:
        engine.step(1)
        before = registry_names(engine, "jet")
        old = engine.resources["jet/particles"].buffer
        engine.entity("jet").emitter.capacity = 300_000   # more sort stages, bigger buffers
        engine.step(1)
        after = registry_names(engine, "jet")
        assert engine.resources["jet/particles"].buffer is not old
        assert engine.resources["jet/particles"].size >= 300_000 * PARTICLE.itemsize
        sort_params = {n for n in after if n.startswith("jet/sort_keys:sort_params:")}
        assert sort_params == {f"jet/sort_keys:sort_params:{s[0]}" for s in stage_plan(300_000)}
        assert after - sort_params == before - sort_params
        assert engine.stats()["entities"]["jet"]["capacity"] == 300_000


def test_particle_life_binds_both_ping_pong_sets(gpu, scenes_dir):
    """The forces pass has one bind group per parity: it reads and writes both particle sets."""
    with Engine(load_scene(scenes_dir / "particle_life.toml"), size=(32, 32)) as e:
        name = e.entity_names()[0]
        passes = {p.name: p for p in e.frame_passes()}
        forces = passes[f"{name}:particle_life:forces"]
        state = {f"{name}/particles0", f"{name}/particles1", f"{name}/ids0", f"{name}/ids1"}
        assert state <= set(forces.reads) and set(forces.writes) == state
        assert f"{name}/params" not in forces.writes
        draw = passes[f"{name}:particle_life:draw"]
        assert set(draw.writes) == {"scene/color"}
        assert {f"{name}/particles0", f"{name}/particles1"} <= set(draw.reads)
        e.delete(name)
        assert e.resources.names(name) == []
