"""Is the row a value came from the variant the request names? ``other_variant``.

A table often gives one parameter per part variant on sibling sub-rows (``LM158A, LM258A, LM358A`` over
``LM158, LM258, LM358``; ``TL431C`` beside ``TL431I``). A request that names a variant in its conditions is
answered by the sub-row that names it. The rows that print every reported number are read; when each of
them names sibling variants (the same family: a long common prefix) but none of them is the requested one,
the value belongs to another variant. A row naming no variant says nothing, and neither does a request
naming none; when any row of the page printing the same numbers names the requested variant (on its line or on
a line its condition cell wraps onto), the value may well come from it. Rows that name no variant are read
under their table's heading (a table per variant, its name printed above the header row).

A table may instead give one value column per variant, headed by the part names (``BD533 | BD535 | BD537``): the
row's figures are then one limit per variant, not the min, typical and max of one. ``variant_columns`` flags an
answer reporting two fields or more whose numbers stand, on the value's row, under the columns of different
sibling part names printed on a line above it (within the table, up to ``MAX_COLUMN_LABEL_ROWS`` lines up).
"""

from __future__ import annotations

import os
import re
from typing import Any

from app.detectors import plausibility
from app.detectors.dimensions import printed
from app.detectors.grounding import GroundingResult, Outcome
from app.detectors.page_text import number_occurs, numbers_in
from app.detectors.row_alignment import Row, is_identifier, visual_rows
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
from app.detectors.structural import header_for, table_heading
from app.detectors.value_rows import row_at, value_cell
from app.documents.index import DatasheetIndex, Word

# Two part names are siblings when they share at least this many leading characters, and this share of the
# shorter one ("LM358A" and "LM358", "TL431C" and "TL431I", "LM78L05" and "LM78L15").
MIN_FAMILY_PREFIX = 4
MIN_FAMILY_SHARE = 0.6
_EDGES = ".,;:()[]"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-./]*")
MAX_COLUMN_LABEL_ROWS = 6
# A condition cell wraps onto lines within this many line heights of its row.
WRAPPED_CELL_LINES = 1.2


def part_names(text: str) -> set[str]:
    """The part or variant names ``text`` prints (identifiers with two letters and two digits at least, so a
    pin number or a package code is not one), upper-cased."""
    out = set()
    for word in text.split():
        name = word.strip(_EDGES)
        if is_identifier(name) and _NAME.fullmatch(name) and sum(c.isdigit() for c in name) >= 2 \
                and sum(c.isalpha() for c in name) >= 2:
            out.add(name.upper())
    return out


def siblings(a: str, b: str) -> bool:
    prefix = len(os.path.commonprefix([a, b]))
    return a != b and prefix >= MIN_FAMILY_PREFIX and prefix >= MIN_FAMILY_SHARE * min(len(a), len(b))


def _prints_all(row: Row, value: dict[str, Any]) -> bool:
    numbers = plausibility.numbers_of(value)
    printed_numbers = [n for w in row.words if not is_identifier(w.text) for n in numbers_in(w.text)]
    return bool(numbers) and all(number_occurs(n, value.get("unit"), printed_numbers) for n in numbers.values())


def _host_rows(index: DatasheetIndex, grounding: GroundingResult,
               value: dict[str, Any]) -> tuple[list[Row], list[Row]]:
    """The rows among the value's boxes that print every reported number, and every row of the page that does:
    a quote of a bare number is located on its first printing, which need not be the row it was read from."""
    rows: dict[int, Row] = {}
    for box in grounding.detail.get("value_boxes") or []:
        row = row_at(index, grounding.page or 0, box)
        if row is not None:
            rows[id(row)] = row
    hosts = [row for row in rows.values() if _prints_all(row, value)]
    everywhere = [row for row in visual_rows(index, index.page(grounding.page or 0)) if _prints_all(row, value)]
    return hosts, everywhere


def _names_with_cell(index: DatasheetIndex, page_number: int, row: Row) -> set[str]:
    """The part names a row prints, with those of the lines its condition cell wraps onto (``LM1117-3.3`` on the
    line above ``VIN ≤15V 5 10 mA``): neighbouring lines printing no figure of their own."""
    lines = [r for r in visual_rows(index, index.page(page_number)) if r is not row
             and abs(r.y - row.y) <= WRAPPED_CELL_LINES * row.height
             and not any(numbers_in(w.text) and not is_identifier(w.text) for w in r.words)]
    return part_names(" ".join([row.text, *(r.text for r in lines)]))


def _other_variant(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    requested = part_names(" ".join(str(c) for c in ctx.request.get("conditions") or []))
    if not requested:
        return not_evaluable(rule, "the request names no variant")
    found: list[dict[str, Any]] = []
    for grounding in ctx.groundings:
        if grounding.outcome not in (Outcome.grounded, Outcome.grounded_other_page) \
                or grounding.value_index >= len(ctx.submission.values):
            continue
        hosts, everywhere = _host_rows(ctx.document, grounding,
                                       printed(ctx.submission.values[grounding.value_index]))
        named = [part_names(row.text) for row in hosts]
        if not hosts or any(_names_with_cell(ctx.document, grounding.page or 0, row) & requested
                            for row in everywhere):
            continue
        if not any(named):
            # Rows naming no variant are read under their table's heading (``LM78L15AC`` above the header row
            # of that variant's table).
            header = header_for(ctx.document, grounding.page or 0, hosts[0].y)
            named = [part_names(table_heading(ctx.document, header))] if header else []
            if not named or named[0] & requested:
                continue
        others = sorted({n for names in named for n in names if any(siblings(n, r) for r in requested)})
        if others and all(any(siblings(n, r) for n in names for r in requested) for names in named):
            found.append({"value_index": grounding.value_index, "page": grounding.page, "row_names": others,
                          "requested": sorted(requested), "row_text": hosts[0].text})
    if not found:
        return clean(rule)
    first = found[0]
    return flag(rule, rule.finding(
        ctx, f"The row the value came from (page {first['page']}) is for {', '.join(first['row_names'])}, not for "
             f"the requested {', '.join(first['requested'])}: the value belongs to a sibling variant.",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


def _variant_labels(index: DatasheetIndex, page_number: int, row: Row) -> list[Word]:
    """The part-name cells of the nearest line above ``row`` that names two sibling parts or more, each a column
    label (a line of prose naming parts does not stand in columns over the row's cells)."""
    above = [r for r in visual_rows(index, index.page(page_number)) if r.y < row.y][-MAX_COLUMN_LABEL_ROWS:]
    for line in reversed(above):
        named = [w for w in line.words if len(part_names(w.text)) == 1]
        names = [next(iter(part_names(w.text))) for w in named]
        if len(named) >= 2 and all(siblings(a, b) for a, b in zip(names, names[1:], strict=False)):
            return named
    return []


def _variant_columns(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    found: list[dict[str, Any]] = []
    for grounding, value in answered_groundings(ctx):
        shown = plausibility.numbers_of(value)
        cell = value_cell(ctx.document, grounding, dict(ctx.request), value) if len(shown) >= 2 else None
        if cell is None:
            continue
        labels = _variant_labels(ctx.document, grounding.page or 0, cell.row)
        if len(labels) < 2:
            continue
        columns: dict[str, str] = {}
        for field, number in shown.items():
            for word in cell.row.words:
                if is_identifier(word.text) or not number_occurs(number, value.get("unit"), numbers_in(word.text)):
                    continue
                centre = (word.x0 + word.x1) / 2
                label = min(labels, key=lambda w: abs((w.x0 + w.x1) / 2 - centre))
                if label.x0 - (label.x1 - label.x0) <= centre <= label.x1 + (label.x1 - label.x0):
                    columns[field] = label.text
                break
        if len(set(columns.values())) >= 2:
            found.append({"value_index": grounding.value_index, "page": grounding.page, "columns": columns,
                          "row_text": cell.row.text})
    if not found:
        return clean(rule)
    first = found[0]
    read = ", ".join(f"{field} under {label}" for field, label in first["columns"].items())
    return flag(rule, rule.finding(
        ctx, f"The row's value columns (page {first['page']}) are headed by part names, one figure per variant, "
             f"but the answer reads them as limits of one value ({read}).",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


VARIANT_RULES: tuple[Rule, ...] = (
    Rule("other_variant", "2", Severity.warning,
         "The value's row names sibling variants of the requested one, but not the requested one.", _other_variant),
    Rule("variant_columns", "1", Severity.warning,
         "Figures printed under columns headed by part names were reported as min / typical / max of one value.",
         _variant_columns),
)
