"""Units the reader's own vocabulary lacks, recognised through the table model's pint-backed unit cells.

The reader knows the units of its ``units`` module by name and dimension. A unit column may print a unit it
has never met (``hPa``, ``lx``), a measurement suffix (``PaRMS``, ``mVpp``) or a compound no registry models
(``ADC counts/(W/m2)``); prose may follow a number with a pressure or an illuminance. These become reader units
here, spelled as printed (in ASCII) so the answer states the unit the datasheet states.
"""

from __future__ import annotations

import re

from app.documents.cell_units import UnitCell, parse_unit_cell
from app.units import Unit, parse_unit

# pint parses many short English words as units ("in", "at", "a", "day"): after a number in prose only a token
# spelled like a unit symbol (a capital letter in it: "hPa", "kPa", "Wb") or one of these is taken. Single
# letters ("10 K") are left to the reader's own vocabulary, which knows "K" after a resistance means kilo.
_LOWER_CASE_UNITS = frozenset({"bar", "mbar", "psi", "lux", "lx", "lm", "sr", "rad", "mrad", "dps", "mT", "uT",
                               "kg", "mg", "ug"})
_TOKEN_AFTER_NUMBER = re.compile(r"\s?([A-Za-zµμ][A-Za-z0-9µμ/²³]{0,9})(?![\w/])")


def reader_unit(cell: UnitCell | None) -> Unit | None:
    """The reader's unit for a unit cell: its own vocabulary first, else pint's dimension via the model. A
    measurement suffix and an unmodelled compound are kept as printed."""
    if cell is None:
        return None
    known = parse_unit(cell.printed) or parse_unit(cell.canonical)
    if known is not None and cell.measured_as is None:
        return known
    if known is not None:
        return Unit(cell.canonical, known.dimension, known.factor)
    return Unit(cell.canonical, cell.dimension or f"unit:{cell.canonical}", cell.factor or 1.0)


def modelled_unit(text: str) -> Unit | None:
    """A unit the reader's vocabulary lacks but pint models ("mV/°C", "V/degC"): known by its dimension."""
    cell = parse_unit_cell(text)
    if cell is None or cell.dimension is None:
        return None
    return reader_unit(cell)


def unit_after_number(text: str) -> tuple[Unit | None, str | None, int]:
    """A unit symbol pint knows printed right after a number in prose ("1200 hPa"): the unit, its text, and how
    many characters of ``text`` it takes (0 when there is none)."""
    match = _TOKEN_AFTER_NUMBER.match(text)
    if match is None:
        return None, None, 0
    token = match.group(1)
    if len(token) < 2 or not (any(c.isupper() for c in token) or token in _LOWER_CASE_UNITS):
        return None, None, 0
    cell = parse_unit_cell(token)
    if cell is None or not cell.modelled:
        return None, None, 0
    return reader_unit(cell), token, match.end()


def requested_unit(text: str) -> Unit | None:
    """The unit a request names, with the dimension the reader's readings of that quantity carry: its own
    vocabulary first, else pint's ("Pa", "lux", "K"), so a request in a unit the vocabulary lacks still says which
    quantity it wants. A temperature in kelvin is a temperature like one in degrees."""
    if text.strip() == "C":
        return parse_unit("degC")  # a request's bare "C" is degrees Celsius; nobody asks a datasheet for coulombs
    known = parse_unit(text)
    if known is not None or not (re.search(r"[A-Z]", text) or text.strip() in _LOWER_CASE_UNITS):
        return known  # pint reads "pcs" as parsecs: only what is spelled like a unit symbol is asked of it
    modelled = modelled_unit(text)
    if modelled is not None and modelled.dimension == "[temperature]":
        return Unit(modelled.canonical, "temperature", modelled.factor)
    return modelled
