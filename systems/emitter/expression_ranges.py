"""The range of values an expression field may give (``size``, ``speed``, ``lifetime`` as WGSL
expressions, systems/emitter/expressions.py): the same as the number it replaces.

Two checks keep an expression within the field's range:

- a constant expression (number literals, ``+ - * /``, parentheses and the math built-ins below,
  no name a particle gives) is evaluated when the scene loads, and refused like the number it
  stands for (``lifetime = "-1.0"`` reads as ``lifetime = -1.0`` does);
- every expression's value is clamped on the GPU to the field's range each time it is
  evaluated, and a NaN becomes the range's lower end (``bounded_return``), so a value that
  depends on the particle can never leave the range either.

No GPU calls here.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from emberfx.model.numbers import F32_MAX, F32_TINY, number_problem


@dataclass(frozen=True)
class ValueRange:
    """What a field's values may be: ``low`` to ``high`` on the GPU; a constant expression
    must be ``constant`` (a comparison with ``low``), as the number it replaces must."""
    low: float
    high: float
    constant: str   # ">= 0" or "> 0"


EXPRESSION_RANGES = {
    # a sprite edge > 0 (the smallest positive 32-bit float the loader accepts)
    "size": ValueRange(F32_TINY, F32_MAX, "> 0"),
    # a speed, m/s, >= 0 (the birth direction says where)
    "speed": ValueRange(0.0, F32_MAX, ">= 0"),
    # seconds >= 0 for a particle; a single number (a constant) must be > 0, as for a number
    "lifetime": ValueRange(0.0, F32_MAX, "> 0"),
}
"""the value range of each expression field (EXPRESSION_FIELDS)"""

_FUNCTIONS: dict[str, Callable[..., float]] = {
    "abs": abs, "min": min, "max": max, "sqrt": math.sqrt, "exp": math.exp,
    "exp2": lambda x: 2.0 ** x, "log": math.log, "log2": math.log2, "pow": math.pow,
    "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "floor": lambda x: float(math.floor(x)), "ceil": lambda x: float(math.ceil(x)),
    "clamp": lambda x, lo, hi: min(max(x, lo), hi), "f32": float,
}
"""the WGSL built-ins a constant expression may call, as Python computes them"""

_OPERATORS: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv}
_F_SUFFIX = re.compile(r"(?<![\w.])((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[fh](?![\w.])")


class _NotConstant(Exception):
    """The expression reads something a particle gives, or uses what Python would compute
    differently from WGSL: the GPU's clamp bounds it."""


def constant_value(text: str) -> float | None:
    """The value of a constant expression (see the module's docstring), or None when it is not
    one or cannot be computed here (the compile and the GPU's clamp take it then)."""
    try:
        tree = ast.parse(_F_SUFFIX.sub(r"\1", text.strip()), mode="eval")
        value = _evaluate(tree.body)
    except (_NotConstant, SyntaxError, ValueError, ArithmeticError, RecursionError,
            MemoryError, TypeError):
        return None
    return float(value)


_ABSTRACT_INT = 2**63
"""WGSL's abstract integers are 64-bit: a constant beyond overflows at shader creation (and
Python's unbounded integers would only grow slower to compute)"""


def _evaluate(node: ast.AST) -> float | int:
    value = _evaluate_node(node)
    if type(value) is int and not -_ABSTRACT_INT <= value < _ABSTRACT_INT:
        raise _NotConstant
    return value


def _evaluate_node(node: ast.AST) -> float | int:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value   # type: ignore[return-value]  # int or float, as checked
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Div) and type(left) is int and type(right) is int:
            # WGSL's integer division truncates towards zero
            if right == 0:
                raise _NotConstant
            quotient = abs(left) // abs(right)
            return quotient if (left < 0) == (right < 0) else -quotient
        return _OPERATORS[type(node.op)](left, right)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS and not node.keywords):
        return _FUNCTIONS[node.func.id](*(_evaluate(arg) for arg in node.args))
    raise _NotConstant


def constant_problem(field: str, text: str) -> str | None:
    """Why a constant expression in ``field`` is out of the field's range, as "expected ...,
    found ..." (None: it is within it, or is not a constant expression)."""
    value = constant_value(text)
    if value is None:
        return None
    problem = number_problem(value)
    bounds = EXPRESSION_RANGES[field]
    if problem is None and not (value > bounds.low if bounds.constant == "> 0"
                                else value >= bounds.low):
        problem = f"expected a value {bounds.constant}"
    if problem is None:
        return None
    return (f"{problem} (a constant expression is checked as the number it replaces), found "
            f"'{text.strip()}' = {value:g}")


def _wgsl_float(value: float) -> str:
    """A float as a WGSL f32 literal that is exactly the value (repr round-trips a double, and
    each of the range's ends is a 32-bit float)."""
    return f"{value!r}f"


def bounded_return(field: str) -> tuple[str, str]:
    """The WGSL lines around an expression's text in its generated function: they return the
    value clamped to the field's range, a NaN (found from its bits, which no fast-math
    assumption removes) as the range's lower end."""
    bounds = EXPRESSION_RANGES[field]
    low, high = _wgsl_float(bounds.low), _wgsl_float(bounds.high)
    return ("    let value = f32(",
            f"    );\n"
            f"    let nan = (bitcast<u32>(value) & 0x7fffffffu) > 0x7f800000u;\n"
            f"    return select(clamp(value, {low}, {high}), {low}, nan);")
