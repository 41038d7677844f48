"""Page layout from the text layer alone: lines, visual rows, cells, and candidate table regions.

Everything here works on coordinates PyMuPDF already gave us (one text extraction per page), so it is cheap
enough to run for every page at build time. Ruling lines, which cost a drawing extraction, are only read later
when a table is actually requested (``app.documents.tables``).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.documents.index import Line, Word
from app.documents.text import has_digit, is_decoration, is_value

_WORD_RE = re.compile(r"[^\W\d_]")
_NUMBER_RE = re.compile(r"^[-+−–]?\d+(?:[.,]\d+)?%?$")
BOLD_FLAG = 16
# Weight names in font names ("…-Medium" is often truncated to "…-Medi" in subset names).
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi", "medi")


@dataclass
class Cell:
    """A run of words on one line with no wide gap inside: the text of one table cell on one visual row."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    bold: bool
    line: int  # index into the page's line list

    @property
    def yc(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def xc(self) -> float:
        return (self.x0 + self.x1) / 2


def lines_from_dict(page_dict: dict) -> list[Line]:
    """Text lines (non-empty) in the text layer's order, with dominant font size and boldness."""
    out: list[Line] = []
    for b_idx, block in enumerate(page_dict.get("blocks", [])):
        if block.get("type", 0) != 0:
            continue
        for l_idx, line in enumerate(block.get("lines", [])):
            spans = line.get("spans", [])
            text = "".join(s.get("text", "") for s in spans)
            if not text.strip():
                continue
            chars_by_size: dict[float, int] = {}
            chars_by_color: dict[int, int] = {}
            bold_chars = 0
            total = 0
            for s in spans:
                n = len(s.get("text", "").strip())
                total += n
                color = int(s.get("color", 0) or 0)
                chars_by_color[color] = chars_by_color.get(color, 0) + n
                size = round(float(s.get("size", 0.0)), 1)
                chars_by_size[size] = chars_by_size.get(size, 0) + n
                if s.get("flags", 0) & BOLD_FLAG or any(w in s.get("font", "").lower() for w in _BOLD_NAMES):
                    bold_chars += n
            size = max(chars_by_size.items(), key=lambda kv: (kv[1], kv[0]))[0] if chars_by_size else 0.0
            bold = total > 0 and bold_chars * 2 >= total
            # "HEADING (conditions in smaller type)": the leading run carries the line's role.
            lead = next((sp for sp in spans if sum(ch.isalnum() for ch in sp.get("text", "")) >= 3), None)
            if lead is not None and total and len(lead.get("text", "").strip()) >= 0.3 * total:
                lead_size = round(float(lead.get("size", 0.0)), 1)
                lead_bold = bool(lead.get("flags", 0) & BOLD_FLAG) or any(
                    w in lead.get("font", "").lower() for w in _BOLD_NAMES)
                if lead_size > size:
                    size, bold = lead_size, lead_bold
                elif lead_size == size and lead_bold:
                    bold = True
            x0, y0, x1, y1 = (round(v, 2) for v in line["bbox"])  # as stored on disk: a cached index reads equal
            color = max(chars_by_color.items(), key=lambda kv: kv[1])[0] if chars_by_color else 0
            out.append(Line(x0, y0, x1, y1, text, size=size, bold=bold, block=b_idx, line=l_idx, color=color))
    return out


def locate_offsets(lines: list[Line], text: str) -> None:
    """Set ``Line.offset`` to where each line's text sits in the page text (the text layer keeps line order)."""
    cursor = 0
    for ln in lines:
        pos = text.find(ln.text, cursor)
        if pos < 0:
            pos = text.find(ln.text.strip(), cursor)
        if pos >= 0:
            ln.offset = pos
            cursor = pos + len(ln.text.strip())


def text_columns(lines: Sequence[Line], page_width: float) -> list[int]:
    """Per line: 1 or 2 for the left or right text column of a two-column page, 0 for lines spanning both (or
    every line of a single-column page). Rows and tables are then found per column, so the two halves of a
    two-column page never merge into one "row"."""
    columns = [0] * len(lines)
    body = [i for i, ln in enumerate(lines) if not ln.furniture]
    width = int(page_width) + 2
    if len(body) < 12 or width < 100:
        return columns
    delta = [0] * (width + 2)
    for i in body:
        ln = lines[i]
        delta[max(0, int(ln.x0))] += 1
        delta[min(width, int(ln.x1) + 1)] -= 1
    cover, running = [], 0
    for d in delta:
        running += d
        cover.append(running)
    lo, hi = int(0.3 * page_width), int(0.7 * page_width)
    least = min(cover[lo:hi])
    if least > 0.05 * len(body):
        return columns
    run = [x for x in range(lo, hi) if cover[x] == least]
    gutter = (run[0] + run[-1]) / 2 if run[-1] - run[0] < 80 else run[len(run) // 2]
    left = [i for i in body if lines[i].x1 <= gutter]
    right = [i for i in body if lines[i].x0 >= gutter]
    if len(left) < 6 or len(right) < 6:
        return columns
    # Text columns are filled with long lines (a small table inside one still leaves most lines long); a table
    # with a wide gap between two of its columns is not.
    for side in (left, right):
        widths = sorted(lines[i].x1 - lines[i].x0 for i in side)
        if widths[(3 * len(widths)) // 4] < 0.22 * page_width:
            return columns
    for i in left:
        columns[i] = 1
    for i in right:
        columns[i] = 2
    return columns


def assign_rows(lines: Sequence[Line], columns: Sequence[int] | None = None) -> list[list[int]]:
    """Group lines into visual rows (vertical overlap of at least half the smaller height), within each text
    column. Returns line indices per row (rows of a column top to bottom, lines left to right); sets
    ``Line.row``, numbered consecutively within a column."""
    groups: dict[int, list[int]] = {}
    for i in range(len(lines)):
        groups.setdefault(columns[i] if columns else 0, []).append(i)
    rows: list[list[int]] = []
    for _col, members in sorted(groups.items()):
        order = sorted(members, key=lambda i: ((lines[i].y0 + lines[i].y1) / 2, lines[i].x0))
        first = len(rows)
        row_top = row_bottom = 0.0
        for i in order:
            ln = lines[i]
            h = max(ln.y1 - ln.y0, 1.0)
            if len(rows) > first:
                overlap = min(row_bottom, ln.y1) - max(row_top, ln.y0)
                if overlap >= 0.5 * min(h, row_bottom - row_top):
                    # The row band stays anchored on its first member so a tall line cannot swallow the next row.
                    rows[-1].append(i)
                    continue
            rows.append([i])
            row_top, row_bottom = ln.y0, ln.y1
    for r, members in enumerate(rows):
        members.sort(key=lambda i: lines[i].x0)
        for i in members:
            lines[i].row = r
    return rows


def cells_from_words(lines: Sequence[Line], words: Iterable[Word], indices: Iterable[int] | None = None,
                     gap_factor: float = 0.9) -> list[Cell]:
    """Split lines into cells at wide horizontal gaps between words (a gap wider than ``gap_factor`` × font size).

    PyMuPDF sometimes keeps two table cells in one line when they are close; splitting on word gaps restores
    the cell boundaries. ``indices`` restricts the work to some lines.
    """
    wanted = set(range(len(lines)) if indices is None else indices)
    key_to_line = {(lines[i].block, lines[i].line): i for i in wanted}
    by_line: dict[int, list[Word]] = {}
    for w in words:
        i = key_to_line.get((w.block, w.line))
        if i is not None:
            by_line.setdefault(i, []).append(w)
    cells: list[Cell] = []
    for i in sorted(wanted):
        ln = lines[i]
        ws = sorted(by_line.get(i, []), key=lambda w: w.x0)
        if not ws:
            cells.append(Cell(ln.x0, ln.y0, ln.x1, ln.y1, ln.text.strip(), ln.size, ln.bold, i))
            continue
        limit = max(gap_factor * (ln.size or 8.0), 3.0)
        group: list[Word] = [ws[0]]
        for w in ws[1:]:
            if w.x0 - group[-1].x1 > limit:
                cells.append(_cell(group, ln, i))
                group = [w]
            else:
                group.append(w)
        cells.append(_cell(group, ln, i))
    return cells


def _cell(group: list[Word], ln: Line, index: int) -> Cell:
    return Cell(min(w.x0 for w in group), ln.y0, max(w.x1 for w in group), ln.y1,
                " ".join(w.text for w in group), ln.size, ln.bold, index)


def row_cells(cells: Sequence[Cell], gutter_factor: float = 1.0) -> list[list[Cell]]:
    """Cells grouped by visual row and merged when nearly touching (superscript runs split into lines)."""
    rows: list[list[Cell]] = []
    for c in sorted(cells, key=lambda c: (c.yc, c.x0)):
        if rows:
            ref = rows[-1][0]
            overlap = min(ref.y1, c.y1) - max(ref.y0, c.y0)
            if overlap >= 0.5 * min(ref.y1 - ref.y0, c.y1 - c.y0, 1e9):
                rows[-1].append(c)
                continue
        rows.append([c])
    merged_rows = []
    for row in rows:
        row.sort(key=lambda c: c.x0)
        merged: list[Cell] = [row[0]]
        for c in row[1:]:
            prev = merged[-1]
            if c.x0 - prev.x1 <= max(0.35 * max(prev.size, c.size, 1.0), 1.5) * gutter_factor:
                merged[-1] = Cell(prev.x0, min(prev.y0, c.y0), max(prev.x1, c.x1), max(prev.y1, c.y1),
                                  f"{prev.text} {c.text}".strip(), max(prev.size, c.size), prev.bold and c.bold,
                                  prev.line)
            else:
                merged.append(c)
        merged_rows.append(merged)
    return merged_rows


def _is_tabular(row: list[Cell]) -> bool:
    row = [c for c in row if not is_decoration(c.text)]
    if len(row) >= 3:
        return True
    if len(row) == 2:
        a, b = row
        if is_value(a.text) or is_value(b.text):
            return True
        # Two-column body text has two long runs; a label/value table has at least one short cell.
        return min(len(a.text.split()), len(b.text.split())) <= 4
    return False


def detect_table_regions(lines: Sequence[Line], words: Sequence[Word], page_width: float,
                         columns: Sequence[int] | None = None, min_rows: int = 3) -> list[list[float]]:
    """Candidate table bboxes from text alignment: runs of visual rows with several aligned cells, looked for
    within each text column (see ``text_columns``).

    Cheap (it marks the pages that hold tables); the table builder refines regions with ruling lines when it runs.
    """
    groups: dict[int, list[int]] = {}
    for i, ln in enumerate(lines):
        if not ln.furniture:
            groups.setdefault(columns[i] if columns else 0, []).append(i)
    regions: list[list[float]] = []
    for _col, body in sorted(groups.items()):
        regions.extend(_regions_in(lines, words, page_width, body, min_rows))
    return sorted(regions, key=lambda r: (r[1], r[0]))


def _regions_in(lines: Sequence[Line], words: Sequence[Word], page_width: float, body: list[int],
                min_rows: int) -> list[list[float]]:
    if len(body) < min_rows * 2:
        return []
    rows = row_cells(cells_from_words(lines, words, body))
    heights = [c.y1 - c.y0 for row in rows for c in row]
    line_h = statistics.median(heights) if heights else 10.0
    text_size = statistics.median(c.size for row in rows for c in row) if rows else 10.0
    regions: list[list[float]] = []
    run: list[list[Cell]] = []
    loose = 0  # consecutive non-tabular rows tolerated inside a run (wrapped names, notes)

    overlaps = 0  # rows starting well above the previous row's bottom: rotated axis titles, plot legends

    def flush() -> None:
        tabular = [r for r in run if _is_tabular(r)]
        if overlaps > 0.2 * len(run):
            return  # table rows follow each other; a plot's labels pile up
        if len(tabular) >= min_rows and _aligned(tabular) and _table_like(tabular):
            x0 = min(c.x0 for r in tabular for c in r)
            x1 = max(c.x1 for r in tabular for c in r)
            y0 = min(c.y0 for c in tabular[0])
            y1 = max(c.y1 for c in tabular[-1])
            regions.append([round(x0, 1), round(y0, 1), round(x1, 1), round(y1, 1)])

    prev_bottom = None
    for row in rows:
        top = min(c.y0 for c in row)
        gap_ok = prev_bottom is None or top - prev_bottom <= 3.0 * line_h
        overlapping = prev_bottom is not None and top - prev_bottom < -max(0.5 * line_h, 2.0)
        # A section title ends a table: larger type, or bold type at least as large as the table's, on its own.
        heading = len(row) == 1 and (row[0].size >= 1.15 * text_size or (
            row[0].bold and row[0].size >= text_size + 0.5 and len(row[0].text) <= 60))
        if heading:
            flush()
            run, loose, overlaps = [], 0, 0
        elif _is_tabular(row) and gap_ok:
            run.append(row)
            loose = 0
            overlaps += overlapping
        elif run and gap_ok and loose < 3 and not _is_paragraph(row, page_width):
            run.append(row)
            loose += 1
            overlaps += overlapping
        else:
            flush()
            run = [row] if _is_tabular(row) else []
            loose = 0
            overlaps = 0
        prev_bottom = max(c.y1 for c in row)
    flush()
    return regions


def _table_like(rows: list[list[Cell]]) -> bool:
    """Two text columns side by side also align; tables have short cells and numbers or many columns."""
    lengths = sorted(len(c.text) for r in rows for c in r)
    if lengths[len(lengths) // 2] > 40:
        return False
    with_digits = sum(1 for r in rows if any(has_digit(c.text) for c in r))
    wide = sum(1 for r in rows if len(r) >= 3)
    # Plot axes align numbers in rows too; table rows name what they hold (a word, a symbol, a part number).
    worded = sum(1 for r in rows if any(_WORD_RE.search(c.text) for c in r))
    if worded < 0.5 * len(rows) or (with_digits < 0.3 * len(rows) and wide < 0.5 * len(rows)):
        return False
    # Plots align their tick labels in rows of bare numbers; a table row names what its numbers are.
    numeric = sum(1 for r in rows if all(_NUMBER_RE.match(c.text.strip()) for c in r))
    if numeric >= 0.3 * len(rows):
        return False
    pairs = [r for r in rows if len(r) == 2]
    if len(pairs) >= 0.7 * len(rows):
        # Mostly two cells a row: a label/value table has short labels or value cells; two text columns have
        # neither.
        x0 = min(c.x0 for r in rows for c in r)
        x1 = max(c.x1 for r in rows for c in r)
        left = sorted(r[0].x1 - r[0].x0 for r in pairs)
        values = sum(1 for r in pairs if is_value(r[1].text) or is_value(r[0].text))
        return left[len(left) // 2] <= 0.35 * (x1 - x0) or values >= 0.5 * len(pairs)
    return True


def _is_paragraph(row: list[Cell], page_width: float) -> bool:
    return len(row) == 1 and (row[0].x1 - row[0].x0) > 0.55 * page_width and len(row[0].text.split()) > 8


def _aligned(rows: list[list[Cell]]) -> bool:
    """At least two column edges (left, right or centre) shared by most of the rows."""
    votes: dict[tuple[str, int], set[int]] = {}
    for r_idx, row in enumerate(rows):
        for c in row:
            for kind, x in (("l", c.x0), ("r", c.x1), ("c", c.xc)):
                votes.setdefault((kind, int(x // 4)), set()).add(r_idx)
    # Merge neighbouring bins so an edge straddling a bin boundary still counts once.
    columns = 0
    seen: set[tuple[str, int]] = set()
    need = max(2, int(0.35 * len(rows) + 0.5))  # sub-rows and wrapped cells skip columns
    for key in sorted(votes, key=lambda k: -len(votes[k])):
        if key in seen:
            continue
        kind, b = key
        members = votes[key] | votes.get((kind, b - 1), set()) | votes.get((kind, b + 1), set())
        seen.update({(kind, b - 1), (kind, b), (kind, b + 1)})
        if len(members) >= need:
            columns += 1
    return columns >= 3  # e.g. left edge of column 1 plus edges of at least one more column


def mark_furniture(pages_lines: list[list[Line]], page_heights: list[float]) -> None:
    """Flag running headers/footers: the same text at about the same height near the top or bottom of many
    pages. Digits are ignored (page numbers) only in documents long enough for that to be safe: in a two-page
    document "Rating 1" and "Rating 23" at the same height are table rows, not a header."""
    n = len(pages_lines)
    if n < 2:
        return
    digits = re.compile(r"\d+")

    def key(ln: Line) -> tuple[str, int]:
        text = ln.text.strip().lower()
        return (digits.sub("#", text) if n >= 4 else text, int(ln.y0 // 6))

    seen: dict[tuple[str, int], set[int]] = {}
    for p, lines in enumerate(pages_lines):
        h = page_heights[p] or 1.0
        for ln in lines:
            if 0.14 * h < ln.y0 and ln.y1 < 0.88 * h:
                continue
            seen.setdefault(key(ln), set()).add(p)
    threshold = n if n <= 3 else max(3, int(0.4 * n))  # short documents: on every page
    repeated = {k for k, pages in seen.items() if len(pages) >= threshold}
    if not repeated:
        return
    for lines in pages_lines:
        for ln in lines:
            if key(ln) in repeated:
                ln.furniture = True
