"""Aligning a quote fragment to one table row, or one small block of lines, of a page.

A model that re-serialises a table row writes its cells in reading order and skips whatever the text layer
interleaves between them (the other rows of a multi-row cell, a neighbouring column). Substring search cannot
see that; this can. A page's words are grouped into visual rows (words whose vertical centres agree); a
*window* is one row or up to ``MAX_WINDOW_ROWS`` consecutive rows close together. A fragment aligns to a window
when at least ``MIN_TOKEN_SHARE`` of its tokens are words of the window and every number it prints is printed
there too, compared as a quantity (``0.06 hPa`` aligns with ``6 Pa``).

Numbers are never read from identifiers: ``17HS2408`` or ``ACS70331`` is a part number, not the value 17 or
70331, so the boxes of a value are the boxes of the cell that prints it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.detectors import plausibility
from app.detectors.page_text import (
    TextNumber,
    find_exact,
    find_normalised,
    normalised,
    number_occurs,
    numbers_in,
    page_view,
)
from app.detectors.quote_fragments import fragments, readings
from app.documents.index import DatasheetIndex, PageInfo, Word

MAX_WINDOW_ROWS = 3
# Rows of one window lie within this many line heights of the first row's centre.
MAX_WINDOW_SPAN_LINES = 3.2
MIN_TOKEN_SHARE = 0.75
MIN_LABEL_SHARE = 0.75
MIN_ROW_LABEL_COVERAGE = 0.4
# Shorter fragments ("3.6 W", "12 V") are printed on too many rows to say where a quote came from.
MIN_TOKENS = 3

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+|±|%|°")
_IDENTIFIER = re.compile(r"[A-Za-z](?<![eE])\d|[A-Za-z]{2,}\d|\d[A-Za-z]+\d")


@dataclass
class Row:
    y: float
    height: float
    words: list[Word]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


@dataclass
class Alignment:
    page: int
    rows: list[Row]
    words: list[Word]  # the window's words that carry the fragment's tokens
    score: float  # 0-100, share of the fragment's tokens found

    @property
    def text(self) -> str:
        return " ".join(row.text for row in self.rows)


def tokens(text: str) -> list[str]:
    """Comparable tokens of ``text``: numbers, letter runs and a few symbols, case- and form-folded."""

    out: list[str] = []
    for piece in text.split():
        if is_identifier(piece):
            out.append(normalised(piece).strip(".,;:()[]"))  # one token: its digits are not numbers
        else:
            out.extend(_TOKEN.findall(normalised(piece)))
    return out


def is_identifier(text: str) -> bool:
    """A part number or symbol with digits inside (``17HS2408``, ``VDD1``): its digits are not a value."""
    return bool(_IDENTIFIER.search(text)) and not plausibility.parse_unit(re.sub(r"^[\d.,±+\-]+", "", text))


def visual_rows(index: DatasheetIndex, page: PageInfo) -> list[Row]:
    """The page's words grouped into rows, top to bottom, each left to right (memoised per page)."""

    def build() -> list[Row]:
        rows: list[Row] = []
        for word in sorted(page.words, key=lambda w: ((w.y0 + w.y1) / 2, w.x0)):
            middle, height = (word.y0 + word.y1) / 2, max(word.y1 - word.y0, 1.0)
            if rows and abs(rows[-1].y - middle) <= 0.35 * max(height, rows[-1].height):
                rows[-1].words.append(word)
            else:
                rows.append(Row(middle, height, [word]))
        for row in rows:
            row.words.sort(key=lambda w: w.x0)
        return rows

    return index.memo(f"visual_rows:{page.number}", build)


def _row_sequences(index: DatasheetIndex, page: PageInfo) -> list[list[tuple[str, Word]]]:
    """Per row, its tokens in reading order with the word each comes from (memoised per page)."""
    return index.memo(f"row_sequences:{page.number}", lambda: [
        [(t, w) for w in row.words for t in tokens(w.text)] for row in visual_rows(index, page)])


def without_identifiers(text: str) -> str:
    """``text`` with its identifier words (part numbers, indexed symbols) blanked out."""
    return " ".join("_" if is_identifier(word) else word for word in text.split())


def _is_number(token: str) -> bool:
    return token[:1].isdigit()


def _number(token: str) -> float | None:
    try:
        return float(token.replace(",", "."))
    except ValueError:
        return None


def _same_token(a: str, b: str) -> bool:
    if _is_number(a) and _is_number(b):
        x, y = _number(a), _number(b)
        return x is not None and y is not None and abs(x - y) <= 1e-9 * max(1.0, abs(x))
    return a == b


def _in_order(wanted: list[str], sequence: list[tuple[str, Word]]) -> list[Word | None]:
    """Greedy in-order match of ``wanted`` in ``sequence``: per token the word it matched, or ``None``."""
    out: list[Word | None] = []
    position = 0
    for token in wanted:
        hit = next((k for k in range(position, len(sequence)) if _same_token(token, sequence[k][0])), None)
        if hit is None:
            out.append(None)
        else:
            out.append(sequence[hit][1])
            position = hit + 1
    return out


def _unordered(wanted: list[str], sequence: list[tuple[str, Word]]) -> list[Word | None]:
    """Per token of ``wanted``, a word of ``sequence`` carrying it (each word used once), or ``None``."""
    pool = list(sequence)
    out: list[Word | None] = []
    for token in wanted:
        hit = next((k for k, (t, _) in enumerate(pool) if _same_token(token, t)), None)
        out.append(None if hit is None else pool.pop(hit)[1])
    return out


def _row_label_covered(quoted: list[str], sequence: list[tuple[str, Word]], first_value: Word) -> bool:
    """Whether the quote accounts for the value row's own label (its words left of the first value): a row
    whose name the quote does not mention is another parameter's row that happens to print the number."""
    own = [t for t, w in sequence if w.x1 <= first_value.x0 and t.isalpha() and len(t) >= 2]
    if not own:
        return True
    wanted = set(quoted)
    return sum(t in wanted for t in own) / len(own) >= MIN_ROW_LABEL_COVERAGE


def align(index: DatasheetIndex, page: PageInfo, fragment: str) -> Alignment | None:
    """The best row window of ``page`` for ``fragment``, or ``None`` when none reaches the thresholds.

    The fragment is read as a label (its tokens before the first number) and a value part (the rest). The value
    part's numbers must be found in order from one row on (the value row, continuing into the lines just below
    it, where a long condition wraps), its words anywhere there, and the quote must account for the value
    row's own label. The label's words must be found within two rows of the value row, in any order: a name
    centred on a multi-row cell, or a symbol in a merged cell, is printed above or below the row it belongs to.
    """
    wanted = tokens(fragment)
    split = next((i for i, t in enumerate(wanted) if _is_number(t)), len(wanted))
    label, values = wanted[:split], wanted[split:]
    numbers = [t for t in values if _is_number(t)]
    # A quote of cells only ("3.267 3.300 3.333") names no parameter; it aligns only to one row printing all of
    # its numbers in order, several of them (one or two numbers stand on too many rows to say which).
    cells_only = not any(len(t) >= 3 and t.isalpha() for t in wanted)
    if len(wanted) < MIN_TOKENS or (cells_only and len(numbers) < MIN_TOKENS) or not page.words:
        return None
    rows = visual_rows(index, page)
    sequences = _row_sequences(index, page)
    best: Alignment | None = None
    for v, row in enumerate(rows):
        if numbers and not any(_same_token(numbers[0], t) for t, _ in sequences[v]):
            continue
        if not numbers and not any(t == wanted[0] for t, _ in sequences[v]):
            continue
        end = v + 1
        while not cells_only and end < len(rows) and end - v < MAX_WINDOW_ROWS \
                and abs(rows[end].y - row.y) <= MAX_WINDOW_SPAN_LINES * row.height:
            end += 1
        block = [item for r in range(v, end) for item in sequences[r]]
        number_hits = _in_order(numbers, block)
        if any(hit is None for hit in number_hits):
            continue
        used = {id(h) for h in number_hits}
        words = [t for t in values if not _is_number(t)]
        value_hits = number_hits + _unordered(words, [(t, w) for t, w in block if id(w) not in used])
        if number_hits and not cells_only \
                and not _row_label_covered(wanted, sequences[v], number_hits[0]):  # type: ignore[arg-type]
            continue
        start = v
        while start > 0 and v - start < 2 and abs(rows[start - 1].y - row.y) <= MAX_WINDOW_SPAN_LINES * row.height:
            start -= 1
        stop = min(len(rows), v + 3)
        label_hits = _unordered(label, [item for r in range(start, stop) for item in sequences[r]])
        hits = [h for h in label_hits + value_hits if h is not None]
        share = len(hits) / len(wanted)
        label_share = sum(h is not None for h in label_hits) / len(label) if label else 1.0
        if share < MIN_TOKEN_SHARE or label_share < MIN_LABEL_SHARE:
            continue
        score = round(100.0 * share, 1)
        if best is None or score > best.score:
            best = Alignment(page.number, rows[start:max(end, stop)], list({id(h): h for h in hits}.values()), score)
    return best


def value_words(words: list[Word], numbers: dict[str, float], unit: str | None, context_text: str) -> list[Word]:
    """The words among ``words`` that print one of the reported ``numbers`` as a quantity (a bare number read
    in the units ``context_text`` prints), identifiers excluded."""

    context_units = sorted({n.unit for n in numbers_in(context_text) if n.unit})
    found: list[Word] = []
    for word in words:
        if is_identifier(word.text):
            continue
        printed = numbers_in(word.text)
        candidates = list(printed)
        if printed and not any(p.unit for p in printed):
            candidates += [TextNumber(p.values, p.plus_minus, u) for p in printed for u in context_units]
        if any(number_occurs(v, unit, [c]) for c in candidates for v in numbers.values()):
            found.append(word)
    return found


def boxes_of(words: list[Word]) -> list[list[float]]:
    return [[round(w.x0, 2), round(w.y0, 2), round(w.x1, 2), round(w.y1, 2)] for w in words]


@dataclass
class FragmentMatch:
    fragment: str
    page: int
    method: str  # exact | normalised | row
    score: float
    words: list[Word]
    located_text: str


@dataclass
class QuoteAlignment:
    """Where the fragments of a composite quote were found; ``None`` entries were found nowhere."""

    fragments: list[str]
    matches: list[FragmentMatch | None]

    @property
    def located(self) -> list[FragmentMatch]:
        return [m for m in self.matches if m is not None]

    @property
    def method(self) -> str:
        rank = {"exact": 0, "normalised": 1, "row": 2}
        return max((m.method for m in self.located), key=rank.__getitem__)

    @property
    def score(self) -> float:
        return min(m.score for m in self.located)


def _words_in_span(page: PageInfo, view_text: str, start: int, end: int) -> list[Word]:
    wanted = set(tokens(view_text[start:end]))
    located = normalised(view_text[start:end])
    return [w for w in page.words if set(tokens(w.text)) & wanted and normalised(w.text) in located]


def _locate_fragment(index: DatasheetIndex, fragment: str, pages: list[int]) -> FragmentMatch | None:
    for number in pages:
        page = index.page(number)
        view = page_view(index, page)
        span = find_exact(fragment, view) or find_normalised(normalised(fragment), view)
        if span is not None:
            return FragmentMatch(fragment, number, span.method, 100.0,
                                 _words_in_span(page, view.text, span.start, span.end),
                                 " ".join(view.text[span.start:span.end].split()))
    best: FragmentMatch | None = None
    for number in pages:
        page = index.page(number)
        for reading in readings(fragment):
            aligned = align(index, page, reading)
            if aligned is not None and (best is None or aligned.score > best.score):
                best = FragmentMatch(reading, number, "row", aligned.score, aligned.words, aligned.text)
        if best is not None and best.score >= 100.0:
            break
    return best


def align_quote(index: DatasheetIndex, quote: str, reported_pages: list[int]) -> QuoteAlignment | None:
    """Each printed fragment of ``quote`` located on one row or block of lines (reported pages searched first);
    ``None`` when no fragment is found anywhere, or when the quote is a single piece (the whole-quote search
    already covered it) that no row holds."""
    pieces = fragments(quote)
    if not pieces:
        return None
    valid = [p for p in dict.fromkeys(reported_pages) if 1 <= p <= index.page_count]
    order = valid + [p.number for p in index.pages if p.number not in valid]
    matches = [_locate_fragment(index, piece, order) for piece in pieces]
    if not any(matches):
        return None
    return QuoteAlignment(pieces, matches)
