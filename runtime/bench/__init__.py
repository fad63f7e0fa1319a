"""``emberfx bench``: measured speed, always beside a baseline measured in the same run.

Each benchmark returns rows of {"name", "value", "unit", ...}. Absolute numbers mean something only
on a real GPU; the ratios (against the device's own buffer-copy bandwidth and against numpy on
this CPU) are what compare across machines.

One module per family (emitter, life, particle_life, cloth, fractal, post, frame, looks, export,
modifiers, many) builds its scenes and times them through the Engine's public surface (sweep times
whole sweeps: in one process, on the local pool, on Ray); capacity.py is arithmetic (how much
world one GPU holds, docs/scaling.md); scaling.py sweeps sizes and plots.py draws them for
``bench --plot DIR``; harness.py holds the timing (warm-up, best of REPEATS, timestamp queries)
and the copy-bandwidth rooflines; host.py times a fixed Python workload, so that a CPU figure can
be told from the speed of the host it ran on. lifelib.py and taichi.py run the optional
third-party baselines when those packages are installed. neighbours.py times the shared
neighbour grid block (emberfx.blocks.neighbours) on its own; fluid.py the fluid family's step;
gas.py the gas family's step, its parts against the copy roofline, and its volume's render.
"""

from __future__ import annotations

import json
import subprocess
import sys

from emberfx.bench.capacity import bench_capacity
from emberfx.bench.cloth import bench_cloth
from emberfx.bench.emitter import bench_emitter
from emberfx.bench.export import bench_export
from emberfx.bench.fluid import bench_fluid
from emberfx.bench.fractal import bench_fractal
from emberfx.bench.frame import bench_frame
from emberfx.bench.gas import bench_gas
from emberfx.bench.harness import row_line
from emberfx.bench.life import bench_life
from emberfx.bench.looks import bench_looks
from emberfx.bench.many import bench_many
from emberfx.bench.modifiers import bench_modifiers
from emberfx.bench.neighbours import bench_neighbours
from emberfx.bench.particle_life import bench_particle_life
from emberfx.bench.post import bench_post
from emberfx.bench.sweep import bench_sweep

BENCHMARKS = {"emitter": bench_emitter, "life": bench_life, "particle_life": bench_particle_life,
              "cloth": bench_cloth, "fractal": bench_fractal, "post": bench_post,
              "frame": bench_frame, "looks": bench_looks, "sweep": bench_sweep,
              "export": bench_export, "modifiers": bench_modifiers, "many": bench_many,
              "capacity": bench_capacity, "neighbours": bench_neighbours, "fluid": bench_fluid,
              "gas": bench_gas}
NAMES = list(BENCHMARKS)


def main(names: list[str], as_json: bool = False, options: dict | None = None,
         isolated: bool | None = None) -> int:
    """Run ``names`` (all when empty) and print a table, or the rows as JSON on stdout.
    ``options``: keyword arguments by benchmark name (``{"sweep": {"workers": 2}}``).
    ``isolated``: each benchmark in a process of its own (``child_command``); None: when more
    than one runs. wgpu-native's per-submission work grows with the most resources the process
    ever held at once and never shrinks again (docs/reliability.md, section 5),
    so in one process a benchmark would pay for the resources of those before it."""
    names = list(names) or NAMES
    if isolated is None:
        isolated = len(names) > 1
    results: dict = {"adapter": None, "benchmarks": {}}
    failed = []
    for name in names:
        if isolated:
            child = run_isolated(name, (options or {}).get(name, {}))
            if child is None:
                failed.append(name)
                continue
            results["adapter"] = child["adapter"]
            results["benchmarks"][name] = child["benchmarks"][name]
            continue
        from emberfx.core.gpu import get_context

        ctx = get_context()
        results["adapter"] = ctx.label
        print(f"[bench] {name} on {ctx.label} ...", file=sys.stderr)
        results["benchmarks"][name] = BENCHMARKS[name](**(options or {}).get(name, {}))
    if as_json:
        print(json.dumps(results, indent=2))
    else:
        print(f"adapter: {results['adapter']}")
        for name, rows in results["benchmarks"].items():
            print(f"\n{name}")
            for row in rows:
                print(row_line(row))
    if failed:
        print(f"emberfx: bench: {', '.join(failed)} failed (its output is above)", file=sys.stderr)
        return 1
    return 0


def child_command(name: str, options: dict) -> list[str]:
    """``emberfx bench NAME --json`` in this Python, with NAME's options as its flags."""
    command = [sys.executable, "-m", "emberfx", "bench", name, "--json"]
    for key, value in options.items():
        if value is not None:
            command += [f"--{key}", str(value)] if value != "" else [f"--{key}"]
    return command


def run_isolated(name: str, options: dict) -> dict | None:
    """One benchmark in a child process (its progress and errors go to this stderr): its
    parsed JSON, or None when it failed."""
    done = subprocess.run(child_command(name, options), stdout=subprocess.PIPE, text=True,
                          check=False)
    if done.returncode != 0:
        return None
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        print(f"emberfx: bench {name}: expected JSON from its process, found "
              f"{done.stdout[:80]!r}", file=sys.stderr)
        return None


def plot_main(names: list[str], folder, as_json: bool = False, source=None) -> int:
    """``bench --plot DIR``: run the size sweeps of ``names`` (every family with one when empty;
    scaling.FAMILIES) and write DIR/<family>.png; or, with ``source`` (``--from FILE``), redraw
    the sweeps saved in FILE by ``bench --plot DIR --json`` without measuring. ``as_json``
    prints {"adapter", "benchmarks": {}, "sweep"}: the shape of a bench run, plus the sweep."""
    from emberfx.bench import plots, scaling
    from emberfx.core.errors import UsageError

    plots.require_matplotlib()
    unknown = [n for n in names if n not in scaling.FAMILIES]
    if unknown:
        raise UsageError(f"--plot: no size sweep for {', '.join(map(repr, unknown))}; "
                         f"sweeps: {', '.join(scaling.FAMILIES)}")
    if source is not None:
        saved = plots.load_results(source)
        adapter = str(saved.get("adapter", "unknown adapter"))
        sweep = {k: v for k, v in saved["sweep"].items() if not names or k in names}
    else:
        from emberfx.core.gpu import get_context

        adapter = get_context().label
        print(f"[bench] size sweeps on {adapter} ...", file=sys.stderr)
        sweep = scaling.run_sweeps(names or scaling.FAMILIES)
    written = plots.write_plots(sweep, folder, adapter)
    if as_json:
        print(json.dumps({"adapter": adapter, "benchmarks": {}, "sweep": sweep}, indent=2))
        print("\n".join(f"wrote {path}" for path in written), file=sys.stderr)
        return 0
    print(f"adapter: {adapter}")
    for family, entry in sweep.items():
        print(f"\n{family} ({entry['unit']})")
        for series, points in entry["series"].items():
            for p in points:
                value = "-" if p["value"] is None else f"{p['value']:.4g}"
                print(f"  {series:<24} {p['label']:>12} {value:>12}  {p.get('note', '')}")
    for path in written:
        print(f"wrote {path}")
    return 0
