"""The five document navigation tools over a DatasheetIndex. JSON in, JSON out.

Every method returns a JSON-serialisable dict. Errors are returned, never raised:
``{"error": {"code": "...", "message": "..."}}`` with codes page_out_of_range, no_such_section, no_such_table,
no_text_layer, invalid_argument, unknown_tool, internal_error. They are results the model can act on, and what
the tool-read-failure review rule counts. Large outputs are bounded and say so: ``"truncated": true`` plus
``"next_cursor"`` where a continuation exists.

Everything a tool returns is document content, i.e. untrusted data: ``envelope`` frames it as such for the
model.
"""

from __future__ import annotations

import base64
import functools
import inspect
import json
import logging
import re
from collections.abc import Callable
from typing import Any

from rapidfuzz import fuzz

from app.documents import tables as table_builder
from app.documents.index import DatasheetIndex, TocEntry
from app.documents.render import render_png
from app.documents.search import run_query
from app.documents.text import collapse_ws, match_key

log = logging.getLogger(__name__)

TOOL_NAMES = ("build_datasheet", "get_section_text", "search_text", "extract_table_markdown", "inspect_page")

MAX_TOC_ENTRIES = 80
MAX_SECTION_CHARS = 20_000
MIN_SECTION_CHARS = 200
MAX_HITS = 50
MAX_QUERIES = 10
MAX_QUERY_CHARS = 200
MAX_TABLE_CHARS = 24_000
MAX_BLOCKS = 150
MAX_BLOCK_CHARS = 600
MIN_DPI, MAX_DPI = 36, 200

_CURSOR_RE = re.compile(r"^(p(\d+)-(\d+)|s(\d+)):(\d+)$")


def envelope(tool_name: str, result: dict[str, Any]) -> dict[str, Any]:
    """The tool-result message content every engine sends back to the model (as JSON)."""
    status = "error" if isinstance(result, dict) and "error" in result else "ok"
    return {"tool": tool_name, "status": status, "untrusted_document_data": True, "result": result}


def envelope_json(tool_name: str, result: dict[str, Any]) -> str:
    """``envelope`` serialised the one way the model sees it (UTF-8 text, no ASCII escaping of µ/Ω)."""
    return json.dumps(envelope(tool_name, result), ensure_ascii=False)


def error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def _safe(method: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A tool never raises into the agent loop: an unexpected failure becomes an ``internal_error`` result."""

    @functools.wraps(method)
    def wrapper(self: DocumentTools, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            log.exception("tool %s failed", method.__name__)
            return error("internal_error", f"{method.__name__} failed: {type(exc).__name__}: {exc}")

    return wrapper


class DocumentTools:
    def __init__(self, index: DatasheetIndex):
        self.index = index

    # -- dispatch --------------------------------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run tool ``name`` with JSON ``arguments``; unknown tools and unexpected arguments are error results."""
        if name not in TOOL_NAMES:
            return error("unknown_tool", f"No document tool named {name!r}; tools: {', '.join(TOOL_NAMES)}.")
        arguments = arguments or {}
        if not isinstance(arguments, dict):
            return error("invalid_argument", "Tool arguments must be a JSON object.")
        method = getattr(self, name)
        accepted = set(inspect.signature(method).parameters)
        unknown = sorted(set(arguments) - accepted)
        if unknown:
            return error("invalid_argument", f"Unexpected argument(s) for {name}: {', '.join(unknown)}; "
                                             f"accepted: {', '.join(sorted(accepted)) or 'none'}.")
        return method(**arguments)

    # -- build_datasheet ------------------------------------------------------------------------------------------
    @_safe
    def build_datasheet(self) -> dict[str, Any]:
        """Overview: title, part_numbers, page_count, toc [{title, level, page_start, page_end}],
        toc_source, table_pages, text_layer, hints."""
        idx = self.index
        toc, omitted = _bounded_toc(idx.toc)
        without_text = [p.number for p in idx.pages if not p.has_text and p.image_count]
        result: dict[str, Any] = {
            "title": idx.title,
            "part_numbers": idx.part_numbers,
            "page_count": idx.page_count,
            "text_layer": idx.text_layer,
            "toc_source": idx.toc_source,
            "toc_quality": round(idx.toc_quality, 2),
            "toc": [_toc_json(e) for e in toc],
            "table_pages": idx.table_pages,
            "hints": _hints(idx, without_text),
        }
        if omitted:
            result["toc_omitted_entries"] = omitted
        if without_text and idx.text_layer != "none":
            result["pages_without_text"] = without_text
        return result

    # -- get_section_text -----------------------------------------------------------------------------------------
    @_safe
    def get_section_text(self, section: str | None = None, start_page: int | None = None,
                         end_page: int | None = None, max_chars: int = 8000,
                         cursor: str | None = None) -> dict[str, Any]:
        """{"section", "start_page", "end_page", "text" (with "--- page N ---" markers), "truncated",
        "next_cursor", "notes": [...]}."""
        idx = self.index
        if idx.text_layer == "none":
            return _no_text_layer()
        if not isinstance(max_chars, int) or isinstance(max_chars, bool):
            return error("invalid_argument", "max_chars must be an integer.")
        max_chars = max(MIN_SECTION_CHARS, min(max_chars, MAX_SECTION_CHARS))
        offset = 0
        entry_index: int | None = None
        if cursor is not None:
            m = _CURSOR_RE.match(str(cursor))
            if not m:
                return error("invalid_argument", "cursor is not one returned by get_section_text.")
            if m.group(4) is not None:
                entry_index = int(m.group(4))
                if entry_index >= len(idx.toc):
                    return error("invalid_argument", "cursor does not match this document.")
            else:
                start_page, end_page = int(m.group(2)), int(m.group(3))
            offset = int(m.group(5))
        elif section is not None:
            if not isinstance(section, str) or not section.strip():
                return error("invalid_argument", "section must be a non-empty string.")
            entry_index, suggestions = _find_section(idx.toc, section)
            if entry_index is None:
                return error("no_such_section", f"No section matching {section!r}.", suggestions=suggestions)
        elif start_page is None:
            return error("invalid_argument", "Give a section title, or start_page (and optionally end_page).")

        if entry_index is not None:
            entry = idx.toc[entry_index]
            start_page, end_page = entry.page_start, entry.page_end
            text, pages = _section_text(idx, entry_index)
            key = f"s{entry_index}"
            section_title = entry.title
        else:
            problem = _check_page(idx, start_page, "start_page")
            if problem:
                return problem
            end_page = start_page if end_page is None else end_page
            problem = _check_page(idx, end_page, "end_page")
            if problem:
                return problem
            if end_page < start_page:
                return error("invalid_argument", "end_page is before start_page.")
            pages = list(range(start_page, end_page + 1))
            text = _pages_text(idx, pages)
            key = f"p{start_page}-{end_page}"
            section_title = None
        if offset > len(text):
            return error("invalid_argument", "cursor is past the end of the text.")
        chunk, next_offset = _window(text, offset, max_chars)
        truncated = next_offset < len(text)
        return {
            "section": section_title,
            "start_page": start_page,
            "end_page": end_page,
            "text": chunk,
            "offset": offset,
            "total_chars": len(text),
            "truncated": truncated,
            "next_cursor": f"{key}:{next_offset}" if truncated else None,
            "notes": _section_notes(idx, pages, truncated),
        }

    # -- search_text ----------------------------------------------------------------------------------------------
    @_safe
    def search_text(self, query: str | list[str], max_hits: int = 10, page: int | None = None) -> dict[str, Any]:
        """Ranked hits: {"query", "hits": [{"page", "text" (the matching line), "snippet" (line with
        context), "section", "bbox": [x0, y0, x1, y1], "score"}], "total_hits", "truncated"}.

        ``snippet`` holds one visual row per text line: the hit's row (all its cells, space-joined, in a table)
        and the row or line after it. ``in_table`` says whether the line lies in a detected table;
        ``matched_queries`` (list queries only) which queries the line answers. One hit per visual row; further
        hits on an already listed page are ranked slightly lower so different pages surface early."""
        idx = self.index
        queries = [query] if isinstance(query, str) else query
        if not isinstance(queries, list) or not queries or not all(isinstance(q, str) for q in queries):
            return error("invalid_argument", "query must be a string or a list of strings.")
        queries = [q.strip()[:MAX_QUERY_CHARS] for q in queries if q.strip()][:MAX_QUERIES]
        if not queries:
            return error("invalid_argument", "query is empty.")
        if not isinstance(max_hits, int) or isinstance(max_hits, bool) or max_hits < 1:
            return error("invalid_argument", "max_hits must be a positive integer.")
        max_hits = min(max_hits, MAX_HITS)
        if page is not None:
            problem = _check_page(idx, page, "page")
            if problem:
                return problem
        if idx.text_layer == "none":
            return _no_text_layer()
        hits, total = run_query(idx, queries, max_hits, page)
        result: dict[str, Any] = {
            "query": query,
            "hits": hits,
            "total_hits": total,
            "truncated": total > len(hits),
        }
        if not hits:
            result["notes"] = ["No line matched. Try other words, the parameter's symbol (e.g. VDD), or its unit."]
        return result

    # -- extract_table_markdown -----------------------------------------------------------------------------------
    @_safe
    def extract_table_markdown(self, page: int, table: int | None = None) -> dict[str, Any]:
        """{"page", "tables": [{"index", "bbox", "markdown", "n_rows", "n_cols", "header_rows",
        "continues_on_next_page", "continued_from_previous_page"}], "notes"}.

        One GitHub pipe table per detected table, header row first (several header rows are joined into one),
        multi-line cells joined with spaces, units where the page prints them. Each row reads on its own: a
        parameter name or unit spanning several condition rows is repeated on each. ``title`` is the caption or
        heading printed above the table."""
        idx = self.index
        problem = _check_page(idx, page, "page")
        if problem:
            return problem
        if not idx.page(page).has_text:
            return _no_text_layer(page)
        found = table_builder.page_tables(idx, page)
        if table is not None:
            if not isinstance(table, int) or isinstance(table, bool) or not 0 <= table < len(found):
                return error("no_such_table", f"Page {page} has {len(found)} table(s); table is a 0-based index.",
                             tables_on_page=len(found))
            chosen = [(table, found[table])]
        else:
            chosen = list(enumerate(found))
        notes: list[str] = []
        out = []
        budget = MAX_TABLE_CHARS
        for i, t in chosen:
            markdown = t.markdown()
            item = {
                "index": i,
                "title": t.title,
                "bbox": t.bbox,
                "markdown": markdown,
                "n_rows": t.n_rows,
                "n_cols": t.n_cols,
                "header_rows": t.header_rows,
                "continues_on_next_page": table_builder.continues_on_next_page(idx, page, i),
                "continued_from_previous_page": table_builder.continued_from_previous_page(idx, page, i),
            }
            if len(markdown) > budget:
                item["markdown"] = _cut_rows(markdown, budget)
                item["truncated"] = True
                notes.append(f"Table {i} was cut to fit; ask for it alone with table={i}.")
            budget = max(0, budget - len(item["markdown"]))
            out.append(item)
            if item["continues_on_next_page"]:
                notes.append(f"Table {i} continues on page {page + 1}.")
            if item["continued_from_previous_page"]:
                notes.append(f"Table {i} continues a table from page {page - 1} (its header may be there).")
        if not found:
            notes.append(f"No table detected on page {page}; get_section_text(start_page={page}) returns its text.")
        return {"page": page, "tables": out, "notes": notes}

    # -- inspect_page ---------------------------------------------------------------------------------------------
    @_safe
    def inspect_page(self, page: int, region: list[float] | None = None, dpi: int = 72) -> dict[str, Any]:
        """{"page", "width", "height", "blocks": [{"bbox", "text"}], "image": {"mime": "image/png",
        "base64": ...}}."""
        idx = self.index
        problem = _check_page(idx, page, "page")
        if problem:
            return problem
        info = idx.page(page)
        if not isinstance(dpi, int) or isinstance(dpi, bool):
            return error("invalid_argument", "dpi must be an integer.")
        dpi = max(MIN_DPI, min(dpi, MAX_DPI))
        clip = None
        if region is not None:
            if (not isinstance(region, list) or len(region) != 4
                    or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in region)):
                return error("invalid_argument", "region must be [x0, y0, x1, y1] in page points.")
            x0, y0 = max(0.0, float(region[0])), max(0.0, float(region[1]))
            x1, y1 = min(info.width, float(region[2])), min(info.height, float(region[3]))
            if x1 - x0 < 2 or y1 - y0 < 2:
                return error("invalid_argument", f"region is empty or outside the page ({info.width} x "
                                                 f"{info.height} points).")
            clip = [x0, y0, x1, y1]
        png, width, height = render_png(idx.path, page, region=clip, dpi=dpi)
        blocks = _blocks(idx, page, clip)
        result: dict[str, Any] = {
            "page": page,
            "width": info.width,
            "height": info.height,
            "region": clip,
            "dpi": dpi,
            "blocks": blocks[:MAX_BLOCKS],
            "image": {"mime": "image/png", "width": width, "height": height,
                      "base64": base64.b64encode(png).decode("ascii")},
        }
        if len(blocks) > MAX_BLOCKS:
            result["truncated"] = True
            result["notes"] = [f"{len(blocks) - MAX_BLOCKS} more text blocks; pass a region to see them."]
        if not info.has_text:
            result.setdefault("notes", []).append("This page has no text layer: read the image.")
        return result


# -- helpers -------------------------------------------------------------------------------------------------------

def _no_text_layer(page: int | None = None) -> dict[str, Any]:
    where = f"Page {page} has" if page is not None else "This PDF has"
    return error("no_text_layer", f"{where} no text layer (scanned images); use inspect_page to see the page.")


def _check_page(idx: DatasheetIndex, page: Any, name: str) -> dict[str, Any] | None:
    if not isinstance(page, int) or isinstance(page, bool):
        return error("invalid_argument", f"{name} must be an integer page number (1-based).")
    if not 1 <= page <= idx.page_count:
        return error("page_out_of_range", f"{name} {page} is outside 1..{idx.page_count}.",
                     page_count=idx.page_count)
    return None


def _toc_json(entry: TocEntry) -> dict[str, Any]:
    item: dict[str, Any] = {"title": entry.title, "level": entry.level, "page_start": entry.page_start,
                            "page_end": entry.page_end}
    if entry.number:
        item["number"] = entry.number
    return item


def _bounded_toc(toc: list[TocEntry]) -> tuple[list[TocEntry], int]:
    """At most MAX_TOC_ENTRIES entries: drop the deepest levels first."""
    entries = list(toc)
    level = max((e.level for e in entries), default=1)
    while len(entries) > MAX_TOC_ENTRIES and level > 1:
        entries = [e for e in entries if e.level < level]
        level -= 1
    if len(entries) > MAX_TOC_ENTRIES:
        entries = entries[:MAX_TOC_ENTRIES]
    return entries, len(toc) - len(entries)


def _hints(idx: DatasheetIndex, without_text: list[int]) -> list[str]:
    hints = ["Page numbers are 1-based positions in the PDF (printed page labels may differ)."]
    if idx.text_layer == "none":
        hints.append("No text layer (scanned PDF): text tools return no_text_layer; read pages with inspect_page.")
    elif without_text:
        hints.append(f"Pages without text: {_pages(without_text)}; read them with inspect_page.")
    if idx.toc_source == "reconstructed":
        hints.append(f"ToC reconstructed from headings (quality {idx.toc_quality:.2f}): confirm section "
                     "boundaries with search_text.")
    elif idx.toc_source == "none":
        hints.append("No table of contents could be found: use search_text to locate parameters.")
    elif idx.toc_quality < 0.6:
        hints.append(f"The PDF bookmarks look incomplete (quality {idx.toc_quality:.2f}): confirm with search_text.")
    if idx.table_pages:
        hints.append(f"Tables on pages {_pages(idx.table_pages)}: extract_table_markdown(page) keeps each value "
                     "on the row of its parameter and conditions.")
    if idx.degraded:
        hints.append("Some pages could not be read: " + "; ".join(idx.build_notes[:3]))
    return hints


def _pages(numbers: list[int], limit: int = 40) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return shown + (f" (+{len(numbers) - limit} more)" if len(numbers) > limit else "")


def _find_section(toc: list[TocEntry], query: str) -> tuple[int | None, list[dict[str, Any]]]:
    """Best ToC entry for a title (or a section number such as "7.2"); else suggestions."""
    q = query.strip()
    for i, e in enumerate(toc):
        if e.number and (q == e.number or q.rstrip(".") == e.number):
            return i, []
    key = match_key(q)
    scored = []
    for i, e in enumerate(toc):
        title_key = match_key(e.title)
        bare = match_key(re.sub(r"^[\d.]+\s*", "", e.title))
        score = max(fuzz.ratio(key, title_key), fuzz.ratio(key, bare), 0.95 * fuzz.token_set_ratio(key, title_key),
                    90.0 if key and key == bare else 0.0)
        scored.append((score, -e.level, -i, i))
    scored.sort(reverse=True)
    if scored and scored[0][0] >= 75:
        return scored[0][3], []
    suggestions = [{"title": toc[i].title, "page_start": toc[i].page_start} for _s, _l, _n, i in scored[:5]]
    return None, suggestions


def _page_marker(number: int) -> str:
    return f"--- page {number} ---\n"


def _pages_text(idx: DatasheetIndex, pages: list[int]) -> str:
    return "".join(_page_marker(p) + idx.page(p).text.rstrip("\n") + "\n" for p in pages)


def _section_text(idx: DatasheetIndex, entry_index: int) -> tuple[str, list[int]]:
    """Text from the section's heading to the next heading of the same or a higher level."""
    entry = idx.toc[entry_index]
    nxt = next((e for e in idx.toc[entry_index + 1:] if e.level <= entry.level), None)
    pages = list(range(entry.page_start, entry.page_end + 1))
    parts = []
    for p in pages:
        text = idx.page(p).text
        start = _offset_at(idx, p, entry.y) if p == entry.page_start and entry.y is not None else 0
        end = len(text)
        if nxt is not None and nxt.page_start == p and nxt.y is not None and p == pages[-1]:
            cut = _offset_at(idx, p, nxt.y)
            if cut > start:
                end = cut
        parts.append(_page_marker(p) + text[start:end].rstrip("\n") + "\n")
    return "".join(parts), pages


def _offset_at(idx: DatasheetIndex, page: int, y: float) -> int:
    """Offset in the page text of the first line at or below ``y`` (text order follows the layout's blocks)."""
    candidates = [ln.offset for ln in idx.page(page).lines if ln.offset >= 0 and ln.y0 >= y - 1.5]
    return min(candidates) if candidates else 0


def _window(text: str, offset: int, max_chars: int) -> tuple[str, int]:
    end = offset + max_chars
    if end >= len(text):
        return text[offset:], len(text)
    cut = text.rfind("\n", offset, end)
    if cut <= offset + max_chars // 2:
        cut = end
    else:
        cut += 1
    return text[offset:cut], cut


def _section_notes(idx: DatasheetIndex, pages: list[int], truncated: bool) -> list[str]:
    notes = []
    if truncated:
        notes.append("Text truncated: call again with next_cursor for the rest.")
    with_tables = [p for p in pages if p in set(idx.table_pages)]
    if with_tables:
        notes.append(f"Tables on page(s) {_pages(with_tables)}: extract_table_markdown(page) gives them "
                     "row-aligned; the plain text may interleave table rows.")
    last = pages[-1] if pages else None
    if last is not None and last in idx.table_pages and last < idx.page_count:
        found = table_builder.page_tables(idx, last)
        if found and table_builder.continues_on_next_page(idx, last, len(found) - 1):
            notes.append(f"The table at the end of page {last} continues on page {last + 1}.")
    empty = [p for p in pages if not idx.page(p).has_text]
    if empty:
        notes.append(f"Page(s) {_pages(empty)} have no text layer; use inspect_page.")
    return notes


def _cut_rows(markdown: str, budget: int) -> str:
    lines = markdown.split("\n")
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget and len(out) >= 2:
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def _blocks(idx: DatasheetIndex, page: int, clip: list[float] | None) -> list[dict[str, Any]]:
    grouped: dict[int, list] = {}
    for ln in idx.page(page).lines:
        if clip and not (ln.x1 > clip[0] and ln.x0 < clip[2] and ln.y1 > clip[1] and ln.y0 < clip[3]):
            continue
        grouped.setdefault(ln.block, []).append(ln)
    blocks = []
    for lines in grouped.values():
        text = collapse_ws(" ".join(ln.text for ln in lines))
        if not text:
            continue
        bbox = [round(min(ln.x0 for ln in lines), 1), round(min(ln.y0 for ln in lines), 1),
                round(max(ln.x1 for ln in lines), 1), round(max(ln.y1 for ln in lines), 1)]
        blocks.append({"bbox": bbox, "text": text[:MAX_BLOCK_CHARS]})
    blocks.sort(key=lambda b: (b["bbox"][1], b["bbox"][0]))
    return blocks
