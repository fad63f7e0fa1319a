"""``emberfx bench``: measured speed, always beside a baseline measured in the same run.

Each benchmark returns rows of {"name", "value", "unit", ...}. Absolute numbers mean something only
on a real GPU; the ratios (against the device's own buffer-copy bandwidth and against numpy on
this CPU) are what compare across machines.

One module per family (emitter, life, particle_life, cloth, fractal, post, frame, looks, export,
modifiers) builds its scenes and times them through the Engine's public surface (sweep times
whole sweeps: in one process, on the local pool, on Ray); harness.py holds the timing (warm-up,
best of REPEATS, timestamp queries) and the copy-bandwidth rooflines. lifelib.py and taichi.py
run the optional third-party baselines when those packages are installed.
"""

from __future__ import annotations

import json
import sys

from emberfx.bench.cloth import bench_cloth
from emberfx.bench.emitter import bench_emitter
from emberfx.bench.export import bench_export
from emberfx.bench.fractal import bench_fractal
from emberfx.bench.frame import bench_frame
from emberfx.bench.life import bench_life
from emberfx.bench.looks import bench_looks
from emberfx.bench.modifiers import bench_modifiers
from emberfx.bench.particle_life import bench_particle_life
from emberfx.bench.post import bench_post
from emberfx.bench.sweep import bench_sweep

BENCHMARKS = {"emitter": bench_emitter, "life": bench_life, "particle_life": bench_particle_life,
              "cloth": bench_cloth, "fractal": bench_fractal, "post": bench_post,
              "frame": bench_frame, "looks": bench_looks, "sweep": bench_sweep,
              "export": bench_export, "modifiers": bench_modifiers}
NAMES = list(BENCHMARKS)


def main(names: list[str], as_json: bool = False, options: dict | None = None) -> int:
    """Run ``names`` (all when empty) and print a table, or the rows as JSON on stdout.
    ``options``: keyword arguments by benchmark name (``{"sweep": {"workers": 2}}``)."""
    from emberfx.core.gpu import get_context

    ctx = get_context()
    results: dict = {"adapter": ctx.label, "benchmarks": {}}
    for name in names or NAMES:
        print(f"[bench] {name} on {ctx.label} ...", file=sys.stderr)
        results["benchmarks"][name] = BENCHMARKS[name](**(options or {}).get(name, {}))
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"adapter: {ctx.label}")
    for name, rows in results["benchmarks"].items():
        print(f"\n{name}")
        for row in rows:
            value = "-" if row["value"] is None else f"{row['value']:.3f}"
            extra = "  ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                              for k, v in row.items() if k not in ("name", "value", "unit"))
            print(f"  {row['name']:<58} {value:>10} {row['unit']:<19} {extra}")
    return 0
