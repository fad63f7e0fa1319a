"""The tables a scene file is made of, below the Scene that holds them: ``SceneSettings`` (the
``[scene]`` table), ``EntitySpec`` (one ``[[entity]]``) and ``resolve_path`` (a path written in
a scene, relative to its file).

The scene loader (emberfx.model.loader) builds these; emberfx.model.scene's Scene holds them
and validates what is added to it with the loader, so the imports point one way:
scene -> loader -> scene_parts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import msgspec

from emberfx.model.colors import check_colors

__all__ = ["SceneSettings", "EntitySpec", "resolve_path", "MAX_PREVIEW"]

Pixels = Annotated[int, msgspec.Meta(ge=1, le=16384)]
MAX_PREVIEW = 3600.0
"""seconds: the latest moment `[scene] preview` may name"""


@dataclass(slots=True)
class SceneSettings:
    """The ``[scene]`` table."""

    name: str = "Untitled"
    seed: Annotated[int, msgspec.Meta(ge=0, lt=2**32)] = 0
    """all randomness derives from it (with entity, slot and frame)"""
    fixed_dt: Annotated[float, msgspec.Meta(
        ge=1e-6, le=1.0,
        description="a step lasts from a microsecond to a second: per-step budgets assume at "
                    "most 1 s")] = 1 / 60
    """seconds per simulation step"""
    size: tuple[Pixels, Pixels] = (1280, 720)
    """default window / render size in pixels: (width, height)"""
    background: str = "#101014"
    """clear colour: '#rrggbb', '#rrggbbaa', '#rgb' or '#rgba'"""
    script: str | None = None
    """a Python file with scene-wide hooks (on_start, on_update, ...), relative to the scene"""
    preview: Annotated[float, msgspec.Meta(
        ge=0.0, le=MAX_PREVIEW,
        description="the preview is a moment of a short clip: at most an hour")] = 2.0
    """seconds: the moment the scene's picture shows, rendered by `emberfx render` without
    --frames and by the gallery (preview / fixed_dt steps, at least one)"""

    duration: Annotated[float, msgspec.Meta(
        gt=0.0, le=MAX_PREVIEW,
        description="the shot is a short clip: at most an hour")] = 5.0
    """seconds: the length of the scene's shot, rendered by `emberfx run` where no window can
    open (duration / fixed_dt steps, at least one)"""

    def __post_init__(self):
        check_colors(self, "background")

    def preview_steps(self) -> int:
        """Fixed steps from the start to the preview moment (at least one: a picture is drawn
        after a step)."""
        return max(1, round(self.preview / self.fixed_dt))

    def duration_steps(self) -> int:
        """Fixed steps in the scene's shot (at least one)."""
        return max(1, round(self.duration / self.fixed_dt))


@dataclass(slots=True)
class EntitySpec:
    """One ``[[entity]]``: its components in file order, keyed by table name."""

    name: str
    components: dict[str, object]
    script: str | None = None
    """path relative to the scene file, as written"""




def resolve_path(scene_path, relative) -> Path:
    """Relative to the scene file's folder (the working directory for a scene without a file);
    normalised but not symlink-resolved, so messages show the path the user would expect."""
    base = Path(os.path.abspath(scene_path)).parent if scene_path is not None else Path.cwd()
    return Path(os.path.normpath(base / relative))
