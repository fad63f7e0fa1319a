"""Fuzzing the RLE and plaintext (.cells) readers with hypothesis: random bytes and text, mutated
valid patterns, huge numbers and odd headers. Whatever the input, the only exception that may
escape is the project's PatternError (an EmberError, printed as one line); whatever parses must
be a sane grid, and a grid written by write_rle must read back exactly, however its lines are
broken. No GPU; a few hundred examples per test, kept small so the suite stays fast."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emberfx.core.errors import EmberError
from emberfx.systems.life.patterns import (
    MAX_CELLS,
    Pattern,
    PatternError,
    parse_cells,
    parse_rle,
    read_pattern,
    write_rle,
)

PATTERNS = Path(__file__).resolve().parent.parent / "scenes" / "patterns"
SHIPPED_RLE = sorted(p.read_text() for p in PATTERNS.glob("*.rle"))
SHIPPED_CELLS = sorted(p.read_text() for p in PATTERNS.glob("*.cells"))

FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])

# characters that mean something to one of the readers, and a few that should not
RLE_CHARS = "bo$!0123456789 \t\n\r#NCXRLEPosGen=,-xyrule/BS.O*\ufeffé\x00"
# numbers that are small, too large, or past Python's 4300-digit int() limit, with or without
# leading zeros (none in between, so that what parses stays small: a header allowed MAX_CELLS
# would allocate 1 GiB)
DIGITS = st.one_of(st.text("0123456789", min_size=1, max_size=3),
                   st.text("0123456789", min_size=11, max_size=14).map(lambda d: "1" + d),
                   st.builds(lambda d, n: d * n, st.sampled_from("123456789"),
                             st.integers(4301, 6000)),
                   st.builds(lambda n, d: "0" * n + d, st.integers(4301, 6000),
                             st.text("0123456789", min_size=1, max_size=3)))


def check(parse, text: str, source: str = "fuzz") -> Pattern | None:
    """Parse; a PatternError must be one line naming the source, anything else fails the test."""
    try:
        pattern = parse(text, source=source)
    except PatternError as exc:
        message = str(exc)
        assert isinstance(exc, EmberError)
        assert message.startswith(source + ":") and "\n" not in message, message
        return None
    cells = pattern.cells
    assert cells.dtype == bool and cells.ndim == 2
    assert 1 <= cells.shape[0] and 1 <= cells.shape[1] and cells.size <= MAX_CELLS
    return pattern


def mutate(text: str, data) -> str:
    """A few random insertions, deletions and replacements, biased towards meaningful chars."""
    chars = list(text)
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(chars)))
        op = data.draw(st.sampled_from(["insert", "delete", "replace", "digits"]))
        new = data.draw(st.text(RLE_CHARS, min_size=1, max_size=3))
        if op == "insert":
            chars[at:at] = new
        elif op == "delete":
            del chars[at:at + data.draw(st.integers(1, 4))]
        elif op == "replace":
            chars[at:at + 1] = new
        else:   # a long run of digits: a huge count or header number
            chars[at:at] = data.draw(DIGITS)
    return "".join(chars)


@FUZZ
@given(st.text(RLE_CHARS, max_size=200))
def test_random_text(text):
    check(parse_rle, text)
    check(parse_cells, text)


@FUZZ
@given(st.text(max_size=200))
def test_random_unicode(text):
    check(parse_rle, text)
    check(parse_cells, text)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".rle", ".cells", ".RLE"]))
def test_random_bytes_in_a_file(folder, data, suffix):
    path = folder / f"bytes{suffix}"
    path.write_bytes(data)
    try:
        read_pattern(path)
    except PatternError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)


@FUZZ
@given(st.data())
def test_mutated_shipped_patterns(data):
    check(parse_rle, mutate(data.draw(st.sampled_from(SHIPPED_RLE)), data))
    check(parse_cells, mutate(data.draw(st.sampled_from(SHIPPED_CELLS)), data))


HEADER_KEY = st.sampled_from(["x", "y", "X", "rule", "z", "", "xx"])
HEADER_VALUE = st.one_of(st.integers(0, 70).map(str), DIGITS,
                         st.sampled_from(["-3", "1e3", " ", "B3/S23", "b36s23", "23/3", "B9/S",
                                          "3,", "0x10", "٣"]))


@FUZZ
@given(st.lists(st.tuples(HEADER_KEY, st.sampled_from([" = ", "=", " := ", ""]), HEADER_VALUE),
                max_size=4),
       st.sampled_from([", ", ",", " ", ",,"]),
       st.sampled_from(["", "#N name\n", "#CXRLE Pos=1,-2 Gen=7\n", "#CXRLE Pos=x\n",
                        "#CXRLE Gen=" + "9" * 5000 + "\n", "\ufeff"]),
       st.text("bo$!0123456789\n", max_size=60))
def test_odd_headers(parts, separator, prelude, body):
    header = separator.join(f"{k}{eq}{v}" for k, eq, v in parts)
    pattern = check(parse_rle, f"{prelude}{header}\n{body}")
    if pattern is not None:
        assert pattern.cells.sum() <= body.count("o") * max(1, pattern.cells.shape[1])


@FUZZ
@given(st.data())
def test_written_patterns_read_back_however_lines_break(data):
    """The oracle: write_rle of a random grid, with its run lines broken anywhere (inside counts
    too), with LF, CRLF or CR, reads back as the same grid; Pos and Gen survive."""
    h, w = data.draw(st.integers(1, 12)), data.draw(st.integers(1, 40))
    density = data.draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    seed = data.draw(st.integers(0, 2**32 - 1))
    cells = np.random.default_rng(seed).random((h, w)) < density
    header, *runs = write_rle(cells, name="fuzz").split("\n", 2)[1:]
    body = "".join(runs).replace("\n", "")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    eol = data.draw(st.sampled_from(["\n", "\r\n", "\r"]))
    pieces = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
    pos = (data.draw(st.integers(-10**9, 10**9)), data.draw(st.integers(-10**9, 10**9)))
    gen = data.draw(st.integers(0, 10**30))
    text = eol.join([f"#CXRLE Pos={pos[0]},{pos[1]} Gen={gen}", header, *pieces]) + eol
    pattern = parse_rle(text)
    np.testing.assert_array_equal(pattern.cells, cells)
    assert pattern.position == pos and pattern.generation == gen


@settings(FUZZ, max_examples=25)   # each example is up to 60,000 lines to read
@given(st.one_of(st.integers(1, 50), st.integers(40_000, 60_000)),
       st.one_of(st.integers(1, 50), st.integers(40_000, 60_000)))
def test_plaintext_of_too_many_cells(width, rows):
    """A long row and many blank rows: refused before allocating when the grid is too big."""
    pattern = check(parse_cells, "O" * width + "\n" * rows + "O", "wide.cells")
    assert (pattern is None) == (width * (rows + 1) > MAX_CELLS)


PLAIN_LINE = st.one_of(st.text(".O*", max_size=30),
                       st.text(".O*", max_size=5).map(lambda r: r + "  "),
                       st.text("!Name: x.O", max_size=12).map(lambda c: "!" + c))


@FUZZ
@given(st.lists(PLAIN_LINE, max_size=12), st.sampled_from(["\n", "\r\n", "\r"]))
def test_plaintext_reads_what_it_should(lines, eol):
    """The oracle: a row per non-comment line, padded with dead cells to the widest, trailing
    blank rows dropped; or a PatternError when no cell is left."""
    pattern = check(parse_cells, eol.join(lines) + eol)
    rows = [ln.rstrip() for ln in lines if not ln.startswith("!")]
    while rows and not rows[-1]:
        rows.pop()
    if not rows:
        assert pattern is None
        return
    expected = np.zeros((len(rows), max(len(r) for r in rows)), bool)
    for y, row in enumerate(rows):
        expected[y, :len(row)] = [ch != "." for ch in row]
    np.testing.assert_array_equal(pattern.cells, expected)
