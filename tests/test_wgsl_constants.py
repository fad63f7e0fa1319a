"""Constants the host reads from the WGSL that owns them (emberfx.core.wgsl.constant,
enum_constants, workgroup_size): the reader on tricky text, every Python table against the
shader's own words, and the host's refusal of a sweep override past MAX_GENS."""

from __future__ import annotations

import importlib.resources
import re

import pytest

from emberfx.core import wgsl
from emberfx.core.errors import ShaderError, UsageError


@pytest.fixture
def fake_shaders(monkeypatch):
    files = {}
    real = wgsl.read_text
    monkeypatch.setattr(wgsl, "read_text",
                        lambda name: files[name] if name in files else real(name))
    caches = (wgsl.load, wgsl._declared_constants, wgsl.workgroup_size)
    for cache in caches:
        cache.cache_clear()
    yield files
    for cache in caches:
        cache.cache_clear()


TRICKY = """// t/c.wgsl
//! include t/inc.wgsl
const HEX: u32 = 0xFFu;   // const IN_COMMENT: u32 = 9u;
/* const IN_BLOCK: u32 = 9u; */
const NEG = -7i;
const PLAIN = 12;
const HALF: f32 = 0.5f;
const EXP = 1e3;
const F_SUFFIX: f32 = 2f;
const FLAG: bool = true;
const OFF = false;
const SUM: u32 = 2u * BASE + (HEX >> 4u);
const QUOTIENT: u32 = 7u / 2u;
const RATIO: f32 = 7.0 / 2.0;
const CALL: u32 = max(1u, 2u);
const VECTOR = vec2u(1u, 2u);
const TOO_BIG: u32 = 0x100000000u;
override ALSO: u32 = 3u;
const SIZE: u32 = 32u;
fn helper() -> u32 { const LOCAL: u32 = 5u; return LOCAL; }
@compute @workgroup_size(SIZE, 2)
fn main() {}
@workgroup_size(ALSO) @compute
fn by_override() {}
@compute @workgroup_size(8, 0)
fn zero() {}
"""


def test_reader_on_tricky_text(fake_shaders):
    fake_shaders["t/inc.wgsl"] = "// t/inc.wgsl\nconst BASE: u32 = 10u;\n"
    fake_shaders["t/c.wgsl"] = TRICKY
    found = wgsl.constants("t/c.wgsl")
    assert found == {"BASE": 10, "HEX": 255, "NEG": -7, "PLAIN": 12, "HALF": 0.5, "EXP": 1000.0,
                     "F_SUFFIX": 2.0, "FLAG": True, "OFF": False, "SUM": 35, "QUOTIENT": 3,
                     "RATIO": 3.5, "SIZE": 32}
    assert type(found["EXP"]) is float and type(found["PLAIN"]) is int
    assert wgsl.constant("t/c.wgsl", "HEX") == 255
    for unreadable in ("CALL", "VECTOR", "TOO_BIG"):
        with pytest.raises(ShaderError, match=f"shaders/t/c.wgsl: const {unreadable} = "):
            wgsl.constant("t/c.wgsl", unreadable)
    for absent in ("IN_COMMENT", "IN_BLOCK", "LOCAL", "ALSO", "NOPE"):
        with pytest.raises(ShaderError,
                           match=f"expected a module-scope 'const {absent}', found none"):
            wgsl.constant("t/c.wgsl", absent)
    assert wgsl.workgroup_size("t/c.wgsl") == (32, 2, 1)
    with pytest.raises(ShaderError, match="@workgroup_size of by_override: 'ALSO' is not"):
        wgsl.workgroup_size("t/c.wgsl", "by_override")
    with pytest.raises(ShaderError, match="expected a positive integer, found 0"):
        wgsl.workgroup_size("t/c.wgsl", "zero")
    with pytest.raises(ShaderError, match="expected a compute entry point 'helper'"):
        wgsl.workgroup_size("t/c.wgsl", "helper")
    with pytest.raises(ShaderError, match=r"expected module-scope consts named MISSING_\*"):
        wgsl.enum_constants("t/c.wgsl", "MISSING")


def test_python_follows_an_edited_const(fake_shaders):
    fake_shaders["t/e.wgsl"] = ("// t/e.wgsl\nconst MODE_FIRST: u32 = 4u;\n"
                                "const MODE_SECOND_ONE = 9u;\nconst MODEL: u32 = 1u;\n"
                                "@compute @workgroup_size(128)\nfn main() {}\n")
    assert wgsl.enum_constants("t/e.wgsl", "MODE") == {"first": 4, "second_one": 9}
    assert wgsl.workgroup_size("t/e.wgsl") == (128, 1, 1)


def _used_beyond_declaration(shader: str, name: str) -> bool:
    return len(re.findall(rf"\b{name}\b", wgsl.load(shader).code)) > 1


def test_tables_equal_what_the_wgsl_declares():
    from emberfx.blocks import scan, sort
    from emberfx.systems.colliders import cloth as cloth_colliders
    from emberfx.systems.emitter import step as emitter
    from emberfx.systems.emitter import structs as emitter_params
    from emberfx.systems.forces import forces
    from emberfx.systems.life import display as life_display
    from emberfx.systems.life import kernels as life_kernels
    from emberfx.systems.particle_life import system as particle_life
    from emberfx.systems.post import system as post

    assert emitter_params.SHAPES == {"point": 0, "sphere": 1, "box": 2, "disk": 3, "cone": 4,
                                     "ring": 5, "mesh": 6, "life": 7}
    assert emitter_params.SHAPES == {k[len("SHAPE_"):].lower(): v for k, v in
                                     wgsl.constants("emitter/types.wgsl").items()
                                     if k.startswith("SHAPE_")}
    # point is the switch's default
    for kind in ("SPHERE", "BOX", "DISK", "CONE", "RING", "MESH", "LIFE"):
        assert _used_beyond_declaration("emitter/types.wgsl", f"SHAPE_{kind}"), kind
    assert emitter.ALLOCATION_MODES == {"ordered": 0, "atomic": 1, "ticket": 2}
    assert forces.KINDS == {"attractor": 0, "gravity": 1, "drag": 2, "vortex": 3, "turbulence": 4,
                            "kill_sphere": 5, "kill_box": 6, "wind": 7, "vector_field": 8}
    assert cloth_colliders.COLLIDER_KINDS == {"sphere": 0, "plane": 1}
    assert emitter_params.LOOK_SAMPLES == 128 == emitter_params.LOOKS["color"].shape[0]
    assert emitter_params.BLOCK == 256 == emitter_params.BLOCK_WORDS * 32
    for shader in ("update", "spawn", "compact"):
        assert wgsl.workgroup_size(f"emitter/{shader}.wgsl") == (emitter_params.BLOCK, 1, 1)
    kernels = life_kernels
    assert (kernels.TILE_W, kernels.TILE_H, kernels.BORDER_SLOTS) == (8, 32, 76)
    assert kernels.BORDER_SLOTS == 2 * kernels.TILE_W + 2 * (kernels.TILE_H - 2)
    assert wgsl.workgroup_size("life/step_inplace.wgsl")[0] == kernels.TILE_W * kernels.TILE_H
    assert kernels.MAX_SWEEP_GENS == 16 and 1 <= kernels.SWEEP_GENS <= kernels.MAX_SWEEP_GENS
    assert life_display.POPULATION_WORDS == 256 * 16
    assert wgsl.workgroup_size("life/trail.wgsl")[:2] == life_display.TEXEL_GROUP
    assert scan.TILE == 1024 == wgsl.workgroup_size("common/scan_tiles.wgsl")[0] * \
        wgsl.constant("common/scan_tiles.wgsl", "PER_INVOCATION")
    assert (sort.TILE, sort.GROUP) == (1024, 64)
    for shader in ("forces", "forces_all_pairs", "scatter"):
        assert (wgsl.workgroup_size(f"particle_life/{shader}.wgsl")[0]
                == particle_life.PARTICLE_GROUP)
    root = importlib.resources.files("emberfx.shaders").joinpath("post")
    for f in root.iterdir():
        if "@compute" in f.read_text(encoding="utf-8"):
            assert wgsl.workgroup_size(f"post/{f.name}") == post.GROUP, f.name


def test_every_shader_uses_the_shared_folded_index():
    root = importlib.resources.files("emberfx.shaders")
    users = 0
    for d in root.iterdir():
        if not d.is_dir():
            continue
        for f in d.iterdir():
            if not f.name.endswith(".wgsl") or f"{d.name}/{f.name}" == "common/dispatch.wgsl":
                continue
            code = "\n".join(line for line in f.read_text(encoding="utf-8").splitlines()
                             if not line.lstrip().startswith("//"))
            assert "groups.x" not in code, f"{d.name}/{f.name} folds the dispatch index by hand"
            if "num_workgroups" in code:   # a dispatch the host may fold past the 1-D limit
                assert "folded_" in code, f"{d.name}/{f.name} reads num_workgroups unfolded"
                users += 1
    assert users >= 20   # most passes of every family: the check above is not vacuous


@pytest.mark.parametrize("gens", [17])
def test_sweep_refuses_more_generations_than_max_gens(gpu, monkeypatch, gens):
    if not gpu.subgroup_size:
        pytest.skip("the sweep kernel needs subgroups")
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.life import kernels as life_kernels
    from emberfx.systems.life.component import Life

    monkeypatch.setattr(life_kernels, "SWEEP_GENS", gens)
    scene = Scene(SceneSettings(seed=1), Camera(kind="orthographic"),
                  [EntitySpec("soup", {"life": Life(size=(256, 64), density=0.3,
                                                    steps_per_frame=gens)})])
    with pytest.raises(UsageError) as err:
        engine = Engine(scene, size=(64, 48))
        engine.step()
    message = str(err.value)
    assert "\n" not in message
    assert message == ("entity 'soup': life/step_sweep.wgsl advances 1 to MAX_GENS = 16 "
                       "generations per dispatch, asked for GENS = 17")
