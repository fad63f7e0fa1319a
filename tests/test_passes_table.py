"""`emberfx passes SCENE`: each pass's order, phase, name and what it does, then the phases' work
that has no pass of its own (a clear written by the host, a preparation folded into another
pass, the readback's direct copy), all as the engine's systems declare them.

The CLI runs in a subprocess; its table is checked against the Engine's own pass order
(``Engine.pass_table()``, ``Engine.passes()``) built in this process.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from emberfx.app.cli import PASSES_SIZE
from emberfx.core.frame_graph import Folding, Phase
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene
from emberfx.systems.emitter.tuning import DEFAULT

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"
PHASES = "|".join(p.name for p in Phase)
ROW = re.compile(rf"^ *(\d+)  ({PHASES}) +(\S+) +(.+)$")
NOTE = re.compile(rf"^  ({PHASES}) +(host write|folded|copy) +(.+)$")


def cli_table(scene: str) -> tuple[list[tuple[int, str, str, str]], list[tuple[str, str, str]]]:
    done = subprocess.run([sys.executable, "-m", "emberfx", "passes", scene], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["#", "phase", "pass", "what", "it", "does"]
    rows = [m.groups() for m in map(ROW.match, lines) if m]
    notes = [(m[1], m[2], m[3]) for m in map(NOTE.match, lines) if m]
    assert len(rows) + len(notes) == len([ln for ln in lines[1:] if ln.startswith(" ") or
                                          ln[:1].isdigit()]), lines   # every line parsed
    return [(int(n), phase, name, does) for n, phase, name, does in rows], notes


def engine_of(scene, **options) -> Engine:
    return Engine(scene, size=PASSES_SIZE, scripts=False, **options)


@pytest.mark.parametrize("scene", ["fountain", "life"])
def test_the_cli_prints_the_engines_passes_with_phase_and_what_each_does(gpu, scene):
    rows, notes = cli_table(scene)
    with engine_of(load_scene(scene)) as engine:
        table, names = engine.pass_table(), engine.passes()
    assert [name for _, _, name, _ in rows] == names   # the execution order, as passes() gives
    assert rows == [(i, p.phase.name, p.name, p.does) for i, p in enumerate(table.passes, 1)]
    assert all(does.strip() for *_, does in rows)
    phases = [Phase[phase] for _, phase, _, _ in rows]
    assert phases == sorted(phases)   # CLEAR, SIMULATE, PREPARE, RENDER, POST, READBACK
    assert [(phase, how) for phase, how, _ in notes] == \
        [(f.phase.name, f.how.value) for f, _ in table.folded]
    for (_, _, text), (folded, carrier) in zip(notes, table.folded):
        assert text.startswith(folded.what)
        if carrier is not None:   # the pass is named with its place in the table
            assert f"pass {names.index(carrier) + 1} {carrier}" in text


def test_the_fountain_says_where_its_clear_and_preparation_are(gpu):
    """The fountain has no CLEAR or PREPARE pass: its counters are a host write, its draw
    arguments come from its ranks pass; with them every phase of the frame is accounted for."""
    rows, notes = cli_table("fountain")
    by_phase = {(phase, how): text for phase, how, text in notes}
    assert "fountain/counters" in by_phase["CLEAR", "host write"]
    assert "queue.write_buffer" in by_phase["CLEAR", "host write"]
    assert "fountain/draw_args" in by_phase["PREPARE", "folded"]
    carrier = re.search(r"done by pass (\d+) (\S+)\)$", by_phase["PREPARE", "folded"])
    assert carrier and rows[int(carrier[1]) - 1][2] == carrier[2]
    assert carrier[2].startswith("fountain:emitter:")
    covered = {phase for _, phase, _, _ in rows} | {phase for phase, _, _ in notes}
    assert covered == {p.name for p in Phase}


def covered_phases(table, entity: str) -> set[Phase]:
    """The phases an emitter's own passes or folded work cover."""
    mine = [p for p in table.passes if p.name.startswith(f"{entity}:") or
            p.name.startswith("~batch")]
    return {p.phase for p in mine} | {f.phase for p in mine for f in p.folded}


ALONE = """
[scene]
name = "alone"
[[entity]]
name = "jet"
[entity.emitter]
capacity = 4096
rate = 2000.0
allocation = "{allocation}"
"""


@pytest.mark.parametrize("path", ["fused ranks", "multi-pass", "one pass", "atomic", "ticket"])
def test_every_emitter_step_accounts_for_its_clear_and_preparation(gpu, path):
    """Whichever step the emitter takes, its CLEAR is a host write and its PREPARE a pass or
    work folded into one, and every pass says what it does."""
    allocation = path if path in ("atomic", "ticket") else "ordered"
    scene = loads_scene(ALONE.format(allocation=allocation))
    settings: dict[str, Any] = {"multi-pass": {"fused_ranks": False, "one_pass": False},
                                "one pass": {"one_pass": True},
                                "fused ranks": {"one_pass": False}}.get(path, {})
    with engine_of(scene, emitter_tuning=replace(DEFAULT, **settings)) as engine:
        table = engine.pass_table()
    prepared_by = {"one pass": "update", "fused ranks": "ranks"}.get(path, "prepare")
    assert all(p.does.strip() for p in table.passes), [p.name for p in table.passes
                                                       if not p.does.strip()]
    assert {Phase.CLEAR, Phase.SIMULATE, Phase.PREPARE, Phase.RENDER} <= \
        covered_phases(table, "jet")
    clears = [f for p in table.passes for f in p.folded if f.phase == Phase.CLEAR]
    assert [f.how for f in clears] == [Folding.HOST_WRITE] and "jet/counters" in clears[0].what
    prepare_passes = [p for p in table.passes if p.phase == Phase.PREPARE]
    prepares_folded = [p for p in table.passes for f in p.folded if f.phase == Phase.PREPARE]
    assert [p.name for p in prepare_passes + prepares_folded] == [f"jet:emitter:{prepared_by}"]
    assert bool(prepare_passes) == (prepared_by == "prepare")


def test_a_culled_batch_says_its_draw_arguments_follow_the_camera(gpu):
    with engine_of(load_scene("neon"), emitter_tuning=replace(DEFAULT, cull_from=0)) as engine:
        table = engine.pass_table()
    compact = [p for p in table.passes if p.name.endswith(":emitter:cull_compact")]
    assert compact and compact[0].phase == Phase.RENDER
    assert [(f.phase, f.how) for f in compact[0].folded] == [(Phase.PREPARE, Folding.IN_PASS)]


@pytest.mark.parametrize("scene", sorted(p.stem for p in SCENES.glob("*.toml")))
def test_every_pass_of_every_bundled_scene_says_what_it_does(gpu, scene):
    with engine_of(load_scene(scene)) as engine:
        table, names = engine.pass_table(), engine.passes()
    assert table.passes and [p.name for p in table.passes] == names
    assert [p.name for p in table.passes if not p.does.strip()] == []
    for folded, carrier in table.folded:
        assert folded.what.strip() and (carrier is None or carrier in names)


# scene, the table a line goes under, the line: the families' other pass variants
VARIANTS = {
    "particle life baseline": ("particle_life", "[entity.particle_life]",
                               'grid_kernel = "baseline"'),
    "particle life per particle": ("particle_life", "[entity.particle_life]",
                                   'grid_kernel = "per_particle"'),
    "particle life cell tiled": ("particle_life", "[entity.particle_life]",
                                 'grid_kernel = "cell_tiled"'),
    "life in place": ("life", 'memory = "pingpong"', 'memory = "inplace"'),
    "life word kernel": ("life", "[entity.life]", 'kernel = "word"'),
    "life quad kernel": ("life", "[entity.life]", 'kernel = "quad"'),
    "cloth wireframe": ("flag", "[entity.cloth]", "wireframe = true"),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_pass_variant_of_the_families_says_what_it_does(gpu, variant):
    scene, anchor, line = VARIANTS[variant]
    text = (SCENES / f"{scene}.toml").read_text(encoding="utf-8")
    assert anchor in text
    edited = text.replace(anchor, line if anchor.startswith("memory") else f"{anchor}\n{line}")
    with engine_of(loads_scene(edited, path=SCENES / f"{scene}.toml")) as engine:
        table = engine.pass_table()
    assert [p.name for p in table.passes if not p.does.strip()] == []
