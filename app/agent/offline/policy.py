"""The reader's next step, decided from the conversation so far.

The plan is the one a careful engineer follows, one tool call per turn: open the datasheet, search for the
parameter (name, conventional phrasings, symbols), read the most promising pages (their tables, then their
text), cross-check the chosen value with a second search, then submit — or decline with a reason. Every turn
re-reads every tool result from scratch, so a step depends on nothing but the messages; tools that were not
offered are never called, and a tool error sends the reader to the next page instead of stopping it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.agent.offline.candidates import ABS_MAX_TITLE, Candidate
from app.agent.offline.conversation import Conversation
from app.agent.offline.reader import Decision, Evidence, decide, item_score, label_score, variant_label
from app.agent.offline.rows import Table, parse_markdown_tables
from app.agent.offline.synonyms import Query, compact, content_tokens, parse_request
from app.agent.offline.values import read_values
from app.agent.prompts import PAGE_MARKER, DocumentTable, split_document
from app.contracts import MAX_OTHER_VARIANTS

SUBMIT = "submit_extraction"
PAGES_TO_READ = 3  # pages read in full before answering, unless the answer is already clear
CLEAR_CONFIDENCE = 0.75
# Below this confidence the reader's answers are wrong about as often as right (the fidelity bench's calibration
# bins): it declines instead, with the reading it would have given in the reason.
ANSWER_FLOOR = 0.3
MAX_TOOL_CALLS = 16
PAGE_CHARS = 20000  # one call holds a dense spec page; longer pages are followed by cursor


@dataclass
class Step:
    """A tool call to make; ``name == SUBMIT`` ends the extraction."""

    name: str
    arguments: dict[str, Any]


# --- Evidence from tool results ----------------------------------------------------------------------------

def split_pages(text: str, default_page: int | None = None, keep_blank: bool = False) -> dict[int, list[str]]:
    """Lines per page of text carrying '--- page N ---' markers. Blank lines are dropped unless ``keep_blank``
    (then kept as ""): in a text layer that prints one table cell per line, a blank line is an empty cell."""
    def lines_of(body: str) -> list[str]:
        if not keep_blank:
            return [line for line in body.splitlines() if line.strip()]
        return [line if line.strip() else "" for line in body.strip("\n").splitlines()]

    pages: dict[int, list[str]] = {}
    markers = list(PAGE_MARKER.finditer(text))
    if not markers:
        if default_page is not None:
            pages[default_page] = lines_of(text)
        return pages
    for i, marker in enumerate(markers):
        end = markers[i + 1].start() if i + 1 < len(markers) else len(text)
        pages.setdefault(int(marker.group(1)), []).extend(lines_of(text[marker.end():end]))
    return pages


@lru_cache(maxsize=2048)
def _parsed_tables(markdown: str, page: int, caption: str = "", continued: bool = False) -> tuple[Table, ...]:
    tables = parse_markdown_tables(markdown, page)
    if len(tables) == 1:
        tables[0].caption = caption
    if tables:
        tables[0].continued = continued
    return tuple(tables)


@lru_cache(maxsize=64)
def _split_document_cached(text: str) -> tuple[str, tuple[tuple[int, DocumentTable], ...]]:
    kept, tables = split_document(text)
    return kept, tuple(tables)


def gather(conv: Conversation) -> Evidence:
    evidence = Evidence()
    last_read: int | None = None
    if conv.document_text:
        text, tables = _split_document_cached(conv.document_text)
        evidence.page_lines.update(split_pages(text, default_page=1))
        evidence.cell_lines.update(split_pages(text, default_page=1, keep_blank=True))
        for page, table in tables:
            evidence.tables.setdefault(page, []).extend(
                _parsed_tables(table.markdown, page, table.title or "", table.continued_from is not None))
    for exchange in conv.exchanges:
        if not exchange.ok or exchange.result is None:
            continue
        result = exchange.result
        if exchange.name == "get_section_text":
            start = result.get("start_page") or exchange.arguments.get("start_page")
            text = str(result.get("text", ""))
            continuation = bool(exchange.arguments.get("cursor"))
            if continuation:
                # The rest of a cut page continues the page being read, which has no marker of its own.
                start = last_read if last_read is not None else start
            cells = split_pages(text, start, keep_blank=True)
            for page, lines in split_pages(text, start).items():
                # A page read twice keeps its first reading, unless this is the continuation of a cut reading;
                # lines repeat legitimately within a page ("4", "mA"), so they are never de-duplicated.
                if page not in evidence.page_lines:
                    evidence.page_lines[page] = lines
                    evidence.cell_lines[page] = cells.get(page, lines)
                elif continuation:
                    evidence.page_lines[page] = evidence.page_lines[page] + lines
                    evidence.cell_lines[page] = evidence.cell_lines[page] + cells.get(page, lines)
                last_read = page
        elif exchange.name == "extract_table_markdown":
            page = int(result.get("page") or exchange.arguments.get("page") or 0)
            for table in result.get("tables", []) or []:
                markdown = table.get("markdown", "") if isinstance(table, dict) else str(table)
                caption = str(table.get("title") or "") if isinstance(table, dict) else ""
                continued = bool(table.get("continued_from_previous_page")) if isinstance(table, dict) else False
                evidence.tables.setdefault(page, []).extend(_parsed_tables(markdown, page, caption, continued))
        elif exchange.name == "search_text":
            for hit in result.get("hits", []) or []:
                page = hit.get("page")
                if not isinstance(page, int):
                    continue
                lines = evidence.hit_lines.setdefault(page, [])
                for text in [hit.get("text", "")] + str(hit.get("snippet", "")).splitlines():
                    if text and text.strip() and text not in lines:
                        lines.append(text)
    return evidence


# --- Planning ----------------------------------------------------------------------------------------------

def _overview(conv: Conversation) -> dict[str, Any]:
    for exchange in conv.calls("build_datasheet"):
        if exchange.ok and exchange.result:
            return exchange.result
    return {}


def _locating_searches(conv: Conversation) -> list[Any]:
    """Searches that look for the parameter across the document (a cross-check is restricted to one page)."""
    return [e for e in conv.calls("search_text") if not e.arguments.get("page")]


def _cross_checks(conv: Conversation) -> list[Any]:
    return [e for e in conv.calls("search_text") if e.arguments.get("page")]


def rank_pages(query: Query, conv: Conversation) -> list[int]:
    """Pages worth reading, best first: where search hits name the parameter, then pages with tables."""
    overview = _overview(conv)
    page_count = int(overview.get("page_count") or 0)
    table_pages = [p for p in overview.get("table_pages", []) or [] if isinstance(p, int)]
    scores = _page_scores(query, conv)
    ranked = sorted(scores, key=lambda p: (-scores[p], p))
    for page in table_pages[:3] + [1]:
        if page not in ranked and (page_count == 0 or page <= page_count) and len(ranked) < PAGES_TO_READ:
            ranked.append(page)
    return ranked


def _hits_name(query: Query, conv: Conversation) -> bool:
    """Whether any search hit so far names most of the parameter (its words or its symbol)."""
    for exchange in _locating_searches(conv):
        for hit in (exchange.result or {}).get("hits", []) or []:
            text = f"{hit.get('text', '')} {hit.get('snippet', '')}"
            if label_score(query, Candidate(0, "line", text), text) >= 0.75:
                return True
    return False


def _page_scores(query: Query, conv: Conversation) -> dict[int, float]:
    """How strongly the locating searches' hits point at each page."""
    table_pages = [p for p in _overview(conv).get("table_pages", []) or [] if isinstance(p, int)]
    scores: dict[int, float] = {}
    counts: dict[int, int] = {}
    for exchange in _locating_searches(conv):
        if not exchange.ok or not exchange.result:
            continue
        hits = [h for h in exchange.result.get("hits", []) or [] if isinstance(h.get("page"), int)]
        # Text repeated on many pages (running footers, table notes) says nothing about where the value is.
        pages_of: dict[str, set[int]] = {}
        for hit in hits:
            pages_of.setdefault(str(hit.get("text", "")).strip(), set()).add(hit["page"])
        for rank, hit in enumerate(hits):
            page = hit["page"]
            if len(pages_of[str(hit.get("text", "")).strip()]) >= 3:
                continue
            text = f"{hit.get('text', '')} {hit.get('snippet', '')}"
            probe = Candidate(page, "line", text)
            value = label_score(query, probe, text)
            value += 0.25 * (1 - rank / len(hits))  # the search tool's own ranking
            if hit.get("in_table"):
                value += 0.1  # characteristic tables are where values live with their conditions
            if _has_value_of(query, text):
                value += 0.1
            if query.wants_abs_max and ABS_MAX_TITLE.search(f"{text} {hit.get('section', '')}"):
                # The ratings list rarely repeats the parameter's words next to its heading.
                value = max(value, 1.0) + 0.3
            items = query.conditions + query.qualifiers
            if items:
                value += 0.2 * sum(item_score(i, compact(text), content_tokens(text)) for i in items) / len(items)
            scores[page] = max(scores.get(page, 0.0), value)
            counts[page] = counts.get(page, 0) + 1
    for page in scores:
        scores[page] += 0.04 * min(counts[page], 4) + (0.05 if page in table_pages else 0.0)
    return scores


def _has_value_of(query: Query, text: str) -> bool:
    dims = query.dimensions
    return any(r.unit is not None and (not dims or r.unit.dimension in dims) for r in read_values(text))


def _attempted(conv: Conversation, name: str) -> set[int]:
    pages: set[int] = set()
    for exchange in conv.calls(name):
        page = exchange.arguments.get("page") or exchange.arguments.get("start_page")
        if isinstance(page, int):
            pages.add(page)
    return pages


def next_steps(conv: Conversation) -> list[Step]:
    """The tool calls of the next turn. Calls that do not depend on each other go out together (opening the
    datasheet and the first search; a page's tables and its text), as a model with parallel tool calls would."""
    request = conv.request
    if not conv.offers(SUBMIT) and any(n.startswith("submit") for n in conv.offered):
        # A later phase (opened after the extraction was frozen) with its own submit tool: the reader has no
        # tools for it and restates what it froze rather than calling anything it was not offered.
        name = next(n for n in conv.offered if n.startswith("submit"))
        frozen = next((e.arguments for e in reversed(conv.exchanges) if e.name == SUBMIT), None)
        return [Step(name, dict(frozen) if frozen else _decline("nothing was extracted").arguments)]
    if request is None:
        return [_decline("the conversation holds no <parameter_request> to answer")]
    query = parse_request(request.name, request.unit, request.conditions, request.notes)
    navigation = [n for n in ("build_datasheet", "get_section_text", "search_text", "extract_table_markdown")
                  if conv.offers(n)]
    if conv.document_text is not None or not navigation or len(conv.exchanges) >= MAX_TOOL_CALLS:
        return [_submit(query, decide(query, gather(conv)), conv)]
    opening: list[Step] = []
    if conv.offers("build_datasheet") and not conv.calls("build_datasheet"):
        opening.append(Step("build_datasheet", {}))
    if conv.offers("search_text") and not conv.calls("search_text"):
        opening.append(Step("search_text", {"query": query.search_terms(), "max_hits": 25}))
    if opening:
        return opening
    decision = decide(query, gather(conv))
    if (decision.best is None and len(_locating_searches(conv)) == 1 and conv.offers("search_text")
            and not _attempted(conv, "get_section_text") and not _attempted(conv, "extract_table_markdown")
            and not _hits_name(query, conv)):
        # Nothing found names the parameter: search once more, for its symbols and single words.
        return [Step("search_text", {"query": query.broad_terms(), "max_hits": 25})]
    reads = _next_reads(query, conv, decision)
    if reads:
        return reads
    if decision.best is not None and conv.offers("search_text") and not _cross_checks(conv):
        return [Step("search_text", {"query": _cross_check_terms(decision.best.candidate),
                                     "page": decision.best.candidate.page, "max_hits": 10})]
    return [_submit(query, decision, conv)]


def _next_reads(query: Query, conv: Conversation, decision: Decision) -> list[Step]:
    tables_done = _attempted(conv, "extract_table_markdown")
    text_done = _attempted(conv, "get_section_text")
    read = tables_done | text_done
    clear = decision.best is not None and decision.confidence >= CLEAR_CONFIDENCE
    if not clear:
        ranked = [p for p in rank_pages(query, conv) if p in text_done]
        more = _continuation(conv, ranked + sorted(text_done - set(ranked)))
        if more is not None:
            return [more]
        # The two most promising pages first, then one more if the answer is still unclear.
        batch = 2 if not read else 1
        ranked = rank_pages(query, conv)[:PAGES_TO_READ]
        if decision.best is None and len(read) >= PAGES_TO_READ:
            ranked.append(1)  # the first page's feature list and description state many values in prose
        wanted = [p for p in ranked if p not in read][:batch]
        steps = [step for page in wanted for step in _read_page(conv, page, tables_done, text_done)]
        if steps:
            return steps
    if decision.best is not None:
        # The page the answer comes from is read in full before quoting it.
        return _read_page(conv, decision.best.candidate.page, tables_done, text_done)
    return []


def _read_page(conv: Conversation, page: int, tables_done: set[int], text_done: set[int]) -> list[Step]:
    steps: list[Step] = []
    # table_pages is a quick detector's view and misses tables; a page worth reading is worth its tables.
    if conv.offers("extract_table_markdown") and page not in tables_done:
        steps.append(Step("extract_table_markdown", {"page": page}))
    if conv.offers("get_section_text") and page not in text_done:
        steps.append(Step("get_section_text", {"start_page": page, "end_page": page, "max_chars": PAGE_CHARS}))
    return steps


def _continuation(conv: Conversation, pages: list[int]) -> Step | None:
    """The rest of a page whose text came back cut (a dense one-page spec sheet), when the cursor of its
    latest reading has not been followed yet."""
    latest: dict[int, Any] = {}
    for exchange in conv.calls("get_section_text"):
        page = exchange.arguments.get("start_page")
        if isinstance(page, int) and exchange.ok and exchange.result:
            latest[page] = exchange.result
    for page in pages:
        result = latest.get(page)
        cursor = result.get("next_cursor") if result and result.get("truncated") else None
        if cursor:
            return Step("get_section_text", {"start_page": page, "end_page": page, "max_chars": PAGE_CHARS,
                                             "cursor": cursor})
    return None


def _cross_check_terms(cand: Candidate) -> list[str]:
    terms = [" ".join(cand.label.split()[:4])]
    if cand.printed:
        terms.append(cand.printed[0])
    return [t for t in terms if t.strip()]


# --- Answers -----------------------------------------------------------------------------------------------

def _decline(reason: str) -> Step:
    return Step(SUBMIT, {"found": False, "values": [], "confidence": 0.0, "reason": reason})


def _cross_checked(conv: Conversation, cand: Candidate) -> bool | None:
    checks = _cross_checks(conv)
    if not checks:
        return None
    for exchange in checks:
        for hit in (exchange.result or {}).get("hits", []) or []:
            text = f"{hit.get('text', '')} {hit.get('snippet', '')}"
            if hit.get("page") == cand.page and cand.printed and cand.printed[0] in text:
                return True
    return False


def _conditions(query: Query, cand: Candidate) -> list[str]:
    found: list[str] = []
    haystack = f"{cand.context} {cand.label}"
    for item in query.conditions + query.qualifiers:
        if item_score(item, compact(haystack), content_tokens(haystack)) >= 0.99:
            found.append(item)
    for part in re.split(r"\s*,\s*", cand.extra_conditions):
        part = part.strip()
        if part and part not in found and len(part) <= 80:
            found.append(part)
    return found[:8]


def _other_variants(decision: Decision) -> list[dict[str, Any]]:
    """The sibling variants of the answer (other conditions, pin configurations, parts), reported beside it."""
    assert decision.best is not None
    best = decision.best.candidate
    return [{"label": variant_label(v, best)[:200], "min": v.min, "typical": v.typical, "max": v.max,
             "unit": v.unit.canonical if v.unit else (v.unit_text or None)}
            for v in decision.variants[:MAX_OTHER_VARIANTS]]


def _submit(query: Query, decision: Decision, conv: Conversation) -> Step:
    if decision.best is None:
        return _decline(decision.reason)
    cand = decision.best.candidate
    confidence = decision.confidence
    reason = decision.reason
    # Single-pass, a value read from the text layer's lines rather than from one of the document's tables: without
    # the table structure that says which column a number sits in.
    text_only = conv.document_text is not None and cand.source == "line"
    if text_only:
        confidence *= 0.8
        reason += "; read from the text layer only (no table structure)"
    checked = _cross_checked(conv, cand)
    if checked is False:
        confidence = max(0.05, confidence - 0.1)
        reason += "; the cross-check search did not find the value again on that page"
    elif checked:
        reason += "; cross-check search found the value again on that page"
    # One floor for both engines: since single-pass documents carry their tables, a line read without one
    # (its confidence already lowered above) is no less often right than the agentic reader's answers at that
    # confidence; a higher floor for it declined right answers on every claim set, the sealed one included.
    if confidence < ANSWER_FLOOR:
        return _decline(f"{reason}; confidence {confidence:.2f} is below {ANSWER_FLOOR}: declining rather than "
                        f"guessing")
    unit = cand.unit.canonical if cand.unit else (cand.unit_text or None)
    if unit is None and query.counted and cand.following:
        unit = query.counted.split()[-1]  # a count is measured in the things counted ("16 analog inputs")
    # A single value the datasheet calls the maximum ("Max. rotational speed 3000 RPM") is reported as the
    # maximum, whether or not the request repeats the limit word in its name.
    value = {"min": cand.min, "typical": cand.typical, "max": cand.max, "unit": unit,
             "conditions": _conditions(query, cand), "other_variants": _other_variants(decision)}
    return Step(SUBMIT, {
        "found": True,
        "values": [value],
        "source_page": cand.page,
        "quote": decision.quote or cand.value_text or None,
        "confidence": round(confidence, 2),
        "reason": reason,
    })
