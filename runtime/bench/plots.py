"""PNG plots of the size sweeps (``emberfx bench --plot DIR``), one per family: throughput against
size on log-log axes, the copy roofline as a dashed line where the family has one, and each size
that was not run marked on the axis with its note in the legend.

Plots need matplotlib (the ``[plot]`` extra); without it ``require_matplotlib`` raises one line
saying how to install it, before any sweep runs. ``load_results`` reads a saved
``emberfx bench --plot DIR --json`` output, so ``--from FILE`` redraws without a GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

from emberfx.core.errors import EmberError

WIDTH, HEIGHT, DPI = 800, 500, 100   # pixels of every PNG


class MissingExtraError(EmberError):
    """An optional dependency the command needs is not installed."""


class SweepFileError(EmberError):
    """A --from file that is not a saved ``bench --plot --json`` output."""


def require_matplotlib() -> None:
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise MissingExtraError("emberfx bench --plot needs matplotlib, which is not installed: "
                                "pip install 'emberfx[plot]'")


def load_results(path) -> dict:
    """The JSON of a saved ``bench --plot DIR --json`` run: {"adapter", "sweep", ...}."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SweepFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SweepFileError(f"{path}: expected the JSON of 'emberfx bench --plot DIR --json', "
                             f"found text that is not JSON ({exc})") from None
    sweep = data.get("sweep") if isinstance(data, dict) else None
    if not isinstance(sweep, dict) or not sweep:
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise SweepFileError(f"{path}: expected an object with a 'sweep' entry (the output of "
                             f"'emberfx bench --plot DIR --json'), found keys {found}")
    for family, entry in sweep.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("series"), dict):
            raise SweepFileError(f"{path}: sweep.{family}: expected an object with 'series', "
                                 f"found {type(entry).__name__}")
    return data


def write_plots(sweep: dict, folder, adapter: str) -> list[Path]:
    """One ``<family>.png`` per family of ``sweep`` in ``folder`` (created); their paths."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmberError(f"--plot {folder}: cannot create the folder ({exc.strerror})") from None
    written = []
    for family, entry in sweep.items():
        figure = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI)
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        draw(axes, entry)
        axes.set_title(f"{entry.get('title', family)}\n{adapter}", fontsize=10)
        figure.subplots_adjust(left=0.12, right=0.97, top=0.88, bottom=0.12)
        path = folder / f"{family}.png"
        figure.savefig(path, dpi=DPI)
        written.append(path)
    return written


def draw(axes, entry: dict) -> None:
    """A family's series, its roofline and its skipped sizes onto ``axes``."""
    from matplotlib import ticker

    sizes = sorted({p["size"] for points in entry["series"].values() for p in points})
    labels = {p["size"]: p["label"] for points in entry["series"].values() for p in points}
    skipped: dict[int, str] = {}
    for name, points in entry["series"].items():
        done = [p for p in points if p["value"] is not None]
        if done:
            axes.plot([p["size"] for p in done], [p["value"] for p in done], marker="o",
                      label=name if len(entry["series"]) > 1 else "measured")
        for p in points:
            if p["value"] is None:
                skipped.setdefault(p["size"], p.get("note", "not run"))
    roofline = entry.get("roofline")
    if roofline:
        axes.axhline(roofline["value"], linestyle="--", color="grey", label=roofline["label"])
    if skipped:
        axes.plot(list(skipped), [0.0] * len(skipped), linestyle="none", marker="x",
                  color="red", clip_on=False, transform=axes.get_xaxis_transform(),
                  label=shorten(next(iter(skipped.values()))))
    axes.set_xscale("log")
    axes.set_yscale("log")
    if sizes:
        axes.set_xticks(sizes, [labels[s] for s in sizes])
        axes.xaxis.set_minor_locator(ticker.NullLocator())
    # labelled ticks at 1, 2 and 5 of each decade: a series within one decade still reads
    axes.yaxis.set_major_locator(ticker.LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
    axes.yaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    axes.yaxis.set_minor_locator(ticker.NullLocator())
    axes.set_xlabel(entry.get("x_label", "size"))
    axes.set_ylabel(entry.get("unit", ""))
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8, loc="best")


def shorten(note: str, length: int = 90) -> str:
    return note if len(note) <= length else note[:length - 3] + "..."
