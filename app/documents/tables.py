"""Tables from word positions and ruling lines, built lazily per page and memoised on the index.

Why not ``page.find_tables()`` everywhere: on these documents it costs 0.3–7 s per page. The builder here
reads the page's ruling lines once (``get_cdrawings``, a few ms) and places the words the index already holds:

* regions: grids of ruling lines, or runs of aligned text rows found at build time (borderless tables);
* columns: vertical rules when the table has them, otherwise the x-ranges no word covers (whitespace gutters);
* rows: horizontal rules split the table into bands; inside a band, rows are anchored on the value cells.
  Datasheet tables often stack several condition lines in one ruled cell, each with its own min/typ/max: the
  anchors keep each value on the line of its condition, even where the text layer interleaves them;
* limit columns: a header row naming Min/Typ/Max (inside the table, or printed once above it) splits columns
  the text layer merged, by the positions of its words (``app.documents.column_roles``);
* merged cells: a cell with no rule between it and the band above (a parameter name spanning two condition
  rows), or a single symbol/unit cell centred across a band's sub-rows, is repeated on every row it spans, so
  each markdown row reads on its own.

``find_tables`` remains a fallback for pages where this finds nothing although the layout looked tabular.
"""

from __future__ import annotations

import bisect
import logging
import re
import statistics
import threading
from dataclasses import dataclass, field

import pymupdf

from app.documents.column_roles import (
    RoleRow,
    header_labels,
    limit_columns,
    role_row_above,
    role_rows,
    split_cells,
    split_role_columns,
    word_role,
)
from app.documents.index import DatasheetIndex, PageInfo, Word
from app.documents.layout import Cell, cells_from_words
from app.documents.text import collapse_ws, is_value

log = logging.getLogger(__name__)

MIN_RULE_H = 8.0  # shorter horizontal strokes are glyph decorations (overlines, underlined symbols)
MIN_RULE_V = 4.0
MAX_DRAWINGS = 30000  # beyond this the page is a drawing; rules would be noise and slow to read
# find_tables costs 0.3-7 s a page and grows with content: only small pages may fall back to it.
FALLBACK_MAX_LINES = 120
FALLBACK_MAX_DRAWINGS = 1500


@dataclass
class Rule:
    """A horizontal (``horizontal=True``: y fixed, x0..x1) or vertical (x fixed, y0..y1) stroke."""

    horizontal: bool
    pos: float
    lo: float
    hi: float


@dataclass
class Table:
    bbox: list[float]
    rows: list[list[str]]
    header_rows: int
    columns: list[float]  # column boundaries, left to right
    title: str | None = None
    method: str = "aligned"  # ruled | aligned | find_tables
    bold: list[list[bool]] = field(default_factory=list, repr=False)

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        return len(self.rows[0]) if self.rows else 0

    def markdown(self) -> str:
        n = self.n_cols
        if not n:
            return ""
        if self.header_rows:
            header = []
            for c in range(n):
                parts: list[str] = []
                for r in self.rows[: self.header_rows]:
                    if r[c] and (not parts or parts[-1] != r[c]):  # a merged header cell fills both rows
                        parts.append(r[c])
                header.append(collapse_ws(" ".join(parts)))
            body = self.rows[self.header_rows:]
        else:
            header, body = [""] * n, self.rows
        out = ["| " + " | ".join(_md(c) for c in header) + " |", "|" + "---|" * n]
        out.extend("| " + " | ".join(_md(c) for c in row) + " |" for row in body)
        return "\n".join(out)


def _md(text: str) -> str:
    return collapse_ws(text).replace("|", "\\|")


def page_tables(index: DatasheetIndex, page_number: int) -> list[Table]:
    """All tables on a page (memoised per index object)."""
    return index.memo(f"tables:{page_number}", lambda: _extract(index, page_number))


def _extract(index: DatasheetIndex, page_number: int) -> list[Table]:
    page = index.page(page_number)
    if not page.lines:
        return []
    strokes = _read_rules(index, page_number)
    tables: list[Table] = []
    for bbox, ruled in _regions(page, strokes):
        table = _build_table(page, bbox, strokes.rules if ruled else [], ruled)
        if table is not None:
            tables.append(table)
    if not tables and page.table_regions and strokes.ok and strokes.drawings <= FALLBACK_MAX_DRAWINGS \
            and len(page.lines) <= FALLBACK_MAX_LINES:
        tables = _find_tables_fallback(index, page_number)
    tables.sort(key=lambda t: (t.bbox[1], t.bbox[0]))
    return tables


# -- ruling lines ------------------------------------------------------------------------------------------------

@dataclass
class _Strokes:
    rules: list[Rule]
    curves: list[tuple[float, float]]
    ok: bool  # False when the drawings could not be read (or were too many to be a table's)
    drawings: int = 0

    def curves_in(self, bbox: list[float]) -> int:
        """Curves inside ``bbox`` away from its left/right edges (rounded table corners sit on the edges)."""
        return sum(1 for x, y in self.curves if bbox[0] + 8 <= x <= bbox[2] - 8 and bbox[1] <= y <= bbox[3])


class _PdfHandle:
    """One open document per index, reused across pages (opening a long PDF re-reads its outline each time).
    PyMuPDF documents are not thread-safe: every use holds the lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.path: str | None = None
        self.doc: pymupdf.Document | None = None

    def document(self, path: str) -> pymupdf.Document:
        if self.doc is None or self.path != path:
            if self.doc is not None:
                self.doc.close()
            self.doc, self.path = pymupdf.open(path), path
        return self.doc


def _read_rules(index: DatasheetIndex, page_number: int) -> _Strokes:
    handle: _PdfHandle = index.memo("pdf_handle", _PdfHandle)
    with handle.lock:
        try:
            doc = handle.document(str(index.path))
        except Exception as exc:  # noqa: BLE001 - without the file we can still place words
            log.warning("cannot reopen %s for ruling lines: %s", index.path, exc)
            return _Strokes([], [], False)
        try:
            page = doc.load_page(page_number - 1)
            drawings = page.get_cdrawings()
            # Drawings come in unrotated page space, text in rotated space.
            matrix = page.rotation_matrix if page.rotation else None
        except Exception as exc:  # noqa: BLE001
            log.warning("drawings of page %d unreadable: %s", page_number, exc)
            return _Strokes([], [], False)
    if len(drawings) > MAX_DRAWINGS:
        return _Strokes([], [], False)
    if matrix is not None:
        drawings = [_rotate(path, matrix) for path in drawings]
    raw: list[Rule] = []
    curves: list[tuple[float, float]] = []  # bezier start points: curves mark drawings, not tables
    for path in drawings:
        stroked = "s" in (path.get("type") or "")
        for item in path.get("items", ()):
            kind = item[0]
            if kind == "c":
                curves.append((float(item[1][0]), float(item[1][1])))
            elif kind == "l":
                (x0, y0), (x1, y1) = item[1], item[2]
                _add_rule(raw, x0, y0, x1, y1)
            elif kind == "re":
                x0, y0, x1, y1 = item[1]
                x0, x1 = min(x0, x1), max(x0, x1)
                y0, y1 = min(y0, y1), max(y0, y1)
                if y1 - y0 <= 2.5:
                    _add_rule(raw, x0, (y0 + y1) / 2, x1, (y0 + y1) / 2)
                elif x1 - x0 <= 2.5:
                    _add_rule(raw, (x0 + x1) / 2, y0, (x0 + x1) / 2, y1)
                elif stroked or path.get("fill") is not None:
                    # Cell borders drawn as rectangles, or shaded rows: their edges separate rows and columns.
                    _add_rule(raw, x0, y0, x1, y0)
                    _add_rule(raw, x0, y1, x1, y1)
                    _add_rule(raw, x0, y0, x0, y1)
                    _add_rule(raw, x1, y0, x1, y1)
    return _Strokes(_merge_rules(raw), curves, True, len(drawings))


def _rotate(path: dict, matrix: pymupdf.Matrix) -> dict:
    items = []
    for item in path.get("items", ()):
        if item[0] == "re":
            items.append(("re", tuple(pymupdf.Rect(item[1]) * matrix), *item[2:]))
        elif item[0] == "qu":  # a skewed rectangle: one quad of four corners
            items.append(("qu", tuple(tuple(corner) for corner in pymupdf.Quad(item[1]) * matrix)))
        else:
            items.append((item[0], *(tuple(pymupdf.Point(p) * matrix) for p in item[1:])))
    return {**path, "items": items}


def _add_rule(rules: list[Rule], x0: float, y0: float, x1: float, y1: float) -> None:
    if abs(y1 - y0) <= 1.0 and abs(x1 - x0) >= MIN_RULE_H:
        rules.append(Rule(True, (y0 + y1) / 2, min(x0, x1), max(x0, x1)))
    elif abs(x1 - x0) <= 1.0 and abs(y1 - y0) >= MIN_RULE_V:
        rules.append(Rule(False, (x0 + x1) / 2, min(y0, y1), max(y0, y1)))


def _merge_rules(rules: list[Rule]) -> list[Rule]:
    """Join collinear strokes that touch: many generators draw a grid line as one segment per cell."""
    out: list[Rule] = []
    for horizontal in (True, False):
        group = sorted((r for r in rules if r.horizontal == horizontal), key=lambda r: (round(r.pos), r.lo))
        current: Rule | None = None
        for r in group:
            if current is not None and abs(r.pos - current.pos) <= 1.2 and r.lo <= current.hi + 3.0:
                current.hi = max(current.hi, r.hi)
                continue
            if current is not None:
                out.append(current)
            current = Rule(horizontal, r.pos, r.lo, r.hi)
        if current is not None:
            out.append(current)
    return out


# -- regions -----------------------------------------------------------------------------------------------------

def _regions(page: PageInfo, strokes: _Strokes) -> list[tuple[list[float], bool]]:
    """Table bboxes: ruled grids first, then text-aligned regions that no grid already covers. Areas drawn with
    curves are figures (dimension drawings, plots), whatever their alignment."""
    area = page.width * page.height
    found: list[tuple[list[float], bool]] = []
    for bbox, n_h, n_v in _split_frames(_rule_components(strokes.rules), strokes.rules, page):
        w, h = bbox[2] - bbox[0], bbox[3] - bbox[1]
        if w < 60 or h < 12 or w * h > 0.9 * area:
            continue
        if n_h + n_v < 5 and not (n_h >= 3):
            continue  # a plain box (4 edges) frames a figure or a note, not a grid
        if _tabular_rows(page, bbox) < 2 or strokes.curves_in(bbox) > 4:
            continue
        found.append((bbox, True))
    for region in page.table_regions:
        if any(_overlap(region, b) > 0.3 * _area(region) for b, _ in found):
            continue
        found.append((list(region), False))
    # A text region that merely extends a grid (a header above the first rule) is absorbed into it.
    return _dedupe(found)


def _rule_components(rules: list[Rule]) -> list[tuple[list[float], int, int]]:
    """Connected groups of rules: crossing/touching H and V strokes, plus stacks of parallel H rules of similar
    extent (grids without vertical lines)."""
    n = len(rules)
    if not n:
        return []
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[ri] = rj

    hs = [i for i, r in enumerate(rules) if r.horizontal]
    vs = sorted((i for i, r in enumerate(rules) if not r.horizontal), key=lambda i: rules[i].pos)
    v_pos = [rules[i].pos for i in vs]
    tol = 2.5
    for i in hs:
        h = rules[i]
        for j in vs[bisect.bisect_left(v_pos, h.lo - tol): bisect.bisect_right(v_pos, h.hi + tol)]:
            v = rules[j]
            if v.lo - tol <= h.pos <= v.hi + tol:
                union(i, j)
    # Horizontal-only grids (no vertical strokes at all): stack parallel rules of the same extent.
    v_roots = {find(j) for j in vs}
    crossed = {i for i in hs if find(i) in v_roots}
    hs_sorted = sorted((i for i in hs if i not in crossed), key=lambda i: rules[i].pos)
    for a_pos, i in enumerate(hs_sorted):
        a = rules[i]
        for j in hs_sorted[a_pos + 1:]:
            b = rules[j]
            if b.pos - a.pos > 80:
                break
            if abs(a.lo - b.lo) < 6 and abs(a.hi - b.hi) < 6 and a.hi - a.lo > 60:
                union(i, j)
                break
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    out = []
    for members in groups.values():
        rs = [rules[i] for i in members]
        x0 = min(r.lo if r.horizontal else r.pos for r in rs)
        x1 = max(r.hi if r.horizontal else r.pos for r in rs)
        y0 = min(r.pos if r.horizontal else r.lo for r in rs)
        y1 = max(r.pos if r.horizontal else r.hi for r in rs)
        n_h = len({round(r.pos) for r in rs if r.horizontal})
        n_v = len({round(r.pos) for r in rs if not r.horizontal})
        out.append(([x0, y0, x1, y1], n_h, n_v))
    return out


def _split_frames(components: list[tuple[list[float], int, int]], rules: list[Rule],
                  page: PageInfo) -> list[tuple[list[float], int, int]]:
    """A page frame (or a box around several tables) joins every grid that touches it into one component.
    Split such a component along the y-ranges its internal vertical rules cover: each range is one table."""
    out = []
    for bbox, n_h, n_v in components:
        height = bbox[3] - bbox[1]
        if height < 0.45 * page.height:
            out.append((bbox, n_h, n_v))
            continue
        inside = [r for r in rules if _rule_in(r, bbox, tol=0.5)]
        if any(not r.horizontal and r.hi - r.lo >= 0.8 * height and bbox[0] + 3 < r.pos < bbox[2] - 3
               for r in inside):
            out.append((bbox, n_h, n_v))  # column lines from top to bottom: one tall table, not a frame
            continue
        internal_v = sorted((r for r in inside if not r.horizontal and r.hi - r.lo < 0.8 * height
                             and bbox[0] + 3 < r.pos < bbox[2] - 3), key=lambda r: r.lo)
        spans: list[list[float]] = []
        for r in internal_v:
            if spans and r.lo <= spans[-1][1] + 3:
                spans[-1][1] = max(spans[-1][1], r.hi)
            else:
                spans.append([r.lo, r.hi])
        for lo, hi in spans:
            hs = [r for r in inside if r.horizontal and lo - 3 <= r.pos <= hi + 3]
            if len(hs) < 2:
                continue
            sub = [min(r.lo for r in hs), lo, max(r.hi for r in hs), hi]
            out.append((sub, len({round(r.pos) for r in hs}), 3))
    return out


def _tabular_rows(page: PageInfo, bbox: list[float]) -> int:
    rows: dict[int, int] = {}
    for ln in page.lines:
        if _inside(ln.x0, ln.y0, ln.x1, ln.y1, bbox):
            rows[ln.row] = rows.get(ln.row, 0) + 1
    return sum(1 for c in rows.values() if c >= 2)


def _dedupe(found: list[tuple[list[float], bool]]) -> list[tuple[list[float], bool]]:
    out: list[tuple[list[float], bool]] = []
    for bbox, ruled in sorted(found, key=lambda f: -_area(f[0])):
        if any(_overlap(bbox, b) > 0.5 * _area(bbox) for b, _ in out):
            continue
        out.append((bbox, ruled))
    return out


def _area(b: list[float]) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _overlap(a: list[float], b: list[float]) -> float:
    return _area([max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])])


def _inside(x0: float, y0: float, x1: float, y1: float, bbox: list[float], tol: float = 1.5) -> bool:
    xc, yc = (x0 + x1) / 2, (y0 + y1) / 2
    return bbox[0] - tol <= xc <= bbox[2] + tol and bbox[1] - tol <= yc <= bbox[3] + tol


# -- grid --------------------------------------------------------------------------------------------------------

@dataclass
class _Band:
    top: float
    bottom: float
    top_rule: list[tuple[float, float]] | None  # x-extents of the rule above (None: region edge)
    ruled: bool


def _build_table(page: PageInfo, bbox: list[float], rules: list[Rule], ruled: bool) -> Table | None:
    indices = [i for i, ln in enumerate(page.lines)
               if not ln.furniture and _inside(ln.x0, ln.y0, ln.x1, ln.y1, bbox)]
    if len(indices) < 3:
        return None
    cells = [c for c in cells_from_words(page.lines, page.words, indices) if c.text]
    if len(cells) < 3:
        return None
    line_h = statistics.median(c.y1 - c.y0 for c in cells)
    width, height = bbox[2] - bbox[0], bbox[3] - bbox[1]
    inner = [r for r in rules if _rule_in(r, bbox)]
    columns = [x for x in _covered_positions([r for r in inner if not r.horizontal], bbox[1], bbox[3], 0.25 * height)
               if bbox[0] + 3 < x < bbox[2] - 3]
    if columns:
        bounds = _refine_with_gutters(cells, [bbox[0] - 1] + columns + [bbox[2] + 1])
    else:
        bounds = _gutter_columns(cells, bbox)
    keys = {(page.lines[i].block, page.lines[i].line) for i in indices}
    words = [w for w in page.words if (w.block, w.line) in keys]
    line_keys = [(ln.block, ln.line) for ln in page.lines]
    headers, above, split = _limit_headers(page, bbox, cells, words, line_keys, bounds)
    named = set(split) - set(bounds)  # boundaries between two limit headers: a value crossing one is not shared
    bounds = split
    if len(bounds) < 3:
        return None  # one column is a list, not a table
    cells = split_cells(cells, words, line_keys, bounds, headers)
    rows_at = set(_covered_positions([r for r in inner if r.horizontal], bbox[0], bbox[2], 0.25 * width))
    h_rules = [r for r in inner if r.horizontal and any(abs(r.pos - y) <= 2.0 for y in rows_at)
               and bbox[1] + 1 < r.pos < bbox[3] - 1]
    bands = _bands(bbox, h_rules, ruled)
    n_cols = len(bounds) - 1
    v_all = [r for r in inner if not r.horizontal]
    col_of = [_column(c, bounds) for c in cells]
    value_cols = _value_columns(cells, col_of, n_cols)
    grid: list[list[list[Cell]]] = []
    row_band: list[int] = []
    row_width: list[int] = []  # effective number of columns of the band the row belongs to
    for b_idx, band in enumerate(bands):
        members = [(c, col_of[k]) for k, c in enumerate(cells) if band.top - 0.5 <= c.yc < band.bottom + 0.5]
        if not members:
            continue
        leader = list(range(n_cols))
        if columns:
            members, leader = _merge_across_missing_rules(members, bounds, v_all, band, named)
        effective = len(set(leader))
        for sub in _split_band(members, line_h, n_cols, band, value_cols, ruled):
            _spread_values(sub, leader)
            grid.append(sub)
            row_band.append(b_idx)
            row_width.append(effective)
    if not grid:
        return None
    _fill_spanning(grid, row_band, bands, bounds)
    rows = [[_join(cell_list) for cell_list in row] for row in grid]
    bold = [[bool(cell_list) and all(c.bold for c in cell_list) for cell_list in row] for row in grid]
    title = _title_above(page, bbox, line_h)
    captions: list[str] = []
    while len(rows) > 2 and not any(is_value(c) for c in rows[0]) and (
            sum(1 for c in rows[0] if c) == 1 or (row_width[0] <= max(2, n_cols // 3) and row_width[1] > row_width[0])):
        # A caption boxed inside the grid ("ABSOLUTE MAXIMUM RATINGS", a conditions preamble) is not a row.
        captions.append(" ".join(c for c in rows[0] if c))
        rows, bold, row_width = rows[1:], bold[1:], row_width[1:]
    if captions:
        title = collapse_ws(" ".join(([title] if title else []) + captions))
    labels = header_labels(above[1], bounds) if above is not None else []
    if above is not None and _takes_header_above(rows, labels):
        rows.insert(0, labels)
        bold.insert(0, [False] * n_cols)
    rows, bold, bounds = _drop_empty(rows, bold, bounds)
    if len(rows) < 2 or len(rows[0]) < 2:
        return None
    return Table(bbox=[round(v, 1) for v in bbox], rows=rows, header_rows=_header_rows(rows, bold),
                 columns=[round(b, 1) for b in bounds], title=title, method="ruled" if ruled else "aligned",
                 bold=bold)


def _limit_headers(page: PageInfo, bbox: list[float], cells: list[Cell], words: list[Word],
                   line_keys: list[tuple[int, int]], bounds: list[float],
                   ) -> tuple[list[RoleRow], tuple[RoleRow, list[Word]] | None, list[float]]:
    """The table's Min/Typ/Max header rows, or else the one printed above it (with all its words), and the
    column boundaries they call for (see ``app.documents.column_roles``)."""
    headers = role_rows(words, cells)
    if headers:
        return headers, None, split_role_columns(bounds, words, headers)
    above = role_row_above(_words_above(page, bbox), bbox, words)
    if above is None:
        return [], None, bounds
    split = split_role_columns(bounds, words, [above[0]])
    if not _values_under(above[0], split_cells(cells, words, line_keys, split, []), split):
        return [], None, bounds
    return [], above, split


def _words_above(page: PageInfo, bbox: list[float]) -> list[Word]:
    keys = {(ln.block, ln.line) for ln in page.lines if not ln.furniture and ln.y1 <= bbox[1] + 1}
    return [w for w in page.words if (w.block, w.line) in keys]


def _values_under(above: RoleRow, cells: list[Cell], bounds: list[float]) -> bool:
    """A header row above the table names its columns only if values stand under every one of its limit words,
    and some row holds values under two of them (the columns line up, it is not another table's header)."""
    limits = limit_columns(above, bounds)
    by_row: dict[int, set[int]] = {}
    for c in cells:
        k = _column(c, bounds)
        if k in limits and is_value(c.text):
            by_row.setdefault(round(c.yc), set()).add(k)
    filled = set().union(*by_row.values()) if by_row else set()
    return len(limits) >= 2 and filled == limits and any(len(ks) >= 2 for ks in by_row.values())


def _takes_header_above(rows: list[list[str]], labels: list[str]) -> bool:
    """The table opens with no header of its own (a header row would name a limit), and the header row above
    labels every column the table fills: a header set on two lines ("Values" over "Min Typ Max", "Unit" centred
    across both) would otherwise leave some columns unnamed."""
    if not rows or any(word_role(word) for cell in rows[0] for word in cell.split()):
        return False
    return all(labels[k] for k in range(len(labels)) if any(k < len(row) and row[k] for row in rows))


def _rule_in(rule: Rule, bbox: list[float], tol: float = 3.0) -> bool:
    if rule.horizontal:
        return bbox[1] - tol <= rule.pos <= bbox[3] + tol and rule.hi > bbox[0] - tol and rule.lo < bbox[2] + tol
    return bbox[0] - tol <= rule.pos <= bbox[2] + tol and rule.hi > bbox[1] - tol and rule.lo < bbox[3] + tol


def _covered_positions(rules: list[Rule], lo: float, hi: float, need: float) -> list[float]:
    """Positions (x of vertical, y of horizontal rules, merged within 2pt) whose strokes, summed, cover at least
    ``need`` of the table's extent: a grid line drawn in pieces (one per cell or shaded row) still counts."""
    groups: list[tuple[float, float]] = []  # (position, covered length)
    for r in sorted(rules, key=lambda r: r.pos):
        length = max(0.0, min(r.hi, hi) - max(r.lo, lo))
        if groups and r.pos - groups[-1][0] <= 2.0:
            groups[-1] = (groups[-1][0], groups[-1][1] + length)
        else:
            groups.append((r.pos, length))
    return [pos for pos, covered in groups if covered >= need]


def _gutter_columns(cells: list[Cell], bbox: list[float]) -> list[float]:
    """Column boundaries in whitespace gutters: x ranges no (non-spanning) cell covers. Sparse columns (a value
    centred across two columns) are folded back so they do not become columns of their own."""
    x0, x1 = bbox[0], bbox[2]
    lo = int(x0) - 1
    cover = [0] * (int(x1) - lo + 3)
    skip_wide = 0.5 * (x1 - x0)
    # Data rows (rows holding a value) define the columns; multi-line headers often straddle the gutters.
    rows = _visual_rows(list(cells))
    data = [c for r in rows if len(r) >= 2 and any(is_value(c.text) for c in r) for c in r]
    if len({round(c.yc) for c in data}) >= 3:
        cells = data
    for c in cells:
        if c.x1 - c.x0 > skip_wide:
            continue
        for x in range(max(int(c.x0) - lo, 0), min(int(c.x1) - lo + 1, len(cover))):
            cover[x] += 1
    bounds = [x0 - 1]
    start = None
    for i, v in enumerate(cover):
        if v == 0 and start is None:
            start = i
        elif v != 0 and start is not None:
            if start > 0 and i - start >= 2:
                bounds.append(lo + (start + i) / 2)
            start = None
    bounds.append(x1 + 1)
    return _fold_sparse(cells, bounds)


def _fold_sparse(cells: list[Cell], bounds: list[float]) -> list[float]:
    n_rows = len({round(c.yc) for c in cells})
    if n_rows < 5:
        return bounds
    changed = True
    while changed and len(bounds) > 3:
        changed = False
        counts = [0] * (len(bounds) - 1)
        for c in cells:
            counts[_column(c, bounds)] += 1
        for k in range(1, len(counts) - 1):
            if counts[k] <= max(1, int(0.1 * n_rows)) and counts[k - 1] > counts[k] and counts[k + 1] > counts[k]:
                members = [c for c in cells if _column(c, bounds) == k]
                xc = statistics.mean(c.xc for c in members) if members else (bounds[k] + bounds[k + 1]) / 2
                del bounds[k + 1 if xc - bounds[k] <= bounds[k + 1] - xc else k]
                changed = True
                break
    return bounds


def _refine_with_gutters(cells: list[Cell], bounds: list[float]) -> list[float]:
    """Ruled tables sometimes omit a vertical rule between two columns: split a ruled column where most rows
    leave the same gutter (two aligned sub-columns, not ragged text)."""
    out = [bounds[0]]
    for a, b in zip(bounds, bounds[1:], strict=False):
        inside = [c for c in cells if a <= c.xc < b]
        rows = {round(c.yc) for c in inside}
        if len(rows) >= 4 and len(inside) > len(rows):
            for x in _gutter_columns(inside, [a, 0, b, 0])[1:-1]:
                left = {round(c.yc) for c in inside if c.x1 < x}
                right = {round(c.yc) for c in inside if c.x0 > x}
                if len(left & right) >= 0.6 * len(rows):
                    out.append(x)
        out.append(b)
    return sorted(out)


def _column(cell: Cell, bounds: list[float]) -> int:
    xc = cell.xc
    for k in range(len(bounds) - 1):
        if xc < bounds[k + 1]:
            return k
    return len(bounds) - 2


def _value_columns(cells: list[Cell], col_of: list[int], n_cols: int) -> set[int]:
    """Columns (other than the first) where most cells are values: min/typ/max, ratings."""
    total = [0] * n_cols
    values = [0] * n_cols
    for c, col in zip(cells, col_of, strict=False):
        total[col] += 1
        values[col] += is_value(c.text)
    return {k for k in range(1, n_cols) if values[k] >= 2 and values[k] >= 0.5 * total[k]}


def _merge_across_missing_rules(members: list[tuple[Cell, int]], bounds: list[float], v_rules: list[Rule],
                                band: _Band, named: set[float]) -> tuple[list[tuple[Cell, int]], list[int]]:
    """Inside a band, a column boundary with no vertical rule through it joins its neighbours (a caption, a note,
    or one value shared by two columns): cells move to the leftmost column of their span. A boundary between two
    limit headers (``named``) always holds: a wide value under it belongs where its centre is. Returns the
    members and, per column, the leftmost column of its span."""
    mid = (band.top + band.bottom) / 2
    present = [True]
    for x in bounds[1:-1]:
        ruled_here = any(abs(r.pos - x) <= 2.5 and r.lo <= mid <= r.hi for r in v_rules)
        # Zebra tables draw column edges on shaded rows only: merge only where text actually crosses the line.
        crossed = any(c.x0 < x - 2 and c.x1 > x + 2 for c, _ in members)
        present.append(ruled_here or not crossed or x in named)
    leader = []
    current = 0
    for k, has_rule in enumerate(present):
        if has_rule:
            current = k
        leader.append(current)
    if all(present):
        return members, leader
    return [(c, leader[col]) for c, col in members], leader


def _spread_values(row: list[list[Cell]], leader: list[int]) -> None:
    """A value printed once across merged columns (the same speed for the 12 V and 24 V versions) belongs to
    each of them."""
    for col, lead in enumerate(leader):
        if lead != col and not row[col] and row[lead] and all(is_value(c.text) for c in row[lead]):
            row[col] = list(row[lead])


def _bands(bbox: list[float], h_rules: list[Rule], ruled: bool) -> list[_Band]:
    positions: list[tuple[float, list[tuple[float, float]]]] = []
    for r in sorted(h_rules, key=lambda r: r.pos):
        if positions and r.pos - positions[-1][0] <= 2.0:
            positions[-1][1].append((r.lo, r.hi))
        else:
            positions.append((r.pos, [(r.lo, r.hi)]))
    edges: list[tuple[float, list[tuple[float, float]] | None]] = [(bbox[1] - 2, None)]
    edges += [(pos, extents) for pos, extents in positions]
    edges.append((bbox[3] + 2, None))
    bands = []
    for (top, top_rule), (bottom, _) in zip(edges, edges[1:], strict=False):
        if bottom - top >= 1.0:
            bands.append(_Band(top, bottom, top_rule, ruled))
    return bands


def _split_band(members: list[tuple[Cell, int]], line_h: float, n_cols: int, band: _Band,
                value_cols: set[int], ruled: bool) -> list[list[list[Cell]]]:
    """Rows inside one band, anchored on the value cells of value columns (see module docstring)."""
    by_col: dict[int, list[Cell]] = {}
    for c, col in members:
        by_col.setdefault(col, []).append(c)
    anchors = []
    for c, col in members:
        if col not in value_cols or not is_value(c.text):
            continue
        # A value directly under a label in the same cell continues it ("VDD +" / "8.0V"), it starts no row.
        above = [o for o in by_col[col] if o is not c and o.y1 <= c.y0 + 1 and c.y0 - o.y1 < 0.5 * line_h]
        if any(not is_value(o.text) for o in above):
            continue
        anchors.append(c)
    if not anchors:
        if band.ruled:
            anchors = [c for c, _ in members][:1]  # a ruled cell without values is one row
        else:
            anchors = [c for c, col in members if col == 0] or [c for c, _ in members]
    anchors.sort(key=lambda c: c.yc)
    clusters: list[list[Cell]] = []
    for c in anchors:
        if clusters and c.yc - statistics.mean(a.yc for a in clusters[-1]) <= 0.6 * line_h:
            clusters[-1].append(c)
        else:
            clusters.append([c])
    if band.ruled and len(clusters) == 1:
        spans = [(band.top, band.bottom)]
    else:
        spans = [(min(c.y0 for c in cl), max(c.y1 for c in cl)) for cl in clusters]
    if not ruled:
        # Without rules, lines well above the first value row are header rows, not part of the first row.
        head = [(c, col) for c, col in members if c.yc < spans[0][0] - 0.6 * line_h]
        if head:
            head_rows = _visual_rows([c for c, _ in head])
            spans = [(min(c.y0 for c in r), max(c.y1 for c in r)) for r in head_rows] + spans
    rows: list[list[list[Cell]]] = [[[] for _ in range(n_cols)] for _ in spans]
    for c, col in sorted(members, key=lambda m: (m[0].yc, m[0].x0)):
        rows[_nearest_span(c, spans)][col].append(c)
    # A label cell (symbol, unit, parameter) standing alone in a ruled band names every sub-row of the band.
    if band.ruled and len(rows) > 1:
        mid, half = (band.top + band.bottom) / 2, (band.bottom - band.top) / 2
        for col in range(n_cols):
            filled = [r for r in rows if r[col]]
            if len(filled) != 1 or len(filled[0][col]) != 1 or col in value_cols:
                continue
            only = filled[0][col][0]
            if is_value(only.text) and len(only.text) > 1:
                continue
            if len(only.text) <= 15 or abs(only.yc - mid) <= 0.4 * half:
                for r in rows:
                    if not r[col]:
                        r[col] = [only]
    return rows


def _visual_rows(cells: list[Cell]) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    for c in sorted(cells, key=lambda c: c.yc):
        if rows and min(rows[-1][0].y1, c.y1) - max(rows[-1][0].y0, c.y0) >= 0.3 * (c.y1 - c.y0):
            rows[-1].append(c)
        else:
            rows.append([c])
    return rows


def _nearest_span(c: Cell, spans: list[tuple[float, float]]) -> int:
    yc = c.yc
    for k, (top, bottom) in enumerate(spans):
        if top - 1 <= yc <= bottom + 1:
            return k
    if yc < spans[0][0]:
        return 0
    if yc > spans[-1][1]:
        return len(spans) - 1
    for k in range(len(spans) - 1):
        if spans[k][1] < yc < spans[k + 1][0]:
            return k if yc - spans[k][1] <= spans[k + 1][0] - yc else k + 1
    return 0


def _fill_spanning(grid: list[list[list[Cell]]], row_band: list[int], bands: list[_Band], bounds: list[float]) -> None:
    """Vertically merged cells: bands not separated by a rule in some column form one cell there; its content
    (found on one row) is repeated on every row of the run, so each row reads on its own."""
    by_band: dict[int, list[int]] = {}
    for r, b in enumerate(row_band):
        by_band.setdefault(b, []).append(r)
    order = sorted(by_band)
    for col in range(len(bounds) - 1):
        xc = (bounds[col] + bounds[col + 1]) / 2
        runs: list[list[int]] = [[order[0]]]
        for b in order[1:]:
            top_rule = bands[b].top_rule
            open_above = top_rule is not None and not any(lo - 1 <= xc <= hi + 1 for lo, hi in top_rule)
            if open_above and runs[-1][-1] == b - 1:
                runs[-1].append(b)
            else:
                runs.append([b])
        for run in runs:
            if len(run) < 2:
                continue
            rows = [r for b in run for r in by_band[b]]
            filled = [r for r in rows if grid[r][col]]
            if not filled or any(grid[r][col] != grid[filled[0]][col] for r in filled[1:]):
                continue  # several different contents: separate cells after all
            for r in rows:
                if not grid[r][col]:
                    grid[r][col] = list(grid[filled[0]][col])


def _join(cells: list[Cell]) -> str:
    """Cell text in reading order: visual lines top to bottom (superscripts stay on their line), left to right."""
    lines: list[list[Cell]] = []
    for c in sorted(cells, key=lambda c: c.yc):
        if lines:
            ref = lines[-1][0]
            if min(ref.y1, c.y1) - max(ref.y0, c.y0) >= 0.5 * min(ref.y1 - ref.y0, c.y1 - c.y0):
                lines[-1].append(c)
                continue
        lines.append([c])
    out: list[str] = []
    for line in lines:
        for c in sorted(line, key=lambda c: c.x0):
            if c.text not in out:  # a repeated (filled) cell must not appear twice in one cell
                out.append(c.text)
    return collapse_ws(" ".join(out))


def _drop_empty(rows: list[list[str]], bold: list[list[bool]],
                bounds: list[float]) -> tuple[list[list[str]], list[list[bool]], list[float]]:
    keep_cols = [c for c in range(len(rows[0])) if any(r[c] for r in rows)] if rows else []
    rows2, bold2 = [], []
    for r, b in zip(rows, bold, strict=False):
        if any(r[c] for c in keep_cols):
            rows2.append([r[c] for c in keep_cols])
            bold2.append([b[c] for c in keep_cols])
    new_bounds = [bounds[c] for c in keep_cols] + ([bounds[keep_cols[-1] + 1]] if keep_cols else [])
    return rows2, bold2, new_bounds


def _header_rows(rows: list[list[str]], bold: list[list[bool]]) -> int:
    """Leading rows set in bold, or a first row of labels above rows of values."""
    has_values = [any(is_value(c) for c in row[1:]) for row in rows]
    count = 0
    for r in range(min(3, len(rows) - 1)):
        cells = [k for k, v in enumerate(rows[r]) if v]
        if not cells:
            break
        all_bold = all(bold[r][k] for k in cells)
        if (all_bold and len(cells) >= 2) or (r == 0 and not has_values[0] and any(has_values[1:])
                                             and len(cells) >= 2):
            count += 1
            continue
        break
    if count == 0 and rows and not has_values[0] and len([c for c in rows[0] if c]) >= max(2, len(rows[0]) - 1):
        count = 1
    return count


def _title_above(page: PageInfo, bbox: list[float], line_h: float) -> str | None:
    best = None
    for ln in page.lines:
        if ln.furniture or ln.y1 > bbox[1] + 1 or bbox[1] - ln.y1 > 2.5 * line_h:
            continue
        if ln.x1 < bbox[0] - 5 or ln.x0 > bbox[2] + 5:
            continue
        if best is None or ln.y1 > best.y1:
            best = ln
    if best is None:
        return None
    text = collapse_ws(best.text)
    return text if 2 < len(text) <= 160 else None


# -- continuation across pages --------------------------------------------------------------------------------

_CONTINUED_RE = re.compile(r"\(?\s*cont(inued|'d|\.)", re.IGNORECASE)


def continues_on_next_page(index: DatasheetIndex, page_number: int, table_index: int) -> bool:
    """The table runs to the bottom of its page and the next page opens with a matching table."""
    tables = page_tables(index, page_number)
    if not tables or table_index != len(tables) - 1 or page_number >= index.page_count:
        return False
    if not _ends_page(index.page(page_number), tables[table_index]) or (page_number + 1) not in index.table_pages:
        return False
    following = page_tables(index, page_number + 1)
    return bool(following) and _opens_page(index.page(page_number + 1), following[0]) and _compatible(
        tables[table_index], following[0])


def continued_from_previous_page(index: DatasheetIndex, page_number: int, table_index: int) -> bool:
    if table_index != 0 or page_number <= 1:
        return False
    tables = page_tables(index, page_number)
    if not tables:
        return False
    first = tables[0]
    if first.title and _CONTINUED_RE.search(first.title):
        return True
    if not _opens_page(index.page(page_number), first) or (page_number - 1) not in index.table_pages:
        return False  # decided without building the previous page's tables
    return continues_on_next_page(index, page_number - 1, len(page_tables(index, page_number - 1)) - 1)


def _body_lines_outside(page: PageInfo, table: Table, below: bool) -> int:
    count = 0
    for ln in page.lines:
        if ln.furniture or not ln.text.strip():
            continue
        if (below and ln.y0 >= table.bbox[3] - 1) or (not below and ln.y1 <= table.bbox[1] + 1):
            count += 1
    return count


def _ends_page(page: PageInfo, table: Table) -> bool:
    # Allow a footnote line or two under the table; anything more is body text after the table.
    return _body_lines_outside(page, table, below=True) <= 2 and table.bbox[3] > 0.6 * page.height


def _opens_page(page: PageInfo, table: Table) -> bool:
    if table.title and _CONTINUED_RE.search(table.title):
        return True
    return _body_lines_outside(page, table, below=False) <= 3 and table.bbox[1] < 0.4 * page.height


def _compatible(a: Table, b: Table) -> bool:
    if abs(a.n_cols - b.n_cols) > 1:
        return False
    if a.header_rows and b.header_rows and a.rows[0] == b.rows[0]:
        return True  # the header repeated on the new page
    width_a, width_b = a.bbox[2] - a.bbox[0], b.bbox[2] - b.bbox[0]
    return abs(a.bbox[0] - b.bbox[0]) < 25 and abs(width_a - width_b) < 0.15 * max(width_a, width_b)


# -- fallback ----------------------------------------------------------------------------------------------------

def _find_tables_fallback(index: DatasheetIndex, page_number: int) -> list[Table]:
    try:
        doc = pymupdf.open(str(index.path))
        try:
            pg = doc.load_page(page_number - 1)  # keep the page alive: the finder holds weak references to it
            found = pg.find_tables(use_layout=False)
            tables = []
            for t in found.tables:
                data = [[collapse_ws(c or "") for c in row] for row in t.extract()]
                if len(data) < 2 or len(data[0]) < 2:
                    continue
                header = 1 if t.header and not t.header.external else 0
                tables.append(Table(bbox=[round(v, 1) for v in t.bbox], rows=data, header_rows=header,
                                    columns=[], title=None, method="find_tables"))
            return tables
        finally:
            doc.close()
    except Exception as exc:  # noqa: BLE001 - the fallback is best effort
        log.warning("find_tables failed on page %d: %s", page_number, exc)
        return []
