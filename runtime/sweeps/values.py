"""The values of a sweep's ``--set``s as sequences that know their length without being listed,
the job count as their product, and one combination by its index.

A range ``a..b`` is a Python ``range`` and a linspace ``a:b:n`` a ``Linspace``: both compute an
item when asked, so ``1..1000000000`` costs no memory and the job count of any sweep is a
multiplication. Each set's values are distinct (a listed value given twice is dropped, a
linspace whose steps vanish in float precision is refused), so every combination is a
different job and the count is exact before anything is planned.

``@FILE`` values are read from a regular file of at most ``VALUES_FILE_BYTES``; a FIFO or a
device is refused before it is opened for reading (reading one would block or never end).
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from emberfx.core.errors import UsageError, file_kind

DEFAULT_MAX_JOBS = 10_000   # a larger sweep needs --max-jobs: a typo in a range is not a week
VALUES_FILE_BYTES = 16 * 1024 * 1024   # the largest @FILE of values read
ULPS_BETWEEN_VALUES = 4   # a linspace step below this many ULPs of its ends may repeat values


class Linspace(Sequence):
    """``count`` evenly spaced values from ``low`` to ``high``, both ends exactly as given;
    whole numbers (exact integer steps) when ``whole``."""

    def __init__(self, low: float, high: float, count: int, whole: bool):
        # n, not count: count() is a Sequence method
        self.low, self.high, self.n, self.whole = low, high, count, whole

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list: ...

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.n))]
        if index < 0:
            index += self.n
        if not 0 <= index < self.n:
            raise IndexError(index)
        if self.whole:
            step = 0 if self.n == 1 else (int(self.high) - int(self.low)) // (self.n - 1)
            return int(self.low) + step * index
        if index == self.n - 1 and self.n > 1:
            return self.high
        if index == 0:
            return self.low
        return self.low + (self.high - self.low) * index / (self.n - 1)

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(self.n))

    def __repr__(self) -> str:
        return f"Linspace({self.low!r}, {self.high!r}, {self.n})"


def linspace(low_text: str, high_text: str, count: int, option: str, body: str) -> Linspace:
    """The values of ``a:b:n``: whole numbers when a and b are written as integers and the step
    is a whole number, else floats. UsageError when two of the values would be equal."""
    if _is_int(low_text) and _is_int(high_text):
        low, high = int(low_text), int(high_text)
        if count == 1 or (high - low) % (count - 1) == 0:
            if count > 1 and low == high:
                raise _repeats(option, body)
            return Linspace(low, high, count, whole=True)
    low_f, high_f = float(low_text), float(high_text)
    if count > 1:
        spacing = ULPS_BETWEEN_VALUES * max(math.ulp(low_f), math.ulp(high_f))
        if abs(high_f - low_f) / (count - 1) <= spacing:
            raise _repeats(option, body)
    return Linspace(low_f, high_f, count, whole=False)


def _is_int(text: str) -> bool:
    body = text.strip().lstrip("+-")
    return body.isdigit()


def _repeats(option: str, body: str) -> UsageError:
    return UsageError(f"{option}: expected a linspace a:b:n whose n values all differ, found "
                      f"{body!r} (the step is 0 or below float precision)")


def distinct(values: Sequence[Any]) -> tuple[Any, ...]:
    """``values`` in order, each once: 1, 1.0 and true are different values, as in TOML."""
    seen: set[str] = set()
    kept = []
    for value in values:
        key = json.dumps(value, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return tuple(kept)


def size(values: Sequence[Any]) -> int:
    """How many values: ``len()``, also where that is beyond what ``len()`` may return."""
    if isinstance(values, range):
        return max(0, (values.stop - values.start + values.step - (1 if values.step > 0 else -1))
                   // values.step)
    if isinstance(values, Linspace):
        return values.n
    return len(values)


def job_count(value_lists: Sequence[Sequence[Any]]) -> int:
    """How many combinations the value lists make (computed, never listed)."""
    return math.prod(size(values) for values in value_lists)


def combination(value_lists: Sequence[Sequence[Any]], index: int) -> tuple[Any, ...]:
    """The ``index``-th combination, the first list varying slowest (as itertools.product)."""
    picked = []
    for values in reversed(value_lists):
        index, digit = divmod(index, size(values))
        picked.append(values[digit])
    return tuple(reversed(picked))


def read_values_file(name: str, option: str) -> tuple[Path, str]:
    """(path, text) of an ``@FILE``: a regular UTF-8 file of at most ``VALUES_FILE_BYTES``.
    Opened without blocking and checked on the open descriptor, so a FIFO never hangs."""
    path = Path(name.strip())
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UsageError(f"{option}: expected a readable UTF-8 file of values at {path}, "
                         f"found: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UsageError(f"{option}: expected a regular file of values at {path}, found "
                         f"{file_kind(mode)}")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(VALUES_FILE_BYTES + 1)
    if len(data) > VALUES_FILE_BYTES:
        raise UsageError(f"{option}: expected a file of values of at most "
                         f"{VALUES_FILE_BYTES // (1024 * 1024)} MiB at {path}, found more")
    try:
        return path, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{option}: {path} line {line}: expected UTF-8 text, found byte "
                         f"0x{data[exc.start]:02x}") from None
