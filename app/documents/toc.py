"""Table of contents: PDF bookmarks when they are good, otherwise reconstructed from headings.

Many datasheets ship without bookmarks, or with a single stray one; the model still needs a map with page
numbers. Reconstruction uses what typesetting gives away: larger or bold type on a line of its own, section
numbering ("7.2"), and the section names datasheets share ("Absolute Maximum Ratings", "Electrical
Characteristics", "Pin Description" ...). Each ToC carries a quality score so the overview can tell the model
when to double-check with search.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Sequence

from rapidfuzz import fuzz

from app.documents.index import Line, PageInfo, TocEntry
from app.documents.text import collapse_ws, is_decoration, match_key, strip_decoration

KNOWN_SECTIONS = tuple(match_key(s) for s in (
    "features", "description", "general description", "product description", "overview", "applications",
    "typical application", "typical applications", "application information", "applications information",
    "block diagram", "functional block diagram", "functional description", "detailed description",
    "pin configuration", "pin configurations", "pin description", "pin descriptions", "pin functions",
    "pin assignment", "pinout", "pin out", "absolute maximum ratings", "maximum ratings",
    "recommended operating conditions", "operating conditions", "electrical characteristics",
    "dc characteristics", "ac characteristics", "switching characteristics", "timing characteristics",
    "timing requirements", "thermal characteristics", "thermal information", "esd ratings", "specifications",
    "specification", "technical data", "technical specifications", "electrical specifications",
    "mechanical specifications", "typical characteristics", "typical performance characteristics",
    "typical performance curves", "characteristic curves", "ordering information", "package information",
    "package outline", "package dimensions", "mechanical dimensions", "dimensions", "outline dimensions",
    "packaging", "marking", "revision history", "schematic diagram", "power supply", "connector",
    "connectors", "pin definitions", "interface", "timing", "reliability", "handling", "soldering",
    "soldering profile", "order information", "environmental", "characteristics", "test circuit",
))

_NUMBERED_RE = re.compile(r"^((?:\d{1,2}\.)*\d{1,2})\.?\s+([A-Z][^\n]*)$")
_CAPTION_RE = re.compile(r"^(figure|fig\.|table|graph|chart)\s*\d", re.IGNORECASE)
_TABLE_CAPTION_RE = re.compile(r"^table\s*\d", re.IGNORECASE)
_BOILERPLATE_RE = re.compile(r"©|copyright|www\.|https?://|^page\s*\d+", re.IGNORECASE)


def from_bookmarks(raw: Sequence, pages: Sequence[PageInfo]) -> list[TocEntry]:
    """Bookmarks (``doc.get_toc()``) as entries with page ranges; ``y`` is set where the title is found in the page
    text, which is also what verifies a bookmark."""
    entries: list[TocEntry] = []
    n = len(pages)
    keys: dict[int, list[tuple[Line, str]]] = {}
    for item in raw:
        level, title, page = int(item[0]), collapse_ws(str(item[1])), int(item[2])
        if not title or page < 1 or page > n:
            continue
        if page not in keys:
            keys[page] = [(ln, "" if ln.furniture else match_key(ln.text)) for ln in pages[page - 1].lines]
        y = _find_heading_y(keys[page], title)
        m = _NUMBERED_RE.match(title)
        entries.append(TocEntry(title=title, level=max(1, level), page_start=page, page_end=page,
                                number=m.group(1) if m else None, y=y))
    _fill_ranges(entries, pages)
    return entries


def _find_heading_y(keys: list[tuple[Line, str]], title: str) -> float | None:
    """Top of the line (or two consecutive lines) of a page (given as (line, match key) pairs) spelling ``title``."""
    key = match_key(title)
    if not key:
        return None
    best, best_y = 0.0, None
    for i, (ln, line_key) in enumerate(keys):
        if not line_key or len(line_key) > 3 * len(key) + 10:
            continue
        score = fuzz.ratio(key, line_key)
        if score < 80 and i + 1 < len(keys) and len(line_key) < len(key):
            score = fuzz.ratio(key, f"{line_key} {keys[i + 1][1]}")  # title wrapped onto two lines
        if score > best:
            best, best_y = score, ln.y0
    return best_y if best >= 80 else None



def bookmark_quality(entries: Sequence[TocEntry], pages: Sequence[PageInfo]) -> float:
    """0..1: share of titles found on their page, share of pages covered, and a sensible entry count."""
    if not entries:
        return 0.0
    n = len(pages)
    verified = sum(1 for e in entries if e.y is not None) / len(entries)
    first = min(e.page_start for e in entries)
    covered = (n - first + 1) / n
    count = min(1.0, len(entries) / max(2.0, min(8.0, n / 2)))
    return round(0.45 * verified + 0.35 * covered + 0.2 * count, 3)


def reconstruct(pages: Sequence[PageInfo]) -> tuple[list[TocEntry], float]:
    """Headings found by typography, numbering and known section names; returns (entries, quality)."""
    body_size = _body_size(pages)
    body_color = _body_color(pages)
    bold_signal = _bold_share(pages) < 0.5  # a document set in a heavy weight throughout has no bold cue
    candidates: list[tuple[int, Line, str | None, bool]] = []  # (page, line, number, known)
    for page in pages:
        lines = page.lines
        rows: dict[int, list[Line]] = {}
        for ln in lines:
            if not is_decoration(ln.text):  # a bullet glyph beside a heading does not make it share its row
                rows.setdefault(ln.row, []).append(ln)
        for idx, ln in enumerate(lines):
            mates = rows.get(ln.row, [ln])
            alone = len(mates) == 1 or (len(mates) == 2 and _is_number(mates[0] if mates[1] is ln else mates[1]))
            verdict = _heading_verdict(ln if bold_signal else _unbolded(ln), body_size, alone=alone,
                                       body_color=body_color)
            if verdict is None:
                continue
            number, known = verdict
            if idx and candidates and candidates[-1][0] == page.number and _continues(candidates[-1][1], ln):
                prev_page, prev, prev_number, prev_known = candidates[-1]
                merged = Line(prev.x0, prev.y0, max(prev.x1, ln.x1), ln.y1, f"{prev.text.strip()} {ln.text.strip()}",
                              prev.size, prev.bold, prev.block, prev.line, prev.row)
                candidates[-1] = (prev_page, merged, prev_number, prev_known or known)
                continue
            candidates.append((page.number, ln, number, known))
    if not candidates:
        return [], 0.0
    # Too many candidates means bold/large body text crept in: keep the stronger signals only.
    limit = max(6, 4 * len(pages))
    if len(candidates) > limit:
        strong = [c for c in candidates if c[2] or c[3] or c[1].size >= body_size + 1.5]
        candidates = strong if strong else candidates[:limit]
    sizes = sorted({round(c[1].size) for c in candidates if not c[2]}, reverse=True)
    entries: list[TocEntry] = []
    for page_no, ln, number, _known in candidates:
        title = strip_decoration(collapse_ws(ln.text))
        if number:
            level = min(4, number.count(".") + 1)
        else:
            rank = sizes.index(round(ln.size)) if round(ln.size) in sizes else len(sizes)
            level = min(3, rank + 1)
        entries.append(TocEntry(title=title, level=level, page_start=page_no, page_end=page_no, number=number,
                                y=ln.y0))
    used = sorted({e.level for e in entries})
    for e in entries:  # no gaps: the shallowest level found is level 1
        e.level = used.index(e.level) + 1
    _fill_ranges(entries, pages)
    return entries, _reconstructed_quality(entries, candidates, len(pages))


def _is_number(ln: Line) -> bool:
    """A section number printed as a line of its own beside its heading ("4   Electrical characteristics")."""
    return re.fullmatch(r"\d{1,2}(\.\d{1,2})*\.?", ln.text.strip()) is not None


def _heading_verdict(ln: Line, body_size: float, alone: bool, body_color: int = 0) -> tuple[str | None, bool] | None:
    """(section number, is a known section name) when the line looks like a heading, else None."""
    if ln.furniture or ln.region >= 0:
        return None
    text = strip_decoration(collapse_ws(ln.text))
    if len(text) < 3 or len(text) > 90 or sum(ch.isalpha() for ch in text) < 3:
        return None
    if text[0].islower() or text.endswith((",", ";", ":")) and not _known(text.rstrip(":")):
        return None
    if len(text.split()) > 12 or text.count(".") > 3 and "..." in text:
        return None
    if _CAPTION_RE.match(text) and not _TABLE_CAPTION_RE.match(text) or _BOILERPLATE_RE.search(text):
        return None
    m = _NUMBERED_RE.match(text)
    number = m.group(1) if m else None
    known = _known(m.group(2) if m else text)
    bigger = ln.size >= body_size + 1.0
    emphasised = ln.bold or (text.isupper() and len(text.split()) >= 2) or (
        ln.color != body_color and _saturated(ln.color) and len(text) <= 60)
    if not alone and not (bigger and ln.size >= body_size + 3):
        return None
    if bigger and (emphasised or known or number or ln.size >= body_size + 2.5):
        return number, known
    if emphasised and ln.size >= body_size - 0.6 and (known or number or _TABLE_CAPTION_RE.match(text)):
        return number, known
    if emphasised and alone and ln.size >= body_size - 0.6 and len(text.split()) <= 8 and len(text) <= 60 \
            and not text.endswith(":"):
        return number, known  # a short bold line of its own: a run-in section title
    if known and alone and (emphasised or bigger):
        return number, known
    return None


def _known(text: str) -> bool:
    key = match_key(re.sub(r"\(.*?\)", "", text))
    if not key:
        return False
    return any(key == k or (key.startswith(k) and len(key) <= len(k) + 25) for k in KNOWN_SECTIONS)


def _continues(prev: Line, ln: Line) -> bool:
    """A heading wrapped onto a second line: same style, directly below, same left edge."""
    return (abs(prev.size - ln.size) < 0.3 and prev.bold == ln.bold and abs(prev.x0 - ln.x0) < 3
            and 0 <= ln.y0 - prev.y1 < 0.6 * max(ln.size, 1.0) and not _NUMBERED_RE.match(ln.text.strip()))


def _unbolded(ln: Line) -> Line:
    return Line(ln.x0, ln.y0, ln.x1, ln.y1, ln.text, ln.size, False, ln.block, ln.line, ln.row, ln.region,
                ln.offset, ln.furniture, ln.color)


def _bold_share(pages: Sequence[PageInfo]) -> float:
    bold = total = 0
    for page in pages:
        for ln in page.lines:
            if not ln.furniture:
                total += len(ln.text)
                bold += len(ln.text) if ln.bold else 0
    return bold / total if total else 0.0


def _body_color(pages: Sequence[PageInfo]) -> int:
    counts: Counter[int] = Counter()
    for page in pages:
        for ln in page.lines:
            if not ln.furniture:
                counts[ln.color] += len(ln.text)
    return counts.most_common(1)[0][0] if counts else 0


def _saturated(color: int) -> bool:
    """A real colour, not black or grey (grey text is usually a caption or a footnote)."""
    r, g, b = (color >> 16) & 255, (color >> 8) & 255, color & 255
    return max(r, g, b) - min(r, g, b) >= 60


def _body_size(pages: Sequence[PageInfo]) -> float:
    counts: Counter[float] = Counter()
    for page in pages:
        for ln in page.lines:
            if not ln.furniture:
                counts[round(ln.size * 2) / 2] += len(ln.text)
    return counts.most_common(1)[0][0] if counts else 10.0


def _reconstructed_quality(entries: Sequence[TocEntry], candidates: Sequence, n_pages: int) -> float:
    per_page = len(entries) / max(1, n_pages)
    density = 1.0 if 0.3 <= per_page <= 4 else (per_page / 0.3 if per_page < 0.3 else max(0.0, 1 - (per_page - 4) / 6))
    known = sum(1 for c in candidates if c[3])
    known_score = min(1.0, known / 3)
    numbered = sum(1 for c in candidates if c[2]) / max(1, len(candidates))
    levels = len({e.level for e in entries})
    structure = max(numbered, 0.6 if levels >= 2 else 0.3)
    pages_with = len({e.page_start for e in entries}) / max(1, n_pages)
    return round(0.3 * density + 0.35 * known_score + 0.2 * structure + 0.15 * min(1.0, pages_with * 2), 3)


def _fill_ranges(entries: list[TocEntry], pages: Sequence[PageInfo]) -> None:
    """page_end of each entry: up to the next entry of the same or a higher level (exclusive of its page when that
    entry starts at the top of its page)."""
    n = len(pages)
    for i, entry in enumerate(entries):
        end = n
        for nxt in entries[i + 1:]:
            if nxt.level <= entry.level:
                starts_at_top = nxt.y is not None and _at_top(pages[nxt.page_start - 1], nxt.y)
                end = nxt.page_start - 1 if starts_at_top else nxt.page_start
                break
        entry.page_end = max(entry.page_start, min(end, n))


def _at_top(page: PageInfo, y: float) -> bool:
    above = [ln for ln in page.lines if not ln.furniture and ln.y1 <= y + 1]
    return not above or y < 0.12 * page.height


def choose(bookmarks: list[TocEntry], b_quality: float, rebuilt: list[TocEntry],
           r_quality: float) -> tuple[list[TocEntry], str, float]:
    """Prefer bookmarks unless they are poor and the reconstruction is clearly better."""
    if bookmarks and (b_quality >= 0.5 and b_quality + 0.15 >= r_quality or not rebuilt):
        return bookmarks, "bookmarks", b_quality
    if rebuilt:
        return rebuilt, "reconstructed", r_quality
    return [], "none", 0.0


def prepend_front_matter(entries: list[TocEntry], rebuilt: Sequence[TocEntry]) -> list[TocEntry]:
    """Bookmarks that start after page 1 leave the front page (features, description) unreachable by name:
    borrow the reconstructed headings that precede the first bookmark."""
    if not entries or entries[0].page_start <= 1:
        return entries
    first = entries[0]
    front = [TocEntry(e.title, 1, e.page_start, e.page_end, e.number, e.y) for e in rebuilt
             if e.page_start < first.page_start]
    for i, e in enumerate(front):
        nxt = front[i + 1].page_start if i + 1 < len(front) else first.page_start
        e.page_end = max(e.page_start, nxt if i + 1 < len(front) else first.page_start - 1)
    return front + entries


class SectionLocator:
    """Breadcrumb ("4 Electrical characteristics > Table 3 ...") of any position in the document."""

    def __init__(self, toc: Sequence[TocEntry]):
        pairs: list[tuple[tuple[int, float], str]] = []
        stack: list[TocEntry] = []
        for entry in toc:
            while stack and stack[-1].level >= entry.level:
                stack.pop()
            stack.append(entry)
            pairs.append(((entry.page_start, entry.y if entry.y is not None else -1.0),
                          " > ".join(e.title for e in stack)))
        pairs.sort(key=lambda p: p[0])  # bookmarks are not always in reading order
        self._keys = [k for k, _ in pairs]
        self._paths = [p for _, p in pairs]

    def at(self, page: int, y: float) -> str | None:
        i = bisect.bisect_right(self._keys, (page, y + 0.5)) - 1
        return self._paths[i] if i >= 0 else None
