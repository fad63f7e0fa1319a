"""``emberfx sweep SCENE --set PATH=VALUES ... --frames N --out DIR``: the command line of
emberfx.sweeps. Declared here and hooked into runtime/app/cli.py; imports nothing heavy until
it runs.

Prints one summary line on stdout; exit status 0 when every job is ok, 1 when any failed (each
failure's one-line error is in the manifest), 2 for a usage error, 130 after Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from emberfx.app.arguments import add_script_flags, parse_size, script_policy_from_args

HELP = "render SCENE once per combination of --set values (a parameter sweep)"


def worker_count(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0 (0: run in this "
                                         f"process), got '{text}'")
    return int(text)


def gpu_share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 64:
        raise argparse.ArgumentTypeError(f"expected a number of GPUs > 0 (e.g. 1 or 0.5), "
                                         f"got '{text}'")
    return value


def add_arguments(s: argparse.ArgumentParser) -> None:
    from emberfx.app.arguments import positive_int
    from emberfx.sweeps.values import DEFAULT_MAX_JOBS, VALUES_FILE_BYTES

    s.add_argument("scene", metavar="SCENE", help="scene .toml file (or a bundled scene name)")
    s.add_argument("--set", dest="sets", action="append", required=True, metavar="PATH=VALUES",
                   help="a field and its values: PATH is scene.FIELD, camera.FIELD or "
                        "ENTITY.COMPONENT.FIELD[.SUB]; VALUES is 1000,5000 | [[0,0,0],[1,0,0]] "
                        "| 1..8 | 0.5:2:4 | @FILE (a regular file of one TOML value a line, "
                        f"at most {VALUES_FILE_BYTES >> 20} MiB); a value given twice runs once; "
                        "repeat --set for more fields: every combination runs")
    s.add_argument("--frames", type=positive_int, required=True, metavar="N",
                   help="simulation steps per job")
    s.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="folder for the outputs, named SCENE-HASH.EXT, and the manifest")
    s.add_argument("--format", choices=("png", "mp4", "npz"), default="png",
                   help="png: the last frame (default); mp4: every frame; npz: the final "
                        "Engine.state of every entity")
    s.add_argument("--state", action="store_true",
                   help="also write the final state as SCENE-HASH.npz beside the png/mp4")
    s.add_argument("--size", type=parse_size, metavar="WxH",
                   help="image size (default: each job's scene size)")
    s.add_argument("--workers", type=worker_count, metavar="K",
                   help="local worker processes (default: one per GPU, 1 on a CPU adapter; "
                        "0: run the jobs in this process)")
    s.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run each job as a Ray task: alone, on a local Ray (ray.init()); with "
                        "ADDRESS, on that cluster (pip install \"emberfx[ray]\")")
    s.add_argument("--gpus-per-job", type=gpu_share, metavar="F",
                   help="GPUs a Ray task asks for where the cluster has GPUs (default 1)")
    s.add_argument("--max-jobs", type=positive_int, metavar="N",
                   help=f"the most jobs the sweep may have (default {DEFAULT_MAX_JOBS:,}): the "
                        f"count, the product of the numbers of values, is said first, and a "
                        f"larger sweep is refused before anything runs")
    add_script_flags(s)


def run(args: argparse.Namespace) -> int:
    from emberfx.core.errors import UsageError
    from emberfx.sweeps.driver import run_sweep
    from emberfx.sweeps.grammar import parse_set

    if args.gpus_per_job is not None and args.ray is None:
        raise UsageError("--gpus-per-job is a Ray option: add --ray [ADDRESS]")
    if args.ray is not None and args.workers is not None:
        raise UsageError("--workers sets the local pool; with --ray, Ray places the jobs")
    sets = [parse_set(text) for text in args.sets]
    result = run_sweep(args.scene, sets, frames=args.frames, out=args.out, size=args.size,
                       format=args.format, state=args.state, workers=args.workers,
                       ray=args.ray is not None, ray_address=args.ray or None,
                       gpus_per_job=args.gpus_per_job, scripts=script_policy_from_args(args),
                       max_jobs=args.max_jobs)
    total = len(result.rows)
    print(f"sweep: {total} job{'s' if total != 1 else ''}: {total - result.failed} ok, "
          f"{result.failed} failed, {result.skipped} skipped (done before); "
          f"manifest: {result.manifest}")
    if result.failed:
        print(f"emberfx: {result.failed} job{'s' if result.failed != 1 else ''} failed: the "
              f"manifest's error column says why", file=sys.stderr)
        return 1
    return 0
