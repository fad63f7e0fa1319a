"""A sweep's jobs: every combination of the ``--set`` values, each checked as a scene and named by
a short hash of everything that determines its output.

The hash covers the scene file's text (not the files it names: patterns, scripts, textures), the
parameters, the frame count, the render size, whether scripts run, and the emberfx version; the
output format only changes the file extension. Jobs whose values the scene loader refuses keep
that one-line error and are never sent to a worker. Nothing here touches the GPU.

A plan makes its jobs one at a time as they are iterated (each is a scene check and a hash), so
a sweep of any size starts at once and planning holds one job in memory, not all of them; its
length is known before the first job is made (values.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emberfx.core.errors import EmberError, SceneError, UsageError, read_user_text
from emberfx.sweeps.grammar import SweepSet, apply, document_path, validate
from emberfx.sweeps.values import combination, job_count

FORMATS = ("png", "mp4", "npz")
HASH_CHARS = 12   # 48 bits: a collision among a million jobs has odds of about 1 in 500


@dataclass(frozen=True)
class SweepSpec:
    """What every job of a sweep shares; sent to each worker with its job."""

    out: Path
    frames: int
    format: str = "png"            # png: the last frame; mp4: every frame; npz: state only
    state: bool = False            # also write the final Engine.state of every entity (.npz)
    scripts: Any = True            # a ScriptPolicy (resolved in the driver: env included)
    fps: float | None = None       # mp4 frame rate (default: one frame per fixed step)


@dataclass(frozen=True)
class Job:
    key: str                                   # the short hash that names its files
    params: tuple[tuple[str, Any], ...]        # (PATH, value) in --set order
    scene_text: str                            # the scene document with the values applied
    scene_path: str | None                     # anchors the scene's relative paths
    size: tuple[int, int]
    stem: str                                  # output names: STEM-KEY.EXT
    error: str | None = field(default=None, compare=False)   # refused by the scene check
    index: int = field(default=0, compare=False)             # its place in the plan

    def output(self, spec: SweepSpec) -> str:
        """The main output's file name inside ``spec.out``."""
        return f"{self.stem}-{self.key}.{spec.format}"

    def state_file(self, spec: SweepSpec) -> str | None:
        """The state .npz's file name inside ``spec.out`` (None when none is written)."""
        if spec.format == "npz" or spec.state:
            return f"{self.stem}-{self.key}.npz"
        return None


def read_scene(scene) -> tuple[str, str | None, str, dict, Any]:
    """(text, path, stem, parsed document, Scene) of a scene file path, a bundled scene's name
    or a Scene object; the scene itself is validated first, so a broken scene stops the sweep."""
    from emberfx.model.scene import Scene, load_scene, resolve_scene_path

    if isinstance(scene, Scene):
        base = scene
        text, path = scene.to_toml(), (os.fspath(scene.path) if scene.path else None)
        stem = Path(path).stem if path else _safe_stem(scene.settings.name)
    elif isinstance(scene, (str, os.PathLike)):
        base = load_scene(scene)   # every problem of the base scene, with the loader's messages
        resolved = resolve_scene_path(os.fspath(scene))
        path = os.path.abspath(resolved)
        text = read_user_text(resolved, "scene", lambda m, _l, _c: SceneError(path, m))
        stem = resolved.stem
    else:
        raise UsageError(f"sweep(scene): expected a scene file path or a Scene, found "
                         f"{type(scene).__name__}")
    return text, path, stem, tomllib.loads(text), base


def _safe_stem(name: str) -> str:
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in name).strip("_")
    return stem or "scene"


class Plan:
    """Every combination of ``sets`` (the first --set varies slowest) as jobs, made when
    iterated. The paths are checked against the scene when the plan is made, so a bad path
    stops the sweep before any job; ``count`` is the number of jobs, computed (it may be
    beyond what ``len()`` can return)."""

    def __init__(self, scene, sets: list[SweepSet], frames: int,
                 size: tuple[int, int] | None = None, scripts_run: bool = True):
        from emberfx import __version__

        if frames < 1:
            raise UsageError(f"--frames must be at least 1, found {frames}")
        names = [s.name for s in sets]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise UsageError(f"--set {twice[0]} is given more than once; put all its values in "
                             f"one --set")
        self.text, self.path, self.stem, self.doc, self.base = read_scene(scene)
        self.sets, self.frames, self.size = sets, frames, size
        self.scripts_run, self.version = scripts_run, __version__
        where = self.path or "the scene"
        self.places = [document_path(self.doc, s, where) for s in sets]

    @property
    def count(self) -> int:
        return job_count([s.values for s in self.sets])

    def __iter__(self) -> Iterator[Job]:
        values = [s.values for s in self.sets]
        for index in range(self.count):
            yield self.job(index, combination(values, index))

    def job(self, index: int, values: tuple[Any, ...]) -> Job:
        """The job of one combination: its scene checked, its size and key known."""
        import tomli_w

        job_doc, pairs = self.doc, list(zip(self.sets, values))
        error, job_size = None, self.size
        try:
            for s, place, value in zip(self.sets, self.places, values):
                job_doc = apply(job_doc, place, value, s)
            job_scene = validate(job_doc, self.path, pairs)
            job_size = self.size or tuple(job_scene.settings.size)
        except EmberError as exc:
            error = " ".join(str(exc).split())
        if job_size is None:   # the values were refused: name the job by the base scene's size
            job_size = tuple(self.base.settings.size)
        params = tuple((s.name, v) for s, v in pairs)
        key = job_key(self.text, params, self.frames, job_size, self.scripts_run, self.version)
        return Job(key, params, tomli_w.dumps(job_doc) if error is None else "", self.path,
                   (int(job_size[0]), int(job_size[1])), self.stem, error, index)


def plan(scene, sets: list[SweepSet], frames: int, size: tuple[int, int] | None = None,
         scripts_run: bool = True) -> Plan:
    """The jobs of a sweep (see ``Plan``); values are distinct, so each job once."""
    return Plan(scene, sets, frames, size, scripts_run)


def job_key(scene_text: str, params, frames: int, size, scripts_run: bool, version: str) -> str:
    """The short hash of everything that determines a job's output."""
    described = json.dumps({"scene": scene_text, "params": [[n, v] for n, v in params],
                            "frames": frames, "size": [int(size[0]), int(size[1])],
                            "scripts": scripts_run, "version": version},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                           default=str)   # a TOML date: refused by the scene check, still named
    return hashlib.sha256(described.encode()).hexdigest()[:HASH_CHARS]
