"""The generated reference pages: the committed docs/reference/scene.md and cli.md must be what
their generators write now (a field, a docstring or a CLI argument changed without regenerating
fails here), and the scene page must document every field of every table a scene file has."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from emberfx.app.cli import build_parser
from emberfx.app.cli_reference import cli_reference
from emberfx.app.reference import field_docs, nested_classes, scene_reference, unit_of
from emberfx.model.camera import Camera
from emberfx.model.light import Light
from emberfx.model.registry import component_types
from emberfx.model.scene import SceneSettings
from emberfx.model.scene_fields import field_names, type_hints
from emberfx.systems.emitter.component import Emitter, Shape

DOCS = Path(__file__).resolve().parent.parent / "docs"
REGENERATE = {
    "scene": "python -m emberfx.app.docs_pages docs/",
    "cli": "python -m emberfx.app.docs_pages docs/",
}


@pytest.mark.parametrize("page, generate", [("scene", scene_reference), ("cli", cli_reference)])
def test_committed_page_is_current(page, generate):
    committed = (DOCS / "reference" / f"{page}.md").read_text(encoding="utf-8")
    assert committed == generate(), (f"docs/reference/{page}.md is stale: run "
                                     f"`{REGENERATE[page]}` and commit the page")


def _section(page: str, heading: str) -> str:
    start = page.index(heading)
    end = page.find("\n### ", start + 1)
    return page[start:] if end < 0 else page[start:end]


def _rows(section: str) -> dict[str, str]:
    return {m[1]: m[0] for m in re.finditer(r"^\| `(\w+)` \|.*$", section, re.M)}


def test_every_field_of_every_table_is_listed_with_its_docstring():
    page = scene_reference()
    tables = [("[scene]", SceneSettings), ("[camera]", Camera), ("[light]", Light)]
    tables += [(f"[entity.{key}]", ct.cls) for key, ct in sorted(component_types().items())]
    assert len(tables) >= 16
    for heading, cls in tables:
        rows = _rows(_section(page, f"### `{heading}`"))
        assert list(rows) == list(field_names(cls)), heading
        for name, doc in field_docs(cls).items():
            first_words = " ".join(doc.split()[:4]).replace("``", "`")
            assert first_words.split("`")[0] in rows[name], (heading, name)


def test_nested_tables_are_documented():
    page = scene_reference()
    hints = type_hints(Emitter)
    nested = {name for name in field_names(Emitter) if nested_classes(hints[name])}
    assert {"shape", "bursts", "collision", "on_death", "on_age", "flipbook"} <= nested
    for name in nested:
        assert f"### `emitter.{name}`" in page or any(
            f"### `emitter.{other}`" in page and nested_classes(hints[other])
            == nested_classes(hints[name]) for other in nested), name
    shape = _rows(_section(page, "### `emitter.shape`"))
    assert list(shape) == [f.name for f in dataclasses.fields(Shape)]
    # the link from the component's row to the nested table
    assert "[Shape](#emitter-shape)" in _rows(_section(page, "### `[entity.emitter]`"))["shape"]


def test_a_row_shows_type_bounds_default_unit_and_change():
    row = _rows(_section(scene_reference(), "### `[entity.emitter]`"))["spread_deg"]
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[:6] == ["`spread_deg`", "float ≥ 0.0, ≤ 180.0", "`15.0`", "°", "live",
                         cells[5]]
    assert "cone half-angle" in cells[5]
    prewarm = _rows(_section(scene_reference(), "### `[entity.emitter]`"))["prewarm"]
    assert "| s | rebuild |" in prewarm


@pytest.mark.parametrize("name, doc, unit", [
    ("fixed_dt", "seconds per simulation step", "s"),
    ("gravity", "m/s^2", "m/s²"),
    ("drag", "linear drag, 1/s", "1/s"),
    ("fov_deg", "perspective: vertical field of view, degrees", "°"),
    ("angular_velocity_deg", "[min, max] random spin, degrees per second", "°/s"),
    ("radius", "sphere, disk, cone (base), ring: world units", "world units"),
    ("capacity", "slots in the pool", ""),
])
def test_units(name, doc, unit):
    assert unit_of(name, doc) == unit


def test_cli_page_lists_every_command_and_argument():
    page = cli_reference()
    _, subs = build_parser()
    for name, sub in subs.items():
        section = page[page.index(f"## `{name}` {{#{name}}}"):]
        section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
        assert (sub.description or "") in section
        for action in sub._actions:
            if action.dest == "help":
                continue
            shown = action.option_strings[0] if action.option_strings else action.metavar
            assert f"| `{shown}" in section, (name, shown)
            if action.help:
                assert " ".join(action.help.split())[:30] in section, (name, shown)


# ---------------------------------------------------------- the performance page, the gallery

def test_performance_page_regions_are_current():
    from emberfx.app.performance_page import REGION, regenerate

    committed = (DOCS / "performance.md").read_text(encoding="utf-8")
    sources = [m["source"] for m in REGION.finditer(committed)]
    assert {"plots/h200/sweep.json", "plots/lavapipe/sweep.json"} \
        <= set(sources)
    assert regenerate(committed, DOCS) == committed, (
        "docs/performance.md is stale: run `python -m emberfx.app.docs_pages docs/`")


def test_performance_tables_show_each_figure_beside_its_same_run_baseline():
    import json

    from emberfx.app.performance_page import render_results

    results = {"adapter": "Test GPU (Vulkan)", "benchmarks": {"emitter": [
        {"name": "compute vec4 copy (256 MiB)", "value": 4060.0, "unit": "GB/s"},
        {"name": "emitter step (1M)", "value": 38.41, "unit": "G particle-steps/s",
         "ms_per_step": 0.0273},
        {"name": "  three-pass step (1M)", "value": 25.1, "unit": "G particle-steps/s",
         "speedup_of_the_step": 1.53}]},
        "sweep": {"emitter": {"title": "emitter whole step", "x_label": "particles",
                              "unit": "G particle-steps/s",
                              "roofline": {"value": 62.5, "label": "compute-copy roofline"},
                              "series": {"measured": [
                                  {"size": 1, "label": "1M", "value": 36.5},
                                  {"size": 2, "label": "64M", "value": None,
                                   "note": "too big"}]}}}}
    text = render_results(json.loads(json.dumps(results)), {"emitter": "p/emitter.png"})
    assert "**Test GPU (Vulkan)**" in text
    assert "| emitter step (1M) | 38.41 | G particle-steps/s | ms per step 0.02730 |" in text
    assert "speedup of the step 1.530" in text
    assert "| 1M | 36.50 | 0.58 |" in text            # 36.5 / 62.5 of the roofline
    assert "| 64M | - [1] | - |" in text and "[1] 64M, measured: too big" in text
    assert "![emitter whole step](p/emitter.png)" in text


def test_gallery_page_is_current_and_every_picture_exists():
    from PIL import Image

    from emberfx.app.contact_sheet import layout
    from emberfx.app.gallery import (
        COMMAND,
        NO_PLAYER,
        PLAYERS,
        gallery_page,
        gallery_size,
        player_uri,
    )
    from emberfx.model.scene import bundled_scenes, load_scene

    committed = (DOCS / "gallery.md").read_text(encoding="utf-8")
    assert committed == gallery_page(), (
        f"docs/gallery.md is stale: run `{COMMAND}` (add --page-only when no picture changed)")
    scenes = bundled_scenes()
    assert len(scenes) >= 18
    sizes = {}
    for name, path in scenes.items():
        picture = DOCS / "gallery" / f"{name}.png"
        assert f'<video src="gallery/clips/{name}.mp4" poster="gallery/{name}.png" ' in committed
        assert picture.is_file(), f"docs/gallery/{name}.png is missing: run `{COMMAND} {name}`"
        with Image.open(picture) as image:
            sizes[name] = image.size
        assert sizes[name] == gallery_size(load_scene(path)), name
    # the contact sheet shows them all
    with Image.open(DOCS / "gallery.png") as sheet:
        assert sheet.size == layout(sizes)[0], f"docs/gallery.png is stale: run `{COMMAND}`"
    # each scene has a live player (recorded into the site by the docs build) or says why not
    assert set(PLAYERS) | set(NO_PLAYER) == set(scenes) and not set(PLAYERS) & set(NO_PLAYER)
    for name in scenes:
        if name in PLAYERS:
            assert f"]({player_uri(name)}){{ .emberfx-play " in committed, name
        else:
            assert f"No live player here: {NO_PLAYER[name]}." in committed, name


def test_every_gallery_clip_exists_at_its_size():
    import imageio.v2 as imageio

    from emberfx.app.gallery import COMMAND, clip_size
    from emberfx.model.scene import bundled_scenes, load_scene

    scenes = bundled_scenes()
    clips = {name: DOCS / "gallery" / "clips" / f"{name}.mp4" for name in sorted(scenes)}
    missing = [name for name, clip in clips.items() if not clip.is_file()]
    assert not missing, (f"the gallery page shows clips that are not in docs/gallery/clips: "
                         f"{', '.join(missing)}; run `{COMMAND}`")
    for name, clip in clips.items():
        reader = imageio.get_reader(clip, "ffmpeg")
        try:
            size = tuple(reader.get_meta_data()["size"])
        finally:
            reader.close()
        assert size == clip_size(load_scene(scenes[name])), f"{clip.name}: run `{COMMAND}`"
