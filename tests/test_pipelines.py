"""The pipeline factories (core/pipelines.py): one render pipeline per device and RenderKey, and
no render pipeline made anywhere else in runtime/ or systems/."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import wgpu

from emberfx.core.pipelines import RenderKey, render_pipeline

ROOT = Path(__file__).resolve().parent.parent
FACTORY = ROOT / "runtime" / "core" / "pipelines.py"


def pipeline_builders(path: Path) -> list[int]:
    """Lines of ``path`` that call (or take) a ``create_render_pipeline`` attribute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in (
                "create_render_pipeline", "create_render_pipeline_async")]


def test_only_the_factory_makes_render_pipelines():
    sources = [p for folder in ("runtime", "systems") for p in (ROOT / folder).rglob("*.py")]
    assert FACTORY in sources and len(sources) > 50
    assert pipeline_builders(FACTORY)   # the check sees the call where it is made
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sources if p != FACTORY
             for line in pipeline_builders(p)]
    assert found == [], f"render pipelines made outside core/pipelines.py: {found}"


def test_the_check_finds_a_hand_built_pipeline(tmp_path):
    module = tmp_path / "hand_built.py"
    module.write_text("def make(device, **kw):\n"
                      "    return device.create_render_pipeline(**kw)\n")
    assert pipeline_builders(module) == [2]


SPRITE = dict(shader="particle_life/draw.wgsl", targets="rgba16float", blend="additive",
              depth_format="depth32float", depth_compare="less", fragment_entry="fs_additive")


def test_same_key_same_pipeline_other_key_other_pipeline(gpu):
    device = gpu.device
    first = render_pipeline(device, RenderKey(**SPRITE, label="one"))
    # equal keys (a dict of constants or none, one format or a tuple; labels aside) share it
    assert render_pipeline(device, RenderKey(**{**SPRITE, "targets": ("rgba16float",)})) is first
    assert isinstance(first, wgpu.GPURenderPipeline)
    for change in ({"blend": "alpha", "fragment_entry": "fs_alpha"}, {"depth_write": True},
                   {"targets": "rgba8unorm"}, {"cull_mode": "back"}, {"topology": "line-list"}):
        other = render_pipeline(device, RenderKey(**{**SPRITE, **change}))
        assert other is not first, change
        assert render_pipeline(device, RenderKey(**{**SPRITE, **change})) is other
    present = RenderKey("frame/present.wgsl", "rgba8unorm", constants={"ENCODE_SRGB": True})
    assert render_pipeline(device, present) is render_pipeline(
        device, RenderKey("frame/present.wgsl", "rgba8unorm", constants=(("ENCODE_SRGB", True),)))
    assert render_pipeline(device, present) is not render_pipeline(
        device, RenderKey("frame/present.wgsl", "rgba8unorm", constants={"ENCODE_SRGB": False}))


def test_an_unknown_blend_is_refused():
    with pytest.raises(ValueError, match="expected a blend of additive, alpha or none, "
                                         "found 'screen'"):
        RenderKey("common/sprite.wgsl", "rgba16float", blend="screen")

