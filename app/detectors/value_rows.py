"""Which row a grounded value was read from, when the located text prints its number more than once.

A quote's text often prints a reported number on several rows: the same figure on two sub-rows of one parameter
(``IC = 2A ... 0.8`` over ``IC = 6A ... 0.8``; ``4.5V ... 19`` over ``6.0V ... 19``), or inside a condition as
well as in a value column (``VOUT = VIN - 100 mV`` beside a typical of 100 µA). The grounding keeps every cell
printing a reported number (``value_boxes``, in the text layer's order); the row the review reads is the one that
fits the request best, not the first one printed:

* it sets the conditions the request, its name and the answer set (``IC = 2A``, or a ``6.0V`` cell under a
  ``VCC`` column), and sets none of them to another value;
* the number stands as a value, not as an operand of a condition (followed by a unit of another quantity,
  ``100 mV`` for a current, or preceded by ``=``);
* then the row whose words share most of the requested name's words; then the text layer's order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.detectors import plausibility
from app.detectors.grounding import GroundingResult, Outcome
from app.detectors.page_text import numbers_in
from app.detectors.row_alignment import Row, visual_rows
from app.documents.index import DatasheetIndex, Word

# A setting ``SYMBOL = value unit`` ("VDD = 5 V", "IC = 2A", "TA=25°C").
CONDITION = re.compile(r"\b([A-Za-z][A-Za-z0-9_()]{0,12})\s*=\s*([+\-−]?\d+(?:[.,]\d+)?)\s*([A-Za-zµμΩ°%/]*)")
_NAME_WORD = re.compile(r"[a-z]{3,}")
_COMMON = {"the", "and", "for", "with", "at", "of", "max", "min", "typ", "maximum", "minimum", "typical"}
_DIGIT = re.compile(r"\d")


@dataclass
class ValueCell:
    row: Row
    word: Word
    box: list[float]


def row_at(index: DatasheetIndex, page_number: int, box: list[float]) -> Row | None:
    middle = (box[1] + box[3]) / 2
    rows = visual_rows(index, index.page(page_number))
    return min(rows, key=lambda r: abs(r.y - middle), default=None)


def _in_box(word: Word, box: list[float]) -> bool:
    return box[0] - 1 <= word.x0 and word.x1 <= box[2] + 1 and box[1] - 1 <= word.y0 and word.y1 <= box[3] + 1


def located_cells(index: DatasheetIndex, grounding: GroundingResult) -> list[ValueCell]:
    """Every cell printing a reported number in the text the value was located in, in the text layer's order;
    empty when the value was not located on a page of the intended datasheet."""
    boxes = grounding.detail.get("value_boxes") or []
    if grounding.outcome not in (Outcome.grounded, Outcome.grounded_other_page) or not boxes or not grounding.page:
        return []
    cells: list[ValueCell] = []
    for box in boxes:
        row = row_at(index, grounding.page, box)
        word = next((w for w in row.words if _in_box(w, box)), None) if row is not None else None
        if row is not None and word is not None:
            cells.append(ValueCell(row, word, box))
    return cells


def _number(text: str) -> float:
    return float(text.replace(",", ".").replace("−", "-"))


def wanted_settings(request: Mapping[str, Any], value: Mapping[str, Any] | None = None) -> list[re.Match[str]]:
    """The ``SYMBOL = value`` settings the request (its conditions and its name) and the answer's value set."""
    texts = [str(request.get("name") or ""), *(str(c) for c in request.get("conditions") or [])]
    own = (value or {}).get("conditions")
    texts += [own] if isinstance(own, str) else [str(c) for c in own or []]
    return [m for text in texts for m in CONDITION.finditer(text)]


def _same_quantity(wanted: re.Match[str], number: float, unit: str | None) -> bool:
    want_unit = wanted.group(3) or None
    converted = plausibility.convert(number, unit, want_unit) if unit and want_unit else number
    return converted is not None and plausibility.close(converted, _number(wanted.group(2)), 1e-6)


def row_sets(row: Row, setting: re.Match[str], left_of: float | None = None) -> bool | None:
    """Whether ``row`` sets ``setting`` (``IC = 2A``, or a ``6.0V`` cell of its own for ``VCC = 6.0V``, the
    symbol heading its column, left of ``left_of``, where the value's cell begins): ``False`` when it sets the
    symbol to another value, ``None`` when it says nothing of it."""
    found = next((m for m in CONDITION.finditer(row.text) if m.group(1).casefold() == setting.group(1).casefold()),
                 None)
    if found is not None:
        return _same_quantity(setting, _number(found.group(2)), found.group(3) or None)
    if setting.group(3) and any(_same_quantity(setting, v, printed[0].unit) for w in row.words
                                if (left_of is None or w.x1 <= left_of)
                                and len(printed := numbers_in(w.text)) == 1 and printed[0].unit
                                for v in printed[0].values):
        return True
    return None


def _condition_score(cell: ValueCell, wanted: list[re.Match[str]]) -> int:
    """+1 per wanted setting the cell's row sets, -1 per one it sets to another value."""
    return sum({True: 1, False: -1, None: 0}[row_sets(cell.row, setting, cell.word.x0)] for setting in wanted)


def _is_operand(row: Row, word: Word, unit: str | None) -> bool:
    """Whether the number in ``word`` belongs to a condition: ``=`` before it, or a unit of another quantity
    after it (``VIN - 100 mV`` on a row stating a current)."""
    position = row.words.index(word)
    before = row.words[position - 1].text if position > 0 else ""
    after = row.words[position + 1].text if position + 1 < len(row.words) else ""
    if before.endswith("="):
        return True
    printed = numbers_in(word.text)
    if not unit or not printed or printed[0].unit or _DIGIT.search(after) or plausibility.parse_unit(after) is None:
        return False
    return plausibility.compatible(after, unit) is False


def _name_overlap(row: Row, request: Mapping[str, Any]) -> int:
    wanted = {w for w in _NAME_WORD.findall(str(request.get("name") or "").casefold()) if w not in _COMMON}
    return len(wanted & set(_NAME_WORD.findall(row.text.casefold())))


def best_cell(cells: Iterable[ValueCell], request: Mapping[str, Any], value: Mapping[str, Any]) -> ValueCell | None:
    """The cell whose row fits the request best (see the module docstring); ties go to the text layer's order."""
    cells = list(cells)
    wanted = wanted_settings(request, value)
    unit = value.get("unit")
    ranked = [(-_condition_score(c, wanted), _is_operand(c.row, c.word, unit), -_name_overlap(c.row, request), i)
              for i, c in enumerate(cells)]
    return cells[min(ranked)[3]] if ranked else None


def value_cell(index: DatasheetIndex, grounding: GroundingResult, request: Mapping[str, Any] | None = None,
               value: Mapping[str, Any] | None = None) -> ValueCell | None:
    """The cell a grounded value was read from: the first one located, or with the request and the value, the
    one whose row fits them best."""
    cells = located_cells(index, grounding)
    if request is None or value is None or len(cells) < 2:
        return cells[0] if cells else None
    return best_cell(cells, request, value)
