"""Is a value asked for as an absolute maximum rating read from the absolute maximum ratings table?
``other_rating_table``.

Datasheets print the same parameter twice: as a stress limit under *Absolute maximum ratings* (input voltage
-0.3 to 6 V) and as an operating range under *Recommended operating conditions* or *Electrical
characteristics* (4.65 to 5.5 V). A request that names the absolute maximum and a value whose table is titled
as the other kind state different things. The table's title is the nearest line above its header row that
names either kind, looked for up to ``MAX_TITLE_ROWS`` rows up and never past another table's header. A request
for a bare "Maximum X" (naming no operating, typical or minimum figure) is read as asking for the rating when the
maximum ratings print a row naming X with another figure than the one read from the operating table.

An absolute maximum rating is a limit, never a typical figure: ``rating_as_typical`` flags a value reported as
typical that stands in the absolute maximum ratings section (the nearest section title above it, on its page or
the one before, names them; a ratings list often prints no column header at all, ``ESD tolerance 2000V``), unless
its table has a ``Typ`` column of its own, or it is a thermal resistance (a package characteristic that
ratings lists print beside the limits).

A request for "Maximum X" asks for a limit too: ``maximum_as_typical`` flags an answer that reports a typical
figure alone for it, read where no ``Typ`` column stands over the value (a single ``Value`` column, a ratings
list, a sentence), so the printed figure is the limit, or not the requested one at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from app.detectors import plausibility
from app.detectors.dimensions import printed
from app.detectors.grounding import GroundingResult
from app.detectors.page_text import numbers_in
from app.detectors.row_alignment import visual_rows
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
from app.detectors.structural import grounded_row, header_for, is_header
from app.detectors.value_rows import ValueCell, value_cell
from app.documents.index import DatasheetIndex

MAX_TITLE_ROWS = 6
_ABSOLUTE = re.compile(r"absolute\s*max|abs\.?\s*max", re.IGNORECASE)
_OPERATING = re.compile(r"recommended|operating\s+conditions|electrical\s+characteristics", re.IGNORECASE)
# Titles that open another section after the ratings (``Operating Ratings`` lists the operating range; ``DC
# characteristics``, ``Thermal information``).
# A section title names the ratings themselves ("Absolute Maximum Ratings", "Abs. max. rating"), not a limit
# stated in a sentence ("absolute maximum voltage level: 5.25 V").
_RATINGS_TITLE = re.compile(r"(?:absolute\s*|abs\.?\s*)?max(?:imum|\.)?\s+ratings?\b", re.IGNORECASE)
# A request for "Maximum X" that names no operating limit may ask for the rating.
_MAXIMUM_REQUEST = re.compile(r"^\s*max(?:imum|\.)?\b", re.IGNORECASE)
_OPERATING_REQUEST = re.compile(r"operating|recommended|typical|nominal|minimum|continuous|average", re.IGNORECASE)
_WORD = re.compile(r"[a-z]{3,}")
_LIMIT_WORDS = {"maximum", "max", "absolute", "the", "and", "for", "with", "rating"}
_OTHER_SECTION = re.compile(r"recommended|operating\s+(?:conditions|ratings)|characteristics"
                            r"|thermal\s+information|typical\s+performance", re.IGNORECASE)


def table_title(index: DatasheetIndex, page_number: int, row_y: float) -> str | None:
    """The title line of the table holding the row at ``row_y``: ``None`` when none names a kind of table."""
    header = header_for(index, page_number, row_y)
    if header is None:
        return None
    above = [r for r in visual_rows(index, index.page(header.page)) if r.y < header.y]
    for row in list(reversed(above))[:MAX_TITLE_ROWS]:
        if is_header(row):
            return None  # another table's header: this table's title is not above it
        if _ABSOLUTE.search(row.text) or _OPERATING.search(row.text):
            return row.text
    return None


def _other_rating_table(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    name = str(ctx.request.get("name") or "")
    asked = " ".join([name, *(str(c) for c in ctx.request.get("conditions") or [])])
    maximum = bool(_MAXIMUM_REQUEST.search(name)) and not _OPERATING_REQUEST.search(asked)
    if not _ABSOLUTE.search(asked) and not maximum:
        return not_evaluable(rule, "the request does not name an absolute maximum rating")
    found: list[dict[str, Any]] = []
    for grounding in ctx.groundings:
        value = printed(ctx.submission.values[grounding.value_index]) \
            if grounding.value_index < len(ctx.submission.values) else None
        row = grounded_row(ctx.document, grounding, dict(ctx.request), value)
        title = table_title(ctx.document, grounding.page, row.y) if row is not None else None
        if not title or _ABSOLUTE.search(title) or not _OPERATING.search(title):
            continue
        # A bare "Maximum X" is the rating only when the ratings print X with another figure.
        rating = rating_row(ctx.document, name, value) if not _ABSOLUTE.search(asked) else {}
        if rating is not None:
            found.append({"value_index": grounding.value_index, "page": grounding.page, "table_title": title,
                          **rating})
    if not found:
        return clean(rule)
    rated = f"; the maximum ratings print it (“{found[0]['rating_row']}”, page {found[0]['rating_page']})" \
        if "rating_row" in found[0] else ""
    return flag(rule, rule.finding(
        ctx, f"An absolute maximum rating was asked for, but the value comes from the table “{found[0]['table_title']}”"
             f" (page {found[0]['page']}): an operating range, not the stress limit{rated}.",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


def rating_row(index: DatasheetIndex, name: str, value: dict[str, Any] | None) -> dict[str, Any] | None:
    """A row of the maximum ratings naming every word of ``name`` (limit words aside) and printing a figure in
    the answer's unit other than its maximum; ``None`` when there is none."""
    wanted = {w for w in _WORD.findall(name.casefold()) if w not in _LIMIT_WORDS}
    shown = plausibility.numbers_of(value or {})
    unit = (value or {}).get("unit")
    if not wanted or "max" not in shown or not unit:
        return None
    for page in index.pages:
        for row in visual_rows(index, page):
            if not wanted <= set(_WORD.findall(row.text.casefold())):
                continue
            figures = [n for n in numbers_in(row.text) if n.unit and plausibility.compatible(n.unit, unit)]
            if not figures or not section_is_ratings(index, page.number, row.y):
                continue
            if not any(plausibility.close(plausibility.convert(v, f.unit, unit) or v, shown["max"], 1e-6)
                       for f in figures for v in f.values):
                return {"rating_page": page.number, "rating_row": row.text}
    return None


def section_is_ratings(index: DatasheetIndex, page_number: int, row_y: float) -> str | None:
    """The title of the absolute maximum ratings section holding the row at ``row_y``: the nearest line above it
    (on its page, else the page before) naming a section is that section's title; ``None`` when it names another
    section, or none is found."""
    for number in (page_number, page_number - 1):
        if number < 1:
            break
        rows = visual_rows(index, index.page(number))
        above = [r for r in rows if r.y < row_y] if number == page_number else rows
        for row in reversed(above):
            absolute, other = _RATINGS_TITLE.search(row.text), _OTHER_SECTION.search(row.text)
            if absolute and not other:
                return row.text
            if other:
                return None
    return None


def _typical_cells_without_typ_column(ctx: Context, wanted: Callable[[dict[str, Any]], bool]
                                     ) -> Iterator[tuple[GroundingResult, ValueCell]]:
    """The answered values ``wanted`` picks, with the cell each was read from, where no Typ column stands over that
    cell: a table with a Typ column of its own states typical figures, so a typical read there is in order."""
    for grounding, value in answered_groundings(ctx):
        if not wanted(value):
            continue
        cell = value_cell(ctx.document, grounding, dict(ctx.request), value)
        if cell is None:
            continue
        header = header_for(ctx.document, grounding.page, cell.row.y)
        if header is None or "typical" not in header.centres:
            yield grounding, cell


def _rating_as_typical(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    found: list[dict[str, Any]] = []
    # A package's thermal resistance is printed beside the ratings, but is a characteristic of the package.
    for grounding, cell in _typical_cells_without_typ_column(
            ctx, lambda value: value.get("typical") is not None
            and not plausibility.compatible(str(value.get("unit") or ""), "K/W")):
        title = section_is_ratings(ctx.document, grounding.page, cell.row.y)
        if title:
            found.append({"value_index": grounding.value_index, "page": grounding.page, "section_title": title,
                          "row_text": cell.row.text})
    if not found:
        return clean(rule)
    first = found[0]
    return flag(rule, rule.finding(
        ctx, f"The value was reported as typical, but it stands among the absolute maximum ratings (“"
             f"{first['section_title']}”, page {first['page']}): a rating is a limit, not a typical figure.",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


_TYPICAL_REQUEST = re.compile(r"typical|nominal|average", re.IGNORECASE)


def _asks_maximum(name: str) -> bool:
    return bool(_MAXIMUM_REQUEST.search(name)) and not _TYPICAL_REQUEST.search(name)


def _typical_alone(value: dict[str, Any]) -> bool:
    return value.get("typical") is not None and value.get("min") is None and value.get("max") is None


def _maximum_as_typical(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    if not _asks_maximum(str(ctx.request.get("name") or "")):
        return not_evaluable(rule, "the request does not name a maximum")
    found: list[dict[str, Any]] = []
    for grounding, cell in _typical_cells_without_typ_column(ctx, _typical_alone):
        found.append({"value_index": grounding.value_index, "page": grounding.page, "row_text": cell.row.text})
    if not found:
        return clean(rule)
    first = found[0]
    return flag(rule, rule.finding(
        ctx, f"“{ctx.request.get('name')}” asks for a limit, but the answer reports a typical figure alone, read "
             f"where no Typ column stands over it (“{first['row_text']}”, page {first['page']}).",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


RATING_TABLE_RULES: tuple[Rule, ...] = (
    Rule("other_rating_table", "3", Severity.warning,
         "An absolute maximum rating was asked for, but the value's table is an operating-conditions table.",
         _other_rating_table),
    Rule("rating_as_typical", "1", Severity.warning,
         "A value printed among the absolute maximum ratings was reported as typical.", _rating_as_typical),
    Rule("maximum_as_typical", "1", Severity.warning,
         "A maximum was asked for, and a typical figure alone was reported where no Typ column stands.",
         _maximum_as_typical),
)
