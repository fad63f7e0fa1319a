"""Life patterns: RLE and plaintext (.cells) files in, RLE out, random soups, placement on a grid.

Pure numpy, no GPU code: scene validation, the CLI and the tests use it without an adapter.

Grid convention (DESIGN.md): ``cells[y, x]`` is column x of row y; row 0 is the top row of the
file. Every mistake in a file raises a ``PatternError`` whose text is one line,
``FILE:LINE:COL: what was expected, what was found`` (line and column 1-based, the column counted
in characters of that line).

RLE follows LifeWiki's description (https://conwaylife.com/wiki/Run_Length_Encoded):

    #N Glider                      optional '#' lines before the header (#N names the pattern)
    x = 3, y = 3, rule = B3/S23    the header; rule is optional
    bob$2bo$3o!                    runs: [count] b (dead) | o (alive) | $ (end of row), ! ends

Spaces may separate runs, but not a count from its tag. Line breaks (LF, CRLF or CR) inside the
runs are invisible, as in Golly and lifelib, whose writers break lines anywhere: ``12`` at the end
of one line and ``b`` at the start of the next are the run ``12b``. Text after ``!`` is ignored.
Only two-state patterns are read: any tag other than ``b``, ``o`` and ``$`` is an error.

Golly's extended RLE line ``#CXRLE Pos=X,Y Gen=G`` (before the header; other keys are ignored) is
read into ``Pattern.position`` and ``Pattern.generation``. In Golly, Pos gives the universe
coordinates of the pattern's top-left cell, relative to an origin; an emberfx grid is finite and
has no such origin, so Pos does not move the pattern: it lands where ``offset`` says, or centred,
as Golly's "fit" view shows it. Pos is kept for tools that put several files back together.

Limits, checked before anything is allocated: a pattern is at most ``MAX_CELLS`` cells (x * y of
an RLE header, columns * rows of a plaintext file), a run count at most ``MAX_CELLS``, a Gen at
most ``MAX_DIGITS`` digits, a file at most ``MAX_FILE_BYTES``. ``read_pattern`` opens regular files
only (or links to them): a device such as /dev/zero or a FIFO is refused before it is read.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from emberfx.core.errors import EmberError, file_kind, read_user_text

__all__ = ["PatternError", "Pattern", "parse_rle", "parse_cells", "read_pattern", "write_rle",
           "random_soup", "place", "rule_mismatch", "MAX_LINE", "MAX_CELLS", "MAX_DIGITS",
           "MAX_FILE_BYTES"]

MAX_LINE = 70   # longest line write_rle produces (the RLE convention)
MAX_CELLS = 1 << 30   # most cells a pattern may have (the dense grid is 1 byte a cell)
MAX_DIGITS = 1000     # longest Gen= accepted (well under Python's 4300-digit int limit)
MAX_FILE_BYTES = 256 << 20   # largest pattern file read (RLE parses at about 1 MB/s on a small CPU)


class PatternError(EmberError):
    """A pattern file (or a placement) that cannot be used, explained in one line.

    ``source:line:col: message`` when the mistake has a position in the text, else
    ``source: message``.
    """

    def __init__(self, source, message: str, line: int | None = None, col: int | None = None):
        self.source = str(source)
        self.line = line
        self.col = col
        self.detail = " ".join(message.split("\n"))
        where = self.source if line is None else f"{self.source}:{line}:{col}"
        super().__init__(f"{where}: {self.detail}")


@dataclass
class Pattern:
    cells: np.ndarray
    """bool (h, w); row 0 is the top row"""
    rule: str | None = None
    """the rule in the RLE header, as written; None when the file has none"""
    name: str | None = None
    """from the first '#N' line (RLE) or '!Name:' line (plaintext)"""
    position: tuple[int, int] | None = None
    """(x, y) of the top-left cell from '#CXRLE Pos=x,y' (Golly); placement ignores it"""
    generation: int | None = None
    """from '#CXRLE Gen=g' (Golly): the generation the pattern was saved at"""

    @property
    def size(self) -> tuple[int, int]:
        """(width, height)"""
        return int(self.cells.shape[1]), int(self.cells.shape[0])


def _found(ch: str) -> str:
    if ch == "":
        return "end of file"
    if ch in "\r\n":
        return "end of line"
    return repr(ch)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[str]:
    """The lines of a text whose line breaks may be LF, CRLF or CR (as Golly reads them)."""
    return _LINE_BREAK.split(text)


def _eof_position(text: str) -> tuple[int, int]:
    """Just after the last non-whitespace character (1:1 for a blank text): where a missing '!'
    would go, rather than on an empty line after the final newline."""
    lines = _lines(text)
    for index in range(len(lines) - 1, -1, -1):
        body = lines[index].rstrip()
        if body:
            return index + 1, len(body) + 1
    return 1, 1


def _shown(digits: str) -> str:
    """A number as written, shortened when it is too long to read in a message."""
    return digits if len(digits) <= 20 else f"{digits[:12]}... ({len(digits)} digits)"


# ------------------------------------------------------------------------------------------ RLE

_HEADER_PART = re.compile(r"\s*([A-Za-z]+)\s*=\s*")


def _header(line_text: str, lineno: int, source: str) -> tuple[int, int, str | None]:
    """Parse 'x = W, y = H[, rule = R]' (keys case-insensitive, whitespace free)."""
    from emberfx.systems.life.rules import parse_rule

    values: dict[str, tuple[str, int]] = {}   # key -> (value, 1-based column of the value)
    pos = 0
    for key in ("x", "y", "rule"):
        rest = line_text[pos:]
        if key == "rule" and not rest.strip():
            break   # no rule (a trailing comma is tolerated)
        m = _HEADER_PART.match(line_text, pos)
        if m is None or m.group(1).lower() != key:
            col = (m.start(1) if m else pos + len(rest) - len(rest.lstrip())) + 1
            found = line_text[col - 1:].rstrip()
            want = ("a header 'x = WIDTH, y = HEIGHT[, rule = RULE]'" if key == "x"
                    else f"'{key} = ...' in the header")
            raise PatternError(source, f"expected {want}, found "
                                       f"{repr(found[:24]) if found else 'end of line'}",
                               lineno, col)
        start = m.end()
        # the rule is the rest of the line; x and y end at the next comma
        comma = -1 if key == "rule" else line_text.find(",", start)
        end = len(line_text) if comma < 0 else comma
        values[key] = (line_text[start:end].rstrip(), start + 1)
        pos = end + 1 if comma >= 0 else end
    size = []
    for key in ("x", "y"):
        value, col = values[key]
        if not re.fullmatch(r"[0-9]+", value) or not value.strip("0"):
            raise PatternError(source, f"expected a positive whole number for {key}, found "
                                       f"{repr(_shown(value)) if value else 'nothing'}",
                               lineno, col)
        # past 10 digits it is too large anyway; int() of thousands of digits is refused
        digits = value.lstrip("0")
        size.append(int(digits) if len(digits) <= 10 else MAX_CELLS + 1)
    if size[0] * size[1] > MAX_CELLS:
        raise PatternError(source, f"expected a pattern of at most {MAX_CELLS} cells, found "
                                   f"x = {_shown(values['x'][0])}, y = {_shown(values['y'][0])}",
                           lineno, values["x"][1])
    rule = None
    if "rule" in values:
        rule, col = values["rule"]
        try:
            parse_rule(rule)
        except ValueError as exc:
            raise PatternError(source, f"rule: {exc}", lineno, col) from None
    return size[0], size[1], rule


_POS = re.compile(r"(-?[0-9]{1,10}),(-?[0-9]{1,10})")


def _cxrle(line_text: str, lineno: int, source: str) -> tuple[tuple[int, int] | None, int | None]:
    """(Pos, Gen) of a '#CXRLE key=value ...' line (None where absent); other keys are ignored,
    as Golly ignores them."""
    position = generation = None
    start = line_text.index("#CXRLE") + len("#CXRLE")
    for m in re.finditer(r"\S+", line_text[start:]):
        key, _, value = m.group().partition("=")
        col = start + m.start() + len(key) + 2   # the value's column
        if key == "Pos":
            pos = _POS.fullmatch(value)
            if pos is None:
                raise PatternError(source, f"expected 'Pos=X,Y' with whole numbers of at most 10 "
                                           f"digits, found '{key}={_shown(value)}'", lineno, col)
            position = (int(pos.group(1)), int(pos.group(2)))
        elif key == "Gen":
            if not re.fullmatch(r"[0-9]+", value) or len(value) > MAX_DIGITS:
                raise PatternError(source, f"expected 'Gen=G' with a whole number of at most "
                                           f"{MAX_DIGITS} digits, found 'Gen={_shown(value)}'",
                                   lineno, col)
            generation = int(value)
    return position, generation


def parse_rle(text: str, source: str = "<rle>") -> Pattern:
    """An RLE pattern; raises PatternError with the line and column of the first mistake."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _lines(text)
    name = position = generation = None
    header_index = None
    for index, raw in enumerate(lines):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if stripped.startswith("#CXRLE"):
                position, generation = _cxrle(raw, index + 1, source)
            elif stripped[1:2] == "N" and name is None:
                name = stripped[2:].strip() or None
            continue
        header_index = index
        break
    if header_index is None:
        line, col = _eof_position(text)
        raise PatternError(source, "expected a header 'x = WIDTH, y = HEIGHT[, rule = RULE]', "
                                   "found end of file", line, col)
    width, height, rule = _header(lines[header_index].rstrip("\r"), header_index + 1, source)
    cells = np.zeros((height, width), dtype=bool)

    x = y = 0
    count = 0          # the run count being read; its digits may go on across a line break
    digits = 0
    count_at = (0, 0)
    for lineno in range(header_index + 2, len(lines) + 1):
        line_text = lines[lineno - 1]
        for col0, ch in enumerate(line_text):
            col = col0 + 1
            if "0" <= ch <= "9":
                if not digits:
                    count_at = (lineno, col)
                digits += 1
                count = count * 10 + ord(ch) - 48
                if count > MAX_CELLS:
                    raise PatternError(source, f"expected a run count of at most {MAX_CELLS}, "
                                               f"found a larger one", *count_at)
                continue
            if digits and ch not in "bo$":
                raise PatternError(source, f"expected 'b', 'o' or '$' after the count {count}, "
                                           f"found {_found(ch)}", lineno, col)
            if ch in " \t\f\v":
                continue
            if ch == "!":
                return Pattern(cells, rule, name, position, generation)
            if ch not in "bo$":
                raise PatternError(source, f"expected 'b', 'o', '$', '!' or a count, found "
                                           f"{_found(ch)}", lineno, col)
            n = count if digits else 1
            if n < 1:
                raise PatternError(source, f"expected a count >= 1, found {count}", *count_at)
            count = digits = 0
            if ch == "$":
                y += n
                x = 0
                continue
            if y >= height:
                raise PatternError(source, f"expected at most y = {height} rows, found a run in "
                                           f"row {y + 1}", lineno, col)
            if x + n > width:
                raise PatternError(source, f"expected at most x = {width} cells in row {y + 1}, "
                                           f"found {x + n}", lineno, col)
            if ch == "o":
                cells[y, x:x + n] = True
            x += n
    line, col = _eof_position(text)
    if digits:
        raise PatternError(source, f"expected 'b', 'o' or '$' after the count {count}, found end "
                                   f"of file", line, col)
    raise PatternError(source, "expected '!' at the end of the pattern, found end of file",
                       line, col)


# ------------------------------------------------------------------------------------ plaintext

def parse_cells(text: str, source: str = "<cells>") -> Pattern:
    """A plaintext pattern: '!' comment lines, '.' dead, 'O' or '*' alive; short lines are padded
    with dead cells; blank lines are dead rows (trailing blank lines are dropped)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    name = None
    rows: list[tuple[int, str]] = []
    for lineno, raw in enumerate(_lines(text), 1):
        line_text = raw.rstrip()
        if line_text.startswith("!"):
            m = re.match(r"!\s*Name:\s*(.*)$", line_text)
            if m and name is None:
                name = m.group(1).strip() or None
            continue
        for col, ch in enumerate(line_text, 1):
            if ch not in ".O*":
                raise PatternError(source, f"expected '.' (dead), 'O' or '*' (alive), "
                                           f"found {_found(ch)}", lineno, col)
        rows.append((lineno, line_text))
    while rows and not rows[-1][1]:
        rows.pop()
    if not rows:
        line, col = _eof_position(text)
        raise PatternError(source, "expected at least one row of cells, found none", line, col)
    width = max(len(r) for _, r in rows)
    if width == 0:
        raise PatternError(source, "expected at least one cell, found only blank lines",
                           rows[0][0], 1)
    if width * len(rows) > MAX_CELLS:   # a long line and many (blank) rows, before allocating
        raise PatternError(source, f"expected a pattern of at most {MAX_CELLS} cells, found "
                                   f"{width} columns x {len(rows)} rows")
    cells = np.zeros((len(rows), width), dtype=bool)
    for y, (_, row) in enumerate(rows):
        alive = [x for x, ch in enumerate(row) if ch != "."]
        cells[y, alive] = True
    return Pattern(cells, None, name)


# ------------------------------------------------------------------------------------------ files

_READERS = {".rle": parse_rle, ".cells": parse_cells}


def read_pattern(path) -> Pattern:
    """A .rle or .cells file (extension case-insensitive); messages name the path as given."""
    label = os.fspath(path)
    suffix = Path(label).suffix.lower()
    if suffix not in _READERS:
        raise PatternError(label, f"expected a .rle or .cells pattern file, found "
                                  f"'{Path(label).suffix or Path(label).name}'")
    _check_regular_file(label)
    text = read_user_text(label, "pattern", lambda message, line, column: PatternError(
        label, message, line, column))
    return _READERS[suffix](text, label)


def rule_mismatch(pattern: Pattern, rule: str) -> str | None:
    """When the pattern's header names a rule other than ``rule`` (compared as birth and survival
    sets, so 'b36s23' is 'B36/S23'), a phrase naming both, e.g. "says rule = B36/S23 in its
    header, but the layer's rule is B3/S23"; else None."""
    from emberfx.systems.life.rules import parse_rule

    if pattern.rule is None or parse_rule(pattern.rule) == parse_rule(rule):
        return None
    return f"says rule = {pattern.rule} in its header, but the layer's rule is {rule}"


def _check_regular_file(label: str) -> None:
    """Refuse, without opening it, what is not a regular file of a sane size: reading /dev/zero
    never ends and opening a FIFO blocks until someone writes to it. A missing file or a folder
    is left to read_user_text, which names those."""
    try:
        info = os.stat(label)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        return
    if not stat.S_ISREG(info.st_mode):
        raise PatternError(label, f"expected a regular pattern file, found "
                                  f"{file_kind(info.st_mode)}")
    if info.st_size > MAX_FILE_BYTES:
        raise PatternError(label, f"expected a pattern file of at most {MAX_FILE_BYTES >> 20} MiB, "
                                  f"found {info.st_size / (1 << 20):.0f} MiB")


# --------------------------------------------------------------------------------------- writing

def _row_runs(row: np.ndarray) -> list[tuple[int, str]]:
    """(count, tag) runs of one row, without its trailing dead cells."""
    alive = np.flatnonzero(row)
    if alive.size == 0:
        return []
    row = row[:alive[-1] + 1]
    edges = np.flatnonzero(row[1:] != row[:-1]) + 1
    starts = np.concatenate(([0], edges))
    ends = np.concatenate((edges, [row.size]))
    return [(int(e - s), "o" if row[s] else "b") for s, e in zip(starts, ends)]


def write_rle(cells: np.ndarray, rule: str = "B3/S23", name: str | None = None) -> str:
    """Standard RLE text for a bool (h, w) grid: '#N name' (if given), the header, runs with
    counts, trailing dead cells of a row and trailing empty rows omitted, lines <= 70 characters,
    '!' at the end, a final newline."""
    from emberfx.systems.life.rules import parse_rule

    cells = np.asarray(cells)
    if cells.ndim != 2 or cells.shape[0] < 1 or cells.shape[1] < 1:
        raise ValueError(f"expected a 2-D grid with at least one cell, found shape {cells.shape}")
    cells = cells.astype(bool, copy=False)
    parse_rule(rule)   # ValueError for a rule a reader could not use
    if not rule or "\n" in rule or "," in rule:
        raise ValueError(f"expected a one-line rule without commas, found {rule!r}")
    h, w = cells.shape
    tokens: list[str] = []
    row = 0   # the row the runs written so far end on
    for y in range(h):
        runs = _row_runs(cells[y])
        if not runs:
            continue
        if y > row:   # '$' ends a row; a count skips empty ones
            tokens.append(f"{y - row}$" if y - row > 1 else "$")
            row = y
        tokens.extend(f"{n}{tag}" if n > 1 else tag for n, tag in runs)
    tokens.append("!")
    out_lines: list[str] = []
    if name:
        out_lines.append("#N " + " ".join(str(name).split()))
    out_lines.append(f"x = {w}, y = {h}, rule = {rule.strip()}")
    current = ""
    for token in tokens:
        if len(current) + len(token) > MAX_LINE:
            out_lines.append(current)
            current = ""
        current += token
    out_lines.append(current)
    return "\n".join(out_lines) + "\n"


# --------------------------------------------------------------------------------- soups, placing

def random_soup(width: int, height: int, density: float, seed: int,
                rect: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """A bool (height, width) grid, each cell alive with probability ``density``; only cells
    inside ``rect`` = (x, y, w, h) when given. Deterministic: numpy's PCG64 seeded with ``seed``
    draws one uniform per cell of the rectangle, row by row."""
    width, height = int(width), int(height)
    if width < 1 or height < 1:
        raise PatternError("random_soup", f"expected a grid of at least 1x1, found "
                                          f"{width}x{height}")
    if not 0.0 <= float(density) <= 1.0:
        raise PatternError("random_soup", f"expected a density in [0, 1], found {density}")
    x, y, w, h = (0, 0, width, height) if rect is None else (int(v) for v in rect)
    if w < 1 or h < 1 or x < 0 or y < 0 or x + w > width or y + h > height:
        raise PatternError("random_soup", f"expected a rectangle (x, y, width, height) inside the "
                                          f"{width}x{height} grid, found {list(rect or ())}")
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    grid = np.zeros((height, width), dtype=bool)
    grid[y:y + h, x:x + w] = rng.random((h, w)) < float(density)
    return grid


def place(grid: np.ndarray, pattern, offset: tuple[int, int] | None = None, *,
          source: str = "pattern") -> None:
    """OR ``pattern`` (a bool (h, w) array or a Pattern) into ``grid`` (H, W) with its top-left
    cell at (x, y) = ``offset``; default: centred, ((W - w) // 2, (H - h) // 2). A pattern that
    does not fit (no wrapping, even on a torus) raises PatternError."""
    cells = pattern.cells if isinstance(pattern, Pattern) else np.asarray(pattern)
    cells = cells.astype(bool, copy=False)
    H, W = grid.shape
    h, w = cells.shape
    if w > W or h > H:
        raise PatternError(source, f"expected a pattern that fits the {W}x{H} grid, found "
                                   f"{w}x{h}" + (f" (offset {list(offset)})" if offset else ""))
    if offset is None:
        x, y = (W - w) // 2, (H - h) // 2
    else:
        x, y = (int(v) for v in offset)
        if x < 0 or y < 0 or x + w > W or y + h > H:
            raise PatternError(source, f"expected offset (x, y) with the {w}x{h} pattern inside "
                                       f"the {W}x{H} grid (0 <= x <= {W - w}, 0 <= y <= {H - h}), "
                                       f"found offset {[x, y]}")
    grid[y:y + h, x:x + w] |= cells
