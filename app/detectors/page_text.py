"""Where a piece of text stands on a page: the text normalisation grounding relies on (with a map back to the
original characters), a per-page view of the text layer, the exact / normalised / fuzzy search tiers, and the
numbers printed in a text, compared as quantities. The primitives that grounding and row alignment share."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass

from rapidfuzz import fuzz

from app.detectors import plausibility
from app.documents.index import DatasheetIndex, PageInfo

FUZZY_THRESHOLD = 90.0
MIN_FUZZY_CHARS = 10
# Numbers count as equal at this relative tolerance (printed values are exact decimals).
NUMBER_REL_TOL = 1e-6


# ---------------------------------------------------------------------------------------------------------
# Text normalisation with a map back to the original characters (needed to recover the located span).

# Applied before NFKC: symbol-font code points that PDF text layers commonly expose as Latin-1 glyphs.
_PRE_MAP = {"£": "≤", "…": "...", "\u2126": "ω"}
# Applied after NFKC + casefold, per character.
_POST_MAP = {
    "μ": "u", "ω": "w",
    "≤": "<=", "≥": ">=", "⩽": "<=", "⩾": ">=",
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "﹣": "-", "－": "-",
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "`": "'", "´": "'", "“": '"', "”": '"', "„": '"',
    "×": "x", "∼": "~", "～": "~", "º": "°",
}
_DROP = {"\u00ad", "\u200b", "\u200c", "\u200d", "\ufeff"}


def normal_chars(text: str) -> tuple[list[str], list[int]]:
    chars: list[str] = []
    index: list[int] = []
    for position, ch in enumerate(text):
        if ch in _DROP or ch.isspace():
            continue
        mapped = _PRE_MAP.get(ch, ch)
        mapped = unicodedata.normalize("NFKC", mapped).casefold()
        for out in mapped:
            if out.isspace():
                continue
            for final in _POST_MAP.get(out, out):
                chars.append(final)
                index.append(position)
    return chars, index


def collapse_chars(chars: list[str], index: list[int]) -> tuple[str, list[int]]:
    """Collapse dot leaders to one ``…``, dash runs to one ``-``, and ``+/-`` / ``+-`` to ``±``."""
    out: list[str] = []
    out_index: list[int] = []
    i, n = 0, len(chars)
    while i < n:
        ch = chars[i]
        if ch == ".":
            j = i
            while j < n and chars[j] == ".":
                j += 1
            if j - i >= 3:
                out.append("…")
                out_index.append(index[i])
                i = j
                continue
        elif ch == "-":
            j = i
            while j < n and chars[j] == "-":
                j += 1
            out.append("-")
            out_index.append(index[i])
            i = j
            continue
        elif ch == "+" and i + 2 < n and chars[i + 1] == "/" and chars[i + 2] == "-":
            out.append("±")
            out_index.append(index[i])
            i += 3
            continue
        out.append(ch)
        out_index.append(index[i])
        i += 1
    return "".join(out), out_index


def normalise(text: str) -> tuple[str, list[int]]:
    """The matching form of ``text`` and, per character, the index of the original character it came from."""
    return collapse_chars(*normal_chars(text))


def normalised(text: str) -> str:
    return normalise(text)[0]


def whitespace_collapsed(text: str) -> tuple[str, list[int]]:
    out: list[str] = []
    index: list[int] = []
    pending_space = False
    for position, ch in enumerate(text):
        if ch.isspace():
            pending_space = bool(out)
            continue
        if pending_space:
            out.append(" ")
            index.append(position - 1)
            pending_space = False
        out.append(ch)
        index.append(position)
    return "".join(out), index


# ---------------------------------------------------------------------------------------------------------
# Page views (cached: normalising a long document is the expensive part and pages never change).


@dataclass
class PageView:
    text: str
    exact: str
    exact_index: list[int]
    norm: str
    norm_index: list[int]
    words_norm: str
    words_norm_index: list[int]  # normalised char -> word number


_VIEW_CACHE: OrderedDict[tuple[str, int, int], PageView] = OrderedDict()
_VIEW_CACHE_SIZE = 4096


def page_view(index: DatasheetIndex, page: PageInfo) -> PageView:
    key = (index.sha256, page.number, len(page.text or ""))
    view = _VIEW_CACHE.get(key)
    if view is not None:
        _VIEW_CACHE.move_to_end(key)
        return view
    text = page.text or ""
    exact, exact_index = whitespace_collapsed(text)
    norm, norm_index = normalise(text)
    word_chars: list[str] = []
    word_index: list[int] = []
    for number, word in enumerate(page.words or []):
        chars, _ = normal_chars(word.text)
        word_chars.extend(chars)
        word_index.extend([number] * len(chars))
    words_norm, collapsed_index = collapse_chars(word_chars, list(range(len(word_chars))))
    view = PageView(text, exact, exact_index, norm, norm_index, words_norm,
                     [word_index[i] for i in collapsed_index])
    _VIEW_CACHE[key] = view
    if len(_VIEW_CACHE) > _VIEW_CACHE_SIZE:
        _VIEW_CACHE.popitem(last=False)
    return view


# ---------------------------------------------------------------------------------------------------------
# Locating a quote.

TIER_RANK = {"exact": 0, "normalised": 1, "fuzzy": 2}
ELLIPSIS = re.compile(r"\s*(?:\.{3,}|…|\[\s*\.\.\.\s*\])\s*")


@dataclass
class Span:
    start: int  # original character offsets in page.text
    end: int
    method: str
    score: float


def find_exact(needle: str, view: PageView, after: int = 0) -> Span | None:
    collapsed, _ = whitespace_collapsed(needle)
    if not collapsed:
        return None
    begin = first_position_at_or_after(view.exact_index, after)
    pos = view.exact.find(collapsed, begin)
    if pos < 0:
        return None
    return Span(view.exact_index[pos], view.exact_index[pos + len(collapsed) - 1] + 1, "exact", 100.0)


def find_normalised(needle_norm: str, view: PageView, after: int = 0) -> Span | None:
    if not needle_norm:
        return None
    begin = first_position_at_or_after(view.norm_index, after)
    pos = view.norm.find(needle_norm, begin)
    if pos < 0:
        return None
    return Span(view.norm_index[pos], view.norm_index[pos + len(needle_norm) - 1] + 1, "normalised", 100.0)


def find_fuzzy(needle_norm: str, view: PageView, after: int = 0) -> Span | None:
    begin = first_position_at_or_after(view.norm_index, after)
    haystack = view.norm[begin:]
    if len(needle_norm) < MIN_FUZZY_CHARS or len(needle_norm) > len(haystack):
        return None
    alignment = fuzz.partial_ratio_alignment(needle_norm, haystack, score_cutoff=FUZZY_THRESHOLD)
    if alignment is None or alignment.score < FUZZY_THRESHOLD or alignment.dest_end <= alignment.dest_start:
        return None
    start, end = begin + alignment.dest_start, begin + alignment.dest_end - 1
    return Span(view.norm_index[start], view.norm_index[end] + 1, "fuzzy", float(alignment.score))


def first_position_at_or_after(index: list[int], original_offset: int) -> int:
    if original_offset <= 0:
        return 0
    lo, hi = 0, len(index)
    while lo < hi:
        mid = (lo + hi) // 2
        if index[mid] < original_offset:
            lo = mid + 1
        else:
            hi = mid
    return lo


def locate_piece(piece: str, view: PageView, after: int, allow_fuzzy: bool) -> Span | None:
    span = find_exact(piece, view, after) or find_normalised(normalised(piece), view, after)
    if span is None and allow_fuzzy:
        span = find_fuzzy(normalised(piece), view, after)
    return span


def locate_on_page(quote: str, view: PageView, allow_fuzzy: bool) -> list[Span] | None:
    """The spans of ``quote`` on one page (one span, or one per ellipsis-separated fragment)."""
    whole = locate_piece(quote, view, 0, allow_fuzzy)
    if whole is not None:
        return [whole]
    fragments = [f for f in ELLIPSIS.split(quote) if len(normalised(f)) >= 3]
    if len(fragments) < 2:
        return None
    spans: list[Span] = []
    after = 0
    for fragment in fragments:
        span = locate_piece(fragment, view, after, allow_fuzzy)
        if span is None:
            return None
        spans.append(span)
        after = span.end
    return spans


def method_of(spans: list[Span]) -> tuple[str, float]:
    method = max((s.method for s in spans), key=TIER_RANK.__getitem__)
    return method, min(s.score for s in spans)


# ---------------------------------------------------------------------------------------------------------
# Numbers in text.

NUMBER_PATTERN = re.compile(
    # Not inside a word or another number ("1.5" holds no 5), but a dot leader may run into it ("....100 mA").
    r"(?<![\w,])(?<![^.]\.)(?P<sign>\+/-|\+/−|±|[+\-−–])?\s?"
    r"(?P<num>\d+(?:[.,]\d+)*|(?<!\.)[.,]\d+)(?P<exp>[eE][+\-−]?\d+)?"
    r"(?:\s?(?P<unit>[A-Za-zµμΩΩ°℃%‰][A-Za-zµμΩΩ°℃%‰/·.²³]*))?"
)


@dataclass(frozen=True)
class TextNumber:
    values: tuple[float, ...]  # candidate readings ("10,000" is 10000 or 10.0)
    plus_minus: bool
    unit: str | None


def readings_of(raw: str) -> list[float]:
    if "," in raw and "." in raw:
        # "1,234.5" (thousands comma) or "1.234,5" (thousands dot).
        if raw.rfind(",") < raw.rfind("."):
            candidates = [raw.replace(",", "")]
        else:
            candidates = [raw.replace(".", "").replace(",", ".")]
    elif "," in raw:
        groups = raw.split(",")
        candidates = []
        if all(len(g) == 3 for g in groups[1:]) and groups[0]:
            candidates.append(raw.replace(",", ""))
        if len(groups) == 2:
            candidates.append(raw.replace(",", "."))
    elif raw.count(".") > 1:
        groups = raw.split(".")
        candidates = [raw.replace(".", "")] if all(len(g) == 3 for g in groups[1:]) else []
    else:
        candidates = [raw]
    out: list[float] = []
    for candidate in candidates:
        try:
            out.append(float("0" + candidate if candidate.startswith(".") else candidate))
        except ValueError:
            continue
    return out


def numbers_in(text: str) -> list[TextNumber]:
    """Every number printed in ``text``, with its candidate readings, sign and trailing unit."""
    found: list[TextNumber] = []
    for match in NUMBER_PATTERN.finditer(text):
        sign = match.group("sign") or ""
        plus_minus = sign in ("±", "+/-", "+/−")
        negative = sign in ("-", "−", "–")
        exponent = match.group("exp") or ""
        values: list[float] = []
        for reading in readings_of(match.group("num")):
            if exponent:
                try:
                    reading *= 10 ** int(exponent[1:].replace("−", "-"))
                except (ValueError, OverflowError):
                    continue
            values.append(-reading if negative else reading)
        if not values:
            continue
        unit = (match.group("unit") or "").rstrip(".") or None
        found.append(TextNumber(tuple(values), plus_minus, unit))
    return found


def unit_prefixes(unit: str) -> list[str]:
    """``unit`` and its shorter prefixes, longest first ("Vss" -> "Vss", "Vs", "V")."""
    return [unit[:n] for n in range(len(unit), 0, -1)]


def readable_unit(unit: str | None) -> str | None:
    if not unit:
        return None
    for candidate in unit_prefixes(unit):
        if plausibility.parse_unit(candidate) is not None:
            return candidate
    return None


def number_occurs(number: float, unit: str | None, text_numbers: list[TextNumber]) -> bool:
    """Whether ``number`` (in ``unit``) is printed among ``text_numbers``, as printed or after unit scaling."""
    printed_units = {u for u in (readable_unit(t.unit) for t in text_numbers) if u}
    for item in text_numbers:
        for reading in item.values:
            if same_number(number, reading):
                return True
        if not unit:
            continue
        units = [readable_unit(item.unit)] if item.unit else sorted(printed_units)
        for text_unit in units:
            if not text_unit:
                continue
            converted = plausibility.convert(number, unit, text_unit)
            if converted is not None and any(same_number(converted, reading) for reading in item.values):
                return True
    return False


def same_number(a: float, b: float) -> bool:
    # Signs are compared leniently: a range dash and a minus sign are the same glyph in many text layers.
    return math.isclose(abs(a), abs(b), rel_tol=NUMBER_REL_TOL, abs_tol=1e-12)


