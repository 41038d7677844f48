"""Units and numbers of reported values: parsing datasheet unit strings with ``pint``, comparing values
after unit normalisation, and the plausibility checks (ordering, dimension, sentinels).

Datasheet unit strings are messier than pint's grammar ("µA", "KΩ", "V/µs", "ppm/°C", "Vrms", "mcd"), so
``parse_unit`` rewrites the known spellings first and returns ``None`` rather than guessing when pint still
cannot read the result: an unreadable unit makes a check *not evaluable*, never a flag.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pint

from app.units import unit_registry

# Two numbers agree when their relative difference is at most this (after conversion to one unit).
DEFAULT_REL_TOL = 0.01

# Numbers that programs and forms use as "no value"; a reported value equal to one of them is suspicious.
SENTINEL_MAGNITUDES = frozenset({9999.0, 99999.0, 999999.0, 9999999.0, 12345.0, 123456.0, 1234567.0,
                                 65535.0, 32767.0, 2147483647.0, 4294967295.0})
SENTINEL_ABS_LIMIT = 1e15

# Logarithmic units: compared by magnitude only, never converted (pint treats them as non-multiplicative).
_LOG_UNITS = re.compile(r"^(db|dbm|dbv|dbu|dbc|dbi|dba|dbfs|db\(a\))$", re.IGNORECASE)

# Spellings rewritten before pint parses a unit string. Order matters: longer forms first.
_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[µμ]"), "u"),
    (re.compile(r"[ΩΩ]"), "ohm"),
    (re.compile(r"ohms\b", re.IGNORECASE), "ohm"),
    (re.compile(r"ohm", re.IGNORECASE), "ohm"),
    # The degree sign as text layers print it: °, the masculine ordinal º and the ring above ˚ (U+02DA).
    (re.compile(r"℃|[°º˚]\s*C\b|\bdeg\s*C\b", re.IGNORECASE), "degC"),
    (re.compile(r"℉|[°º˚]\s*F\b"), "degF"),
    (re.compile(r"[°º˚]"), "degree"),
    (re.compile(r"%"), "percent"),
    (re.compile(r"‰"), "permille"),
    (re.compile(r"²"), "**2"),
    (re.compile(r"³"), "**3"),
    (re.compile(r"(?<=[A-Za-z])[.·](?=[A-Za-z])"), "*"),
    (re.compile(r"\bmcd\b"), "millicandela"),
    # Newton-metres as printed ("Nm", "mNm", "Ncm"): pint reads "Nm" as a "number" times a metre.
    (re.compile(r"N(?=c?m\b)"), "N*"),
    (re.compile(r"\bfps\b"), "hertz"),  # frames per second, not feet
    (re.compile(r"\bcd\b"), "candela"),
    # What was measured ("mVpp", "Vrms", "PaRMS", "Wrms"): the quantity is still in the unit before it.
    (re.compile(r"(?<=[VAWa])\s*(rms|RMS|Rms|pp|PP|p-p|pk|peak|dc|DC|ac|AC)\b"), ""),
    (re.compile(r"\bsps\b", re.IGNORECASE), "sample/second"),
    (re.compile(r"(?<=[kKMG])sps\b", re.IGNORECASE), "sample/second"),
)


def _clean(unit: str) -> str:
    text = unit.strip().strip(".,;:()[]")
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text.strip()


@lru_cache(maxsize=2048)
def parse_unit(unit: str | None) -> pint.Unit | None:
    """A pint unit for a datasheet unit string, or ``None`` when it cannot be read with confidence."""
    if unit is None or not unit.strip():
        return None
    text = _clean(unit)
    if not text or _LOG_UNITS.match(text):
        return None
    ureg = unit_registry()
    candidates = [text]
    # "KΩ", "KHz", "Kbps": a capital K used as the kilo prefix.
    if len(text) > 1 and text[0] == "K" and text[1].isalpha():
        candidates.append("k" + text[1:])
    for candidate in candidates:
        try:
            parsed = ureg.parse_units(candidate)
            # Resolved now, not at the caller's first use: a logarithmic unit inside a compound ("dB/V") parses,
            # then fails on its dimensionality.
            parsed.dimensionality  # noqa: B018
        except Exception:  # noqa: BLE001 - pint raises several unrelated error types for unknown text
            continue
        return parsed
    return None


def is_log_unit(unit: str | None) -> bool:
    return bool(unit) and bool(_LOG_UNITS.match(_clean(unit or "")))


def same_unit_text(a: str | None, b: str | None) -> bool:
    return _clean(a or "").casefold() == _clean(b or "").casefold()


def convert(value: float, from_unit: str | None, to_unit: str | None) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; ``None`` when not convertible."""
    if same_unit_text(from_unit, to_unit):
        return value
    source, target = parse_unit(from_unit), parse_unit(to_unit)
    if source is None or target is None:
        return None
    ureg = unit_registry()
    try:
        return float(ureg.Quantity(value, source).to(target).magnitude)
    except Exception:  # noqa: BLE001 - dimensionality or offset errors both mean "not convertible"
        return None


def compatible(unit: str | None, requested: str | None) -> bool | None:
    """Whether two unit strings measure the same dimension; ``None`` when either cannot be read."""
    if same_unit_text(unit, requested):
        return True
    if is_log_unit(unit) or is_log_unit(requested):
        # dB against dB variants is fine; dB against a linear unit cannot be told apart from a ratio.
        return None
    a, b = parse_unit(unit), parse_unit(requested)
    if a is None or b is None:
        return None
    return a.dimensionality == b.dimensionality


def close(a: float, b: float, rel_tol: float = DEFAULT_REL_TOL, abs_tol: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)


FIELDS = ("min", "typical", "max")


def numbers_of(value: dict[str, Any]) -> dict[str, float]:
    """The numeric fields a value states (``typ`` accepted as ``typical``)."""
    out: dict[str, float] = {}
    for field in FIELDS:
        raw = value.get(field, value.get("typ") if field == "typical" else None)
        if raw is None:
            continue
        try:
            out[field] = float(raw)
        except (TypeError, ValueError):
            continue
    return out


@dataclass
class Issue:
    """One plausibility problem of one value."""

    check: str  # ordering | unit_dimension | sentinel
    value_index: int
    message: str
    detail: dict[str, Any]


def magnitude_ordered(numbers: dict[str, float]) -> bool:
    """Whether negative limits are ordered by magnitude (min -50, typ -150, max -300 µA): datasheets print a
    sink current or a negative ratio that way, smallest magnitude under Min."""
    values = list(numbers.values())
    if len(values) < 2 or any(v > 0 for v in values) or not any(v < 0 for v in values):
        return False
    ordered = [abs(numbers[f]) for f in FIELDS if f in numbers]
    return all(a <= b for a, b in zip(ordered, ordered[1:], strict=False))


def check_ordering(index: int, value: dict[str, Any]) -> list[Issue]:
    nums = numbers_of(value)
    issues: list[Issue] = []
    if magnitude_ordered(nums):
        return issues
    pairs = (("min", "typical"), ("typical", "max"), ("min", "max"))
    for low, high in pairs:
        if low in nums and high in nums and nums[low] > nums[high] and not close(nums[low], nums[high], 1e-9):
            issues.append(Issue("ordering", index, f"{low} {nums[low]:g} is greater than {high} {nums[high]:g}",
                                {"low": low, "high": high, "values": nums}))
    return issues


def _degree_sign_lost(unit: str, requested_unit: str) -> bool:
    """A requested ``C`` or ``F`` beside an answer in a temperature unit: a temperature whose degree sign was lost
    in the request (coulombs and farads are never the answer's alternative to degrees)."""
    if requested_unit.strip() not in ("C", "F"):
        return False
    parsed = parse_unit(unit)
    return parsed is not None and parsed.dimensionality == parse_unit("degC").dimensionality


def check_dimension(index: int, value: dict[str, Any], requested_unit: str | None) -> list[Issue]:
    unit = value.get("unit")
    if not requested_unit or not unit:
        return []
    if compatible(unit, requested_unit) is False and not _degree_sign_lost(unit, requested_unit):
        return [Issue("unit_dimension", index,
                      f"unit {unit!r} does not measure the same quantity as the requested {requested_unit!r}",
                      {"unit": unit, "requested_unit": requested_unit})]
    return []


def is_sentinel(number: float) -> bool:
    if not math.isfinite(number):
        return True
    magnitude = abs(number)
    return magnitude >= SENTINEL_ABS_LIMIT or magnitude in SENTINEL_MAGNITUDES


def check_sentinels(index: int, value: dict[str, Any]) -> list[Issue]:
    return [Issue("sentinel", index, f"{field} {number:g} looks like a placeholder, not a measured value",
                  {"field": field, "number": number})
            for field, number in numbers_of(value).items() if is_sentinel(number)]


def check_value(index: int, value: dict[str, Any], requested_unit: str | None) -> list[Issue]:
    return [*check_ordering(index, value), *check_dimension(index, value, requested_unit),
            *check_sentinels(index, value)]


def values_agree(a: dict[str, Any], b: dict[str, Any], rel_tol: float = DEFAULT_REL_TOL) -> bool | None:
    """Whether two values agree on every numeric field both state, after converting ``b`` to ``a``'s unit.

    ``None`` when they share no field (nothing to compare). A printed ``±X`` may come back as max X from one
    reader and min -X / max X from another; both state ``max`` so they are compared on it.
    """
    na, nb = numbers_of(a), numbers_of(b)
    shared = [field for field in FIELDS if field in na and field in nb]
    if not shared:
        return None
    unit_a, unit_b = a.get("unit"), b.get("unit")
    for field in shared:
        x, y = na[field], nb[field]
        converted = y if (not unit_a or not unit_b) else convert(y, unit_b, unit_a)
        if converted is None:
            if compatible(unit_a, unit_b) is False:
                return False
            converted = y  # unreadable units: compare as printed
        if not close(x, converted, rel_tol):
            return False
    return True
