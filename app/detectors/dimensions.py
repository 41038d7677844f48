"""What the request says about units: the dimension a parameter must have, and answers in the requested unit.

* :func:`expected_dimension` infers the physical dimension of a parameter from its name and symbol when the
  request names no unit ("Standby current" → A, "Propagation delay" → s), from the word the name's head phrase
  ends on ("Pressure measurement time" → s, "Power-down supply current" → A). Names that qualify a quantity into a
  ratio or a density ("temperature coefficient", "voltage gain", "noise density", "accuracy") have no single
  dimension and give ``None``: nothing is inferred rather than something guessed.
* :func:`to_requested` converts a reported value to the requested unit with pint, keeping what was printed under
  ``printed``; a value that cannot be converted is left as reported (a rule flags it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.detectors import plausibility

# Qualifiers that turn a quantity into a ratio, a density, a tolerance or a count: no dimension is inferred.
_QUALIFIED = re.compile(
    r"coefficient|tempco|gain|rejection|density|drift|sensitivity|\bper\b|/|accuracy|tolerance|error"
    r"|resolution|linearity|noise|regulation|matching|mismatch|deviation|variation|offset\s+drift|percent|%"
    r"|ripple|hysteresis|efficiency|duty|factor|count|number|steps|cycles|endurance|retention|bits?\b|\bppm\b"
    r"|slew|stability|derating|swing\s+ratio|\bdb\b|\bratios?\b",
    re.IGNORECASE,
)

# (pattern on the parameter name, a unit of the dimension it implies, a readable name of the dimension).
# The first match wins, so specific names come before the general words they contain.
_DIMENSIONS: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), unit, name) for pattern, unit, name in (
        (r"thermal\s+(?:resistance|impedance)", "K/W", "thermal resistance"),
        (r"resistance|impedance|\bohmic\b", "ohm", "resistance"),
        (r"capacitance", "F", "capacitance"),
        (r"inductance", "H", "inductance"),
        (r"torque|\bmoment\b", "N*m", "torque"),
        (r"pressure", "Pa", "pressure"),
        (r"temperature", "K", "temperature"),
        (r"frequency|bandwidth|clock\s+rate|sampl\w*\s+rate|output\s+data\s+rate|\bodr\b", "Hz", "frequency"),
        (r"\btime\b|delay|period|duration|latency|setup|hold\s+time|width\s+of\s+pulse|pulse\s+width|timeout",
         "s", "time"),
        (r"\bpower\b(?!\s*-?\s*(?:supply|on|off|down|up|good|mode|rail|fail))|dissipation", "W", "power"),
        (r"current", "A", "current"),
        (r"voltage|\bvdd\b|\bvcc\b|\bvss\b|\bvref\b|threshold\s+level", "V", "voltage"),
        (r"energy", "J", "energy"),
        (r"\bmass\b|\bweight\b", "kg", "mass"),
        (r"thickness|length|\bwidth\b|height|diameter|distance|\bpitch\b", "m", "length"),
        # A bare "speed" may be a data rate, a frame rate or a velocity: only a turning one is a rotational speed.
        (r"(?:rotational|fan|motor|rotor|shaft|spindle)\s+speed|rotational\s+rate|\brpm\b", "Hz", "rotational speed"),
        (r"luminous\s+intensity", "cd", "luminous intensity"),
        (r"wavelength", "m", "wavelength"),
    )
)


# What follows these ends the parameter's own name: a condition, a variant, a package, a mode.
_QUALIFYING = re.compile(
    r"[,(;:\[]|\s(?:at|over|for|with|vs\.?|versus|in|on|under|during|after|before|from|to|when|while|if|including"
    r"|excluding|without|within|between|across|into|by)\s",  # lower case: "IN pin current" names a pin
)
# Words that may follow the quantity's own word without changing the quantity ("Input voltage range").
_NEUTRAL_TAIL = {"range", "rating", "ratings", "level", "levels", "limit", "limits", "value", "values", "consumption",
                 "capability", "swing", "drop", "max", "min", "typ", "maximum", "minimum", "typical", "nominal",
                 "rated", "peak", "continuous", "total"}
# A symbol beside the name ("tPLH", "VCE(sat)", "ICC"): a capital after the first letter, a digit or a bracket.
_SYMBOL = re.compile(r"^.[^\s]*[A-Z0-9(]")


def head_phrase(name: str) -> str:
    """The words of a parameter's name that say what it measures: the name up to its first qualifier (``at``,
    ``over``, ``for``, a comma or a bracket), without trailing symbols and words like *range* or *maximum*. In an
    English noun phrase the quantity is its last word: *Pressure measurement time* is a time, *Reference input
    voltage over temperature* a voltage, *VDD decoupling capacitor* no voltage."""
    head = _QUALIFYING.split(f" {name} ", maxsplit=1)[0]
    words = head.split()
    capitals = name == name.upper()
    while words and (words[-1].casefold() in _NEUTRAL_TAIL or (not capitals and _SYMBOL.match(words[-1]))):
        words.pop()
    return " ".join(words)


@dataclass(frozen=True)
class Dimension:
    name: str  # readable: "current"
    unit: str  # a unit of it: "A"


def expected_dimension(name: str | None, symbol: str | None = None) -> Dimension | None:
    """The dimension a parameter named ``name`` must have, or ``None`` when the name does not fix one: the
    quantity its head phrase ends on (``head_phrase``), else the one its symbol names."""
    text = " ".join(t for t in (name, symbol) if t)
    if not text.strip() or _QUALIFIED.search(text):
        return None
    head = head_phrase(name or "")
    for pattern, unit, readable in _DIMENSIONS:
        if any(m.end() == len(head) for m in pattern.finditer(head)):
            return Dimension(readable, unit)
    for pattern, unit, readable in _DIMENSIONS:
        if symbol and pattern.search(symbol):
            return Dimension(readable, unit)
    return None


_PER_TEMPERATURE = re.compile(r"\btempco\b|temperature\s+coefficient", re.IGNORECASE)


def per_temperature(name: str | None) -> bool:
    """Whether a parameter's name asks for a temperature coefficient: a change per degree."""
    return bool(name) and _PER_TEMPERATURE.search(name or "") is not None


def changes_per_temperature(unit: str | None) -> bool | None:
    """Whether ``unit`` can state a temperature coefficient: a share (``ppm``, ``%``) or a unit per temperature
    (``ppm/°C``, ``mV/K``); ``None`` when the unit cannot be read."""
    parsed = plausibility.parse_unit(unit)
    if parsed is None:
        return None
    return parsed.dimensionless or parsed.dimensionality.get("[temperature]", 0) < 0


def measures(unit: str | None, dimension: Dimension) -> bool | None:
    """Whether ``unit`` measures ``dimension``; ``None`` when the unit cannot be read."""
    if dimension.name == "rotational speed" and unit and re.search(r"rpm|r/min|rev", unit, re.IGNORECASE):
        return True
    if dimension.name == "temperature" and unit and re.search(r"°|℃|deg|\bK\b|\bC\b|\bF\b", unit):
        return True
    return plausibility.compatible(unit, dimension.unit)


def is_dimensional(unit: str | None) -> bool:
    """Whether ``unit`` names a physical dimension (not a ratio, count or percentage)."""
    parsed = plausibility.parse_unit(unit)
    return parsed is not None and not parsed.dimensionless


def to_requested(value: dict[str, Any], requested_unit: str | None) -> dict[str, Any]:
    """``value`` expressed in ``requested_unit`` with what was printed kept under ``printed``; unchanged when no
    unit was requested, the units already agree, or the conversion is not possible."""
    unit = value.get("unit")
    if not requested_unit or not unit or plausibility.same_unit_text(unit, requested_unit):
        return value
    numbers = plausibility.numbers_of(value)
    converted = {field: plausibility.convert(number, unit, requested_unit) for field, number in numbers.items()}
    if not numbers or any(v is None for v in converted.values()):
        return value
    printed = {field: value.get(field) for field in plausibility.FIELDS if value.get(field) is not None}
    return {**value, **{f: _tidy(v) for f, v in converted.items() if v is not None}, "unit": requested_unit,
            "printed": {**printed, "unit": unit}}


def _tidy(number: float) -> float:
    """Drop binary noise from a scaled decimal (0.06 hPa * 100 = 6.000000000000001 Pa)."""
    return float(f"{number:.12g}")


def printed(value: dict[str, Any]) -> dict[str, Any]:
    """The value as the document printed it (the stored value when it was not converted)."""
    original = value.get("printed")
    if not isinstance(original, dict):
        return value
    return {**value, **{f: original.get(f) for f in plausibility.FIELDS}, "unit": original.get("unit")}
