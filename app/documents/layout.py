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

_WORD_RE = re.compile(r"[^\W\d_]{3,}")
BOLD_FLAG = 16
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")


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
            bold_chars = 0
            total = 0
            for s in spans:
                n = len(s.get("text", "").strip())
                total += n
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
                if lead_size > size:
                    size = lead_size
                    bold = bool(lead.get("flags", 0) & BOLD_FLAG) or any(
                        w in lead.get("font", "").lower() for w in _BOLD_NAMES)
            x0, y0, x1, y1 = (round(v, 2) for v in line["bbox"])  # as stored on disk: a cached index reads equal
            out.append(Line(x0, y0, x1, y1, text, size=size, bold=bold, block=b_idx, line=l_idx))
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


def assign_rows(lines: Sequence[Line]) -> list[list[int]]:
    """Group lines into visual rows (vertical overlap of at least half the smaller height). Returns line indices
    per row, rows top to bottom, lines left to right; sets ``Line.row``."""
    order = sorted(range(len(lines)), key=lambda i: ((lines[i].y0 + lines[i].y1) / 2, lines[i].x0))
    rows: list[list[int]] = []
    row_top = row_bottom = 0.0
    for i in order:
        ln = lines[i]
        h = max(ln.y1 - ln.y0, 1.0)
        if rows:
            overlap = min(row_bottom, ln.y1) - max(row_top, ln.y0)
            if overlap >= 0.5 * min(h, row_bottom - row_top):
                rows[-1].append(i)
                # Keep the row band anchored on its first member so a tall line cannot swallow the next row.
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
                         min_rows: int = 3) -> list[list[float]]:
    """Candidate table bboxes from text alignment: runs of visual rows with several aligned cells.

    Cheap and deliberately permissive (it marks pages that hold tables); the table builder refines regions with
    ruling lines when it runs.
    """
    body = [i for i, ln in enumerate(lines) if not ln.furniture]
    if len(body) < min_rows * 2:
        return []
    rows = row_cells(cells_from_words(lines, words, body))
    heights = [c.y1 - c.y0 for row in rows for c in row]
    line_h = statistics.median(heights) if heights else 10.0
    regions: list[list[float]] = []
    run: list[list[Cell]] = []
    loose = 0  # consecutive non-tabular rows tolerated inside a run (wrapped names, notes)

    def flush() -> None:
        tabular = [r for r in run if _is_tabular(r)]
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
        if _is_tabular(row) and gap_ok:
            run.append(row)
            loose = 0
        elif run and gap_ok and loose < 3 and not _is_paragraph(row, page_width):
            run.append(row)
            loose += 1
        else:
            flush()
            run = [row] if _is_tabular(row) else []
            loose = 0
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
    # Plot axes align numbers in rows too; table rows name what they hold.
    worded = sum(1 for r in rows if any(_WORD_RE.search(c.text) for c in r))
    return worded >= 0.5 * len(rows) and (with_digits >= 0.3 * len(rows) or wide >= 0.5 * len(rows))


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
    need = max(2, int(0.5 * len(rows) + 0.5))
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
    """Flag running headers/footers: the same text (digits ignored) at about the same height on many pages."""
    n = len(pages_lines)
    if n < 2:
        return
    digits = re.compile(r"\d+")
    seen: dict[tuple[str, int], set[int]] = {}
    for p, lines in enumerate(pages_lines):
        h = page_heights[p] or 1.0
        for ln in lines:
            if ln.y0 > 0.14 * h and ln.y1 < 0.88 * h:
                continue
            key = (digits.sub("#", ln.text.strip().lower()), int(ln.y0 // 6))
            seen.setdefault(key, set()).add(p)
    threshold = n if n <= 3 else max(3, int(0.4 * n))  # short documents: on every page
    repeated = {k for k, pages in seen.items() if len(pages) >= threshold}
    if not repeated:
        return
    for lines in pages_lines:
        for ln in lines:
            key = (digits.sub("#", ln.text.strip().lower()), int(ln.y0 // 6))
            if key in repeated:
                ln.furniture = True
