"""Is the value's row the requested parameter's, when another row names it? ``other_parameter_row``.

A characteristics table prints related parameters on neighbouring rows (``Total gate charge``, ``Gate-source
charge``; ``Collector-base voltage``, ``Collector-emitter voltage``; ``Operating voltage``, ``Minimum operating
voltage``), and a figure read one row off has the right dimension and is printed where the quote says. The row's
parameter label tells it: the words of its name cell (its words left of the value, without symbols, ``X = v``
conditions and the words under a Conditions column, with the first words of a name begun on the line above
beside a symbol the row leaves empty), or, on an unnamed sub-row, the label of the nearest named row
of its block (the nearest above and below). When that label shares half of the requested name's words at least
(less names a condition, or another block), leaves out one of them and names another parameter with a word of its
own, while a table row elsewhere in the document names the parameter better (it leaves out fewer of the
requested words and no more words of its own, or as many with fewer words of its own; every requested word, or
all but one of three or more) and prints figures of the answer's quantity, none the very figures reported (two
rows printing the same figures say nothing), the value belongs to another parameter.
"""

from __future__ import annotations

import re
from typing import Any

from app.detectors import plausibility
from app.detectors.dimensions import head_phrase
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
from app.detectors.structural import CONDITION, MIN_COLUMN_GAP, is_header, plain_number, stands_apart
from app.detectors.value_rows import value_cell
from app.documents.index import DatasheetIndex, Word

_TOKEN = re.compile(r"[A-Za-z]+")
# Glue and limit words name no parameter of their own.
_GLUE = {"the", "and", "for", "with", "from", "into", "per", "typ", "max", "min", "typical", "nominal", "absolute",
         "value", "values", "rating", "ratings", "note", "notes", "see", "fig", "figure"}
_LIMITS = {"maximum", "minimum"}
_CONDITION_LABELS = {"conditions", "condition", "test"}
# Lines of a wrapped name cell lie within this many line heights of the row.
WRAP_LINES = 1.5
_DIGIT = re.compile(r"\d")
# A bracketed part of a name cell, or a bracket left open to its end: a condition or a note, not the name
# (``(VD = Rated VDRM; Gate Open)`` wrapping under the parameter's name).
_BRACKETED = re.compile(r"\([^()]*(?:\)|$)")
# An unnamed sub-row belongs to the named row within this many line heights of it.
BLOCK_LINES = 3.2
# A named row's figures stand on its line or on unnamed lines within this many line heights.
FIGURE_LINES = 1.6


def _stem(word: str) -> str:
    """A word without the endings its other forms differ by (``charges``, ``charger``, ``charge``)."""
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 5 and word.endswith("er"):
        word = word[:-1]
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def name_words(text: str) -> set[str]:
    """The words that name a parameter, stemmed: three lower-case letters at least (symbols like ``VCEO``,
    ``VSENSE`` or ``Qgs`` are not words), glue left out."""
    text = CONDITION.sub(" ", text)
    out = set()
    for token in _TOKEN.findall(text):
        if sum(c.islower() for c in token) < 3:
            continue
        word = token.casefold()
        if word not in _GLUE:
            out.add(_stem(word))
    # A text layer that prints a word twice, the second time clipped (``voltage`` over ``oltage``).
    return {w for w in out if not any(v != w and v.endswith(w) for v in out)}


def _conditions_x(rows: list[Row], row: Row) -> float | None:
    """Where the Conditions column of the table holding ``row`` begins (its header's label), if it has one."""
    header = next((r for r in reversed([r for r in rows if r.y < row.y]) if is_header(r)), None)
    if header is None:
        return None
    labels = [w.x0 for w in header.words if w.text.strip(".:()[]").casefold() in _CONDITION_LABELS]
    return min(labels) - 2 if labels else None


def own_label(rows: list[Row], row: Row) -> set[str]:
    """The name words of a row's own name cell: its words before the first value cell, left of a Conditions
    column, with the lines of a name cell wrapping above and below it (lines with no figure, over a part of the
    name column the row leaves empty). Bracketed words are the cell's conditions: a line naming nothing else is
    an unnamed sub-row of the name above it."""
    right = _conditions_x(rows, row)
    words: list[Word] = []
    for word in row.words:
        # A name running on past the Conditions column's edge goes on with a word's space, not a column's gap.
        apart = not words or word.x0 - words[-1].x1 >= MIN_COLUMN_GAP
        if plain_number(word) is not None or (right is not None and word.x0 >= right and apart):
            break
        words.append(word)
    own = name_words(_BRACKETED.sub(" ", " ".join(w.text for w in words)))
    if not own:
        return set()  # an unnamed sub-row: its block's name is read by ``parameter_labels``
    end = words[-1].x1 + 1
    wrapped = [w for r in rows if r is not row and abs(r.y - row.y) <= WRAP_LINES * row.height
               and not _DIGIT.search(r.text) and all(w.x1 <= end for w in r.words)
               and not any(a.x0 < b.x1 and b.x0 < a.x1 for a in r.words for b in words) for w in r.words]
    return own | name_words(" ".join(w.text for w in wrapped)) | _name_begun_above(rows, row, words[0].x0, end)


def _name_begun_above(rows: list[Row], row: Row, start: float, end: float) -> set[str]:
    """The first words of a name cell that wraps onto ``row`` from the line just above: that line prints a cell
    (a symbol) left of where the row's name begins, which the row leaves empty, so the row goes on with its
    name (``tW Minimum Output`` over ``Pulse Width``); its name words are those over the row's name, before
    its first figure."""
    above = max((r for r in rows if r.y < row.y and row.y - r.y <= WRAP_LINES * row.height), key=lambda r: r.y,
                default=None)
    if above is None or not any(w.x1 <= start for w in above.words):
        return set()
    begun: list[str] = []
    for word in above.words:
        if plain_number(word) is not None or word.x0 >= end:
            break
        if word.x0 >= start - 2:
            begun.append(word.text)
    return name_words(_BRACKETED.sub(" ", " ".join(begun)))


def parameter_labels(rows: list[Row], row: Row) -> list[set[str]]:
    """The row's parameter label: its own, or on an unnamed sub-row, those of the nearest named rows above and
    below it in its block (a name cell prints before its sub-rows, or centred over them)."""
    own = own_label(rows, row)
    if own:
        return [own]
    near = [r for r in rows if r is not row and abs(r.y - row.y) <= BLOCK_LINES * row.height and in_columns(r)
            and own_label(rows, r)]
    above = max((r for r in near if r.y < row.y), key=lambda r: r.y, default=None)
    below = min((r for r in near if r.y > row.y), key=lambda r: r.y, default=None)
    return [own_label(rows, r) for r in (above, below) if r is not None]


def _figures(rows: list[Row], row: Row, unit: str | None) -> bool:
    """Whether a named row prints figures outside its ``X = v`` conditions, on its line or its unnamed sub-rows,
    none in a unit of another quantity than the answer's."""
    block = [row, *(r for r in rows if r is not row and abs(r.y - row.y) <= FIGURE_LINES * row.height
                    and not own_label(rows, r))]
    texts = [CONDITION.sub(" ", r.text) for r in block]
    numbers = [n for text in texts for n in numbers_in(text)]
    if not numbers:
        return False
    # A unit stands glued to its figure or alone in the unit column, at the row's end.
    units = [n.unit for n in numbers if n.unit] + [last for text in texts if (last := (text.split() or [""])[-1])
                                                    and not _DIGIT.search(last)
                                                    and plausibility.parse_unit(last) is not None]
    return not unit or not units or any(plausibility.compatible(u, unit) for u in units)


def in_columns(row: Row) -> bool:
    """Whether a row prints a cell apart from its name (a symbol, a figure, a unit): a section title does not."""
    return any(b.x0 - a.x1 >= MIN_COLUMN_GAP for a, b in zip(row.words, row.words[1:], strict=False))


def tabular(row: Row) -> bool:
    """Whether a row's cells stand apart in columns, read without the words a text layer prints twice over each
    other."""
    kept: list[Word] = []
    for word in row.words:
        if not kept or word.x0 >= kept[-1].x1 - 1:
            kept.append(word)
    gaps = sorted(b.x0 - a.x1 for a, b in zip(kept, kept[1:], strict=False))
    return bool(gaps) and gaps[len(gaps) // 2] >= MIN_COLUMN_GAP


def _named_rows(index: DatasheetIndex) -> list[tuple[int, Row, set[str], list[Row]]]:
    def build() -> list[tuple[int, Row, set[str], list[Row]]]:
        out = []
        for page in index.pages:
            rows = visual_rows(index, page)
            for row in rows:
                if tabular(row) and not is_header(row) and (label := own_label(rows, row)):
                    out.append((page.number, row, label, rows))
        return out

    return index.memo("row_parameter_named_rows", build)


def better_row(index: DatasheetIndex, wanted: set[str], label: set[str], value: dict[str, Any],
               exclude: Row) -> dict[str, Any] | None:
    """A table row naming the requested parameter better than ``label`` does, printing figures of its quantity;
    ``None`` when there is none, or when one of them prints every reported number too (the same figures on two
    rows: the value may well come from the better named one)."""
    missing, extra = wanted - label, label - wanted
    unit = value.get("unit")
    found = None
    for page, row, other, rows in _named_rows(index):
        if row is exclude:
            continue
        other_missing, other_extra = wanted - other, other - wanted
        better = (other_missing < missing and len(other_extra) <= len(extra)) \
            or (other_missing == missing and other_extra < extra)
        # It names the parameter: every requested word, or all but one of three or more.
        if better and len(other_missing) <= len(wanted) // 3 and _figures(rows, row, unit):
            if _prints_all(row, value):
                return None
            found = found or {"page": page, "row_text": row.text}
    return found


def _prints_all(row: Row, value: dict[str, Any]) -> bool:
    numbers = plausibility.numbers_of(value)
    printed_numbers = numbers_in(CONDITION.sub(" ", row.text))
    return bool(numbers) and all(number_occurs(n, value.get("unit"), printed_numbers) for n in numbers.values())


def _other_parameter_row(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    asked = str(ctx.request.get("name") or "")
    # "Maximum X" asks for a limit of X; a row named "Minimum X" is another parameter.
    wanted = name_words(head_phrase(asked) or asked) - _LIMITS
    if not wanted:
        return not_evaluable(rule, "the requested name has no words to compare")
    found: list[dict[str, Any]] = []
    for grounding, value in answered_groundings(ctx):
        cell = value_cell(ctx.document, grounding, dict(ctx.request), value)
        # A row of long conditions is still a table row when its value stands in a column of its own.
        if cell is None or not (tabular(cell.row) or stands_apart(cell.row, cell.box)):
            continue
        rows = visual_rows(ctx.document, ctx.document.page(grounding.page))
        # A label sharing less than half of the requested words names the row's condition or another block.
        labels = [label for label in parameter_labels(rows, cell.row) if 2 * len(label & wanted) >= len(wanted)]
        others = [better_row(ctx.document, wanted, label, value, cell.row) if wanted - label
                  and label - wanted else None for label in labels]
        if labels and all(others):
            found.append({"value_index": grounding.value_index, "page": grounding.page, "row_text": cell.row.text,
                          "row_label": sorted(labels[0]), "named_page": others[0]["page"],
                          "named_row": others[0]["row_text"]})
    if not found:
        return clean(rule)
    first = found[0]
    return flag(rule, rule.finding(
        ctx, f"The row the value came from (“{first['row_text']}”, page {first['page']}) names another parameter, "
             f"while page {first['named_page']} prints a row naming “{asked}” (“{first['named_row']}”).",
        {"span_ids": submit_span_ids(ctx), "rows": found}))


ROW_PARAMETER_RULES: tuple[Rule, ...] = (
    Rule("other_parameter_row", "3", Severity.warning,
         "The value's row names another parameter, while another table row names the requested one.",
         _other_parameter_row),
)
