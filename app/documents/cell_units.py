"""Units printed in a table's unit column, compound ones included, normalised with pint where pint knows them.

A unit column holds more than SI symbols: ``PaRMS`` and ``mVpp`` are a pressure and a voltage with the way they
were measured glued on, ``ppm/°C`` and ``V/µs`` are ratios, and ``ADC counts/(W/m2)`` is a sensitivity that no
unit registry models. Every one of them must stay with the values of its row exactly as printed (in ASCII),
because a value reported without it, or with ``Pa`` instead of ``PaRMS``, says something else. pint supplies the
dimension and the factor to SI when it can parse the unit once the measurement suffix is set aside; when it
cannot, the unit is still kept, only without a dimension.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from app.units import one_unit_repeated, unit_registry

# Printed glyphs -> ASCII. Multi-character forms first.
_GLYPHS: tuple[tuple[str, str], ...] = (
    ("\u2126", "ohm"), ("\u03a9", "ohm"), ("\u00b5", "u"), ("\u03bc", "u"), ("\u2103", "degC"),
    ("°C", "degC"), ("ºC", "degC"), ("°F", "degF"), ("\u2109", "degF"), ("°", "deg"), ("²", "2"), ("³", "3"),
)
# How a quantity was measured, printed after its unit: "PaRMS", "mVpp", "VDC".
_MEASUREMENT_SUFFIX = re.compile(r"(?<=[A-Za-z])(RMS|rms|Rms|pp|p-p|PP|DC|AC|pk|peak)$")
# Units pint spells otherwise, or that it treats as offsets or logarithms no datasheet column means.
_PINT_SPELLING = {"%": "percent", "ohm": "ohm", "kohm": "kiloohm", "Mohm": "megaohm", "mohm": "milliohm"}
_NOT_PINT = frozenset({"dB", "dBm", "dBA", "dBV", "dBu", "dBFS", "LSB", "ppm", "rpm", "RPM"})
_MAX_UNIT_CHARS = 24


@dataclass(frozen=True)
class UnitCell:
    """A unit as a table prints it.

    Invariants: ``printed`` is the cell text with whitespace collapsed; ``canonical`` is its ASCII spelling
    (``µA`` -> ``uA``, ``°C`` -> ``degC``) and keeps any measurement suffix (``PaRMS``, ``mVpp``) and any compound
    (``ADC counts/(W/m2)``). ``dimension`` and ``factor`` (to SI base units) are both set, or both ``None`` when
    pint cannot model the unit; such a unit is still the unit of its row.
    """

    printed: str
    canonical: str
    dimension: str | None = None
    factor: float | None = None
    measured_as: str | None = None  # "RMS", "pp", "DC": how the quantity was measured, when the unit says

    @property
    def modelled(self) -> bool:
        return self.dimension is not None

    @property
    def recognised(self) -> bool:
        """Known to be a unit without a Unit header saying so: pint models it, or it is a datasheet unit pint
        leaves out (dB, LSB, ppm), or it carries a measurement suffix."""
        return self.modelled or self.measured_as is not None or self.canonical in _NOT_PINT


def ascii_spelling(text: str) -> str:
    """The ASCII spelling of a printed unit: glyphs replaced, spaces around ``/`` removed, others collapsed."""
    spelled = " ".join(text.split())
    for glyph, plain in _GLYPHS:
        spelled = spelled.replace(glyph, plain)
    spelled = re.sub(r"\s*/\s*", "/", spelled)
    return re.sub(r"(?i)\bohms?\b", "ohm", spelled)


def _pint_expression(canonical: str) -> str:
    text = _PINT_SPELLING.get(canonical, canonical)
    text = re.sub(r"^K(?=[A-Za-z])", "k", text)  # "KHz", "Kohm": datasheets often capitalise kilo
    text = text.replace("kohm", "kiloohm").replace("Mohm", "megaohm")
    if "/" in text:
        text = re.sub(r"deg([CF])\b", r"delta_deg\1", text)  # ppm/degC: a temperature interval
    return re.sub(r"(?<=[a-z])([23])(?![0-9A-Za-z])", r"**\1", text)  # "m2", "m3/h"


@lru_cache(maxsize=1024)
def _pint_dimension(canonical: str) -> tuple[str, float] | None:
    if not canonical or canonical in _NOT_PINT or canonical.casefold() in {u.casefold() for u in _NOT_PINT}:
        return None
    registry = unit_registry()
    try:
        quantity = registry.Quantity(1.0, registry.parse_units(_pint_expression(canonical))).to_base_units()
    except Exception:  # noqa: BLE001 - pint raises several unrelated types for names it does not know
        return None
    return str(quantity.dimensionality), float(quantity.magnitude)


def looks_like_unit(text: str) -> bool:
    """Whether a cell's text can be a unit at all: short, starts like a unit, no digit leading it."""
    compact = " ".join(text.split())
    return (0 < len(compact) <= _MAX_UNIT_CHARS and not compact[0].isdigit()
            and bool(re.match(r"[A-Za-zµμΩΩ°℃%‰(/]", compact)) and len(compact.split()) <= 3)


@lru_cache(maxsize=4096)
def parse_unit_cell(text: str) -> UnitCell | None:
    """The unit a unit-column cell prints, or None when the cell is not a unit (empty, a number, a sentence)."""
    if not looks_like_unit(text):
        return None
    printed = one_unit_repeated(" ".join(text.split()))
    canonical = ascii_spelling(printed)
    suffix = _MEASUREMENT_SUFFIX.search(canonical) if "/" not in canonical else None
    base = canonical[:suffix.start()] if suffix else canonical
    measured_as = suffix.group(1).replace("p-p", "pp").upper().replace("PP", "pp") if suffix else None
    modelled = _pint_dimension(base)
    if modelled is None and suffix is None and not re.fullmatch(r"[A-Za-z%][A-Za-z0-9%/()*.\- ]*", canonical):
        return None
    if modelled is None:
        return UnitCell(printed, canonical, measured_as=measured_as)
    dimension, factor = modelled
    return UnitCell(printed, canonical, dimension, factor, measured_as)
