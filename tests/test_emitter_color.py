"""A colour per particle on lavapipe (systems/emitter/color.py), against known colours: children
born on_death from a red and a blue parent carry their parent's colour (as it showed: its look
times its own), `p.color` set by `init` shows in the render and `update` writes it each step,
a custom attribute named `color` is refused in one line, and an emitter that carries no
colour keeps its 32-byte particles, its batch and no "color" in its state."""

from __future__ import annotations

import io
import os
from dataclasses import replace
from pathlib import Path

import emitter_model as model
import numpy as np
import pytest

from emberfx.app.point_cache import points_of
from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.hot_reload import HotReloader
from emberfx.model.scene import load_scene, loads_scene
from emberfx.systems.emitter.structs import PARTICLE
from emberfx.systems.emitter.tuning import DEFAULT

DT = 0.02
HEAD = f"""
[scene]
name = "colour"
seed = 3
fixed_dt = {DT}
size = [48, 32]
background = "#000000"
[camera]
kind = "orthographic"
height = 8.0
"""
PARENT_X = 2.0   # the red parent at -x, the blue one at +x


def emitter(name: str, **fields) -> str:
    body = "\n".join(f"{key} = {value}" for key, value in fields.items())
    return f"\n[[entity]]\nname = \"{name}\"\n[entity.emitter]\n{body}\n"


def parent(name: str, x: float, look: str, **extra) -> str:
    """A burst of particles at (x, 0, 0) that barely move and die within 0.3 s, each death
    giving one spark."""
    fields = dict(capacity=200, rate="0.0", bursts="[{ time = 0.0, count = 200 }]",
                  lifetime="[0.05, 0.3]", speed="[0.0, 0.4]", gravity="[0.0, 0.0, 0.0]",
                  position=f"[{x}, 0.0, 0.0]", color=f'["{look}"]', color_variation="0.0",
                  on_death='{ emitter = "sparks", count = 1, inherit_color = true }')
    return emitter(name, **{**fields, **extra})


SPARKS = emitter("sparks", capacity=1000, lifetime="[5.0, 5.0]", speed="0.0",
                 gravity="[0.0, 0.0, 0.0]", color='["#808080"]')


def pool(engine, name):
    return engine.system_of(name, "emitter").pools[name]


def test_children_carry_the_colour_of_the_parent_they_came_from(gpu):
    """Every spark is born where its parent died (point shape, no speed): those on the red
    parent's side are (1, 0, 0, 1), those on the blue side (0, 0, 1, 1), exactly; the sparks'
    own grey look is not in the carried colour; the parents carry none."""
    text = HEAD + parent("red", -PARENT_X, "#ff0000") + parent("blue", PARENT_X, "#0000ff")
    with Engine(loads_scene(text + SPARKS)) as engine:
        engine.step(20)
        sparks = engine.state("sparks")
        for name in ("red", "blue"):
            assert "color" not in engine.state(name)
        alive = sparks["alive"]
        assert alive.sum() == 400   # every parent died once, each gave one spark
        assert sparks["color"].shape == (1000, 4) and sparks["color"].dtype == np.float32
        x = sparks["position"][alive, 0]
        colors = sparks["color"][alive]
        near = np.abs(np.abs(x) - PARENT_X) < 0.2   # within reach of its parent
        assert near.all()
        red, blue = x < 0, x > 0
        assert red.sum() == 200 and blue.sum() == 200
        np.testing.assert_array_equal(colors[red], np.tile([1, 0, 0, 1], (200, 1)))
        np.testing.assert_array_equal(colors[blue], np.tile([0, 0, 1, 1], (200, 1)))
        assert pool(engine, "sparks").batch is None   # a colour carrier runs alone


FADE_OUT = '[{ t = 0.0, color = "#ffffff" }, { t = 1.0, color = "#000000" }]'


def test_the_parent_colour_is_its_look_at_its_age_times_its_own(gpu, tmp_path):
    """A parent whose init sets p.color = (0.5, 1, 0.25, 1) under a white look gives its
    children that colour; one whose look fades from white to black over its life gives each
    child the look at the parent's death, t = 1 (black, alpha 1)."""
    (tmp_path / "tint.wgsl").write_text(
        "fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {\n"
        "    (*p).color = vec4f(0.5, 1.0, 0.25, 1.0);\n}\n")
    text = (HEAD + parent("tinted", -PARENT_X, "#ffffff", init='"tint.wgsl"')
            + parent("fading", PARENT_X, "#ffffff", color=FADE_OUT)
            + SPARKS)
    (tmp_path / "scene.toml").write_text(text)
    with Engine(load_scene(tmp_path / "scene.toml")) as engine:
        engine.step(20)
        tinted = engine.state("tinted")
        assert "color" in tinted   # its init uses p.color
        born = tinted["lifetime"] > 0
        np.testing.assert_array_equal(tinted["color"][born],
                                      np.tile([0.5, 1.0, 0.25, 1.0], (born.sum(), 1)))
        sparks = engine.state("sparks")
        alive = sparks["alive"]
        colors, x = sparks["color"][alive], sparks["position"][alive, 0]
        np.testing.assert_array_equal(colors[x < 0], np.tile([0.5, 1, 0.25, 1], (200, 1)))
        np.testing.assert_allclose(colors[x > 0], np.tile([0, 0, 0, 1], (200, 1)), atol=1e-6)


UPDATE = """fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).color = vec4f((*p).age, 0.5, 0.25, 1.0);
}
"""
INIT_TINT = """fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).color = vec4f(0.25, 0.5, 0.75, 1.0);
}
"""
INIT_GREEN = """fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).color = vec4f(0.0, 1.0, 0.0, 1.0);
}
"""


def test_each_child_gets_its_own_parents_colour_variation(gpu):
    """A white parent with color_variation = 0.5: each child, found by where its parent died
    (point shape, no speed), carries that parent's shade, 1 + 0.5 (2 r - 1) with r the
    parent's draw 1 of pcg_hash(slot ^ bits(lifetime)) (emitter_model.py), on rgb only."""
    text = HEAD + parent("varied", 0.0, "#ffffff", color_variation="0.5",
                         speed="[0.5, 1.5]", spread_deg="180.0") + SPARKS
    with Engine(loads_scene(text)) as engine:
        engine.step(20)
        parents, sparks = engine.state("varied"), engine.state("sparks")
    assert not parents["alive"].any()   # every parent died once, where its slot still says
    alive = sparks["alive"]
    assert alive.sum() == 200
    key = model.pcg_hash(np.arange(200, dtype=np.uint32)
                         ^ parents["lifetime"].view(np.uint32))
    shade = (1.0 + 0.5 * (2.0 * model.random01(key, 1) - 1.0)).astype(np.float32)
    assert shade.std() > 0.1   # the parents differ
    for child, where in zip(sparks["color"][alive], sparks["position"][alive]):
        slot = np.flatnonzero((parents["position"] == where).all(axis=1))
        assert len(slot) == 1
        np.testing.assert_allclose(child, [*[shade[slot[0]]] * 3, 1.0], rtol=0, atol=1e-6)


PATHS = {   # allocation, one_pass, births_in_update: every birth path
    "ordered": ("ordered", False, False),
    "atomic": ("atomic", False, False),
    "ticket": ("ticket", False, False),
    "one-pass": ("ordered", True, False),
    "one-pass-births-in-update": ("ordered", True, True),
}


@pytest.mark.parametrize("path", PATHS)
def test_init_and_update_write_the_colour_on_every_birth_path(gpu, tmp_path, path):
    """init sets p.color = (0.25, 0.5, 0.75, 1), update (age, 0.5, 0.25, 1): after the step,
    particles born before it have red = their age, those born in it init's colour."""
    allocation, one_pass, births_in_update = PATHS[path]
    (tmp_path / "age.wgsl").write_text(UPDATE)
    (tmp_path / "tint.wgsl").write_text(INIT_TINT)
    (tmp_path / "scene.toml").write_text(HEAD + emitter(
        "aged", capacity=300, rate="600.0", lifetime="[1.0, 2.0]", update='"age.wgsl"',
        init='"tint.wgsl"', allocation=f'"{allocation}"'))
    tuning = replace(DEFAULT, one_pass=one_pass, births_in_update=births_in_update)
    with Engine(load_scene(tmp_path / "scene.toml"), emitter_tuning=tuning) as engine:
        engine.step(10)
        state = engine.state("aged")
        alive = state["alive"]
        moved = alive & (state["age"] > 0)   # born before this step: updated since
        assert moved.sum() > 50
        np.testing.assert_allclose(state["color"][moved, 0], state["age"][moved], atol=1e-6)
        np.testing.assert_array_equal(state["color"][moved, 1:],
                                      np.tile([0.5, 0.25, 1.0], (moved.sum(), 1)))
        newborn = alive & (state["age"] == 0)   # born this step: init's colour
        assert newborn.sum() > 0
        np.testing.assert_array_equal(state["color"][newborn],
                                      np.tile([0.25, 0.5, 0.75, 1.0], (newborn.sum(), 1)))


def _render(path: Path, extra: dict[str, str]) -> np.ndarray:
    path.write_text(HEAD + emitter("dots", capacity=400, rate="2000.0", lifetime="[1.0, 1.0]",
                                   speed="0.0", gravity="[0.0, 0.0, 0.0]", size="0.5",
                                   shape='{ kind = "sphere", radius = 2.0 }',
                                   color='["#ffffff"]', **{"blend": '"alpha"'}, **extra))
    with Engine(load_scene(path)) as engine:
        engine.step(5)
        return engine.render()


def test_init_colour_shows_in_the_render(gpu, tmp_path):
    """White sprites whose init sets p.color = green draw green: green lit pixels, red and blue
    none; without the init the same sprites draw white."""
    (tmp_path / "green.wgsl").write_text(INIT_GREEN)
    green = _render(tmp_path / "green.toml", {"init": '"green.wgsl"'})
    white = _render(tmp_path / "white.toml", {})
    lit = green[..., 1] > 64
    assert lit.sum() > 20
    assert green[..., 0].max() == 0 and green[..., 2].max() == 0
    lit_white = white[..., 0] > 64
    assert lit_white.sum() > 20 and np.array_equal(white[..., 0], white[..., 2])


def test_a_custom_attribute_named_color_is_refused_in_one_line():
    with pytest.raises(SceneError) as caught:
        loads_scene('[[entity]]\nname = "x"\n[entity.emitter]\n'
                    'attributes = { color = "vec4f" }\n', path="bad.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("bad.toml: entity 'x': emitter.attributes.color: expected a name "
                              "other than the built-in ones")
    assert message.endswith("found 'color'")


def test_an_emitter_without_colour_keeps_its_particles_and_its_batch(gpu):
    """No init or update using .color and no inheriting link into it: no "color" in its
    state, no colour buffer, 32 bytes per particle, and two like emitters still batch."""
    plain = dict(capacity=300, rate="100.0", lifetime="[1.0, 1.0]")
    text = HEAD + emitter("a", **plain) + emitter("b", **plain)
    with Engine(loads_scene(text)) as engine:
        engine.step(3)
        for name in ("a", "b"):
            assert "color" not in engine.state(name)
            p = pool(engine, name)
            assert "color" not in p.buffers and "event_colors" not in p.buffers
            assert PARTICLE.itemsize == 32
            assert p.buffers["particles"].size == 300 * PARTICLE.itemsize
            assert p.batch is not None   # like emitters share a batch


def test_a_source_spawned_later_makes_its_target_carry_colour(gpu):
    """Sparks running without colour, then a red parent spawned with inherit_color naming them:
    the sparks are built again carrying colour, and its children are red."""
    with Engine(loads_scene(HEAD + SPARKS)) as engine:
        engine.step(2)
        assert "color" not in engine.state("sparks")
        engine.spawn("red", {"emitter": {
            "capacity": 50, "rate": 500.0,
            "lifetime": [0.05, 0.2], "speed": 0.0, "gravity": [0.0, 0.0, 0.0],
            "color": ["#ff0000"],
            "on_death": {"emitter": "sparks", "count": 2, "inherit_color": True}}})
        engine.step(15)
        sparks = engine.state("sparks")
        alive = sparks["alive"]
        assert alive.sum() > 50
        np.testing.assert_array_equal(sparks["color"][alive],
                                      np.tile([1, 0, 0, 1], (alive.sum(), 1)))


def test_a_reloaded_update_that_starts_using_colour_rebuilds_the_emitter(gpu, tmp_path):
    """An update file edited to set p.color: the reload builds the emitter again with its colour
    array (a reload that only recompiles would have nowhere to keep it)."""
    update = tmp_path / "age.wgsl"
    update.write_text("fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {}\n")
    (tmp_path / "scene.toml").write_text(HEAD + emitter(
        "aged", capacity=300, rate="600.0", lifetime="[1.0, 2.0]", update='"age.wgsl"'))
    with Engine(load_scene(tmp_path / "scene.toml")) as engine:
        reloader = HotReloader(engine, interval=0.0, out=io.StringIO())
        engine.step(3)
        assert "color" not in engine.state("aged")
        update.write_text(UPDATE)
        os.utime(update, ns=(update.stat().st_mtime_ns + 10**9,) * 2)
        assert "reloaded" in (reloader.poll() or "")
        engine.step(3)   # (built again: its particles started over)
        state = engine.state("aged")
        moved = state["alive"] & (state["age"] > 0)
        assert moved.sum() > 10
        np.testing.assert_allclose(state["color"][moved, 0], state["age"][moved], atol=1e-6)


def test_point_cache_colour_is_the_look_times_the_carried_colour(gpu):
    """The exported colour of red and blue sparks under a grey look (#808080, linear
    ((128/255 + 0.055) / 1.055) ** 2.4) is that grey times red or blue."""
    grey = ((128 / 255 + 0.055) / 1.055) ** 2.4
    text = HEAD + parent("red", -PARENT_X, "#ff0000") + parent("blue", PARENT_X, "#0000ff")
    with Engine(loads_scene(text + SPARKS)) as engine:
        engine.step(20)
        points = points_of(engine, "sparks")
    x = points["position"][:, 0]
    assert len(x) == 400
    np.testing.assert_allclose(points["color"][x < 0], np.tile([grey, 0, 0, 1], (200, 1)),
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose(points["color"][x > 0], np.tile([0, 0, grey, 1], (200, 1)),
                               rtol=0, atol=1e-6)


def test_inherit_color_edited_live_rebuilds_the_target_to_carry_colour(gpu):
    """A running link without inherit_color, then the field set live: the sparks are built
    again with their colour array and the children born since are red; set back, new children
    are white (the target keeps its array)."""
    text = HEAD + parent("red", -PARENT_X, "#ff0000", rate="300.0", bursts="[]",
                         on_death='{ emitter = "sparks", count = 1 }') + SPARKS
    with Engine(loads_scene(text)) as engine:
        engine.step(5)
        assert "color" not in engine.state("sparks")
        engine.entity("red").emitter.on_death.inherit_color = True
        engine.step(10)
        sparks = engine.state("sparks")
        red = sparks["alive"]
        assert red.sum() > 5
        np.testing.assert_array_equal(sparks["color"][red], np.tile([1, 0, 0, 1], (red.sum(), 1)))
        engine.entity("red").emitter.on_death.inherit_color = False
        engine.step(10)
        sparks = engine.state("sparks")
        white = sparks["alive"] & (sparks["age"] < 9 * DT)   # born after the second edit
        assert white.sum() > 5
        np.testing.assert_array_equal(sparks["color"][white], np.ones((white.sum(), 4)))
