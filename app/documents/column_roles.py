"""Columns named by a header row of limit words (Min / Typ / Max / Unit), placed by word boxes.

Many datasheet generators print several columns' words in one text span: a header ``MIN TYP MAX`` set as one
run over three value columns, or a row's ``4.5 5 5.5`` as one run. Whitespace gutters cannot see the columns
inside such a run, and a sparse column (a min that only two rows fill) is folded into its neighbour. The header
row settles it, the way stream-mode extractors do: each limit word sits over its own column, so

* a column holding two or more limit words of one header row is split between them, at the gap the value
  words below leave there (``split_role_columns``);
* a cell whose words fall into different columns is split into those columns (``split_cells``), but only when
  that cannot cut a phrase: header cells of a limit-word row, runs of values, or values followed by their unit
  where the unit has a column of its own. A parameter name or a condition (``VIN = 5 V``) stays whole;
* a table with no such row of its own may sit under one printed once above a frame that captions cut into
  several grids (``role_row_above``): that row then splits and labels its columns.

A row of limit words is a header only if its limit words stand side by side and values stand under them, so
a note that mentions "a minimum or a maximum" never splits anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.documents.index import Word
from app.documents.layout import Cell
from app.documents.text import is_value

_ROLE_OF = {
    "min": "min", "minimum": "min", "typ": "typ", "typical": "typ", "nom": "typ", "nominal": "typ",
    "max": "max", "maximum": "max", "unit": "unit", "units": "unit",
}
_LIMITS = {"min", "typ", "max"}
_STRIP = re.compile(r"^[\W_]+|[\W_]+$")
MAX_HEADER_CELL_WORDS = 8  # a cell holding a limit word among more words than this is prose, not a header
UNIT_MAX_CHARS = 6
MIN_HEADER_GAP = 0.5  # × word height: wider than a word space, so the head words were set apart on purpose
MIN_FREE_GAP = 1.0  # pt of the header gap that no value below reaches into
GAP_STEP = 0.5  # pt between the probes of a header gap
MAX_HEADER_ROW_WORDS = 14  # a header row printed above a table: labels, not a sentence


def word_role(text: str) -> str | None:
    return _ROLE_OF.get(_STRIP.sub("", text).lower())


@dataclass
class RoleRow:
    """One header row that names limit columns: its role words, left to right, and its vertical extent."""

    words: list[Word]
    y0: float
    y1: float


def role_rows(words: Sequence[Word], cells: Sequence[Cell], below: Sequence[Word] | None = None) -> list[RoleRow]:
    """Visual rows whose role words name at least two different limits (Min and Max, Typ and Max, ...) over
    values: a header heads values printed under it (``below``, by default ``words``), and its limit words stand
    side by side; a note that speaks of "a minimum or a maximum" heads nothing."""
    below = words if below is None else below
    candidates = [w for w in words if word_role(w.text)]
    rows: list[list[Word]] = []
    for w in sorted(candidates, key=lambda w: (w.y0 + w.y1) / 2):
        yc = (w.y0 + w.y1) / 2
        if rows and rows[-1][0].y0 - 1 <= yc <= rows[-1][0].y1 + 1:
            rows[-1].append(w)
        else:
            rows.append([w])
    out = []
    for row in rows:
        if len({word_role(w.text) for w in row} & _LIMITS) < 2:
            continue
        if any(_words_in_cell(c) > MAX_HEADER_CELL_WORDS for c in cells if any(_holds(c, w) for w in row)):
            continue
        row.sort(key=lambda w: w.x0)
        top, bottom = min(w.y0 for w in row), max(w.y1 for w in row)
        limits = [w for w in row if word_role(w.text) in _LIMITS]
        between = [w for w in words if top - 1 <= (w.y0 + w.y1) / 2 <= bottom + 1
                   and limits[0].x1 < (w.x0 + w.x1) / 2 < limits[-1].x0]
        if any(not word_role(w.text) for w in between):
            continue  # "a minimum or a maximum": the limit words of a header stand side by side
        under = [w for w in below if (w.y0 + w.y1) / 2 > bottom and row[0].x0 - 10 <= (w.x0 + w.x1) / 2
                 <= row[-1].x1 + 10 and is_value(w.text)]
        if len(under) < 2:
            continue
        out.append(RoleRow(row, top, bottom))
    return out


def split_role_columns(bounds: list[float], words: Sequence[Word], rows: Sequence[RoleRow]) -> list[float]:
    """Column boundaries plus one between every two role words of a header row that share a column. The split
    goes into the gap the words below leave between the two headers; where some word covers that whole stretch,
    the column stays as it is (a value centred across two columns)."""
    added: list[float] = []
    for row in rows:
        below = [w for w in words if (w.y0 + w.y1) / 2 > row.y1]
        for a, b in zip(row.words, row.words[1:], strict=False):
            k = _column_at((a.x0 + a.x1) / 2, bounds)
            if k != _column_at((b.x0 + b.x1) / 2, bounds) or b.x0 - a.x1 < MIN_HEADER_GAP * (a.y1 - a.y0):
                continue  # words one space apart are one phrase of one cell, not two column heads
            lo, hi = bounds[k], bounds[k + 1]
            inside = [w for w in below if lo - 1 <= w.x0 and w.x1 <= hi + 1]
            split = _gap_between(a, b, inside)
            if split is not None and all(abs(split - x) > 3 for x in bounds + added):
                added.append(split)
    return sorted(bounds + added)


def _gap_between(a: Word, b: Word, words: Sequence[Word]) -> float | None:
    """Middle of the widest stretch of the gap between two header words that the values below leave free. The
    values must leave some of it free: a value reaching across it is not laid out under the headers (a merged
    cell whose numbers could belong to either limit). One wide entry among many (``VDD-0.3``) may overhang."""
    lo, hi = a.x1, b.x0
    steps = int((hi - lo) / GAP_STEP)
    if steps < 2:
        return None
    xs = [lo + (k + 0.5) * GAP_STEP for k in range(steps)]
    counts = [sum(1 for w in words if w.x0 < x < w.x1) for x in xs]
    least = min(counts)
    if least > len(words) // 10:
        return None
    runs: list[tuple[float, float]] = []
    for x, n in zip(xs, counts, strict=True):
        if n == least and runs and abs(x - GAP_STEP - runs[-1][1]) < 1e-6:
            runs[-1] = (runs[-1][0], x)
        elif n == least:
            runs.append((x, x))
    best = max(runs, key=lambda r: r[1] - r[0])
    if best[1] - best[0] + GAP_STEP < MIN_FREE_GAP:
        return None
    return (best[0] + best[1]) / 2


def split_cells(cells: Sequence[Cell], words: Sequence[Word], line_keys: Sequence[tuple[int, int]],
                bounds: list[float], rows: Sequence[RoleRow]) -> list[Cell]:
    """Cells whose words fall into different columns, split where that keeps every phrase whole (see the module
    docstring). ``line_keys`` maps a cell's ``line`` index to the (block, line) key of its words."""
    by_line: dict[tuple[int, int], list[Word]] = {}
    for w in words:
        by_line.setdefault((w.block, w.line), []).append(w)
    unit_cols = {_column_at((w.x0 + w.x1) / 2, bounds) for r in rows for w in r.words if word_role(w.text) == "unit"}
    out: list[Cell] = []
    for c in cells:
        own = sorted((w for w in by_line.get(line_keys[c.line], ()) if _holds(c, w)), key=lambda w: w.x0)
        groups = _groups_by_column(own, bounds) if len(own) >= 2 else []
        if len(groups) < 2 or not _may_split(c, groups, rows, unit_cols, bounds):
            out.append(c)
            continue
        for group in groups:
            out.append(Cell(min(w.x0 for w in group), c.y0, max(w.x1 for w in group), c.y1,
                            " ".join(w.text for w in group), c.size, c.bold, c.line))
    return out


def _groups_by_column(words: list[Word], bounds: list[float]) -> list[list[Word]]:
    groups: list[list[Word]] = []
    last = None
    for w in words:
        k = _column_at((w.x0 + w.x1) / 2, bounds)
        if groups and k == last:
            groups[-1].append(w)
        else:
            groups.append([w])
        last = k
    return groups


def _may_split(cell: Cell, groups: list[list[Word]], rows: Sequence[RoleRow], unit_cols: set[int],
               bounds: list[float]) -> bool:
    for left, right in zip(groups, groups[1:], strict=False):
        edge = bounds[_column_at((right[0].x0 + right[0].x1) / 2, bounds)]
        if left[-1].x1 > edge + 1 or right[0].x0 < edge - 1:
            return False  # a word straddles the boundary: the columns are not where the words are
    if any(r.y0 - 1 <= cell.yc <= r.y1 + 1 for r in rows) and any(word_role(w.text) for g in groups for w in g):
        return True
    texts = [" ".join(w.text for w in g) for g in groups]
    if all(is_value(t) for t in texts):
        return True
    last_col = _column_at((groups[-1][0].x0 + groups[-1][-1].x1) / 2, bounds)
    return (last_col in unit_cols and len(texts[-1]) <= UNIT_MAX_CHARS and not any(ch.isdigit() for ch in texts[-1])
            and all(is_value(t) for t in texts[:-1]))


def _column_at(x: float, bounds: Sequence[float]) -> int:
    for k in range(len(bounds) - 1):
        if x < bounds[k + 1]:
            return k
    return len(bounds) - 2


def _holds(cell: Cell, word: Word) -> bool:
    xc, yc = (word.x0 + word.x1) / 2, (word.y0 + word.y1) / 2
    return cell.x0 - 0.5 <= xc <= cell.x1 + 0.5 and cell.y0 - 0.5 <= yc <= cell.y1 + 0.5


def _words_in_cell(cell: Cell) -> int:
    return len(cell.text.split())


def role_row_above(words: Sequence[Word], bbox: Sequence[float],
                   table_words: Sequence[Word]) -> tuple[RoleRow, list[Word]] | None:
    """The nearest limit-word header row above a table that has none of its own (a header printed once over a
    grid that captions cut into several tables), with all the words of that row. Every word of the row must
    lie within the table's width, so a heading of the other text column or a sentence never qualifies."""
    above = [w for w in words if w.y1 <= bbox[1] + 1]
    for row in sorted(role_rows(above, (), table_words), key=lambda r: -r.y1):
        members = [w for w in above if row.y0 - 1 <= (w.y0 + w.y1) / 2 <= row.y1 + 1]
        if len(members) > MAX_HEADER_ROW_WORDS:
            continue
        if all(bbox[0] - 5 <= w.x0 and w.x1 <= bbox[2] + 5 for w in members):
            return row, sorted(members, key=lambda w: w.x0)
    return None


def header_labels(members: Sequence[Word], bounds: Sequence[float]) -> list[str]:
    """One label per column from the words of a header row, each word in the column its centre lies in."""
    labels: list[list[str]] = [[] for _ in range(len(bounds) - 1)]
    for w in sorted(members, key=lambda w: w.x0):
        labels[_column_at((w.x0 + w.x1) / 2, bounds)].append(w.text)
    return [" ".join(parts) for parts in labels]


def limit_columns(row: RoleRow, bounds: Sequence[float]) -> set[int]:
    return {_column_at((w.x0 + w.x1) / 2, bounds) for w in row.words if word_role(w.text) in _LIMITS}
