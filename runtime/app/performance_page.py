"""The generated parts of the performance page (docs/performance.md): tables of committed
``emberfx bench --json`` results.

The page is written by hand around regions like

    <!-- generated from plots/h200/sweep.json -->
    ...
    <!-- end of generated -->

and each region is the rendering of the JSON file it names (relative to the docs folder): the
adapter it ran on, then each benchmark's rows (``bench NAME --json``: name, value, unit and the
row's other figures, baselines of the same run among them) and each size sweep (``bench --plot
DIR --json``: one column per series, the same-run roofline and the fraction of it reached, and
the plot drawn from it where DIR holds one).

    python -m emberfx.app.docs_pages docs/    # rewrites them, with the other generated pages

tests/test_docs_reference.py fails when a committed region differs from its file's rendering.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

__all__ = ["render_results", "regenerate", "write_performance_page"]

PAGE = Path("performance.md")
"""the page, relative to the docs folder"""
REGION = re.compile(r"(<!-- generated from (?P<source>[^ ]+) -->\n)(?P<body>.*?)"
                    r"(<!-- end of generated -->)", re.S)


def _number(value: Any) -> str:
    """A figure to 4 significant digits, with thousands separated ('-' for a missing one)."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _text(str(value))
    if not math.isfinite(value):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if value == 0 or abs(value) < 1e-3:
        return f"{value:.3g}"
    digits = 4 - 1 - int(math.floor(math.log10(abs(value))))
    rounded = round(value, digits)
    if digits <= 0:
        return f"{int(rounded):,}"
    return f"{rounded:,.{digits}f}"


def _text(text: str) -> str:
    """Text for a table cell: one line, '|' escaped, '<' kept as text."""
    text = " ".join(text.split())
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")


def _rows_table(name: str, rows: list[dict]) -> list[str]:
    lines = [f"#### `bench {name}`", "", "| measured | value | unit | same run |",
             "| --- | ---: | --- | --- |"]
    for row in rows:
        extra = "; ".join(f"{key.replace('_', ' ')} {_number(value)}"
                          for key, value in row.items() if key not in ("name", "value", "unit"))
        label = row["name"].strip()
        indent = "&nbsp;&nbsp;" if row["name"].startswith(" ") else ""
        lines.append(f"| {indent}{_text(label)} | {_number(row.get('value'))} | "
                     f"{_text(str(row.get('unit', '')))} | {_text(extra)} |")
    return [*lines, ""]


def _sweep_table(entry: dict, plot: str | None) -> list[str]:
    series = entry["series"]
    roofline = entry.get("roofline")
    unit = entry["unit"]
    lines = [f"#### {_text(entry['title'])} ({_text(unit)})", ""]
    labels: list[str] = []
    for points in series.values():
        labels += [p["label"] for p in points if p["label"] not in labels]
    names = list(series)
    header = [_text(entry["x_label"]), *(_text(n) for n in names)]
    if roofline is not None:
        header.append(f"of the roofline ({_text(names[0])})")
    lines += ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    notes: list[str] = []
    for label in labels:
        cells = [label]
        for name in names:
            point = next((p for p in series[name] if p["label"] == label), None)
            value = None if point is None else point.get("value")
            text = _number(value)
            if point is not None and point.get("note"):
                notes.append(f"{label}, {name}: {point['note']}")
                text += f" [{len(notes)}]"
            cells.append(text)
        if roofline is not None:
            first = next((p for p in series[names[0]] if p["label"] == label), None)
            value = None if first is None else first.get("value")
            cells.append("-" if value is None else f"{value / roofline['value']:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if roofline is not None:
        lines += [f"Roofline, measured in the same run: {_number(roofline['value'])} {unit}, "
                  f"{_text(roofline['label'])}.", ""]
    lines += [f"[{i}] {_text(note)}  " for i, note in enumerate(notes, 1)]
    if notes:
        lines.append("")
    if plot is not None:
        lines += [f"![{_text(entry['title'])}]({plot})", ""]
    return lines


def render_results(results: dict, plots: dict[str, str] | None = None,
                   link: str | None = None) -> str:
    """Markdown tables of one ``emberfx bench [--plot DIR] --json`` output. ``plots``: sweep
    family -> its plot's path from the page; ``link``: the JSON file's path from the page."""
    adapter = results.get("adapter") or "unknown adapter"
    lines = [f"Adapter: **{_text(adapter)}**" + (f" ([the JSON]({link}))" if link else "") + ".",
             ""]
    for name, rows in (results.get("benchmarks") or {}).items():
        lines += _rows_table(name, rows)
    for family, entry in (results.get("sweep") or {}).items():
        lines += _sweep_table(entry, (plots or {}).get(family))
    return "\n".join(lines)


def regenerate(page: str, docs: Path) -> str:
    """``page`` with every generated region rendered again from the file it names."""

    def render(match: re.Match) -> str:
        source = docs / match["source"]
        results = json.loads(source.read_text(encoding="utf-8"))
        folder = Path(match["source"]).parent.as_posix()
        plots = {family: f"{folder}/{family}.png" for family in results.get("sweep") or {}
                 if (source.parent / f"{family}.png").is_file()}
        body = render_results(results, plots, link=match["source"])
        return f"{match[1]}{body}\n{match[4]}"

    return REGION.sub(render, page)


def write_performance_page(docs: Path) -> Path:
    """Rewrite the generated regions of ``docs``/performance.md; returns its path."""
    target = Path(docs) / PAGE
    page = target.read_text(encoding="utf-8")
    target.write_text(regenerate(page, Path(docs)), encoding="utf-8", newline="\n")
    return target
