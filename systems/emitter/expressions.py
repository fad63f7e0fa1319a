"""Expression fields: a number field of an emitter given as a WGSL expression string, e.g.
``size = "0.02 + 0.01 * sin(6.0 * age)"``.

Each becomes a one-line function of the generated modifier code (systems/emitter/modifiers.py)
that sees ``age``, ``lifetime``, ``t`` (age / lifetime), ``position``, ``velocity``, ``time``, the
custom attributes by name, ``p`` (the ParticleState), ``ctx`` and ``rand(ctx)``. ``size`` is
evaluated per particle in the draw; ``speed`` and ``lifetime`` once, at birth. The shape is
checked when the scene loads; the compile, when the emitter is made.
"""

from __future__ import annotations

EXPRESSION_FIELDS = ("size", "speed", "lifetime")
"""fields that may hold a WGSL expression: size in the draw, speed and lifetime at birth"""


def expression_problem(text: str) -> str | None:
    """Why ``text`` cannot be an expression field, or None. The compile, which needs a device,
    finds the rest; this catches what would escape the one expression it is spliced into."""
    if not text.strip():
        return "expected a WGSL expression, found an empty string"
    for bad, what in ((";", "a ';'"), ("{", "a '{'"), ("}", "a '}'"), ("//", "a comment"),
                      ("/*", "a comment"), ("\n", "a line break")):
        if bad in text:
            return f"expected one WGSL expression, found {what} in '{text}'"
    depth = 0
    for ch in text:
        depth += ch in "(["
        depth -= ch in ")]"
        if depth < 0:
            break
    if depth != 0:
        return f"expected balanced brackets in the WGSL expression '{text}'"
    return None



def expressions(component) -> dict[str, str]:
    return {f: getattr(component, f) for f in EXPRESSION_FIELDS
            if isinstance(getattr(component, f), str)}
