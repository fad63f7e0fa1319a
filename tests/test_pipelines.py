"""The pipeline factories (core/pipelines.py): one render pipeline per device and RenderKey, and
no compute or render pipeline made anywhere else in runtime/ or systems/."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import wgpu

from emberfx.core.pipelines import RenderKey, render_pipeline

ROOT = Path(__file__).resolve().parent.parent
FACTORY = ROOT / "runtime" / "core" / "pipelines.py"


def pipeline_builders(path: Path) -> list[int]:
    """Lines of ``path`` that call (or take) a device's pipeline-making method."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return sorted(node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr in (
                "create_render_pipeline", "create_render_pipeline_async",
                "create_compute_pipeline", "create_compute_pipeline_async"))


def test_only_the_factory_makes_pipelines():
    sources = [p for folder in ("runtime", "systems") for p in (ROOT / folder).rglob("*.py")]
    assert FACTORY in sources and len(sources) > 50
    assert len(pipeline_builders(FACTORY)) == 2   # the check sees the calls where they are made
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sources if p != FACTORY
             for line in pipeline_builders(p)]
    assert found == [], f"pipelines made outside core/pipelines.py: {found}"


def test_the_check_finds_a_hand_built_pipeline(tmp_path):
    module = tmp_path / "hand_built.py"
    module.write_text("def make(device, **kw):\n"
                      "    return device.create_render_pipeline(**kw)\n"
                      "make_compute = getattr(device, 'x') or device.create_compute_pipeline\n")
    assert pipeline_builders(module) == [2, 3]


SPRITE = RenderKey("particle_life/draw.wgsl", "rgba16float", blend="additive",
                   depth_format="depth32float", depth_compare="less",
                   fragment_entry="fs_additive", label="one")
CHANGES: list[dict[str, Any]] = [
    {"blend": "alpha", "fragment_entry": "fs_alpha"}, {"depth_write": True},
    {"targets": "rgba8unorm"}, {"cull_mode": "back"}, {"topology": "line-list"}]


def test_same_key_same_pipeline_other_key_other_pipeline(gpu):
    device = gpu.device
    first = render_pipeline(device, SPRITE)
    assert isinstance(first, wgpu.GPURenderPipeline)
    # equal keys (one format or a tuple of one; labels aside) share it
    assert render_pipeline(device, replace(SPRITE, targets=("rgba16float",), label="")) is first
    for change in CHANGES:
        other = render_pipeline(device, replace(SPRITE, **change))
        assert other is not first, change
        assert render_pipeline(device, replace(SPRITE, **change)) is other
    present = RenderKey("frame/present.wgsl", "rgba8unorm", constants={"ENCODE_SRGB": True})
    assert render_pipeline(device, present) is render_pipeline(
        device, RenderKey("frame/present.wgsl", "rgba8unorm", constants=(("ENCODE_SRGB", True),)))
    assert render_pipeline(device, present) is not render_pipeline(
        device, RenderKey("frame/present.wgsl", "rgba8unorm", constants={"ENCODE_SRGB": False}))


def test_an_unknown_blend_is_refused():
    with pytest.raises(ValueError, match="expected a blend of additive, alpha, sum or none, "
                                         "found 'screen'"):
        RenderKey("common/sprite.wgsl", "rgba16float", blend="screen")

