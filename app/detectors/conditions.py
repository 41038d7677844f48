"""Is the value from the row for the requested condition? ``condition_elsewhere``.

A request that sets a condition (``VSENSE = 10 mV``) asks for the figure the datasheet states under it. When the
document prints that condition on a table row that also states a figure of the answer's quantity, while the
row the value came from (with the lines a condition cell wraps onto, its table's heading and header row, and the
located text) does not name the condition's symbol at all, nor prints its value as a cell of its own (a ``6.0V``
under a ``VCC`` column), the value was read from another specification: an absolute rating, a feature line,
another test point. The row stating the condition must be one of the requested parameter's: its label, or that
of the named row its unnamed sub-row belongs to, names half the words of the parameter's name at least (a
condition set for another parameter, an input rise time at the same supply, says nothing of this one; nor does
a neighbouring parameter sharing one generic word, ``Rise time`` for ``Turn-off delay time``). A row that names the
symbol with another value is ``field_mismatch``'s; temperatures are left out (a table, or the whole document,
sets the ambient temperature once, far from any row).

A terse request gives its condition in its name, without a symbol (``Output current at 40 V differential``):
then the row the value came from, read as above, prints no figure of that quantity and number (``≤40 V``), while
another row of the parameter does, and that row does not print the reported figures too (the value may come from
it, quoted on a neighbouring row that prints the same figure).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from app.detectors import plausibility
from app.detectors.dimensions import head_phrase
from app.detectors.grounding import GroundingResult
from app.detectors.page_text import number_occurs, numbers_in
from app.detectors.row_alignment import Row, visual_rows
from app.detectors.rules import (
    Context,
    Rule,
    Verdict,
    answered_groundings,
    clean,
    flag,
    not_evaluable,
    submit_span_ids,
    unreadable_on_document,
)
from app.detectors.severity import Severity
from app.detectors.structural import CONDITION, header_for, table_heading
from app.detectors.value_rows import ValueCell, row_sets, value_cell
from app.documents.index import DatasheetIndex, PageInfo

# Lines of a wrapped condition cell lie within this many line heights of the value's row.
WRAP_LINES = 2.5
# A unit cell merged over several sub-rows stands within this many line heights of each of them.
MERGED_CELL_LINES = 1.6
_DIGIT = re.compile(r"\d")
# A parameter's sub-rows stand within this many line heights of the row printing its name, the lines of a
# wrapped name cell within the second.
BLOCK_LINES = 3.2
NAME_LINES = 1.6
_WORD = re.compile(r"[a-z]{3,}")
# Words that name no parameter of their own: limits, conditions' glue.
_COMMON_WORDS = {"the", "and", "for", "with", "max", "min", "typ", "maximum", "minimum", "typical", "nominal", "note"}
_TEMPERATURE_UNITS = {"°c", "c", "℃", "k", "°f", "degc"}
# A condition a terse request gives in its name without a symbol (``... at 40 V input-output differential``).
_NAME_SETTING = re.compile(r"(?:\bat|@)\s*([+\-−]?\d+(?:[.,]\d+)?)\s*([A-Za-zµμΩ]+)\b")
# A figure with its unit as a row prints it, a bound sign before it allowed (``≤40 V``, ``VIN = 12V``).
_FIGURE = re.compile(r"(?<![\w.,])([+\-−]?\d+(?:[.,]\d+)?)\s*([A-Za-zµμΩ]+)")


def _number(text: str) -> float:
    return float(text.replace(",", ".").replace("−", "-"))


def _same_setting(wanted: re.Match[str], found: re.Match[str]) -> bool:
    if wanted.group(1).casefold() != found.group(1).casefold():
        return False
    unit_w, unit_f = wanted.group(3) or None, found.group(3) or None
    have = _number(found.group(2))
    converted = plausibility.convert(have, unit_f, unit_w) if unit_w and unit_f else have
    return converted is not None and plausibility.close(converted, _number(wanted.group(2)), 1e-6)


def _unit_beside(index: DatasheetIndex, page: PageInfo, row: Row) -> str | None:
    """The unit printed right of a row's last word, on its line or on the nearest line within a merged unit
    cell's reach (a unit column centres one unit over the sub-rows it serves)."""
    right = row.words[-1].x1
    near = [w for w in page.words if w.x0 > right and abs((w.y0 + w.y1) / 2 - row.y) <= MERGED_CELL_LINES * row.height
            and not _DIGIT.search(w.text) and plausibility.parse_unit(w.text) is not None]
    return min(near, key=lambda w: abs((w.y0 + w.y1) / 2 - row.y)).text if near else None


def _states_quantity(index: DatasheetIndex, page: PageInfo, row: Row, setting: re.Match[str], unit: str) -> bool:
    """Whether a row prints, outside the condition itself, a figure in a unit of the answer's quantity."""
    rest = numbers_in(row.text[:setting.start()] + " " + row.text[setting.end():])
    if any(n.unit and plausibility.compatible(n.unit, unit) for n in rest):
        return True
    beside = _unit_beside(index, page, row) if any(n.unit is None for n in rest) else None
    return bool(beside) and bool(plausibility.compatible(beside, unit))


def _name_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _COMMON_WORDS}


def _label(row: Row, right: float) -> set[str]:
    return _name_words(" ".join(w.text for w in row.words if w.x1 <= right))


def _names(name: set[str], label: set[str]) -> bool:
    """Whether a row's label names the parameter: half of its name's words at least, one at least."""
    shared = len(name & label)
    return shared > 0 and 2 * shared >= len(name)


def _names_parameter(rows: list[Row], row: Row, setting: re.Match[str], name: set[str]) -> bool:
    """Whether a row stating a condition is one of the requested parameter's: its label (the words left of the
    condition, with a name cell's lines wrapped above or below it) names half the words of the parameter's name
    at least (``Rise time`` shares one word of four with ``Turn-off delay time``: another parameter), or, on
    an unnamed sub-row, the label of the nearest named row above or below does (a name printed once for a block
    of sub-rows). A condition stated for another parameter says nothing of this one."""
    start = len(row.text[:setting.start()].split())
    right = row.words[start].x0 if start < len(row.words) else row.words[-1].x1
    own = _label(row, right)
    if own:
        # A name cell wrapping onto a line of its own just above or below ("Gain bandwidth product" over "GBP").
        wrapped = [r for r in rows if r is not row and abs(r.y - row.y) <= NAME_LINES * row.height
                   and not _DIGIT.search(r.text)]
        return _names(name, own) or any(_names(name, _label(r, right)) for r in wrapped)
    labelled = [r for r in rows if r is not row and abs(r.y - row.y) <= BLOCK_LINES * row.height and _label(r, right)]
    above = max((r for r in labelled if r.y < row.y), key=lambda r: r.y, default=None)
    below = min((r for r in labelled if r.y > row.y), key=lambda r: r.y, default=None)
    return any(_names(name, _label(r, right)) for r in (above, below) if r is not None)


def _rows_setting(index: DatasheetIndex, wanted: re.Match[str], unit: str, name: set[str]) -> list[tuple[int, Row]]:
    named = wanted.re is _NAME_SETTING
    out = []
    for page in index.pages:
        rows = visual_rows(index, page)
        for row in rows:
            for found in (_FIGURE if named else CONDITION).finditer(row.text):
                same = _same_figure(wanted, found) if named else _same_setting(wanted, found)
                if same and _states_quantity(index, page, row, found, unit) \
                        and _names_parameter(rows, row, found, name):
                    out.append((page.number, row))
                    break
    return out


def _same_figure(wanted: re.Match[str], found: re.Match[str]) -> bool:
    """Whether a printed figure (``≤40 V``) is a name's setting (``at 40 V``): the same quantity and number."""
    unit_w, unit_f = wanted.group(2), found.group(2)
    converted = plausibility.convert(_number(found.group(1)), unit_f, unit_w) \
        if plausibility.compatible(unit_f, unit_w) else None
    return converted is not None and plausibility.close(converted, _number(wanted.group(1)), 1e-6)


def _prints_figure(text: str, wanted: re.Match[str]) -> bool:
    return any(_same_figure(wanted, found) for found in _FIGURE.finditer(text))


def _prints_reported(row: Row, value: dict[str, Any]) -> bool:
    numbers = plausibility.numbers_of(value)
    printed = numbers_in(CONDITION.sub(" ", row.text))
    return bool(numbers) and all(number_occurs(n, value.get("unit"), printed) for n in numbers.values())


def _name_settings(name: str, settings: list[re.Match[str]]) -> list[re.Match[str]]:
    """The settings a request's name gives without a symbol, of a quantity other than temperature, when its
    conditions set none of that quantity (they say it in full)."""
    out = []
    for wanted in _NAME_SETTING.finditer(name):
        unit = wanted.group(2)
        if plausibility.parse_unit(unit) is None or plausibility.compatible(unit, "degC") is not False:
            continue
        if not any(s.group(3) and plausibility.compatible(s.group(3), unit) for s in settings):
            out.append(wanted)
    return out


def _is_wrapped_cell(text: str) -> bool:
    """A neighbouring line that carries conditions and words only, no figure with a unit: a wrapped cell of the
    value's row, not another parameter's row."""
    rest = CONDITION.sub(" ", text)
    return not any(n.unit for n in numbers_in(rest))


def _names_symbol(text: str, symbol: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(symbol)}(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


def _context(index: DatasheetIndex, grounding: GroundingResult, request: Mapping[str, Any],
             value: dict[str, Any]) -> tuple[ValueCell, str] | None:
    cell = value_cell(index, grounding, request, value)
    if cell is None:
        return None
    row = cell.row
    header = header_for(index, grounding.page, row.y)
    heading = table_heading(index, header) if header else ""
    # A condition cell wraps onto the lines above and below its row ("POUT = 1 W, VS = 9 V" over "RL = 4 Ω").
    wrapped = [r.text for r in visual_rows(index, index.page(grounding.page))
               if r is not row and abs(r.y - row.y) <= WRAP_LINES * row.height and _is_wrapped_cell(r.text)]
    # A column of conditions is named once, in the header (``VCC`` over ``4.5V`` / ``6.0V``).
    return cell, " ".join((row.text, *wrapped, heading, header.text if header else "",
                          str(grounding.detail.get("located_text") or "")))


def _condition_elsewhere(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    settings = [m for c in ctx.request.get("conditions") or [] for m in CONDITION.finditer(str(c))
                if (m.group(3) or "").casefold() not in _TEMPERATURE_UNITS]
    asked = str(ctx.request.get("name") or "")
    settings += _name_settings(asked, settings)
    if not settings:
        return not_evaluable(rule, "the request sets no condition to a value")
    # The parameter's own words, not those of the condition its name carries ("... at 10 mV sense voltage").
    name = _name_words(head_phrase(asked) or asked)
    found: list[dict[str, Any]] = []
    for grounding, value in answered_groundings(ctx):
        unit = value.get("unit")
        read = _context(ctx.document, grounding, ctx.request, value)
        if read is None or not unit:
            continue
        cell, context = read
        row = cell.row
        for wanted in settings:
            if wanted.re is _NAME_SETTING:
                if _prints_figure(context, wanted):
                    continue
            elif _names_symbol(context, wanted.group(1)) or row_sets(row, wanted, cell.word.x0):
                continue
            elsewhere = [(page, other) for page, other in _rows_setting(ctx.document, wanted, unit, name)
                         if other is not row]
            # A name's setting carries no symbol: a row stating it that prints every reported figure as well may
            # be the one the value was read from, quoted on its neighbour (two rows printing one figure).
            if wanted.re is _NAME_SETTING and any(_prints_reported(other, value) for _, other in elsewhere):
                continue
            if elsewhere:
                page, other = elsewhere[0]
                requested = f"{wanted.group(1)} {wanted.group(2)}" if wanted.re is _NAME_SETTING else wanted.group(0)
                found.append({"value_index": grounding.value_index, "requested": requested,
                              "row_text": row.text, "condition_page": page, "condition_row": other.text})
    if not found:
        return clean(rule)
    first = found[0]
    return flag(rule, rule.finding(
        ctx, f"The request sets {first['requested']}, which the row the value came from (“{first['row_text']}”) "
             f"does not name, while page {first['condition_page']} states a figure under it "
             f"(“{first['condition_row']}”): the value belongs to another specification.",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


CONDITION_RULES: tuple[Rule, ...] = (
    Rule("condition_elsewhere", "5", Severity.warning,
         "The requested condition is stated on another row of the document, not on the value's own row.",
         _condition_elsewhere),
)
