"""Source grounding: re-find each reported value's quote in the intended PDF and check its numbers are there.

The quote is searched in three tiers, cheapest and strictest first:

1. ``exact``: whitespace-collapsed substring of the page's text layer.
2. ``normalised``: case, whitespace, unicode compatibility forms and the text layer's known defects are
   ignored (µ/μ, Ω/Ω and the symbol-font renderings Ω→``W`` and ≤→``£``, dash and quote variants, split
   ligatures, dot leaders of any length, ``+/-``/``±``).
3. ``fuzzy``: ``rapidfuzz`` partial-ratio alignment of the normalised quote against the normalised page,
   accepted at ``FUZZY_THRESHOLD`` (0-100) for quotes of at least ``MIN_FUZZY_CHARS`` normalised characters;
   shorter quotes match too easily by chance to be trusted fuzzily.

A quote containing an ellipsis (``...``/``…``) is also tried as fragments that must all be found, in order,
on one page. A quote that is still not found is read the way models write quotes
(``app.detectors.quote_fragments``): split into its printed fragments, each located exactly, normalised, or
aligned to one table row or block of lines (``row``, ``app.detectors.row_alignment``), before the ``fuzzy`` tier.
The reported pages are searched first; a quote found only elsewhere is ``grounded_other_page``.
Each reported number must then occur in the located document text (a note or equation mark, ``(2)``, is no figure),
compared numerically (decimal commas, leading-dot decimals, unicode minus, ``±``, and SI prefixes where the text
prints a unit), else the outcome is ``value_not_in_quote``; a quote that stops before its row's value cells (the
parameter's name and conditions only) is completed by the numbers printed further along the rows it stands on, and
by lines of figures only between the lines it stands on (a sub-row's cells the text layer reads apart from its name
and conditions). The located words' boxes are kept so a reviewer sees the passage highlighted.
"""

from __future__ import annotations

import enum
import math
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from app.detectors import plausibility
from app.detectors.dimensions import printed
from app.detectors.page_text import (
    FUZZY_THRESHOLD,
    MIN_FUZZY_CHARS,
    PageView,
    Span,
    TextNumber,
    locate_on_page,
    method_of,
    normalised,
    number_occurs,
    numbers_in,
    page_view,
)
from app.detectors.row_alignment import (
    FragmentMatch,
    QuoteAlignment,
    align_quote,
    boxes_of,
    value_words,
    visual_rows,
    without_identifiers,
)
from app.documents.index import DatasheetIndex, PageInfo, Word


class Outcome(enum.StrEnum):
    grounded = "grounded"
    grounded_other_page = "grounded_other_page"
    value_not_in_quote = "value_not_in_quote"
    quote_not_found = "quote_not_found"


# ---------------------------------------------------------------------------------------------------------
# Boxes of the located text.


def _boxes(page: PageInfo, view: PageView, spans: list[Span]) -> list[list[float]]:
    if not page.words:
        return []
    word_numbers: set[int] = set()
    for span in spans:
        located = normalised(view.text[span.start:span.end])
        if not located:
            continue
        pos = view.words_norm.find(located)
        if pos >= 0:
            word_numbers.update(view.words_norm_index[pos:pos + len(located)])
            continue
        if len(located) <= len(view.words_norm):
            alignment = fuzz.partial_ratio_alignment(located, view.words_norm, score_cutoff=FUZZY_THRESHOLD)
            if alignment is not None and alignment.dest_end > alignment.dest_start:
                word_numbers.update(view.words_norm_index[alignment.dest_start:alignment.dest_end])
    lines: dict[tuple[int, int], list[float]] = {}
    for number in sorted(word_numbers):
        word = page.words[number]
        key = (word.block, word.line)
        box = lines.get(key)
        if box is None:
            lines[key] = [word.x0, word.y0, word.x1, word.y1]
        else:
            box[0], box[1] = min(box[0], word.x0), min(box[1], word.y0)
            box[2], box[3] = max(box[2], word.x1), max(box[3], word.y1)
    return [[round(c, 2) for c in box] for box in lines.values()]


def _expand_to_tokens(text: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, end


# ---------------------------------------------------------------------------------------------------------
# Grounding one value.


@dataclass
class GroundingResult:
    value_index: int
    outcome: Outcome
    method: str | None = None
    score: float | None = None
    page: int | None = None
    boxes: list[list[float]] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def grounded(self) -> bool:
        return self.outcome is Outcome.grounded

    def to_dict(self) -> dict[str, Any]:
        return {"value_index": self.value_index, "outcome": self.outcome.value, "method": self.method,
                "score": self.score, "page": self.page, "boxes": self.boxes, "detail": self.detail}


@dataclass
class _Location:
    page: PageInfo
    view: PageView
    spans: list[Span]
    method: str
    score: float


def _search(index: DatasheetIndex, quote: str, reported_pages: list[int],
            tiers: tuple[bool, ...] = (False, True)) -> tuple[_Location | None, bool]:
    """Where ``quote`` is, and whether that is one of the reported pages (``tiers``: without, then with fuzzy)."""
    valid_reported = [p for p in dict.fromkeys(reported_pages) if 1 <= p <= index.page_count]
    others = [p.number for p in index.pages if p.number not in valid_reported]
    for allow_fuzzy in tiers:
        best: tuple[_Location, bool] | None = None
        for numbers, on_reported in ((valid_reported, True), (others, False)):
            for number in numbers:
                page = index.page(number)
                view = page_view(index, page)
                spans = locate_on_page(quote, view, allow_fuzzy)
                if spans is None:
                    continue
                method, score = method_of(spans)
                if not allow_fuzzy:
                    return _Location(page, view, spans, method, score), on_reported
                if best is None or score > best[0].score:
                    best = (_Location(page, view, spans, method, score), on_reported)
            if best is not None and best[1]:
                return best  # a fuzzy match on a reported page wins over a better one elsewhere
        if best is not None:
            return best
    return None, False


def ground_value(index: DatasheetIndex, value_index: int, value: dict[str, Any], quote: str | None,
                 reported_pages: list[int]) -> GroundingResult:
    """Ground one reported value against the intended document (see the module docstring)."""
    pages = [p for p in reported_pages if p is not None]
    if not quote or not quote.strip():
        return GroundingResult(value_index, Outcome.quote_not_found,
                               detail={"reason": "no quote was reported", "reported_pages": pages})
    location, on_reported = _search(index, quote, pages, tiers=(False,))
    if location is None:
        aligned = align_quote(index, quote, pages)
        if aligned is not None:
            return _ground_alignment(index, value_index, value, quote, pages, aligned)
        location, on_reported = _search(index, quote, pages, tiers=(True,))
    if location is None:
        return GroundingResult(value_index, Outcome.quote_not_found,
                               detail={"reason": "the quote is not in the document's text layer",
                                       "quote": quote, "reported_pages": pages,
                                       "thresholds": {"fuzzy": FUZZY_THRESHOLD, "min_fuzzy_chars": MIN_FUZZY_CHARS}})
    text = location.view.text
    pieces = [text[slice(*_expand_to_tokens(text, s.start, s.end))] for s in location.spans]
    located_text = " … ".join(" ".join(p.split()) for p in pieces)
    text_numbers = [n for p in pieces for n in numbers_in(without_identifiers(without_note_marks(p)))]
    unit = value.get("unit")
    missing = {name: number for name, number in plausibility.numbers_of(value).items()
               if not number_occurs(number, unit, text_numbers) and not _implied(name, number, value)}
    boxes = _boxes(location.page, location.view, location.spans)
    row_words: list[Word] = []
    if missing:
        # A quote that stops before its row's value cells ("Total gate charge Qg VGS = 4.5 V") is completed by
        # them: the numbers printed further along the rows the quote stands on.
        row_words = [w for w in [*_row_continuation(index, location.page, boxes),
                                 *_rows_between(index, location.page, boxes)] if not _within(w, boxes)]
        row_numbers = [n for w in row_words for n in numbers_in(without_identifiers(without_note_marks(w.text)))]
        missing = {name: number for name, number in missing.items() if not number_occurs(number, unit, row_numbers)}
    if missing:
        outcome = Outcome.value_not_in_quote
    elif on_reported or not pages:
        outcome = Outcome.grounded
    else:
        outcome = Outcome.grounded_other_page
    detail: dict[str, Any] = {"quote": quote, "located_text": located_text, "reported_pages": pages}
    if missing:
        detail["missing_numbers"] = missing
    inside = [w for w in location.page.words or [] if _within(w, boxes)] + row_words
    detail["value_boxes"] = boxes_of(value_words(inside, plausibility.numbers_of(value), unit, located_text))
    return GroundingResult(value_index, outcome, location.method, round(location.score, 1), location.page.number,
                           boxes, detail)


def _row_continuation(index: DatasheetIndex, page: PageInfo, boxes: list[list[float]]) -> list[Word]:
    """The words printed right of the located text on the visual rows it ends on."""
    out: list[Word] = []
    for row in visual_rows(index, page):
        ends = [b[2] for b in boxes if b[1] - 1 <= row.y <= b[3] + 1]
        if ends:
            out.extend(w for w in row.words if w.x0 >= max(ends) - 1)
    return out


def _rows_between(index: DatasheetIndex, page: PageInfo, boxes: list[list[float]]) -> list[Word]:
    """The words of lines printing figures only that stand between lines the located text stands on: a sub-row's
    value cells that the text layer reads apart from its name and its conditions cell (``Total gate charge Qg``,
    then its figures, then the conditions merged over this sub-row and the rows below)."""
    rows = visual_rows(index, page)
    covered = [i for i, row in enumerate(rows) if any(b[1] - 1 <= row.y <= b[3] + 1 for b in boxes)]
    if len(covered) < 2:
        return []
    out: list[Word] = []
    for row in rows[covered[0] + 1:covered[-1]]:
        if row.words and all(numbers_in(w.text) and not any(c.isalpha() for c in w.text) for w in row.words) \
                and not any(b[1] - 1 <= row.y <= b[3] + 1 for b in boxes):
            out.extend(row.words)
    return out


# A note or equation reference standing as a word of its own: ``(2)``, ``[1]``.
_NOTE_MARK = re.compile(r"(?<!\S)[(\[]\d[)\]](?!\S)")


def without_note_marks(text: str) -> str:
    """``text`` with its note and equation marks (``(2)``, ``[1]``) blanked out: they are no figure."""
    return _NOTE_MARK.sub(" ", text)


def _implied(name: str, number: float, value: dict[str, Any]) -> bool:
    """A typical of 0 between min -X and max X is the centre of a printed ``±X``, not a number of its own."""
    numbers = plausibility.numbers_of(value)
    return (name == "typical" and number == 0 and "min" in numbers and "max" in numbers
            and math.isclose(numbers["min"], -numbers["max"]))


def _within(word: Word, boxes: list[list[float]]) -> bool:
    return any(b[0] - 1 <= word.x0 and word.x1 <= b[2] + 1 and b[1] - 1 <= word.y0 and word.y1 <= b[3] + 1
               for b in boxes)


def _fragment_numbers(match: FragmentMatch) -> list[TextNumber]:
    """The numbers a located fragment vouches for: the located text when it was found as printed, else the
    fragment's own numbers (row alignment checked each of them against the row), identifiers excluded."""
    if match.method != "row":
        return numbers_in(match.located_text)
    return numbers_in(without_identifiers(match.fragment))


def _line_boxes(words: list[Word]) -> list[list[float]]:
    lines: dict[tuple[int, int], list[float]] = {}
    for word in words:
        box = lines.setdefault((word.block, word.line), [word.x0, word.y0, word.x1, word.y1])
        box[0], box[1] = min(box[0], word.x0), min(box[1], word.y0)
        box[2], box[3] = max(box[2], word.x1), max(box[3], word.y1)
    return [[round(c, 2) for c in box] for box in lines.values()]


def _ground_alignment(index: DatasheetIndex, value_index: int, value: dict[str, Any], quote: str,
                      pages: list[int], aligned: QuoteAlignment) -> GroundingResult:
    """A value grounded through its quote's fragments: every reported number must be printed by a fragment
    that was located; the page is the one of the fragment that holds the value."""
    unit = value.get("unit")
    numbers = plausibility.numbers_of(value)
    located = aligned.located
    holding = [m for m in located if any(number_occurs(n, unit, _fragment_numbers(m)) for n in numbers.values())]
    anchor = holding[0] if holding else located[0]
    text_numbers = [n for m in located for n in _fragment_numbers(m)]
    missing = {name: number for name, number in numbers.items()
               if not number_occurs(number, unit, text_numbers) and not _implied(name, number, value)}
    if missing:
        outcome = Outcome.value_not_in_quote
    elif anchor.page in pages or not pages:
        outcome = Outcome.grounded
    else:
        outcome = Outcome.grounded_other_page
    on_page = [m for m in located if m.page == anchor.page]
    detail: dict[str, Any] = {
        "quote": quote, "located_text": " … ".join(m.located_text for m in located), "reported_pages": pages,
        "fragments": [{"text": f, "page": m.page if m else None, "method": m.method if m else None,
                       "score": m.score if m else None} for f, m in zip(aligned.fragments, aligned.matches,
                                                                        strict=True)],
        "value_boxes": boxes_of(value_words([w for m in holding if m.page == anchor.page for w in m.words],
                                            numbers, unit, anchor.located_text)),
    }
    if missing:
        detail["missing_numbers"] = missing
    return GroundingResult(value_index, outcome, aligned.method, round(aligned.score, 1), anchor.page,
                           _line_boxes([w for m in on_page for w in m.words]), detail)


def ground_values(index: DatasheetIndex, values: list[dict[str, Any]], quote: str | None,
                  pages: list[int]) -> list[GroundingResult]:
    """Ground every reported value. A value may carry its own ``quote``/``pages`` (count-format cells do)."""
    results: list[GroundingResult] = []
    if not values and quote:
        # A recorded answer with a quote but no structured value: the quote alone can still be re-found.
        return [ground_value(index, 0, {}, quote, list(pages or []))]
    for i, value in enumerate(values):
        own_quote = value.get("quote") or value.get("source_text") or quote
        own_pages = value.get("pages") or pages
        # A value converted to the requested unit is looked for as the document printed it; the grounding's
        # detail keeps what was printed as the evidence of the conversion.
        result = ground_value(index, i, printed(value), own_quote, list(own_pages or []))
        if isinstance(value.get("printed"), dict):
            result.detail["printed_value"] = value["printed"]
        results.append(result)
    return results


def quote_in_text(quote: str | None, text: str) -> bool:
    """Whether ``quote`` (normalised) occurs in ``text`` (normalised): provenance of a quote in tool output."""
    if not quote:
        return False
    needle = normalised(quote)
    return bool(needle) and needle in normalised(text)


# ---------------------------------------------------------------------------------------------------------
# Provenance of tool output: was the content a tool showed the model taken from the intended document?

# Fragments shorter than this (normalised) are too generic ("Min", "Typ", "V") to say anything.
MIN_FRAGMENT_CHARS = 12
MAX_FRAGMENTS_PER_CALL = 40
# A run's tool output is taken from the intended document when at least this share of its fragments is found
# there, over at least PROVENANCE_MIN_FRAGMENTS fragments. On the dev datasheets, clean tool output scored
# >= 0.99 and output served from another datasheet <= 0.53 (large documents share many generic words).
PROVENANCE_MIN_SHARE = 0.8
PROVENANCE_MIN_FRAGMENTS = 5
# Keys whose string values are document text; containers are walked, everything else (titles, section paths,
# queries, notes, images) is metadata the tool composed and is not expected verbatim in the document.
_TEXT_KEYS = frozenset({"text", "snippet", "markdown", "line", "lines", "rows", "cells"})
_SPLIT = re.compile(r"\n|\s\|\s?|\|| / |---\s*page\s+\d+\s*---", re.IGNORECASE)

_DOC_CACHE: OrderedDict[str, str] = OrderedDict()


def _document_norm(index: DatasheetIndex) -> str:
    norm = _DOC_CACHE.get(index.sha256)
    if norm is None:
        norm = "\n".join(page_view(index, page).norm for page in index.pages)
        _DOC_CACHE[index.sha256] = norm
        if len(_DOC_CACHE) > 64:
            _DOC_CACHE.popitem(last=False)
    return norm


def _content_strings(value: Any, inside: bool = False) -> list[str]:
    if isinstance(value, str):
        return [value] if inside else []
    if isinstance(value, dict):
        out: list[str] = []
        for key, item in value.items():
            if isinstance(item, str) and key not in _TEXT_KEYS:
                continue
            out.extend(_content_strings(item, key in _TEXT_KEYS))
        return out
    if isinstance(value, list | tuple):
        return [s for item in value for s in _content_strings(item, inside)]
    return []


def output_fragments(output: Any) -> list[str]:
    """Distinct document-text fragments of a tool result (lines, table cells, snippet parts)."""
    seen: dict[str, str] = {}
    for text in _content_strings(output):
        for piece in _SPLIT.split(text):
            piece = piece.strip()
            norm = normalised(piece)
            if len(norm) >= MIN_FRAGMENT_CHARS and set(norm) - set("-…:.") and norm not in seen:
                seen[norm] = piece
    fragments = list(seen.values())
    if len(fragments) > MAX_FRAGMENTS_PER_CALL:
        step = len(fragments) / MAX_FRAGMENTS_PER_CALL
        fragments = [fragments[int(i * step)] for i in range(MAX_FRAGMENTS_PER_CALL)]
    return fragments


@dataclass
class Provenance:
    found: int
    total: int
    unmatched: list[str]

    @property
    def share(self) -> float:
        return self.found / self.total if self.total else 1.0


_WORD = re.compile(r"[^\W_]{3,}")
_WORDS_CACHE: OrderedDict[str, frozenset[str]] = OrderedDict()


def _document_words(index: DatasheetIndex) -> frozenset[str]:
    words = _WORDS_CACHE.get(index.sha256)
    if words is None:
        words = frozenset(w.casefold() for page in index.pages for w in _WORD.findall(page.text or ""))
        _WORDS_CACHE[index.sha256] = words
        if len(_WORDS_CACHE) > 64:
            _WORDS_CACHE.popitem(last=False)
    return words


def _fragment_in_document(fragment: str, document: str, words: frozenset[str]) -> bool:
    if normalised(fragment) in document:
        return True
    # Table cells are rebuilt from word positions, so a cell may join words that are not adjacent in the text
    # layer: such a fragment counts when every one of its (3+ letter) words is a word of the document.
    tokens = [t.casefold() for t in _WORD.findall(fragment)]
    return len(tokens) >= 2 and all(t in words for t in tokens)


def provenance(index: DatasheetIndex, output: Any) -> Provenance:
    """How many of a tool result's text fragments occur in the intended document."""
    document, words = _document_norm(index), _document_words(index)
    fragments = output_fragments(output)
    unmatched = [f for f in fragments if not _fragment_in_document(f, document, words)]
    return Provenance(len(fragments) - len(unmatched), len(fragments), unmatched)
