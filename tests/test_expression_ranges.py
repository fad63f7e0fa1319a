"""Expression fields stay within the range of the numbers they replace: a constant expression is
refused at load like the number, and any other is clamped on the GPU (a NaN to the lower end)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.numbers import F32_MAX
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter.expression_ranges import constant_value

NOTE = "(a constant expression is checked as the number it replaces)"


def emitter_scene(extra: str) -> str:
    return f"[[entity]]\nname = \"fx\"\n[entity.emitter]\n{extra}\n"


@pytest.mark.parametrize("field, text, expected", [
    ("lifetime", "-1.0", "expected a value > 0"),
    ("lifetime", "0.0", "expected a value > 0"),
    ("lifetime", "2.0 - 3.0", "expected a value > 0"),
    ("lifetime", "7/2 - 4", "expected a value > 0"),          # WGSL integer division: 3 - 4
    ("speed", "-0.5", "expected a value >= 0"),
    ("speed", "-(1.0 + max(2.0, 3.0))", "expected a value >= 0"),
    ("size", "0.0", "expected a value > 0"),
    ("size", "-0.01f", "expected a value > 0"),
    ("size", "1e39", "expected a number within the 32-bit float range (|x| <= 3.403e+38)"),
])
def test_a_constant_expression_out_of_range_is_refused_like_its_number(field, text, expected):
    with pytest.raises(SceneError) as info:
        loads_scene(emitter_scene(f'{field} = "{text}"'), path="s.toml")
    value = constant_value(text)
    assert value is not None
    assert str(info.value) == (f"s.toml: entity 'fx': emitter.{field}: {expected} {NOTE}, "
                               f"found '{text}' = {value:g}")


@pytest.mark.parametrize("text, value", [
    ("7/2", 3.0), ("-7/2", -3.0), ("7.0/2", 3.5), ("f32(7)/2", 3.5), ("1.5e1f + .5", 15.5),
    ("clamp(5.0, 0.0, 2.0)", 2.0), ("floor(2.5) / 4", 0.5), ("-(2.0 * 3.0)", -6.0),
])
def test_constants_are_computed_as_wgsl_computes_them(text, value):
    assert constant_value(text) == value


@pytest.mark.parametrize("text", ["age", "-1.0 + 0.0 * age", "rand(ctx)", "1u", "sqrt(-1.0)",
                                  "1.0 / 0.0", "0x1p3", "99999999999 * 99999999999",
                                  "+".join(["1.0"] * 20000)])
def test_what_is_not_a_plain_constant_is_left_to_the_gpu(text):
    """(past 64-bit integers, or nested past Python's recursion: the compile decides)"""
    assert constant_value(text) is None


def test_constants_in_range_and_expressions_of_the_particle_load():
    scene = loads_scene(emitter_scene('lifetime = "2.0 - 0.5"\nspeed = "0.0"\n'
                                      'size = "-1.0 + 0.0 * age"'))
    emitter = scene.entity("fx").components["emitter"]
    assert (emitter.lifetime, emitter.speed) == ("2.0 - 0.5", "0.0")   # type: ignore[attr-defined]


def test_validate_refuses_a_negative_lifetime_expression(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(emitter_scene('lifetime = "-1.0"'))
    done = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"emberfx: error: {path}: entity 'fx': emitter.lifetime: expected a value > 0 {NOTE}, "
        f"found '-1.0' = -1"]


GPU_SCENE = """
[scene]
seed = 3
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = 4.0
[[entity]]
name = "fx"
[entity.emitter]
capacity = 200
spread_deg = 0.0
gravity = [0.0, 0.0, 0.0]
"""


def run(extra: str):
    engine = Engine(loads_scene(GPU_SCENE + extra), size=(48, 32))
    try:
        engine.step(3)
        return engine.state("fx"), engine.render()
    finally:
        engine.close()


@pytest.mark.parametrize("speed", ["-5.0 + 0.0 * time", "sqrt(-1.0 - time)"])
def test_a_particle_expression_below_the_range_or_nan_is_clamped_on_the_gpu(gpu, speed):
    state, _ = run(f'rate = 600.0\nspeed = "{speed}"')
    alive = state["alive"]
    assert alive.sum() > 10
    # the unclamped value would be (0, -5, 0) or NaN: the range's lower end, speed 0
    assert np.array_equal(state["velocity"][alive], np.zeros((alive.sum(), 3), np.float32))


def test_a_particle_expression_above_the_range_is_clamped_on_the_gpu(gpu):
    state, _ = run('rate = 600.0\nlifetime = "3e38 * (3.0 + time)"')   # overflows to inf
    alive = state["alive"]
    assert alive.sum() > 10
    assert np.all(state["lifetime"][alive] == np.float32(F32_MAX))


def test_a_negative_size_expression_draws_nothing(gpu):
    _, drawn = run('rate = 600.0\nlifetime = 5.0\nsize = "-0.5 + 0.0 * time"')
    _, empty = run("rate = 0.0")
    _, visible = run('rate = 600.0\nlifetime = 5.0\nsize = "0.5 + 0.0 * time"')
    assert drawn.tobytes() == empty.tobytes()
    assert visible.tobytes() != empty.tobytes()   # the same sprites at +0.5 are seen
