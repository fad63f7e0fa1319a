"""``emberfx export SCENE --frames N [--every K] --out DIR [--format npz|ply|usd]`` and
``Engine.export(folder, format)``: point caches of every emitter, particle-life swarm, cloth and
fluid, and grid caches of every gas.

The run steps the scene N fixed steps and samples steps K, 2K, ... (at most N; the step count
since the scene started). Each sampled step writes, for each entity with points,
``DIR/<entity>.<step>.npz`` or ``.ply`` (the step zero-padded to 4 digits: sequence loaders of
Blender and Houdini read ``name.0001.ply``), or adds a time sample to the run's one USD file,
``DIR/<scene>.usd``. A gas is written as ``DIR/<entity>.<step>.npz`` in every format. What the
files hold: point_cache.py and grid_cache.py. Files are written atomically; a run
stopped by an error or Ctrl-C keeps the files of the steps already done and no partial file.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np

from emberfx.app import grid_cache, point_cache
from emberfx.app.arguments import add_script_flags, positive_int, script_policy_from_args
from emberfx.app.headless import say
from emberfx.app.output import STOP_NOTICE, Progress
from emberfx.core.errors import EmberError, UsageError
from emberfx.engine import interrupts

HELP = ("write point caches of SCENE's emitters, swarms, cloths and fluids (npz, ply or usd "
        "files), and its gases' grids (npz)")


def add_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("scene", metavar="SCENE", help="scene .toml file (or a bundled scene name)")
    s.add_argument("--frames", type=positive_int, required=True, metavar="N",
                   help="simulation steps to run")
    s.add_argument("--every", type=positive_int, default=1, metavar="K",
                   help="write steps K, 2K, ... (default: every step)")
    s.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="folder for the files (made if missing): ENTITY.STEP.npz|ply, or "
                        "SCENE.usd")
    s.add_argument("--format", choices=point_cache.FORMATS, default="npz",
                   help="npz (numpy, default), ply (binary PLY) or usd (one time-sampled "
                        "file; needs the [usd] extra)")
    add_script_flags(s)


def run(args: argparse.Namespace) -> int:
    from emberfx.app.headless import build_engine
    from emberfx.model.scene import load_scene

    if args.every > args.frames:
        raise UsageError(f"--every {args.every} is more than --frames {args.frames}: no step "
                         f"would be written")
    folder = prepared_folder(args.out, "--out")
    if args.format == "usd":
        point_cache.require_usd()   # before minutes of simulation, not after
    engine = build_engine(load_scene(args.scene), None, scripts=script_policy_from_args(args))
    try:
        written = export_run(engine, args.frames, args.every, folder, args.format)
    finally:
        engine.close()
    sampled = args.frames // args.every
    print(f"wrote {len(written)} file{'s' if len(written) != 1 else ''} to {folder} "
          f"({sampled} step{'s' if sampled != 1 else ''} of {args.frames}, {args.format})")
    return 0


def prepared_folder(folder, what: str = "Engine.export(folder)") -> Path:
    if not isinstance(folder, (str, os.PathLike)) or not str(folder).strip():
        raise EmberError(f"{what}: expected a folder path (a non-empty str or os.PathLike), "
                         f"found {folder!r:.60}")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise EmberError(f"{what} {folder}: expected a folder, found a file")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmberError(f"{what} {folder}: cannot make the folder ({exc.strerror or exc})") \
            from None
    return folder


def _entities(engine) -> dict[str, str]:
    """Exportable entity -> file stem; a one-line error when there is none or two collide."""
    names = [name for name in engine.entity_names()
             if name in point_cache.exportable(engine) or grid_cache.is_grid(engine, name)]
    if not names:
        families = point_cache.POINT_FAMILIES + grid_cache.GRID_FAMILIES
        raise EmberError(f"scene '{engine.scene.settings.name}': nothing to export (no "
                         f"{', '.join(families)} entity)")
    stems: dict[str, str] = {}
    for name in names:
        stem = point_cache.file_stem(name)
        clash = next((other for other, s in stems.items() if s == stem), None)
        if clash is not None:
            raise EmberError(f"entities '{clash}' and '{name}' would both be written as "
                             f"{stem}.*: rename one")
        stems[name] = stem
    return stems


def _has_points(engine, stems: dict[str, str]) -> bool:
    return any(not grid_cache.is_grid(engine, name) for name in stems)


def _scene_stem(engine) -> str:
    path = getattr(engine.scene, "path", None)
    stem = Path(str(path)).stem if path else engine.scene.settings.name
    return re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_") or "scene"


def _check_format(fmt) -> str:
    if fmt not in point_cache.FORMATS:
        raise EmberError(f"export format: expected one of {', '.join(point_cache.FORMATS)}, "
                         f"found {fmt!r}")
    return fmt


def _write_step(engine, folder: Path, fmt: str, stems: dict[str, str],
                usd: point_cache.UsdCache | None) -> list[Path]:
    step = engine.clock.steps
    written = []
    for name, stem in stems.items():
        if grid_cache.is_grid(engine, name):
            written.append(point_cache.write_npz(folder / f"{stem}.{step:04d}.npz",
                                                 grid_cache.grid_of(engine, name)))
            continue
        points = point_cache.points_of(engine, name)
        if usd is not None:
            usd.add(step, name, points)
        elif fmt == "ply":
            comment = f"emberfx scene '{engine.scene.settings.name}' entity '{name}' step {step}"
            written.append(point_cache.write_ply(folder / f"{stem}.{step:04d}.ply", points,
                                                 comment))
        else:
            written.append(point_cache.write_npz(folder / f"{stem}.{step:04d}.npz", points))
    return written


def _file_bytes(points: dict[str, np.ndarray], fmt: str) -> int:
    """The size of the file ``points`` make: PLY exactly; npz as np.savez lays it out (an
    uncompressed zip of .npy members)."""
    if fmt == "ply":
        return len(point_cache.ply_bytes(points))
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as archive:
        for key, value in points.items():
            with archive.open(f"{key}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, value)
    return stream.tell()


def check_disk(engine, folder: Path, fmt: str, stems: dict[str, str], steps: int,
               say_note: bool = True) -> None:
    """Refuse an npz or PLY export whose files cannot fit ``folder``'s disk even with no point
    alive (their headers alone), or outnumber its free inodes; note when they would not fit
    with every slot alive. Each bound is one real file's size now, with 0 and with all rows."""
    empty = full = 0
    for name in stems:
        if grid_cache.is_grid(engine, name):
            empty += grid_cache.grid_bytes(engine, name)
            full += grid_cache.grid_bytes(engine, name)
            continue
        points = point_cache.points_of(engine, name)
        rows = math.prod(np.shape(engine.state(name)["position"])[:-1])   # every slot
        none = {key: value[:0] for key, value in points.items()}
        empty += _file_bytes(none, fmt)
        per_row = sum(v.dtype.itemsize * math.prod(v.shape[1:]) for v in points.values())
        full += _file_bytes(none, fmt) + rows * per_row
    files = steps * len(stems)
    try:
        disk, stat = shutil.disk_usage(folder), os.statvfs(folder)
    except (OSError, AttributeError):   # no statvfs (Windows): no check
        return
    from emberfx.engine.captures import byte_text  # the engine is built: no new import cost

    where = f"{folder}'s disk has {byte_text(disk.free)} free"
    if stat.f_files and files > stat.f_favail:
        raise EmberError(f"export to {folder}: {steps} steps of {len(stems)} entities are "
                         f"{files} files, and its disk has {stat.f_favail} free inodes")
    if steps * empty > disk.free:
        raise EmberError(f"export to {folder}: {files} {fmt} files need at least "
                         f"{byte_text(steps * empty)} with no point alive (up to "
                         f"{byte_text(steps * full)} with every slot alive); {where}")
    if steps * full > disk.free and say_note:
        say(f"note: {files} {fmt} files may need up to {byte_text(steps * full)} with every "
            f"slot alive; {where}")


def export_frame(engine, folder, fmt: str = "npz") -> list[Path]:
    """The current state as files in ``folder``: ENTITY.STEP.npz|ply each, or one
    SCENE.STEP.usd with one time sample."""
    fmt = _check_format(fmt)
    folder = prepared_folder(folder)
    stems = _entities(engine)
    if fmt != "usd":
        return _write_step(engine, folder, fmt, stems, None)
    if not _has_points(engine, stems):
        return _write_step(engine, folder, fmt, stems, None)
    usd = point_cache.UsdCache(folder / f"{_scene_stem(engine)}.{engine.clock.steps:04d}.usd",
                               1.0 / engine.scene.settings.fixed_dt)
    grids = _write_step(engine, folder, fmt, stems, usd)
    return [*grids, usd.save()]


def export_run(engine, frames: int, every: int, folder, fmt: str = "npz",
               progress: bool = True) -> list[Path]:
    """Step ``engine`` ``frames`` times, writing every ``every``-th step (see the module's doc);
    returns the files written. Ctrl-C stops between steps and writes no partial file."""
    fmt = _check_format(fmt)
    folder = prepared_folder(folder)
    stems = _entities(engine)
    from emberfx.engine.engine_guard import step_budget  # esper: only once a command runs

    step_budget(frames, "--frames", done=engine.clock.steps, fixed_dt=engine.clock.fixed_dt,
                per_call=None)
    if fmt != "usd":
        check_disk(engine, folder, fmt, stems, frames // every, progress)
    usd = (point_cache.UsdCache(folder / f"{_scene_stem(engine)}.usd",
                                1.0 / engine.scene.settings.fixed_dt)
           if fmt == "usd" and _has_points(engine, stems) else None)
    written: list[Path] = []
    with interrupts.deferred(notice=STOP_NOTICE if progress else None):
        with Progress(frames, f"export {fmt}", enabled=progress) as bar:
            for i in range(1, frames + 1):
                interrupts.check()
                engine.step(1)
                if i % every == 0:
                    written += _write_step(engine, folder, fmt, stems, usd)
                bar.update(1)
        if usd is not None:
            written.append(usd.save())
    return written
