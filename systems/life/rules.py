"""Life-like rules ("B3/S23", "b36s23", MCell "23/3") as birth and survival bit masks.

Bit n of a mask is set when a cell with n live neighbours (0..8) is born (birth) or stays alive
(survival). The step shader receives both masks as override constants.
"""

from __future__ import annotations

import re

_BS = re.compile(r"^\s*[bB]([0-8]*)\s*/?\s*[sS]([0-8]*)\s*$")
_SB = re.compile(r"^\s*[sS]([0-8]*)\s*/?\s*[bB]([0-8]*)\s*$")
_MCELL = re.compile(r"^\s*([0-8]*)\s*/\s*([0-8]*)\s*$")


def _mask(digits: str, text: str) -> int:
    mask = 0
    for ch in digits:
        bit = 1 << int(ch)
        if mask & bit:
            raise ValueError(f"expected each neighbour count once, found {ch!r} twice in {text!r}")
        mask |= bit
    return mask


def parse_rule(text: str) -> tuple[int, int]:
    """(birth mask, survival mask) of a Life-like rule string."""
    if not isinstance(text, str):
        raise ValueError(f"expected a rule string like 'B3/S23', found {text!r}")
    for pattern, order in ((_BS, "bs"), (_SB, "sb"), (_MCELL, "sb")):
        m = pattern.match(text)
        if m:
            first, second = m.group(1), m.group(2)
            birth, survival = (first, second) if order == "bs" else (second, first)
            return _mask(birth, text), _mask(survival, text)
    raise ValueError(f"expected a Life-like rule such as 'B3/S23', 'b36s23' or MCell '23/3' "
                     f"(counts 0-8), found {text!r}")


def rule_name(birth: int, survival: int) -> str:
    """The canonical "B.../S..." spelling of a rule."""
    digits = lambda mask: "".join(str(n) for n in range(9) if mask >> n & 1)  # noqa: E731
    return f"B{digits(birth)}/S{digits(survival)}"
