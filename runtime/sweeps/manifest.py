"""The sweep's manifest: one row per job in ``OUT/manifest.parquet`` (through pyarrow, when it
is importable) or ``OUT/manifest.csv``.

Columns: ``job`` (the hash that names its files), one column per ``--set`` PATH, then
``status`` (ok | error), ``error`` (one line), ``output`` and ``state`` (file names inside OUT),
``seconds``, ``adapter``, ``host``, ``worker`` (process id) and ``attempts`` (runs of the job:
more than 1 after a worker died; empty on Ray, which retries out of sight).

Rows of earlier sweeps into the same folder that this sweep does not repeat are kept. Written
atomically, like every output. A manifest that cannot be read back (bytes that are not UTF-8,
rows of another width, a special file in its place) stops the sweep with a one-line error that
names the file and line, before anything is run or written: rewriting it would lose its rows.

In the CSV, lists are JSON text; in Parquet, a parameter column whose values have no one Arrow
type (numbers and strings mixed) is JSON text too.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from emberfx.app.output import write_atomically
from emberfx.core.errors import EmberError

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
    CSV values come back as text: the sweep only needs each job's status and files.
    EmberError, naming the file and line, for a manifest that is there but unreadable."""
    parquet, text = Path(out) / NAMES[0], Path(out) / NAMES[1]
    for path in (parquet, text):
        if path.exists() and not path.is_file():
            raise _unreadable(path, None, "expected a regular file, found a directory or a "
                              "special file")
    if parquet.is_file() and has_pyarrow():
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.read_table(parquet).to_pylist())
        except (OSError, pa.ArrowException) as exc:
            raise _unreadable(parquet, None, f"expected a Parquet table, found: "
                              f"{' '.join(str(exc).split())}") from None
    if text.is_file():
        return _read_csv(text)
    return []


def _read_csv(path: Path) -> list[dict[str, Any]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _unreadable(path, None, f"expected a readable file, found: "
                          f"{exc.strerror or exc}") from None
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _unreadable(path, line, f"expected UTF-8 text, found byte "
                          f"0x{data[exc.start]:02x}") from None
    # A field may be as long as the file (a long list of values is one field): the csv
    # module's own limit (128 KiB) would refuse a manifest this module wrote.
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(data) + 1))
    try:
        reader = csv.DictReader(io.StringIO(body, newline=""))
        rows = []
        for row in reader:
            if None in row:
                raise _unreadable(path, reader.line_num, f"expected {len(reader.fieldnames or ())}"
                                  f" fields as in the header, found more")
            rows.append(row)
        return rows
    except csv.Error as exc:
        raise _unreadable(path, reader.line_num, f"expected CSV, found: {exc}") from None
    finally:
        csv.field_size_limit(limit)


def _unreadable(path: Path, line: int | None, detail: str) -> EmberError:
    where = f"{path} line {line}" if line is not None else str(path)
    return EmberError(f"{where}: {detail}; the manifest is left as it is: repair it or move "
                      f"it away, then run the sweep again")


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
