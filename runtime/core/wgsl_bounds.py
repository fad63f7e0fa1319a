"""Bounds on user WGSL (an emitter's modifier files and expression fields), checked on the text
before anything compiles it, at scene validation as at run time.

The compiler a WGSL text goes through (naga, then the driver's) recurses on nesting and keeps
every fixed-size array of an invocation whole: past a few thousand levels it overflows the stack
and the process dies (SIGSEGV), and large private or function arrays take minutes to compile or
gigabytes to hold. Measured through wgpu 0.32 on lavapipe, on an 8 MiB main-thread stack:
2,000 nested parentheses compile and 3,000 crash; a sum of 10,000 terms compiles and one of
15,000 crashes; 2,000 nested ``array<...>`` types compile and 5,000 crash; a private or
function array of 4,096 f32 compiles in 1.4 s and one of 16,384 in 32 s. On an NVIDIA H100
through Vulkan, an update modifier with a function array of 256 vec4f (4 KiB) compiles and runs,
and one of 1,024 vec4f (16 KiB) loses the device when its pipeline is created. The bounds below
stay inside what compiles quickly on both:

- ``MAX_SOURCE_BYTES`` of text;
- ``MAX_NESTING`` levels of brackets ``( [ {``, template types (``array<vec4<f32>, 4>``) and
  prefix operators (``- - x``, ``!!b``), counted together;
- ``MAX_STATEMENT_TOKENS`` tokens in one statement (an expression field is one): the compiler
  recurses once per operator of a chain such as ``a + b + c ...``;
- ``MAX_ARRAY_BYTES`` of fixed-size arrays written in the text, all together: each invocation
  holds its own copy of a private or function array.

A light tokenizer reads the text: comments (nested block comments too) are skipped, and an
array's element count must be an integer literal or a ``const`` holding one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SOURCE_BYTES = 64 << 10
MAX_NESTING = 256
MAX_STATEMENT_TOKENS = 4096
MAX_ARRAY_BYTES = 4 << 10

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*)
  | (?P<block>/\*)
  | (?P<number>0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*(?:[pP][+-]?\d+)?[fhiu]?
              | \d+\.?\d*(?:[eE][+-]?\d+)?[fhiu]? | \.\d+(?:[eE][+-]?\d+)?[fh]?)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<punct>->|>>=|<<=|>>|<<|&&|\|\||\+\+|--|[-+*/%&|^<>=!]=|[-+*/%&|^<>=!~()\[\]{};,.:@])
  | (?P<other>.)
""", re.X | re.S)
_OPEN = {"(": ")", "[": "]", "{": "}"}
_PREFIX = {"-", "!", "~", "*", "&"}
# tokens after which '-', '*' and '&' are prefix operators rather than binary ones
_BEFORE_OPERAND = {"(", "[", "{", ",", ";", "=", "return", ":", "->"}
_TEMPLATED = re.compile(r"(array|atomic|ptr|vec[234]|mat[234]x[234]|texture_\w+|bitcast)\Z")
_SCALARS = {"f32": 4, "i32": 4, "u32": 4, "bool": 4, "f16": 2}
_VECTOR = re.compile(r"vec([234])([fihu])?\Z")
_MATRIX = re.compile(r"mat([234])x([234])([fh])?\Z")
_SUFFIX_SCALAR = {"f": "f32", "i": "i32", "u": "u32", "h": "f16"}


@dataclass(frozen=True)
class _Token:
    text: str
    kind: str
    line: int


class BoundError(ValueError):
    """WGSL beyond a bound: ``message`` reads "expected ..., found ...", ``line`` (1-based)
    is where in the text, when there is a place."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message, self.line = message, line

    def located(self) -> str:
        return self.message if self.line is None else f"{self.message} at line {self.line}"


def check_wgsl_bounds(text: str, known_sizes: dict[str, int] | None = None) -> None:
    """Raise BoundError when ``text`` exceeds one of the bounds the module states.
    ``known_sizes``: bytes of struct types the text uses but does not declare (the generated
    ParticleState), for array sizes."""
    size = len(text.encode("utf-8"))
    if size > MAX_SOURCE_BYTES:
        raise BoundError(f"expected at most {MAX_SOURCE_BYTES:,} bytes of WGSL, found {size:,}")
    tokens = _tokens(text)
    _check_nesting(tokens)
    _check_statements(tokens)
    _check_arrays(tokens, dict(known_sizes or {}))


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None   # (the last alternative matches any character)
        kind = m.lastgroup or "other"
        end = m.end()
        if kind == "block":   # block comments nest in WGSL
            depth, end = 1, m.end()
            while depth and end < len(text):
                if text.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif text.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                else:
                    end += 1
        elif kind not in ("space", "comment"):
            out.append(_Token(m.group(), kind, line))
        line += text.count("\n", pos, end)
        pos = end
    return out


def _check_nesting(tokens: list[_Token]) -> None:
    """Brackets, template lists and runs of prefix operators, weighted together: an opening
    bracket counts 1 plus the prefix operators just before it."""
    stack: list[tuple[str, int]] = []
    depth = run = deepest = line = 0
    previous = None
    for token in tokens:
        text = token.text
        templated = (text == "<" and previous is not None and previous.kind == "name"
                     and _TEMPLATED.match(previous.text) is not None)
        if text in _OPEN or templated:
            stack.append((text, 1 + run))
            depth += 1 + run
            run = 0
        elif text in (")", "]", "}"):
            while stack and stack[-1][0] == "<":   # an unclosed '<' was a comparison after all
                depth -= stack.pop()[1]
            if stack:
                depth -= stack.pop()[1]
            run = 0
        elif text in (">", ">>") and stack and stack[-1][0] == "<":
            for _ in range(len(text)):
                if stack and stack[-1][0] == "<":
                    depth -= stack.pop()[1]
        elif text in _PREFIX and (previous is None or previous.text in _BEFORE_OPERAND
                                  or previous.text in _PREFIX or (previous.kind == "punct"
                                  and previous.text not in (")", "]"))):
            run += 1
        else:
            run = 0
        if depth + run > deepest:
            deepest, line = depth + run, token.line
        previous = token
    if deepest > MAX_NESTING:
        raise BoundError(f"expected at most {MAX_NESTING} levels of nesting (brackets, template "
                         f"types and prefix operators together), found {deepest:,}", line)


def _check_statements(tokens: list[_Token]) -> None:
    count = longest = first = line = 0
    for token in tokens:
        if token.text in (";", "{", "}"):
            count = 0
            continue
        if count == 0:
            first = token.line
        count += 1
        if count > longest:
            longest, line = count, first
    if longest > MAX_STATEMENT_TOKENS:
        raise BoundError(f"expected at most {MAX_STATEMENT_TOKENS:,} tokens (operators, names "
                         f"and numbers) in one statement or expression, found {longest:,} in "
                         f"the one starting", line)


def _check_arrays(tokens: list[_Token], sizes: dict[str, int]) -> None:
    """Every outermost fixed-size array written outside struct declarations counts its bytes,
    and every use of a struct that holds arrays counts those: all together within
    MAX_ARRAY_BYTES (over-counting a type written twice errs on the safe side)."""
    split: list[_Token] = []   # '>>' closes two template lists here (no shifts in types)
    for token in tokens:
        split += [_Token(">", "punct", token.line)] * 2 if token.text == ">>" else [token]
    tokens = split
    constants = _integer_constants(tokens)
    reader = _TypeReader(tokens, constants, sizes)
    struct_arrays = reader.read_structs()   # struct name -> bytes of the arrays it holds
    total, i = 0, 0
    while i < len(tokens):
        token = tokens[i]
        if token.text == "struct" and i in reader.struct_spans:
            i = reader.struct_spans[i]
            continue
        if token.text == "array" and i + 1 < len(tokens) and tokens[i + 1].text == "<":
            nbytes, end = reader.type_at(i)
            total += nbytes
            _check_total(total, tokens[i:end], token.line)
            i = end
            continue
        if token.kind == "name" and struct_arrays.get(token.text):
            total += struct_arrays[token.text]
            _check_total(total, [token], token.line)
        i += 1


def _check_total(total: int, written: list[_Token], line: int) -> None:
    if total > MAX_ARRAY_BYTES:
        shown = "".join(t.text + (" " if t.text == "," else "") for t in written[:16])
        raise BoundError(f"expected at most {MAX_ARRAY_BYTES:,} bytes of fixed-size arrays "
                         f"(private, function and constant ones together: each invocation "
                         f"holds its own), found `{shown}{' ...' if len(written) > 16 else ''}`"
                         f" bringing them to {total:,} bytes", line)


def _integer_constants(tokens: list[_Token]) -> dict[str, int]:
    """``const NAME[: type] = <integer literal>;`` anywhere in the text."""
    found: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token.text != "const" or i + 3 >= len(tokens) or tokens[i + 1].kind != "name":
            continue
        j = i + 2
        if tokens[j].text == ":":
            j += 2
        if j + 2 < len(tokens) and tokens[j].text == "=" and tokens[j + 2].text == ";":
            value = _integer(tokens[j + 1].text)
            if value is not None:
                found[tokens[i + 1].text] = value
    return found


def _round_up(n: int, align: int) -> int:
    return -(-n // align) * align


def _integer(text: str) -> int | None:
    digits = text.rstrip("iu")
    try:
        return int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)
    except ValueError:
        return None


class _TypeReader:
    """Reads type expressions from the token list and gives their bytes and alignment as WGSL
    lays them out (vec3 aligned on 16, array strides and structs rounded up to the alignment);
    a name it does not know counts as 4 bytes."""

    def __init__(self, tokens: list[_Token], constants: dict[str, int], sizes: dict[str, int]):
        self.tokens, self.constants = tokens, constants
        self.layouts: dict[str, tuple[int, int]] = {n: (b, min(b, 16)) for n, b in sizes.items()}
        self.struct_spans: dict[int, int] = {}   # index of `struct` -> index after its `}`

    def read_structs(self) -> dict[str, int]:
        """Each declared struct's layout (and each alias's); returns struct name -> bytes of
        the arrays it holds."""
        holds: dict[str, int] = {}
        tokens = self.tokens
        for i, token in enumerate(tokens):
            if token.text == "alias" and i + 3 < len(tokens) and tokens[i + 2].text == "=":
                size, align, _ = self._layout(i + 3)
                self.layouts[tokens[i + 1].text] = (size, align)
            if (token.text != "struct" or i + 2 >= len(tokens) or tokens[i + 2].text != "{"):
                continue
            name, j, offset, widest, arrays = tokens[i + 1].text, i + 3, 0, 4, 0
            while j < len(tokens) and tokens[j].text != "}":
                if tokens[j].text == ":":
                    size, align, end = self._layout(j + 1)
                    offset = _round_up(offset, align) + size
                    widest = max(widest, align)
                    if any(t.text == "array" or holds.get(t.text) for t in tokens[j + 1:end]):
                        arrays += size
                    j = end
                    continue
                j += 1
            self.layouts[name] = (_round_up(offset, widest), widest)
            holds[name] = arrays
            self.struct_spans[i] = j + 1
        return holds

    def type_at(self, i: int) -> tuple[int, int]:
        """(bytes, index after the type) of the type starting at token ``i``."""
        size, _, end = self._layout(i)
        return size, end

    def _layout(self, i: int) -> tuple[int, int, int]:
        """(bytes, alignment, index after the type) of the type starting at token ``i``."""
        tokens = self.tokens
        if i >= len(tokens):
            return 0, 4, i
        name = tokens[i].text
        templated = i + 1 < len(tokens) and tokens[i + 1].text == "<"
        if name == "array" and templated:
            size, align, j = self._layout(i + 2)
            if j < len(tokens) and tokens[j].text == ",":
                count, j = self._count(j + 1, tokens[i].line)
            else:
                count = 0   # runtime-sized: storage only, no invocation holds it
            return _round_up(size, align) * count, align, self._close(j)
        scalar, j = 4, i + 1
        vector, matrix = _VECTOR.match(name), _MATRIX.match(name)
        if templated and _TEMPLATED.match(name):
            scalar, _, j = self._layout(i + 2)
            while j < len(tokens) and tokens[j].text != ">":
                j += 1
            j = self._close(j)
        elif (vector and vector.group(2)) or (matrix and matrix.group(3)):
            suffix = vector.group(2) if vector else matrix.group(3)   # type: ignore[union-attr]
            scalar = _SCALARS[_SUFFIX_SCALAR[suffix]]
        elif not vector and not matrix:
            if name in _SCALARS:
                return _SCALARS[name], _SCALARS[name], j
            size, align = self.layouts.get(name, (4, 4))
            return size, align, j
        if vector:
            n = int(vector.group(1))
            return n * scalar, (2 if n == 2 else 4) * scalar, j
        if matrix:
            columns, rows = int(matrix.group(1)), int(matrix.group(2))
            align = (2 if rows == 2 else 4) * scalar
            return columns * _round_up(rows * scalar, align), align, j
        return scalar, scalar, j   # atomic<T>, ptr<...> and the like

    def _close(self, j: int) -> int:
        """The index after the '>' closing a template list at ``j``."""
        return j + 1 if j < len(self.tokens) and self.tokens[j].text == ">" else j

    def _count(self, j: int, line: int) -> tuple[int, int]:
        """(element count, index after it) of an array's size expression at ``j``."""
        tokens = self.tokens
        end = j
        while end < len(tokens) and tokens[end].text != ">":
            end += 1
        written = " ".join(t.text for t in tokens[j:end])
        value = None
        if end == j + 1:
            value = _integer(written)
            if value is None:
                value = self.constants.get(written)
        if value is None:
            raise BoundError(f"expected an integer literal, or a const holding one, as the "
                             f"element count of array<...>, found '{written}'", line)
        return value, end
