"""The number a characteristics-table cell prints in a Min, Typ, Max or Value column.

Such a cell holds one number, sometimes with a comparison sign (``<1``, ``≤ 5``), a unit (``1.0 PaRMS``), a
symmetric limit (``±0.5``, ``+/-0.5``, ``+ / - 0.5``) or a nominal with its tolerance (``5 ± 0.2``); or it holds
one of the tokens that mean "not specified" (``–``, ``—``, ``-``, ``n/a``, blank), which is never a value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Dashes, "n/a" and friends: a cell that says the datasheet does not specify this limit.
_NOT_SPECIFIED = re.compile(r"^\s*(?:[-–—−_/.]*|n\s*/\s*a|na|nil|none|not\s+specified|tbd|tbc|open)\s*$",
                            re.IGNORECASE)
_SIGN = r"[+\-−–]"
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?![\d.,])|\d+(?:[.,]\d+)?|\.\d+)(?:\s*[eE][-+]?\d+)?"
_PLUS_MINUS = r"(?:±|\+\s*/\s*[-–−]|\+\s*[-–−](?=\s*\d))"
_COMPARISON = r"(?:<=|>=|≤|≥|<|>|＜|＞|~|≈)"
_CELL = re.compile(
    rf"^\s*(?P<cmp>{_COMPARISON})?\s*(?P<pm>{_PLUS_MINUS})?\s*(?P<sign>{_SIGN})?\s*(?P<number>{_DIGITS})"
    rf"(?:\s*{_PLUS_MINUS}\s*(?P<tolerance>{_DIGITS})(?P<percent>\s*%)?)?"
    rf"\s*(?P<unit>[^\d\s].{{0,30}})?\s*$")


@dataclass(frozen=True)
class CellNumber:
    """One number read from one cell.

    Invariants: ``value`` is the number as printed, sign applied (for ``±X`` it is ``X``, never negative);
    ``symmetric`` is True only for a ``±X`` cell; ``tolerance`` is set only for a ``N ± T`` cell (absolute, in the
    cell's unit; a tolerance printed in % is converted); ``unit_text`` is whatever text followed the number in the
    cell (a unit or a footnote mark, the caller decides); ``printed`` is the cell text with whitespace collapsed.
    """

    value: float
    printed: str
    symmetric: bool = False
    tolerance: float | None = None
    comparison: str | None = None
    unit_text: str | None = None


def not_specified(text: str) -> bool:
    """Whether a value cell means "not specified": blank, a dash of any kind, ``n/a``."""
    return bool(_NOT_SPECIFIED.match(text))


def to_float(sign: str | None, digits: str) -> float:
    """A printed number: decimal comma (``5,25``), thousands comma (``10,000``), leading dot (``.5``)."""
    digits = digits.replace(" ", "")
    thousands = re.fullmatch(r"\d{1,3}(?:,\d{3})+", digits)
    digits = digits.replace(",", "" if thousands else ".")
    value = float(digits)
    return -value if sign and sign in "-−–" else value


@lru_cache(maxsize=20_000)
def read_cell(text: str) -> CellNumber | None:
    """The number a value cell holds, or None (not specified, or not a single number)."""
    printed = " ".join(text.split())
    if not printed or not_specified(printed):
        return None
    match = _CELL.match(printed)
    if match is None:
        return None
    value = to_float(match.group("sign"), match.group("number"))
    symmetric = bool(match.group("pm"))
    if symmetric:
        value = abs(value)
    tolerance = None
    if match.group("tolerance"):
        tolerance = to_float(None, match.group("tolerance"))
        if match.group("percent"):
            tolerance = abs(value) * tolerance / 100
    unit = (match.group("unit") or "").strip() or None
    return CellNumber(value, printed, symmetric, tolerance, match.group("cmp"), unit)
