"""A value read from a summary line while the characteristics table states more: ``partial_summary``.

Feature lists and descriptions repeat a specification in a sentence (``Maximum output power 0 dBm``); the
characteristics table states it in full (``Maximum Output Power 0 +4 dBm``: Typ 0, Max 4). An answer read from
the sentence that leaves out limits the table's row prints is a partial one. The table row is one whose
label holds every word of the requested name (qualifiers like *maximum* aside) and no word that makes it another
quantity (*drift*, *threshold*, *hysteresis*: ``app.detectors.quantity``), which prints the reported number in a
value column and, in another value column, a number the answer leaves out or states otherwise.

A sentence may also state another figure than the table altogether (a warning that names a supply voltage
beside a rating; a feature bullet for another condition): when no table row naming the parameter prints a
reported number, but one prints figures of the answer's quantity, the reading is flagged too.
"""

from __future__ import annotations

import re
from typing import Any

from app.detectors import plausibility
from app.detectors.dimensions import printed
from app.detectors.grounding import Outcome
from app.detectors.page_text import TextNumber
from app.detectors.quantity import QUALIFIERS, mentions
from app.detectors.row_alignment import Row, visual_rows
from app.detectors.rules import (
    Context,
    Rule,
    Verdict,
    clean,
    flag,
    submit_span_ids,
    unreadable_on_document,
)
from app.detectors.severity import Severity
from app.detectors.structural import (
    MAX_ROW_WORDS,
    Header,
    header_for,
    header_of,
    is_header,
    is_tabular,
    placed_cells,
    plain_number,
    reports,
    stands_apart,
)
from app.detectors.value_rows import row_at, value_cell
from app.documents.index import DatasheetIndex

_WORD = re.compile(r"[a-z]{3,}")
_DIGIT = re.compile(r"\d")
# A parameter's sub-rows stand within this many line heights of the row that names it.
SUB_ROW_LINES = 2.5
_DOT_LEADER = re.compile(r"\.{4,}|(?:\. ){4,}")
# A parenthesised part of a requested name qualifies it ("(absolute maximum)", "(typical)"); the table row
# names the parameter without it.
_QUALIFIER = re.compile(r"\([^)]*\)")
# Words of a request that say which limit is asked for, not which parameter.
_LIMIT_WORDS = {"maximum", "minimum", "typical", "max", "min", "typ", "nominal", "the", "and", "for", "with"}


def _name_words(name: str) -> set[str]:
    return {w for w in _WORD.findall(name.casefold()) if w not in _LIMIT_WORDS}


def another_quantity(label: str, name: str) -> bool:
    """Whether a row's label turns the requested quantity into another one (``Output voltage drift`` for
    ``Output voltage``): it holds every word of the request, but states something else."""
    return any(mentions(label, spellings) and not mentions(name, spellings) for spellings in QUALIFIERS.values())


def _is_summary(index: DatasheetIndex, page: int, box: list[float]) -> bool:
    """Whether the value stands on a line of prose, or on a row under no header naming Min / Typ / Max."""
    row = row_at(index, page, box)
    if row is None:
        return False
    if len(row.words) > MAX_ROW_WORDS and not stands_apart(row, box):
        return True
    header = header_for(index, page, row.y)
    return header is None or not set(header.centres) & {"min", "typical", "max"}


def _table_rows(index: DatasheetIndex) -> list[tuple[int, Row, Header]]:
    """Every row of the document under a header naming value columns, with that header (memoised)."""

    def build() -> list[tuple[int, Row, Header]]:
        out = []
        for page in index.pages:
            header: Header | None = None
            for row in visual_rows(index, page):
                if is_header(row):
                    centres = header_of(row)
                    header = Header(page.number, row.text, centres, row.y) if centres else None
                elif header is not None:
                    out.append((page.number, row, header))
        return out

    return index.memo("summary_table_rows", build)


def group_name(index: DatasheetIndex, page: int, row: Row, header: Header) -> str:
    """The name of the group an indented row belongs to (``Supply Current`` over ``Normal Mode`` and ``Shutdown
    Mode``): the nearest line above it in its table that starts left of it and prints no figure; empty when a less
    indented line printing figures (a parameter of its own) comes first."""
    if not row.words:
        return ""
    for line in reversed([r for r in visual_rows(index, index.page(page)) if header.y < r.y < row.y]):
        if line.words and line.words[0].x0 < row.words[0].x0 - 2:
            return "" if any(plain_number(w) is not None for w in line.words) else line.text
    return ""


def fuller_row(index: DatasheetIndex, name: str, value: dict[str, Any]) -> dict[str, Any] | None:
    """A table row stating the requested parameter with limits ``value`` leaves out, or ``None``."""
    wanted = _name_words(name)
    shown = plausibility.numbers_of(value)
    if not wanted or not shown:
        return None
    unit = value.get("unit")
    for page, row, header in _table_rows(index):
        own = set(_WORD.findall(row.text.casefold()))
        # An indented row naming part of the parameter (``Shutdown Mode``) is read with its group's name; one
        # naming none of it (a variant's sub-row) is not.
        named = own | set(_WORD.findall(group_name(index, page, row, header).casefold())) if wanted & own else own
        if not wanted <= named or another_quantity(_row_figures(row)[0], name):
            continue
        cells = placed_cells(row, header)
        numbers = {role: n for role in ("min", "typical", "max") for w in cells.get(role, [])[:1]
                   if (n := plain_number(w)) is not None}
        if not any(reports(x, unit, n, []) for n in numbers.values() for x in shown.values()):
            continue
        for role, number in numbers.items():
            # A printed ±X read as min -X / max X is read in full, whatever its column.
            if number.plus_minus and any(reports(shown[f], unit, number, []) for f in ("min", "max") if f in shown):
                continue
            # A limit the answer leaves out, or states otherwise than the table does.
            if role not in shown and not any(reports(x, unit, number, []) for x in shown.values()) \
                    or role in shown and not reports(shown[role], unit, number, []):
                return {"page": page, "row_text": row.text, "field": role, "cell": cells[role][0].text}
    return None


def _row_figures(row: Row) -> tuple[str, list[TextNumber]]:
    """A table row's label (its words before the first value cell) and the numbers of its value cells, each in
    its own unit or in the unit the row prints alone at its end (``Vid Differential input voltage 32 V``)."""
    label: list[str] = []
    cells: list[TextNumber] = []
    for word in row.words:
        number = plain_number(word)
        if number is not None:
            cells.append(number)
        elif not cells:
            label.append(word.text)
        elif cells[-1].unit is None and not _DIGIT.search(word.text) and plausibility.parse_unit(word.text):
            cells[-1] = TextNumber(cells[-1].values, cells[-1].plus_minus, word.text)  # "+/-100 Pa"
    last = row.words[-1].text
    trailing = last if not _DIGIT.search(last) and plausibility.parse_unit(last) is not None else None
    return " ".join(label), [n if n.unit or not trailing else TextNumber(n.values, n.plus_minus, trailing)
                             for n in cells]


def other_figures_row(index: DatasheetIndex, name: str, value: dict[str, Any]) -> dict[str, Any] | None:
    """A table row whose label names the requested parameter and whose value cells print figures of the answer's
    quantity, none of them a reported number, when no such row prints one: ``None`` otherwise."""
    wanted = _name_words(_QUALIFIER.sub(" ", name))
    shown = plausibility.numbers_of(value)
    unit = value.get("unit")
    if not wanted or not shown or not unit:
        return None
    def same_quantity(row: Row, inherited: str | None = None) -> list[TextNumber]:
        """The row's figures in a unit of the answer's quantity; bare ones in ``inherited`` (a sub-row under a
        unit cell merged with the named row's)."""
        figures = [n if n.unit or not inherited else TextNumber(n.values, n.plus_minus, inherited)
                   for n in _row_figures(row)[1]]
        return [n for n in figures if n.unit and plausibility.compatible(n.unit, unit)]

    contradicting = None
    for page in index.pages:
        rows = visual_rows(index, page)
        for row in rows:
            label = _row_figures(row)[0]
            if len(row.words) > MAX_ROW_WORDS or not is_tabular(row) \
                    or not wanted <= set(_WORD.findall(label.casefold())) or another_quantity(label, name):
                continue
            # The parameter's sub-rows (another mode or condition) print their figures on the lines next to
            # the row naming it, without the name.
            sub_rows = [r for r in rows if r is not row and abs(r.y - row.y) <= SUB_ROW_LINES * row.height
                        and not wanted & set(_WORD.findall(_row_figures(r)[0].casefold()))]
            figures = same_quantity(row)
            inherited = figures[0].unit if figures else None
            if any(reports(x, unit, n, []) for r in [row, *sub_rows] for n in same_quantity(r, inherited)
                   for x in shown.values()):
                return None  # the table agrees with the answer
            if figures and contradicting is None:
                contradicting = {"page": page.number, "row_text": row.text,
                                 "figures": [f"{n.values[0]:g} {n.unit}" for n in figures]}
    return contradicting


def _is_prose(index: DatasheetIndex, page: int, box: list[float]) -> bool:
    """Whether the value stands on a line of text, not on a table row (whose cells stand apart)."""
    row = row_at(index, page, box)
    if row is None or _DOT_LEADER.search(row.text):
        return False  # "Voltage on VDD ........ 7 V": a ratings list, a table row printed without columns
    return not stands_apart(row, box) and (len(row.words) > MAX_ROW_WORDS or not is_tabular(row))


def _partial_summary(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    found = []
    for grounding in ctx.groundings:
        boxes = grounding.detail.get("value_boxes") or []
        if grounding.outcome not in (Outcome.grounded, Outcome.grounded_other_page) or not boxes \
                or not grounding.page or grounding.value_index >= len(ctx.submission.values):
            continue
        name, value = str(ctx.request.get("name") or ""), printed(ctx.submission.values[grounding.value_index])
        cell = value_cell(ctx.document, grounding, ctx.request, value)
        if cell is None or not _is_summary(ctx.document, grounding.page, cell.box):
            continue
        row = fuller_row(ctx.document, name, value)
        if row:
            found.append({"value_index": grounding.value_index, **row})
            continue
        # A table row under a header without Min / Typ / Max (ratings, one row per variant) prints one figure
        # and is compared with the parameter's other rows by the row rules; a sentence has no row of its own.
        other = other_figures_row(ctx.document, name, value) \
            if _is_prose(ctx.document, grounding.page, cell.box) else None
        if other:
            found.append({"value_index": grounding.value_index, "field": None, "cell": None, **other})
    if not found:
        return clean(rule)
    first = found[0]
    stated = f"its {first['field']} is {first['cell']}, which the answer leaves out or states otherwise" \
        if first["field"] else f"it prints {', '.join(first['figures'])}, none of them the reported figure"
    return flag(rule, rule.finding(
        ctx, f"The value was read from a summary line, but the table on page {first['page']} states the parameter "
             f"(“{first['row_text']}”): {stated}.",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


SUMMARY_RULES: tuple[Rule, ...] = (
    Rule("partial_summary", "5", Severity.warning,
         "A value read from a summary line leaves out limits the parameter's table row prints.", _partial_summary),
)
