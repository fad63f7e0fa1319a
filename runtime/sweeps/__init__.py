"""Parameter sweeps: render a scene once per combination of field values, on a local process
pool (one Engine per worker, one worker per GPU) or on Ray, with a manifest of every job.

    import emberfx
    table = emberfx.sweep("scenes/fountain.toml",
                          params={"fountain.emitter.rate": [1000, 5000], "scene.seed": "1..8"},
                          frames=60, out="sweep/")

``emberfx.sweep`` is this package's ``sweep`` (the package is ``emberfx.sweeps``, so importing
its modules never hides the function).

Modules: grammar (``--set PATH=VALUES``), jobs (combinations and their hashes), worker (one job
in a worker process), values (lazy ranges, the job count), local (this process, or a pool of
worker processes), ray_runner, manifest, driver (counting, resuming, progress, Ctrl-C),
command (``emberfx sweep``). Nothing is imported until used, so ``import emberfx`` stays
light.
"""

from __future__ import annotations

from typing import Any


def sweep(scene, params: dict[str, Any] | None = None, *, frames: int, out,
          size: tuple[int, int] | None = None, format: str = "png", state: bool = False,
          workers: int | None = None, ray: bool | str = False,
          gpus_per_job: float | None = None, scripts: Any = True, progress: bool = True,
          max_jobs: int | None = None):
    """Render ``scene`` (a file path, a bundled scene's name or a Scene) once per combination of
    ``params`` ({PATH: values}: a list, one value, or a ``--set`` VALUES string such as
    "1..8"), ``frames`` fixed steps each, into the folder ``out``.

    ``format``: "png" (the last frame), "mp4" (every frame) or "npz" (the final
    ``Engine.state`` of every entity); ``state=True`` writes that .npz beside an image too.
    ``workers``: local worker processes (default: one per GPU, 1 on a CPU adapter; 0: run in
    this process). ``ray``: True for ``ray.init()``, or a cluster address. ``scripts``: as
    ``Engine(scripts=...)``. ``max_jobs``: the most jobs the sweep may have (default 10,000;
    the count is computed from the values first, and a larger sweep is refused). The jobs are
    planned as workers take them, so a large sweep starts at once.

    Works at the top level of a plain script: the worker processes start from emberfx's own
    entry point and never run the calling script.

    Returns the manifest rows of this sweep's jobs: a pandas DataFrame when pandas is
    importable, else a list of dicts. Jobs finished by an earlier call into ``out`` are skipped.
    """
    from emberfx.sweeps.driver import run_sweep
    from emberfx.sweeps.grammar import from_param

    if params is not None and not isinstance(params, dict):
        from emberfx.core.errors import UsageError

        raise UsageError(f"sweep(params=...): expected a dict {{PATH: values}}, found "
                         f"{type(params).__name__}")
    sets = [from_param(name, values) for name, values in (params or {}).items()]
    result = run_sweep(scene, sets, frames=frames, out=out, size=size, format=format,
                       state=state, workers=workers, ray=ray is not False,
                       ray_address=ray if isinstance(ray, str) and ray else None,
                       gpus_per_job=gpus_per_job, scripts=scripts, progress=progress,
                       max_jobs=max_jobs)
    try:
        import pandas
    except ImportError:
        return result.rows
    return pandas.DataFrame(result.rows)

