"""Build a DatasheetIndex from a PDF: one text extraction per page, under a time budget.

Per page we create a single PyMuPDF TextPage and read plain text, the line dictionary and the word boxes from
it (the text is byte-identical to ``page.get_text()``, which is what quotes are checked against). No
``find_tables`` and no drawing extraction happen here: table pages are detected from word alignment, and
tables are built lazily when asked for.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from pathlib import Path

import pymupdf

from app.documents import layout, toc
from app.documents.index import DatasheetIndex, IndexBuildError, Line, PageInfo, Word
from app.documents.text import collapse_ws

log = logging.getLogger(__name__)

TEXT_FLAGS = pymupdf.TEXTFLAGS_TEXT  # the flags page.get_text() uses: text must match what quotes are checked against
_PART_RE = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*[A-Z])(?=[A-Z0-9-]*\d)[A-Z0-9][A-Z0-9-]{2,22}[A-Z0-9](?![\w-])")
_PACKAGES = re.compile(r"^(?:P?DIP|SOIC|SOP|SSOP|TSSOP|MSOP|QFN|DFN|TDFN|SOT|TO|LQFP|TQFP|QFP|BGA|LGA|WLCSP|SC|"
                       r"ISO|IEC|EN|UL|DS|AN|REV|PAGE|QW|SMD|SMT|RoHS|FIG|TABLE)\b", re.IGNORECASE)


def build_index(path: Path, sha256: str, *, timeout_s: float, max_pages: int) -> DatasheetIndex:
    """Read the PDF at ``path`` into an index. Raises IndexBuildError for unusable files or an exhausted budget."""
    started = time.perf_counter()
    deadline = started + timeout_s
    doc = _open(path)
    try:
        n = doc.page_count
        if n == 0:
            raise IndexBuildError("The PDF has no pages.", code="empty_pdf")
        if n > max_pages:
            raise IndexBuildError(f"The PDF has {n} pages; the limit is {max_pages}.", code="too_many_pages")
        notes: list[str] = []
        pages: list[PageInfo] = []
        degraded = False
        failed: set[int] = set()
        for number in range(1, n + 1):
            if time.perf_counter() > deadline:
                raise IndexBuildError(
                    f"Indexing stopped after {number - 1} of {n} pages: the {timeout_s:g}s build budget ran out.",
                    code="index_timeout")
            try:
                pages.append(_read_page(doc, number))
            except Exception as exc:  # noqa: BLE001 - MuPDF raises several types for damaged pages
                degraded = True
                failed.add(number)
                notes.append(f"page {number} could not be read ({type(exc).__name__}: {exc}); it has no text")
                rect = _safe_rect(doc, number)
                pages.append(PageInfo(number=number, width=rect[0], height=rect[1], text=""))
        layout.mark_furniture([p.lines for p in pages], [p.height for p in pages])
        for page in pages:
            _analyse_layout(page)
            if time.perf_counter() > deadline:
                raise IndexBuildError(f"Indexing ran out of its {timeout_s:g}s budget during layout analysis.",
                                      code="index_timeout")
        metadata = {k: v for k, v in (doc.metadata or {}).items() if isinstance(v, str) and v}
        raw_toc = _safe_toc(doc, notes)
    finally:
        doc.close()

    bookmarks = toc.from_bookmarks(raw_toc, pages) if raw_toc else []
    b_quality = toc.bookmark_quality(bookmarks, pages)
    rebuilt, r_quality = toc.reconstruct(pages)
    entries, toc_source, toc_quality = toc.choose(bookmarks, b_quality, rebuilt, r_quality)
    if toc_source == "bookmarks":
        entries = toc.prepend_front_matter(entries, rebuilt)

    parts = _part_numbers(pages)
    with_text = sum(1 for p in pages if p.has_text)
    # A page without text but with an image is a scan (or could not be read); a page with neither is blank or a
    # pure drawing and says nothing about the text layer.
    missing = [p.number for p in pages if not p.has_text and (p.image_count or p.number in failed)]
    if with_text == 0:
        text_layer = "none"
    elif missing:
        text_layer = "partial"
        notes.append(f"{len(missing)} page(s) have no text layer: {_page_list(missing)}")
    else:
        text_layer = "ok"
    index = DatasheetIndex(
        sha256=sha256, path=Path(path), page_count=n, title=_title(pages, metadata, parts),
        part_numbers=parts, pages=pages, toc=entries, toc_source=toc_source,
        toc_quality=toc_quality, text_layer=text_layer,
        table_pages=[p.number for p in pages if p.table_regions], degraded=degraded, build_notes=notes,
        metadata=metadata,
    )
    from app.documents.search import SearchIndex

    index.search_data = SearchIndex.build(index)
    index.build_seconds = round(time.perf_counter() - started, 4)
    return index


def _open(path: Path) -> pymupdf.Document:
    if not Path(path).is_file():
        raise IndexBuildError(f"No PDF at {path}.", code="file_not_found")
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except Exception as exc:  # noqa: BLE001
        raise IndexBuildError(f"The PDF could not be opened: {exc}", code="corrupt_pdf") from exc
    if doc.needs_pass:
        doc.close()
        raise IndexBuildError("The PDF is encrypted with a password.", code="encrypted_pdf")
    if not doc.is_pdf:
        doc.close()
        raise IndexBuildError("The file is not a PDF.", code="corrupt_pdf")
    return doc


def _read_page(doc: pymupdf.Document, number: int) -> PageInfo:
    page = doc.load_page(number - 1)
    rect = page.rect
    tp = page.get_textpage(flags=TEXT_FLAGS)
    text = tp.extractText()
    page_dict = tp.extractDICT()
    words = [Word(round(w[0], 2), round(w[1], 2), round(w[2], 2), round(w[3], 2), w[4], int(w[5]), int(w[6]))
             for w in tp.extractWORDS()]
    lines = layout.lines_from_dict(page_dict)
    layout.locate_offsets(lines, text)
    try:
        images = len(page.get_images(full=False))
    except Exception:  # noqa: BLE001 - image enumeration is informative only
        images = 0
    return PageInfo(number=number, width=round(rect.width, 2), height=round(rect.height, 2), text=text,
                    words=words, lines=lines, image_count=images)


def _analyse_layout(page: PageInfo) -> None:
    if not page.lines:
        return
    columns = layout.text_columns(page.lines, page.width)
    layout.assign_rows(page.lines, columns)
    page.table_regions = layout.detect_table_regions(page.lines, page.words, page.width, columns)
    for ln in page.lines:
        xc, yc = (ln.x0 + ln.x1) / 2, (ln.y0 + ln.y1) / 2
        for r, (x0, y0, x1, y1) in enumerate(page.table_regions):
            if x0 - 2 <= xc <= x1 + 2 and y0 - 2 <= yc <= y1 + 2:
                ln.region = r
                break


def _safe_rect(doc: pymupdf.Document, number: int) -> tuple[float, float]:
    try:
        rect = doc.load_page(number - 1).rect
        return round(rect.width, 2), round(rect.height, 2)
    except Exception:  # noqa: BLE001
        return 612.0, 792.0


def _safe_toc(doc: pymupdf.Document, notes: list[str]) -> list:
    try:
        return doc.get_toc(simple=True)  # destinations are slow to resolve; titles are located in the text
    except Exception as exc:  # noqa: BLE001 - a broken outline must not sink the index
        notes.append(f"bookmarks unreadable ({type(exc).__name__})")
        return []


def _title(pages: list[PageInfo], metadata: dict[str, str], parts: list[str]) -> str:
    """Large type near the top of page 1, preferring the line that names the part (the biggest line is often the
    maker's name), plus the metadata title when it is a real title rather than a file name."""
    chosen = ""
    first = next((p for p in pages if p.lines), None)
    if first is not None:
        # Running headers count here: they often carry the product name.
        body = [ln for ln in first.lines if sum(ch.isalnum() for ch in ln.text) >= 3
                and not (ln.furniture and ln.y0 > 0.5 * first.height)]
        if body:
            sizes = sorted(ln.size for ln in body)
            body_size = sizes[len(sizes) // 2]
            top = [ln for ln in body if ln.y0 < 0.5 * first.height and ln.size >= body_size + 1
                   and len(ln.text) <= 100]
            if not top:
                largest = max(ln.size for ln in body)
                top = [ln for ln in body if ln.size >= largest - 0.5]
            biggest = max(ln.size for ln in top)

            def rank(ln: Line) -> tuple[bool, float, float]:
                return (any(p in ln.text for p in parts[:2]), ln.size >= biggest - 0.5, ln.size - 0.01 * ln.y0)

            best = max(top, key=rank)
            below = [ln for ln in top if ln is not best and abs(ln.size - best.size) < 0.3
                     and 0 <= ln.y0 - best.y1 < 0.8 * best.size and abs(ln.x0 - best.x0) < 40]
            chosen = collapse_ws(" ".join([best.text] + [ln.text for ln in below[:1]]))
    meta = collapse_ws(metadata.get("title") or "")
    low = meta.lower()
    parts_out = [chosen] if chosen else []
    if (len(meta.split()) >= 2 and not low.startswith(("microsoft word", "untitled")) and
            not low.endswith((".doc", ".docx", ".pdf", ".indd")) and low not in chosen.lower()):
        parts_out.append(meta)
    return " — ".join(parts_out)[:200]


def _part_numbers(pages: list[PageInfo]) -> list[str]:
    """Part-number-like tokens (letters and digits, upper case) from page 1, ranked by how often the document
    repeats them and whether they are printed large on page 1."""
    if not pages:
        return []
    first = pages[0]
    candidates: Counter[str] = Counter()
    big = max((ln.size for ln in first.lines), default=0)
    for ln in first.lines:
        for tok in _PART_RE.findall(ln.text):
            if _PACKAGES.match(tok) or sum(ch.isalpha() for ch in tok) < 2:
                continue
            candidates[tok] += 3 if ln.size >= big - 1 else 1
    if not candidates:
        return []
    sample = "\n".join(p.text for p in pages[:40])
    scored = {tok: weight + sample.count(tok) for tok, weight in candidates.items()}
    return [tok for tok, _ in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:8]]


def _page_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:20])
    return shown + (f" … (+{len(numbers) - 20})" if len(numbers) > 20 else "")
