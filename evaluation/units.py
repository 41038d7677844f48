"""Units and printed numbers for grading, with ``pint`` for conversions.

Deliberately independent of the reader's and the detectors' unit handling: a grader that shared the code it
grades would hide that code's mistakes.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

# Printed glyphs -> the ASCII spelling of the claim files. Longer forms first.
_GLYPHS: tuple[tuple[str, str], ...] = (
    ("\u2126", "ohm"), ("\u03a9", "ohm"), ("\u00b5", "u"), ("\u03bc", "u"), ("\u2103", "degC"),
    ("°C", "degC"), ("ºC", "degC"), ("°F", "degF"), ("\u2109", "degF"), ("°", "deg"),
)
# ASCII spelling -> pint expression, for the units pint spells differently.
_PINT_NAMES = {"%": "percent", "Kbps": "kbps", "taps": "count", "tap": "count", "steps": "count"}
# Logarithmic units: comparable only with themselves (pint would treat them as non-multiplicative).
_OPAQUE = {"db", "dbm", "dba", "db(a)", "dbv", "dbu"}

REL_TOL = 1e-6
ABS_TOL = 1e-12


def ascii_unit(unit: str | None) -> str:
    """The claim files' spelling: ``µA``→``uA``, ``kΩ``→``kohm``, ``°C``→``degC``, whitespace removed."""
    if not unit:
        return ""
    text = unit.strip()
    for glyph, ascii_form in _GLYPHS:
        text = text.replace(glyph, ascii_form)
    return re.sub(r"\s+", "", text)


@lru_cache(maxsize=1)
def _registry() -> Any:
    import pint

    registry = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    registry.define("count = [] = counts")
    # Spellings common on datasheets that pint does not know (plurals come for free).
    registry.define("megohm = 1e6 * ohm")
    registry.define("kilohm = 1e3 * ohm")
    registry.define("CFM = foot ** 3 / minute")
    return registry


def _pint_expression(unit: str) -> str:
    text = _PINT_NAMES.get(unit, unit)
    if "/" in text or "*" in text:
        # A temperature inside a compound unit is an interval (ppm/degC), not a point on the scale.
        text = re.sub(r"deg([CF])\b", r"delta_deg\1", text)
    if text.startswith("K") and len(text) > 1 and text[1].isalpha():
        text = "k" + text[1:]  # "KΩ", "KHz": datasheets often capitalise kilo
    # An exponent printed flat: "m3/h", "cm2" (but not the 2 of "mmH2O").
    return re.sub(r"(?<=[a-z])([23])(?![0-9A-Za-z])", r"**\1", text)


@lru_cache(maxsize=512)
def _pint_unit(unit: str) -> Any | None:
    if not unit or unit.casefold() in _OPAQUE:
        return None
    registry = _registry()
    spellings = [unit]
    if unit.isalpha() and len(unit) > 3:
        spellings.append(unit.lower())  # a unit written as a word, capitalised ("Megohms"); never "MW" vs "mW"
    for spelling in spellings:
        try:
            return registry.parse_units(_pint_expression(spelling))
        except Exception:  # pint raises several unrelated types for unparseable units
            continue
    return None


def convert(value: float, from_unit: str | None, to_unit: str | None) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; ``None`` when the units cannot be compared.

    Identical spellings (after :func:`ascii_unit`, ignoring case for unknown units) need no conversion; an
    absent unit on either side is taken as the other's, which the caller reports as an assumption.
    """
    source, target = ascii_unit(from_unit), ascii_unit(to_unit)
    if not source or not target or source == target:
        return value
    (source, measured), (target, wanted) = _measured_as(source), _measured_as(target)
    if measured and wanted and measured != wanted:
        return None  # an RMS figure is not a peak-to-peak one
    if source == target:
        return value
    source, target = _degree_sign_restored(source, target), _degree_sign_restored(target, source)
    source_unit, target_unit = _pint_unit(source), _pint_unit(target)
    if source_unit is None or target_unit is None:
        return value if source.casefold() == target.casefold() else None
    registry = _registry()
    try:
        return float(registry.Quantity(value, source_unit).to(target_unit).magnitude)
    except Exception:  # DimensionalityError, OffsetUnitCalculusError
        return None


# What a figure measures, printed after its unit ("mVpp", "uVrms", "PaRMS"); claim files often write the unit alone.
_MEASURED_AS = re.compile(r"(?<=[A-Za-z])(rms|pp|p-p|pk|peak)$", re.IGNORECASE)


def _measured_as(unit: str) -> tuple[str, str]:
    """(the unit, what it measures or "") for a unit with a measurement suffix after a unit of its own."""
    match = _MEASURED_AS.search(unit)
    if match is None or _pint_unit(unit[:match.start()]) is None:
        return unit, ""
    return unit[:match.start()], match.group(1).lower().replace("p-p", "pp")


def _degree_sign_restored(unit: str, other: str) -> str:
    """``C`` or ``F`` beside a temperature unit is a temperature whose degree sign was lost (``+/-0.5 C``), not
    coulombs or farads: a temperature is never compared with a charge."""
    if unit not in ("C", "F") or other in ("C", "F"):
        return unit
    other_unit = _pint_unit(other)
    if other_unit is None or other_unit.dimensionality != _registry().parse_units("kelvin").dimensionality:
        return unit
    return "deg" + unit


def same_number(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def canonical_number(value: float) -> str:
    """Shortest plain decimal: 0.02 → ``0.02``, 10000.0 → ``10000``, -0.6 → ``-0.6`` (never exponent form)."""
    try:
        text = format(Decimal(repr(float(value))).normalize(), "f")
    except InvalidOperation:
        return str(value)
    return "0" if text in ("-0", "") else text


# A sign counts only where it cannot be a range dash ("2.7-5.5").
_NUMBER = re.compile(r"(?:(?<![\w.])(?P<sign>\+/-|[+\-−±]))?(?P<digits>\d+(?:[.,]\d+)*|[.,]\d+)")


def printed_number(text: str) -> float:
    """A number as printed: decimal comma (``5,25``), thousands comma (``10,000``), leading dot (``.020``)."""
    digits = text.replace("−", "-")
    sign = -1.0 if digits.startswith("-") else 1.0
    digits = digits.lstrip("+-±/")
    if "," in digits and "." not in digits:
        groups = digits.split(",")
        thousands = len(groups) > 1 and all(len(g) == 3 for g in groups[1:]) and groups[0] != "0"
        digits = "".join(groups) if thousands else digits.replace(",", ".")
    else:
        digits = digits.replace(",", "")
    return sign * float(digits)


def number_tokens(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, canonical)`` of each printed number; a leading ``+`` or ``±`` is dropped, ``-`` kept."""
    tokens = []
    for match in _NUMBER.finditer(text):
        sign = match.group("sign") or ""
        value = printed_number(("-" if sign in ("-", "−") else "") + match.group("digits"))
        tokens.append((match.start(), match.end(), canonical_number(value)))
    return tokens
