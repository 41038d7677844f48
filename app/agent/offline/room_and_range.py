"""One parameter printed over two rows: its typical at 25 °C, then its limits over the temperature range.

Datasheets in the National Semiconductor / TI style print a characteristic as a pair of rows (or sub-rows):

    OFF Input Low              | VOUT = VIN - 500 mV              | TJ = 25°C           |     | 1.4 |     | V
    VOFF(IL) Threshold Voltage | VOUT = VIN - 500 mV, VOFF Falling | TJ = –40°C to 125°C | 1.1 |     |     | V

The first row gives the typical at room temperature and no limit, the second the limits that hold over the whole
range and no typical; the name cell, merged over both rows, is often split between them, and the conditions cell
is often printed on the first row only. Read alone, each row answers half of the parameter. Read as the datasheet
means them, they are one reading: typical 1.4 V, minimum 1.1 V. Both rows' candidates take the joined reading, so
they agree instead of competing.
"""

from __future__ import annotations

import re

from app.agent.offline.candidates import Candidate

# A room-temperature setting: "TJ = 25°C", "TA = +25 °C", "25°C".
_ROOM = re.compile(r"(?:\bT[AJC]?\s*=\s*)?(?<![\d.])\+?25\s*°?\s*[C℃](?![\w/])")
# The whole temperature range: "TJ = –40°C to 125°C", "−40°C ≤ TJ ≤ +125°C", "full range", "over temperature".
_RANGE = re.compile(
    r"(?:\bT[AJC]?\s*=\s*)?[-–−]\s*\d{2}\s*°?\s*[C℃]?\s*(?:to|≤|<|~|…|\.\.)\s*(?:T[AJC]?\s*(?:≤|<)\s*)?\+?\d{2,3}\s*°?\s*[C℃]"
    r"|\bfull\s+(?:temperature\s+)?range\b|\bover\s+(?:the\s+)?(?:operating\s+)?temperature(?:\s+range)?\b"
    r"|\bT[AJ]?\s*=\s*T?MIN\s*(?:to|≤)\s*T?MAX\b",
    re.IGNORECASE,
)


def _other_conditions(text: str) -> str:
    """The row's conditions with its temperature setting left out, compacted for comparison."""
    return re.sub(r"[\s,;]+", "", _RANGE.sub(" ", _ROOM.sub(" ", text))).casefold()


def _typical_at_room(cand: Candidate) -> bool:
    return (cand.typical is not None and cand.min is None and cand.max is None
            and bool(_ROOM.search(cand.line_text)) and not _RANGE.search(cand.line_text))


def _limits_over_range(cand: Candidate) -> bool:
    return (cand.typical is None and (cand.min is not None or cand.max is not None)
            and bool(_RANGE.search(cand.line_text)) and not _ROOM.search(cand.line_text))


def _same_unit(a: Candidate, b: Candidate) -> bool:
    return a.unit is None or b.unit is None or a.unit.canonical == b.unit.canonical


def join_room_and_full_range(limits: list[Candidate | None]) -> None:
    """Give each such pair of consecutive rows' candidates (``limits[k]``, one per row of a table, None where a
    row has none) the joined reading. The temperature is read from the row's cells, wherever its column is; a pair
    is joined only when the second row's other conditions repeat or extend the first's: rows under other test
    conditions are other readings."""
    for k in range(len(limits) - 1):
        room, full = limits[k], limits[k + 1]
        if room is None or full is None or room.ambiguity or full.ambiguity or not _same_unit(room, full):
            continue
        if not (_typical_at_room(room) and _limits_over_range(full)):
            continue
        before = limits[k - 1] if k else None
        if before is not None and _typical_at_room(before) and not before.ambiguity:
            continue  # two typicals at 25 °C over one set of limits: which one the limits belong to is not said
        others = _other_conditions(full.extra_conditions)
        if others and not others.startswith(_other_conditions(room.extra_conditions)):
            continue  # printed under other test conditions (none printed: a conditions cell merged over both)
        label = room.label if full.label in room.label else " ".join(dict.fromkeys((room.label, full.label)))
        unit, unit_text = (room.unit, room.unit_text) if room.unit is not None else (full.unit, full.unit_text)
        printed = [*room.printed, *full.printed]
        extra = full.extra_conditions or room.extra_conditions  # the second row's repeat or extend the first's
        line_text = " ".join(dict.fromkeys(p for p in (room.line_text, full.line_text) if p))
        for cand in (room, full):
            cand.min, cand.typical, cand.max = full.min, room.typical, full.max
            cand.label, cand.unit, cand.unit_text, cand.printed = label, unit, unit_text, list(printed)
            cand.value_text = " ".join(printed)
            cand.extra_conditions, cand.line_text = extra, line_text
