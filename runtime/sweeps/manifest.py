"""The sweep's manifest: one row per job in ``OUT/manifest.parquet`` (through pyarrow, when it
is importable) or ``OUT/manifest.csv``.

Columns: ``job`` (the hash that names its files), one column per ``--set`` PATH, then
``status`` (ok | error), ``error`` (one line), ``output`` and ``state`` (file names inside OUT),
``seconds``, ``adapter``, ``host``, ``worker`` (process id) and ``attempts`` (runs of the job:
more than 1 after a worker died; empty on Ray, which retries out of sight).

Rows of earlier sweeps into the same folder that this sweep does not repeat are kept. Written
atomically, like every output. In the CSV, lists are JSON text; in Parquet, a parameter column
whose values have no one Arrow type (numbers and strings mixed) is JSON text too.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from emberfx.app.output import write_atomically

FIXED = ("status", "error", "output", "state", "seconds", "adapter", "host", "worker",
         "attempts")
NAMES = ("manifest.parquet", "manifest.csv")


def has_pyarrow() -> bool:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def manifest_path(out: Path) -> Path:
    return Path(out) / (NAMES[0] if has_pyarrow() else NAMES[1])


def read_manifest(out: Path) -> list[dict[str, Any]]:
    """The rows of the manifest in ``out`` ([] when there is none this Python can read).
    CSV values come back as text: the sweep only needs each job's status and files."""
    parquet, text = Path(out) / NAMES[0], Path(out) / NAMES[1]
    if parquet.is_file() and has_pyarrow():
        import pyarrow.parquet as pq

        return list(pq.read_table(parquet).to_pylist())
    if text.is_file():
        with open(text, newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    return []


def columns(rows: list[dict[str, Any]], params: list[str]) -> list[str]:
    names = ["job", *params, *FIXED]
    for row in rows:   # parameters of earlier sweeps in this folder
        names += [key for key in row if key not in names]
    return names


def write_manifest(out: Path, rows: list[dict[str, Any]], params: list[str]) -> Path:
    """Write ``rows`` (in order) as the manifest of ``out``; returns its path."""
    path = manifest_path(out)
    names = columns(rows, params)
    if path.suffix == ".parquet":
        write_atomically(path, lambda tmp: _write_parquet(tmp, rows, names))
    else:
        write_atomically(path, lambda tmp: Path(tmp).write_text(_csv_text(rows, names),
                                                                encoding="utf-8", newline=""))
    for name in NAMES:   # the other format's file would describe an older state
        if name != path.name:
            (Path(out) / name).unlink(missing_ok=True)
    return path


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict, bool)):
        return json.dumps(value)
    return str(value)


def _csv_text(rows: list[dict[str, Any]], names: list[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow([_cell(row.get(name)) for name in names])
    return buffer.getvalue()


def _write_parquet(tmp: Path, rows: list[dict[str, Any]], names: list[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {}
    for name in names:
        values = [row.get(name) for row in rows]
        try:
            arrays[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):   # mixed kinds: keep them readable
            arrays[name] = pa.array([None if v is None else json.dumps(v) for v in values],
                                    type=pa.string())
    pq.write_table(pa.table(arrays), tmp)
