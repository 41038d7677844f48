"""Judging candidates: which reading answers the request, how sure we are, and the verbatim text to quote.

Scores are built from separate, explainable parts — how well the row or line names the parameter, whether the
requested conditions and qualifiers appear around it, whether the unit has the right dimension, whether the
reading sits in an absolute-maximum section when (and only when) one was asked for — so that the reason given
with an answer, or with a refusal, can say what was and was not found.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from app.agent.offline.candidates import ABS_MAX_TITLE, Candidate, is_section_title
from app.agent.offline.lines import (
    abs_max_line_numbers,
    block_pair_candidates,
    footnotes,
    line_candidates,
    part_above_caption,
    vertical_row_candidates,
)
from app.agent.offline.quotes import build_quote
from app.agent.offline.rows import Table, table_candidates
from app.agent.offline.synonyms import Query, compact, content_tokens, fold, looks_like_symbol
from app.agent.offline.values import parse_number
from app.documents.table_model import TableModel
from app.units import parse_unit

# A candidate needs at least this much of the parameter's name (0..1) before anything else counts.
MIN_NAME = 0.5
# A value whose only name is the parameter's conventional symbol heading its columns.
SYMBOL_ONLY_NAME = 0.62
# Below this total score the reader declines rather than answer.
MIN_TOTAL = 0.72
# Two readings whose scores differ by less than this match the request equally well.
TIE = 0.02
_HAS_DIGIT = re.compile(r"\d")
_LIMIT_TOKENS = {"typ", "max", "min", "typical", "maximum", "minimum"}
_NOISE_TOKENS = {"note", "notes", "see", "typ", "max", "min", "typical", "maximum", "minimum", "unit", "units"}


@dataclass
class Evidence:
    """Everything the tools returned so far, keyed by page."""

    page_lines: dict[int, list[str]] = field(default_factory=dict)
    cell_lines: dict[int, list[str]] = field(default_factory=dict)  # page_lines with blank lines kept as ""
    tables: dict[int, list[Table]] = field(default_factory=dict)
    hit_lines: dict[int, list[str]] = field(default_factory=dict)

    def pages(self) -> list[int]:
        return sorted(set(self.page_lines) | set(self.tables) | set(self.hit_lines))


@dataclass
class Scored:
    candidate: Candidate
    name: float
    conditions: float | None
    total: float
    notes: list[str] = field(default_factory=list)


@dataclass
class Decision:
    best: Scored | None
    confidence: float
    quote: str | None
    alternatives: list[Scored]
    reason: str
    variants: list[Candidate] = field(default_factory=list)  # the answer's sibling variants, not reported


# --- Matching primitives ------------------------------------------------------------------------------------

@lru_cache(maxsize=200_000)
def _token_match(a: str, b: str) -> bool:
    if a == b:
        return True
    if _HAS_DIGIT.search(a) or _HAS_DIGIT.search(b):
        # Part numbers and values differ by one character and mean something else entirely.
        shorter, longer = sorted((a, b), key=len)
        rest = longer[len(shorter):]
        # "Resistance1": a footnote number glued to the last word of a name is no part of the word.
        footnote = shorter.isalpha() and len(shorter) >= 5 and rest.isdigit() and len(rest) <= 2
        return len(shorter) >= 4 and longer.startswith(shorter) and (rest.isalpha() or footnote)
    if a.rstrip("s") == b.rstrip("s"):
        return True
    shorter, longer = sorted((a, b), key=len)
    if len(shorter) >= 4 and longer.startswith(shorter) and not shorter.isdigit():
        return True
    # Typos and split ligatures ("effciency"), but not opposites ("active" / "inactive").
    return len(shorter) >= 5 and a[0] == b[0] and fuzz.ratio(a, b) >= 88


def _coverage(phrase_tokens: list[str], by_letter: dict[str, list[tuple[int, str]]]) -> tuple[float, int]:
    """Share of the phrase's tokens found among the label's (indexed by first letter), and how many were used."""
    if not phrase_tokens:
        return 0.0, 0
    used: set[int] = set()
    hits = 0
    for p in phrase_tokens:
        # Every kind of token match (exact, plural, prefix, typo) keeps the first letter.
        for i, t in by_letter.get(p[0], ()):
            if i not in used and _token_match(p, t):
                used.add(i)
                hits += 1
                break
    return hits / len(phrase_tokens), len(used)


@lru_cache(maxsize=20_000)
def _label_index_with_numbers(label: str) -> dict[str, list[tuple[int, str]]]:
    by_letter: dict[str, list[tuple[int, str]]] = {}
    for i, t in enumerate(t for t in content_tokens(label) if t not in _NOISE_TOKENS):
        by_letter.setdefault(t[0], []).append((i, t))
    return by_letter


@lru_cache(maxsize=20_000)
def _label_index(label: str) -> dict[str, list[tuple[int, str]]]:
    by_letter: dict[str, list[tuple[int, str]]] = {}
    for i, t in enumerate(_label_tokens(label)):
        by_letter.setdefault(t[0], []).append((i, t))
    return by_letter


def name_score(query: Query, cand: Candidate) -> float:
    """How well the candidate's label names the requested parameter (0..~1.3, symbols add to phrasing).
    Other lines that may carry the name (a bilingual cell's second line, the heading above a feature
    line) count with a discount."""
    best = label_score(query, cand, f"{cand.label} {cand.symbol}")
    for alt in cand.alt_labels:
        best = max(best, 0.85 * label_score(query, cand, f"{alt} {cand.label} {cand.symbol}"))
    if cand.heading:
        # "Thermal resistance ratings | Junction-to-case RthJC": the title names the quantity, the row which one.
        best = max(best, 0.85 * label_score(query, cand, f"{cand.heading} {cand.label} {cand.symbol}"))
    if best < MIN_NAME and cand.symbol_named and cand.symbol.upper() in {s.upper() for s in query.all_symbols}:
        # Columns headed by the parameter's conventional symbol alone ("Iv (mcd)"): named, but less surely.
        best = SYMBOL_ONLY_NAME
    elif best < MIN_NAME and cand.source == "table_cell" and _symbol_heads_column(query, cand):
        best = SYMBOL_ONLY_NAME  # "Package Type | θJA | Unit": the cell's column header is the symbol alone
    return best


_SYMBOL_WORD = re.compile(r"[^\W\d_][\w+]*")


def _symbol_heads_column(query: Query, cand: Candidate) -> bool:
    """Whether a word of a matrix cell's label that its row does not print (so its column header) is one of the
    parameter's conventional symbols of three characters or more ("θJA")."""
    row = {w.upper() for w in _SYMBOL_WORD.findall(cand.line_text)}
    header = {w.upper() for w in _SYMBOL_WORD.findall(cand.label)} - row
    return any(s.upper() in header for s in query.all_symbols if len(s) >= 3)


def label_score(query: Query, cand: Candidate, label: str) -> float:
    best, best_used, label_tokens = _phrase_match(tuple(query.weighted_phrases), label)
    # A label that says much more than the request ("Supply voltage rejection ratio") is a different
    # parameter more often than not; prose lines say more by nature, so they pay less for it.
    extra = max(0, len(label_tokens) - best_used)
    best -= min(extra, 4) * (0.04 if cand.source != "line" else 0.015)
    if _other_side(query.core_tokens, label_tokens):
        best -= 0.4  # "Low-side on resistance" for a high-side one: the name without its side matched
    if _negated(query.core_tokens, label_tokens):
        return 0.0  # "Gate non-trigger voltage" for a gate trigger voltage: the opposite, in the same words
    symbol_tokens = {s.upper() for s in re.findall(r"[A-Za-z][A-Za-z0-9+_]*", f"{cand.symbol} {cand.label}")}
    if any(s.upper() in symbol_tokens for s in query.symbols):
        best += 0.3
    elif best >= 0.4 and (any(s.upper() in symbol_tokens for s in query.all_symbols)
                          or any(spells_name(s, query.core) for s in _symbol_candidates(cand.symbol, label))):
        # The conventional symbol of the concept ("VDD" for a supply voltage), or a symbol that spells the name
        # ("CW" beside "Capacitance" for a wiper capacitance), stands in for missing words.
        best += 0.15 if best < 1.0 else 0.08
    elif best < MIN_NAME and _head_only(query.core_tokens, label_tokens) and any(
            spells_name(s, query.core) for s in _symbol_candidates(cand.symbol, label)):
        # "Capacitance (Pw) | CW" for a wiper capacitance: the label says the head noun, its symbol the rest.
        best = HEAD_ONLY_NAME
    return best


_NEGATIONS = frozenset({"non", "not", "no", "un"})


def _negated(asked: list[str], label_tokens: tuple[str, ...]) -> bool:
    """Whether the label negates a word of the request that the request does not negate ("Non-trigger current",
    "Non-repetitive peak current" for a trigger or a repetitive one): the quantity that stays off the point the
    request names."""
    if any(t in _NEGATIONS for t in asked):
        return False
    return any(t in _NEGATIONS and any(_token_match(a, nxt) for a in asked)
               for t, nxt in zip(label_tokens, label_tokens[1:], strict=False))


def _other_side(asked: list[str], label_tokens: tuple[str, ...]) -> bool:
    """Whether the label names the low side where the request names the high side, or the reverse."""
    return "side" in label_tokens and any(a in asked and b not in asked and b in label_tokens
                                          and a not in label_tokens for a, b in (("high", "low"), ("low", "high")))


@lru_cache(maxsize=20_000)
def _label_tokens(label: str) -> tuple[str, ...]:
    return tuple(t for t in content_tokens(label) if not t.isdigit() and t not in _NOISE_TOKENS)


# A label that is the name's head noun alone ("Capacitance" for "Wiper capacitance"), beside a symbol spelling
# the other words ("CW"): named, though by less than the whole name.
HEAD_ONLY_NAME = 0.7
_SHORT_TOKEN = 3  # symbol-like tokens ("pw", "cw") beside a head noun do not name another quantity


def _symbol_candidates(symbol: str, label: str) -> list[str]:
    """Symbols that may stand for the name: the symbol cell, else short mixed-case tokens of the label."""
    found = re.findall(r"[A-Za-z][A-Za-z0-9]{1,7}", symbol)
    if not found:
        found = [t for t in re.findall(r"\b[A-Za-z][A-Za-z0-9]{1,5}\b", label) if looks_like_symbol(t)]
    return found


@lru_cache(maxsize=50_000)
def spells_name(symbol: str, name: str) -> bool:
    """Whether a symbol is the initial of a word of the name followed by abbreviations of its other words, each used
    once ("CW": Capacitance, Wiper; "Rthjc": Resistance, THermal, Junction, Case). A letter that abbreviates
    no word of the name ("CAW" has an A) means the symbol names a sibling quantity."""
    words = [t for t in content_tokens(name) if t.isalpha()]
    letters = fold(re.sub(r"[^A-Za-z]", "", symbol))
    if len(words) < 2 or len(letters) < 2:
        return False

    def spell(rest: str, unused: tuple[str, ...]) -> bool:
        if not rest:
            return True
        for i, word in enumerate(unused):
            for size in (3, 2, 1):
                if len(rest) >= size and word.startswith(rest[:size]) and spell(
                        rest[size:], unused[:i] + unused[i + 1:]):
                    return True
        return False

    # The quantity's letter leads: usually the head noun's, but a postmodified name ("resistance junction to
    # case") ends in another word, so any word of the name may lead.
    return any(word[0] == letters[0] and spell(letters[1:], tuple(words[:i] + words[i + 1:]))
               for i, word in enumerate(words))


@lru_cache(maxsize=200_000)
def _one_phrase(phrase: str, label: str) -> tuple[float, int]:
    """Coverage of the label by one phrasing (cached per phrasing: synonyms recur across requests)."""
    # Limit words are not part of a label's name ("Max. airflow" names airflow), so neither are they of a phrase.
    phrase_tokens = [t for t in content_tokens(phrase) if t not in _LIMIT_TOKENS] or content_tokens(phrase)
    label_tokens = _label_tokens(label)
    if not phrase_tokens or not label_tokens:
        coverage, used = 0.0, 0
    elif any(t.isdigit() for t in phrase_tokens):
        # A number that is part of the name ("1 code high time", "channel 2") must be matched by the same
        # number in the label, not ignored like a footnote number would be.
        coverage, used = _coverage(phrase_tokens, _label_index_with_numbers(label))
    else:
        coverage, used = _coverage(phrase_tokens, _label_index(label))
    if coverage < 1.0 and len(compact(phrase)) >= 6 and compact(phrase) in compact(label):
        coverage, used = 1.0, len(phrase_tokens)
    head = _POSTMODIFIER.split(phrase, maxsplit=1)
    if coverage < 1.0 and len(head) > 1 and content_tokens(head[0]):
        # "distance between two pixels": the words after "between" qualify the quantity the words before
        # name, so the label needs those less than it needs the head.
        head_coverage, _ = _one_phrase(head[0], label)
        coverage = max(coverage, (coverage + head_coverage) / 2)
    return coverage, used


_POSTMODIFIER = re.compile(r"\s(?:between|after|during|across|among|within|over)\s", re.IGNORECASE)


def _head_only(phrase_tokens: list[str], label_tokens: tuple[str, ...]) -> bool:
    """A label that says the name's head noun (its last word) and nothing else but symbol-like short tokens."""
    if len(phrase_tokens) < 2 or not label_tokens:
        return False
    head = phrase_tokens[-1]
    words = [t for t in label_tokens if len(t) > _SHORT_TOKEN]
    return len(words) == 1 and _token_match(head, words[0])


def _phrase_match(phrases: tuple[tuple[str, float], ...], label: str) -> tuple[float, int, tuple[str, ...]]:
    """Best weighted coverage of the label by the request's phrasings (the first is the name as typed)."""
    best = 0.0
    best_used = 0
    for phrase, weight in phrases:
        coverage, used = _one_phrase(phrase, label)
        if coverage * weight > best:
            best, best_used = coverage * weight, used
        if best >= 1.0:
            break  # the name as typed is fully there; a synonym cannot do better
    return best, best_used, _label_tokens(label)


def _piece_in(piece: str, haystack: str) -> bool:
    """A condition piece ("cs=vih") present and not merely the prefix of another token ("cs=vihh")."""
    start = haystack.find(piece)
    while start >= 0:
        end = start + len(piece)
        if end >= len(haystack) or not (piece[-1].isalnum() and haystack[end].isalnum()):
            return True
        start = haystack.find(piece, start + 1)
    return False


def _starts_a_word(piece: str, haystack_tokens: list[str]) -> bool:
    """Whether the piece's first word starts a word of the haystack: spaces dropped, "P suffix package" is inside
    "D, LP suffix package", though it names another package."""
    tokens = content_tokens(piece)
    return not tokens or any(t.startswith(tokens[0]) for t in haystack_tokens)


_ASSIGNED = re.compile(r"\b([A-Za-z][A-Za-z0-9]{0,6})\s*([+-]?)\s*=\s*([-+]?\d+(?:[.,]\d+)?)\s*"
                       r"([A-Za-zΩ\u2126µμ°%]{0,5})")


@lru_cache(maxsize=50_000)
def _assignments(text: str) -> tuple[tuple[str, float], ...]:
    """'VCC+ = +15 V, Vo = +0.2 V' -> (('vcc+', 15.0), ('vo', 0.2)): each quantity set and its value in SI."""
    found = []
    for name, sign, number, unit_text in _ASSIGNED.findall(text):
        unit = parse_unit(unit_text) if unit_text else None
        found.append((fold(name + sign), float(number.replace(",", ".")) * (unit.factor if unit else 1.0)))
    return tuple(found)


# "TA = -40°C to +125°C": a quantity set over a range, its two ends.
_ASSIGNED_RANGE = re.compile(r"\b([A-Za-z][A-Za-z0-9]{0,6})\s*=\s*([-+−–]?\s?\d+(?:[.,]\d+)?)\s*([A-Za-z°%]{0,3})\s*"
                             r"(?:to|~)\s*([-+−–]?\s?\d+(?:[.,]\d+)?)\s*([A-Za-z°%]{0,3})")


@lru_cache(maxsize=50_000)
def _ranges(text: str) -> tuple[tuple[str, float, float, str], ...]:
    """'TA = -40°C to +85°C' -> (('ta', -40.0, 85.0, '°c'),): each quantity set over a range, ends as printed."""
    found = []
    for name, low, low_unit, high, high_unit in _ASSIGNED_RANGE.findall(text):
        number = [float(re.sub(r"\s", "", v).replace(",", ".").replace("−", "-").replace("–", "-"))
                  for v in (low, high)]
        found.append((fold(name), number[0], number[1], fold(high_unit or low_unit)))
    return tuple(found)


def _ranges_differ(item: str, haystack: str) -> bool:
    """Whether the haystack sets a quantity the item sets over a range over another range of the same unit
    ("TA = -40°C to +125°C" for a requested "TA = -40°C to +85°C"): the row of another temperature range."""
    printed = _ranges(haystack)
    for name, low, high, unit in _ranges(item):
        others = [(lo, hi) for n, lo, hi, u in printed if n == name and u == unit]
        if others and (low, high) not in others:
            return True
    return False


_NAMED_SETTING = re.compile(r"\b([A-Za-z][A-Za-z0-9]{0,6})\s*=\s*([A-Za-z][A-Za-z0-9]{0,7})\b")


@lru_cache(maxsize=50_000)
def _settings(text: str) -> tuple[tuple[str, str], ...]:
    """'MODE=B, VKA = Vref' -> (('mode', 'b'), ('vka', 'vref')): quantities set to a named setting, not a number."""
    return tuple((fold(name), fold(value)) for name, value in _NAMED_SETTING.findall(text))


def _assignments_agree(item: str, haystack: str) -> bool | None:
    """Whether the haystack sets the quantities the item sets to the same values, numbers compared as numbers in
    SI ('VO = 200 mV' agrees with a requested 'VO = 0.2 V'; 'Vo = +2 V' contradicts 'Vo = +0.2 V' though the
    text of one contains the other): False on any contradiction, True when every one agrees, else None."""
    printed = _assignments(haystack)
    wanted = _assignments(item)
    agreed = 0
    named = _settings(haystack)
    for name, value in _settings(item):
        values = [v for n, v in named if n == name]
        if values and value not in values:
            return False
    for name, value in wanted:
        values = [v for n, v in printed if n == name]
        if not values:
            continue
        if not any(abs(v - value) <= 1e-9 * max(abs(v), abs(value), 1e-12) for v in values):
            return False
        agreed += 1
    return True if wanted and agreed == len(wanted) else None


def item_score(item: str, haystack_compact: str, haystack_tokens: list[str], haystack: str = "") -> float:
    raw_pieces = [p for p in re.split(r"[,;]|\band\b", item) if compact(p)]
    pieces = [compact(p) for p in raw_pieces]
    if pieces and all(_piece_in(p, haystack_compact) for p in pieces) and all(
            _starts_a_word(p, haystack_tokens) for p in raw_pieces):
        return 1.0
    if haystack and _ranges_differ(item, haystack):
        return 0.0  # another range of the same quantity: a poorer match, though not a contradiction of the row
    agree = _assignments_agree(item, haystack) if haystack else None
    if agree is not None:
        return 1.0 if agree else 0.0
    if haystack and _quantities_only_printed(item, haystack):
        return 1.0  # "2 Mbps" asked, "@2000kbps" printed: the same quantity under another unit prefix
    item_tokens = content_tokens(item)
    if not item_tokens:
        return 0.0
    index: dict[str, list[tuple[int, str]]] = {}
    for i, t in enumerate(haystack_tokens):
        index.setdefault(t[0], []).append((i, t))
    coverage, _ = _coverage(item_tokens, index)
    # Numbers in a condition ("12V", "-103", "LM324") must be present for the condition to count.
    numeric = [t for t in item_tokens if re.search(r"\d", t)]
    if any(_PART_TOKEN.fullmatch(t) and t not in haystack_tokens for t in numeric):
        # A part number names one part: "LM1117" printed is not the "LM1117I" asked for, nor the reverse.
        return 0.0
    if numeric and not all(any(n in t or t in n for t in haystack_tokens if re.search(r"\d", t)) for n in numeric):
        coverage *= 0.3
    elif haystack and _quantities_missing(item, haystack):
        # "0 dBm" is not printed in a row that says "-6 dBm" or "9.0 mA", though its digits are.
        coverage *= 0.3
    return coverage


_PART_TOKEN = re.compile(r"[a-z]{1,5}\d{2,}[a-z0-9-]*")
_QUANTITY = re.compile(r"(?<![\w.,])([-+−–]?)\s?(\d+(?:[.,]\d+)?)\s?"
                       r"([A-Za-zµμΩ\u2126°%][A-Za-z0-9µμΩ\u2126/°%]{0,6})(?![A-Za-z0-9])")


@lru_cache(maxsize=50_000)
def _quantities(text: str) -> tuple[tuple[float, str], ...]:
    """Every number printed with a unit the reader knows ("-6 dBm", "800mA"), as (value in SI, dimension)."""
    found = []
    for sign, number, unit_text in _QUANTITY.findall(text):
        unit = parse_unit(unit_text)
        if unit is None:
            continue
        value = float(number.replace(",", ".")) * unit.factor
        found.append((-value if sign in "-−–" and sign else value, unit.dimension))
    return tuple(found)


@lru_cache(maxsize=50_000)
def _spelled_quantities(text: str) -> tuple[tuple[float, str, str], ...]:
    """Every number printed with a unit the reader knows, as (value in SI, dimension, unit as spelled)."""
    found = []
    for sign, number, unit_text in _QUANTITY.findall(text):
        unit = parse_unit(unit_text)
        if unit is not None:
            value = float(number.replace(",", ".")) * unit.factor
            found.append((-value if sign and sign in "-−–" else value, unit.dimension, unit.canonical))
    return tuple(found)


def _quantities_only_printed(item: str, haystack: str) -> bool:
    """Whether the condition is nothing but quantities (a number with its unit each), every one printed in the
    haystack under another unit prefix ("2 Mbps" as "2000kbps"), compared in SI. The same spelling is left to the
    text comparison."""
    wanted = _spelled_quantities(item)
    if not wanted or content_tokens(_QUANTITY.sub(" ", item)):
        return False
    printed = _spelled_quantities(haystack)
    return all(any(d == dimension and u != unit and abs(v - value) <= 1e-9 * max(abs(v), abs(value), 1e-12)
                   for v, d, u in printed) for value, dimension, unit in wanted)


def _quantities_missing(item: str, haystack: str) -> bool:
    """Whether a quantity the condition states (a number with its unit) is printed nowhere in the haystack, while
    the haystack prints other quantities of that dimension: then the row is measured at another value."""
    printed = _quantities(haystack)
    for value, dimension in _quantities(item):
        same_kind = [v for v, d in printed if d == dimension]
        if same_kind and not any(abs(v - value) <= 1e-9 * max(abs(v), abs(value), 1e-12) for v in same_kind):
            return True
    return False


def contradicts_conditions(query: Query, cand: Candidate) -> bool:
    """Whether the row sets a requested quantity to another value ("IT=0.4A" for a requested "IT=0.8A"), and to
    no value the request names: a sibling sub-row measured under other conditions, never the requested one."""
    # The row's own name and conditions only: a table title or a neighbouring line may set the quantity for
    # another row.
    own = cand.own_label if cand.own_label is not None else cand.label
    haystack = f"{own} {cand.extra_conditions}"
    if cand.source != "line":
        # The row's own cells ("VS = 75 V, VIN = 75 V | 130") say what it was measured at, whichever column, and
        # the table's caption what all its rows were measured at, unless a row sets the quantity again.
        haystack = f"{haystack} {cand.line_text} {cand.table_conditions}"
    if any(_assignments_agree(item, haystack) is False or _polarity_differs(item, haystack)
           or _direction_differs(item, haystack) for item in query.conditions):
        return True
    # "Undervoltage lockout, rising threshold": the row of the other edge ("negative-going threshold") is the
    # threshold crossed the other way, whichever words name the edge.
    asked = {edge for item in [*query.conditions, *query.qualifiers] for edge in _edges(item)}
    printed = _edges(f"{own} {cand.extra_conditions}")
    return bool(asked) and bool(printed) and not asked & printed


# The edge a threshold is crossed on, as datasheets name it: "rising" / "positive-going" / "VIN rising", and
# "falling" / "negative-going".
_EDGE_WORDS = ((re.compile(r"\bpositive[\s-]*going\b", re.IGNORECASE), "rising"),
               (re.compile(r"\bnegative[\s-]*going\b", re.IGNORECASE), "falling"))
_EDGE = re.compile(r"\b(ris(?:ing|e)|fall(?:ing)?)\b", re.IGNORECASE)


def _edge_words(text: str) -> str:
    """``text`` with the edge of a threshold named one way ("positive-going" as "rising")."""
    for pattern, word in _EDGE_WORDS:
        text = pattern.sub(word, text)
    return text


def _edges(text: str) -> set[str]:
    return {"rising" if m.lower().startswith("ris") else "falling" for m in _EDGE.findall(_edge_words(text))}


_FROM_TO = re.compile(r"\bfrom\s+(\w+)\s+to\s+(\w+)", re.IGNORECASE)


def _direction_differs(item: str, haystack: str) -> bool:
    """'VIN from high to low' asked for, 'VIN from low to high' printed: a threshold crossed the other way (its
    release, its hysteresis's other edge) is another operating point, though it prints the same words."""
    printed = {(fold(a), fold(b)) for a, b in _FROM_TO.findall(haystack)}
    return any((fold(b), fold(a)) in printed and (fold(a), fold(b)) not in printed
               for a, b in _FROM_TO.findall(item))


_POLARITY = re.compile(r"\b([A-Za-z][A-Za-z0-9]{0,5})\s*\(\s*([+\-−–])\s*\)")


def _polarity_differs(item: str, haystack: str) -> bool:
    """'MT2(−), G(+)' asked for, 'MT2(+), G(+)' printed: a terminal set to the other polarity (a triac's quadrant,
    a supply's rail) is another operating point."""
    printed: dict[str, set[str]] = {}
    for name, sign in _POLARITY.findall(haystack):
        printed.setdefault(fold(name), set()).add("-" if sign in "-−–" else "+")
    for name, sign in _POLARITY.findall(item):
        signs = printed.get(fold(name))
        if signs and ("-" if sign in "-−–" else "+") not in signs:
            return True
    return False


def restates_condition(query: Query, cand: Candidate) -> bool:
    """Whether the value is a requested condition printed as an assignment ("IC = 100 mA; DC current gain" for a
    gain requested at "IC = 100 mA"): the quantity the request holds fixed, not the one it asks for."""
    if not cand.assignment or cand.typical is None:
        return False
    value = cand.typical * (cand.unit.factor if cand.unit else 1.0)

    def same(a: float, b: float) -> bool:
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-12)

    printed = {(name, v) for name, v in _assignments(cand.line_text or cand.context) if same(v, value)}
    return any((name, v) in printed or any(n == name and same(p, v) for n, p in printed)
               for item in [*query.conditions, *query.qualifiers] for name, v in _assignments(item))


def conditions_score(query: Query, cand: Candidate) -> float | None:
    items = [_edge_words(item) for item in query.conditions + query.qualifiers]
    if not items:
        return None
    own = cand.own_label if cand.own_label is not None else cand.label
    haystack = _edge_words(f"{cand.context} {own} {cand.symbol}")
    haystack_compact = compact(haystack)
    haystack_tokens = content_tokens(haystack)
    return sum(item_score(item, haystack_compact, haystack_tokens, haystack) for item in items) / len(items)


# --- Scoring -----------------------------------------------------------------------------------------------

def score(query: Query, cand: Candidate) -> Scored | None:
    name = name_score(query, cand)
    if name < MIN_NAME or contradicts_conditions(query, cand) or restates_condition(query, cand):
        return None
    notes: list[str] = []
    total = name
    dims = query.dimensions
    if cand.size_factor and "[length]" in dims:
        return None  # "600mm x 1.000mm": which side is the requested length, the size does not say
    if cand.unit_from_block and not dims:
        return None  # a neighbour's unit is taken only when the request says which dimension it must have
    if dims:
        if cand.unit is None:
            total -= 0.3
            notes.append("no unit printed with the value")
        elif cand.unit.dimension not in dims and not _coefficient_per_degree(dims, cand.unit.dimension):
            return None
        else:
            total += 0.1
    elif query.unit_text and cand.unit is not None and fold(cand.unit.canonical) != fold(query.unit_text):
        total -= 0.2
    cond = conditions_score(query, cand)
    if cond is not None:
        total += 0.45 * cond - 0.2
    elif cand.extra_conditions.strip():
        total -= 0.04
    if _derived_quantity(query, cand):
        total -= 0.15
        notes.append("the row names a change of the quantity, not the quantity")
    if _operating_point_missing(query, cand):
        total -= OPERATING_POINT_MISSING
        notes.append(f"'{query.operating_point}' is printed nowhere with this reading")
    if _limit_named_quantity(query, cand):
        total -= 0.1
        notes.append("the row names a limit of the quantity as a parameter of its own")
    if query.wants_abs_max:
        total += 0.15 if cand.abs_max else -0.5
    elif cand.abs_max and query.wants_field != "max":
        total -= 0.2  # an absolute maximum rating is a maximum, so "Maximum collector current" may mean it
    elif cand.abs_max:
        # "Maximum cathode voltage": the most the part takes is its rating, not the top of the range it is
        # recommended to work in.
        total += 0.1
    if not cand.aligned:
        total -= 0.1
        notes.append("multi-line cell: values paired with conditions by line order")
    if cand.explicit_fields:
        total += 0.05
    if cand.source != "line":
        total += 0.05
    if cand.merged:
        total += 0.05
    if cand.assignment:
        total -= 0.08
    if cand.caption:
        total -= 0.3
        notes.append("read from a figure caption")
    if cand.grades and not _names_grade(query, cand.grades) and _names_a_part(query):
        return None  # the request names a part, this row gives other grades ("LM358A" for "LM358")
    if cand.table_part and _names_a_part(query, _ANY_CASE_PART) and not _names_grade(query, (cand.table_part,)):
        return None  # the request names a part, this table is printed for another one of its family
    if cand.listed_parts and _names_a_part(query) and not _names_listed_part(query, cand.listed_parts):
        return None  # the rating lists the parts it applies to, and the requested part is not among them
    if cand.grades and not _names_grade(query, cand.grades):
        # The table gives other grades of the part other values; which one the request means is unknown.
        total -= 0.25
        notes.append("one of several part grades the table lists")
    if cand.in_notes:
        total -= 0.15  # a note qualifies a value stated elsewhere ("Forward Voltage: +/-0.1V" is its tolerance)
        notes.append("read from a numbered note")
    symmetric = cand.min is not None and cand.max is not None and cand.min == -cand.max
    if (cand.in_parentheses or cand.in_notes or cand.after_value) and symmetric:
        total -= 0.1  # "(+/–10%)" after a name, "+/- 2" after a value or in a note: the tolerance of a value
    if query.counted and cand.source == "line" and cand.unit is None:
        # A count is printed as "<number> <things>": the words right after the value must be the things.
        counted, _, _ = _phrase_match(((query.counted, 1.0),), cand.following)
        total += 0.15 if counted >= 0.99 else -0.15
    if query.wants_field and getattr(cand, query.wants_field) is None:
        total -= 0.1
    return Scored(cand, name, cond, total, notes)


_PART_NUMBER = re.compile(r"\b[A-Z]{1,5}\d{2,}[A-Z0-9]*\b")


# Words that turn a quantity into another one derived from it: "Reference voltage deviation over temperature" is
# how much the reference voltage moves, not the reference voltage.
_DERIVED_WORDS = ("deviation", "drift", "change", "variation", "regulation", "coefficient", "coeff", "tempco",
                  "ratio", "rejection", "hysteresis", "mismatch", "offset")


def _derived_quantity(query: Query, cand: Candidate) -> bool:
    """Whether the label adds a word that makes it a quantity derived from the requested one."""
    wanted = {t for phrase in query.phrases for t in content_tokens(phrase)}
    return any(t.startswith(_DERIVED_WORDS) and not any(_token_match(t, w) for w in wanted)
               for t in _label_tokens(cand.label))


# What a reading loses when a quantity the request's name ends with ("at 3.3 V") is printed nowhere with it.
OPERATING_POINT_MISSING = 0.25


def _operating_point_missing(query: Query, cand: Candidate) -> bool:
    """Whether the request's name ends with an operating point stating a quantity ("Shutdown current at 3.3 V",
    "Output current at 10 mV sense voltage") that nothing printed with the reading states: not its row, its
    conditions, its table's caption or title, nor the lines around it. A datasheet prints the point a value was
    measured at beside it; a value printed without it is the parameter at some other point, or in general."""
    if not query.operating_point:
        return False
    wanted = _quantities(query.operating_point)
    if not wanted:
        return False
    haystack = " ".join([cand.context, cand.label, *cand.alt_labels, cand.extra_conditions, cand.line_text,
                         cand.table_conditions, cand.heading])
    printed = _quantities(haystack)
    return not any(abs(v - value) <= 1e-9 * max(abs(v), abs(value), 1e-12) and d == dimension
                   for value, dimension in wanted for v, d in printed)


_LIMIT_WORD = re.compile(r"\b(minimum|maximum)\b", re.IGNORECASE)


def _limit_named_quantity(query: Query, cand: Candidate) -> bool:
    """Whether a row of a table with Min/Typ/Max columns names a limit as its own parameter ("Minimum operating
    voltage | | | 1.0 | V" beside "Operating voltage | 2.0 | | 5.5 | V"): the limit word does not say which column
    its value sits in (the minimum operating voltage is guaranteed as a maximum), so it is part of the name of
    another quantity than the one the request names without that word. A limit word that does say its column
    ("Maximum propagation delay | 18 | 29" under "Typ | Limit") is left alone."""
    if not cand.explicit_fields or cand.abs_max or cand.source == "line":
        return False
    own = cand.own_label if cand.own_label is not None else cand.label
    words = {w.casefold() for w in _LIMIT_WORD.findall(own)}
    if len(words) != 1 or any(w in fold(query.name) for w in words):
        return False
    return (cand.min if "minimum" in words else cand.max) is None


def _coefficient_per_degree(dims: set[str], dimension: str) -> bool:
    """A temperature coefficient is printed relative ("ppm/°C", "%/°C") or absolute ("mV/°C", "nA/K"): any
    quantity per degree is one."""
    return "tempco" in dims and dimension.endswith("/ [temperature]")


# A part number a family prints in mixed case ("ATmega16U2"), where a part heads its own table or list.
_ANY_CASE_PART = re.compile(r"\b[A-Z][A-Za-z]{0,6}\d{2,}[A-Z0-9]*\b")


def _names_a_part(query: Query, pattern: re.Pattern[str] = _PART_NUMBER) -> bool:
    return any(pattern.search(text) for text in [query.name, *query.conditions, *query.qualifiers])


def _names_grade(query: Query, grades: tuple[str, ...]) -> bool:
    requested = set(content_tokens(" ".join([query.name, *query.conditions, *query.qualifiers])))
    return any(g.casefold() in requested for g in grades) or _names_listed_part(query, grades)


def _names_listed_part(query: Query, parts: tuple[str, ...]) -> bool:
    """Whether a part the request names is one of ``parts`` (or the family name of one: "QX1" for "QX1-ADJ")."""
    requested = _PART_NUMBER_WHOLE.findall(" ".join([query.name, *query.conditions, *query.qualifiers]))
    return any(p.casefold() == r.casefold() or p.casefold().startswith(f"{r.casefold()}-")
               for p in parts for r in requested)


_PART_NUMBER_WHOLE = re.compile(r"\b[A-Z]{1,5}\d{2,}[A-Z0-9]*(?:-[A-Z0-9.]*[A-Z0-9])*")


def collect_candidates(evidence: Evidence) -> list[Candidate]:
    candidates: list[Candidate] = []
    previous: TableModel | None = None
    previous_page: int | None = None
    for page in sorted(evidence.tables):
        lines = tuple(evidence.page_lines.get(page, []))
        for position, table in enumerate(evidence.tables[page]):
            # The table above on the same page, or the last one of the previous page for a table that opens
            # this page: either may hold the header a header-less table is printed under.
            follows = previous_page == page or (position == 0 and previous_page == page - 1)
            rows = tuple(tuple(row) for row in table.rows)
            found, previous = _table_candidates_cached(page, rows, table.title, lines,
                                                       previous if follows else None, table.caption,
                                                       table.continued)
            previous_page = page
            candidates.extend(found)
    for page, lines in evidence.page_lines.items():
        candidates.extend(_line_candidates_cached(page, tuple(lines), True))
        candidates.extend(_vertical_candidates_cached(page, tuple(evidence.cell_lines.get(page, lines))))
        candidates.extend(_block_pair_candidates_cached(page, tuple(lines)))
    for page, lines in evidence.hit_lines.items():
        if page not in evidence.page_lines:
            candidates.extend(_line_candidates_cached(page, tuple(lines), False))
    return candidates


# Every turn re-reads every tool result; what was read from the same text is the same, so it is computed once.
# Candidates are treated as read-only after construction.
@lru_cache(maxsize=4096)
def _table_candidates_cached(page: int, rows: tuple[tuple[str, ...], ...], title: str, lines: tuple[str, ...],
                             previous: TableModel | None, caption: str = "", continued: bool = False
                             ) -> tuple[tuple[Candidate, ...], TableModel]:
    table = Table(page, [list(r) for r in rows], title, caption, continued)
    # A section title right above the table says where it sits better than page text whose reading order the
    # text layer may have scrambled (all headings first, then all tables).
    if is_section_title(caption):
        hint = bool(ABS_MAX_TITLE.search(caption))
    else:
        hint = _table_under_abs_max(table, list(lines))
    notes = {mark: " ".join(texts) for mark, texts in footnotes(list(lines)).items()}
    found, model = table_candidates(table, abs_max_hint=hint, previous=previous, footnotes=notes)
    part = part_above_caption(caption, list(lines))
    for cand in found if part else ():
        cand.table_part = part
        cand.context = f"{cand.context} {part}"
    if "=" in caption and len(caption) <= _CAPTION_CONDITIONS:
        for cand in found:
            cand.table_conditions = caption  # "VCC = 5V, TA = 25°C": the conditions of every row below
    return tuple(found), model


# A caption this short that sets quantities ("VCC = 5V, TA = 25°C, CL = 15 pF") states the table's conditions.
_CAPTION_CONDITIONS = 100


@lru_cache(maxsize=4096)
def _line_candidates_cached(page: int, lines: tuple[str, ...], full_page: bool) -> tuple[Candidate, ...]:
    marks = abs_max_line_numbers(list(lines)) if full_page else set()
    return tuple(line_candidates(page, list(lines), marks))


@lru_cache(maxsize=4096)
def _vertical_candidates_cached(page: int, lines: tuple[str, ...]) -> tuple[Candidate, ...]:
    return tuple(vertical_row_candidates(page, list(lines), abs_max_line_numbers(list(lines))))


@lru_cache(maxsize=4096)
def _block_pair_candidates_cached(page: int, lines: tuple[str, ...]) -> tuple[Candidate, ...]:
    return tuple(block_pair_candidates(page, list(lines)))


def _table_under_abs_max(table: Table, lines: list[str]) -> bool:
    """Whether the page text puts the table under an "Absolute Maximum Ratings" heading: the lines that equal
    the table's row names vote."""
    if not lines:
        return False
    marks = abs_max_line_numbers(lines)
    if not marks:
        return False
    positions: dict[str, list[int]] = {}
    for idx, line in enumerate(lines):
        positions.setdefault(compact(line), []).append(idx)
    inside = outside = 0
    for row in table.rows:
        for cell in row[:3]:
            first = cell.split("\n")[0].strip()
            if len(first) < 4:
                continue
            for idx in positions.get(compact(first), []):
                if idx in marks:
                    inside += 1
                else:
                    outside += 1
    return inside > outside


_SCORES: weakref.WeakKeyDictionary[Candidate, dict[tuple[Any, ...], Scored | None]] = weakref.WeakKeyDictionary()


_PREFIXES: weakref.WeakKeyDictionary[Candidate, frozenset[str]] = weakref.WeakKeyDictionary()


def _prefixes(text: str) -> set[str]:
    return {t[:3] for t in content_tokens(text)}


def _could_name(query_prefixes: frozenset[str], cand: Candidate) -> bool:
    """Cheap pre-check: a candidate none of whose words starts like a word of the request cannot reach
    MIN_NAME (every kind of token match, typo-tolerant ones included, keeps the first three letters)."""
    found = _PREFIXES.get(cand)
    if found is None:
        found = frozenset(_prefixes(" ".join([cand.label, cand.symbol, cand.heading, *cand.alt_labels])))
        _PREFIXES[cand] = found
    return not query_prefixes.isdisjoint(found)


def _score_cached(query: Query, cand: Candidate) -> Scored | None:
    """Scores of a (cached, read-only) candidate are reused across the turns of one request."""
    per_query = _SCORES.setdefault(cand, {})
    key = query.key
    if key not in per_query:
        per_query[key] = score(query, cand)
    return per_query[key]


def decide(query: Query, evidence: Evidence) -> Decision:
    wanted = frozenset(p for phrase in [*query.phrases, *query.all_symbols] for p in _prefixes(phrase))
    candidates = collect_candidates(evidence)
    scored = [s for s in (_score_cached(query, c) for c in candidates if _could_name(wanted, c))
              if s is not None and (s.candidate.ambiguity or any(v is not None for v in s.candidate.values()))]
    scored.sort(key=lambda s: (-s.total, s.candidate.page))
    if not scored:
        return Decision(None, 0.0, None, [], f"no table row or text line read names '{query.name}' with a value "
                        f"of the expected kind")
    best = scored[0]
    if best.candidate.ambiguity and best.total >= MIN_TOTAL:
        return Decision(None, 0.0, None, scored[:3],
                        f"the row '{_describe(best.candidate)}' on page {best.candidate.page} names the parameter, "
                        f"but {best.candidate.ambiguity}; declining rather than guessing")
    scored = [s for s in scored if not s.candidate.ambiguity]
    if not scored:
        return Decision(None, 0.0, None, [], f"no table row or text line read names '{query.name}' with a value "
                        f"of the expected kind")
    best = scored[0]
    others = [s for s in scored[1:] if s.candidate.signature() != best.candidate.signature()]
    tied = [s for s in others if s.total > best.total - TIE and not _one_line(best.candidate, s.candidate)]
    named = only_one_names_condition(query, [best, *tied]) if tied else None
    if named is not None:
        best, tied = named, []
        scored = [best, *(s for s in scored if s is not best)]
        others = [s for s in scored[1:] if s.candidate.signature() != best.candidate.signature()]
    if tied and best.total >= MIN_TOTAL and not _first_of_siblings(query, best, tied):
        rival = tied[0].candidate
        return Decision(None, 0.0, None, scored[:3],
                        f"'{_describe(best.candidate)}' on page {best.candidate.page} and '{_describe(rival)}' on "
                        f"page {rival.page} match the request equally well; declining rather than guessing "
                        f"which one is meant")
    agreeing = [s for s in scored[1:] if s.candidate.signature() == best.candidate.signature()
                and s.total >= best.total - 0.4]
    rivals = [s for s in others if s.total >= best.total - 0.1]
    confidence = _confidence(best, rivals, agreeing)
    if not _prints_its_values(best.candidate):
        # "2.40±0.100" read as 2.30 / 2.40 / 2.50: a reading that agrees and prints those numbers is the one to
        # quote, so the answer can be checked against the page.
        best = next((s for s in agreeing if _prints_its_values(s.candidate) and s.total >= MIN_TOTAL), best)
    if best.total < MIN_TOTAL:
        return Decision(None, confidence, None, scored[:3],
                        f"closest reading '{_describe(best.candidate)}' on page {best.candidate.page} matches the "
                        f"request too weakly (score {best.total:.2f}); declining rather than guessing")
    if not limits_in_order(best.candidate):
        return Decision(None, 0.0, None, scored[:3],
                        f"'{_describe(best.candidate)}' on page {best.candidate.page} names the parameter, but its "
                        f"limits are out of order, so its numbers were not read from the columns they belong to; "
                        f"declining rather than guessing")
    if query.dimensions and best.candidate.unit is None:
        return Decision(None, 0.0, None, scored[:3],
                        f"'{_describe(best.candidate)}' on page {best.candidate.page} names the parameter, but no "
                        f"unit is printed with it where a {query.unit_text or 'dimensioned'} value was asked for; "
                        f"declining rather than guessing its unit")
    quote = build_quote(evidence.page_lines.get(best.candidate.page, []), best.candidate)
    reason = _reason(best, rivals, others)
    return Decision(best, confidence, quote, others[:3], reason, _variants(best.candidate, candidates))


def _prints_its_values(cand: Candidate) -> bool:
    """Whether every value of the reading is a number its text prints (a sign aside), or its printed numbers are
    unknown."""
    printed = {abs(n) for n in (parse_number(p) for p in cand.printed) if n is not None}
    return not printed or all(abs(v) in printed for v in cand.values() if v is not None)


def siblings(a: Candidate, b: Candidate) -> bool:
    """Two readings of one parameter on one page that are variants of it: its sub-rows or per-part rows (one
    name, other rows), or its per-part columns (one row of a matrix, other column headers)."""
    if a.page != b.page or a.source == "line" or b.source == "line" or a.symbol != b.symbol:
        return False
    same_name = " ".join(a.label.split()) == " ".join(b.label.split())
    if same_name:
        return a.line_text != b.line_text
    return a.source == b.source == "table_cell" and a.line_text == b.line_text and bool(a.line_text)


def variant_label(cand: Candidate, best: Candidate) -> str:
    """What sets a variant apart, as printed: its sub-row's label or conditions, else its column header."""
    for text in (*cand.alt_labels, cand.extra_conditions, cand.own_label or ""):
        text = " ".join(text.split())
        if text and text != " ".join(best.label.split()):
            return text
    label, shared = cand.label.split(), best.label.split()
    while label and shared and label[0] == shared[0]:
        label, shared = label[1:], shared[1:]
    return " ".join(label) or " ".join(cand.label.split())


def _variants(best: Candidate, candidates: list[Candidate]) -> list[Candidate]:
    """The answer's sibling variants, in the order the page prints them, one per label and value."""
    found: list[Candidate] = []
    seen = {(variant_label(best, best), best.signature())}
    for cand in candidates:
        if cand is best or cand.ambiguity or not any(v is not None for v in cand.values()):
            continue
        if not siblings(best, cand):
            continue
        key = (variant_label(cand, best), cand.signature())
        if key not in seen and len(re.findall(r"[A-Za-z0-9]", key[0])) >= 2:
            seen.add(key)
            found.append(cand)
    return found


def limits_in_order(cand: Candidate) -> bool:
    """Min <= typical <= max, or for negative limits printed by magnitude (-50, -150, -300) the reverse. A
    minimum a part needs ("Minimum Pulse Width | Typ 17 | Limit 30"): the typical part needs less than the
    guaranteed minimum, so a typical below it is in order."""
    if (cand.min is not None and cand.typical is not None and cand.max is None and cand.typical <= cand.min
            and any(_MINIMUM_NAMED.match(name) for name in (cand.label, cand.own_label or ""))):
        return True
    values = [v for v in cand.values() if v is not None]
    ascending = all(a <= b for a, b in zip(values, values[1:], strict=False))
    by_magnitude = all(v <= 0 for v in values) and all(a >= b for a, b in zip(values, values[1:], strict=False))
    return ascending or by_magnitude


_MINIMUM_NAMED = re.compile(r"^\W*min(?:imum|\.)?\s", re.IGNORECASE)


def _one_line(a: Candidate, b: Candidate) -> bool:
    """Two values of one text line ("Fast: 42 Hz, Slow: 9 Hz"): the words before each already told them apart
    as far as the line can."""
    return a.source == b.source == "line" and a.page == b.page and a.line_text == b.line_text


def only_one_names_condition(query: Query, readings: list[Scored]) -> Scored | None:
    """Of readings that match the request equally well, the one whose own row (its sub-row label and conditions
    cell) or column names the most requested conditions, if exactly one names that many."""
    counts = [_named_in_own_label(query, s.candidate) for s in readings]
    most = max(counts, default=0)
    return readings[counts.index(most)] if most and counts.count(most) == 1 else None


def _named_in_own_label(query: Query, cand: Candidate) -> int:
    """How many of the requested conditions the reading's own row or column names."""
    # A row's own cell says which sub-row it is (its label may join a name wrapped over its siblings); a matrix
    # cell's label carries its column header. A row's conditions cell is its own too: a sub-row labelled
    # "TJ = 25°C" under a row whose conditions cell prints "TJ = 25°C" names that condition no more than its parent.
    own = compact(f"{cand.own_label or cand.label} {cand.extra_conditions}") if cand.source == "table_row" else (
        compact(cand.label))
    return sum(1 for item in query.conditions if compact(item) and _piece_in(compact(item), own))


def _first_of_siblings(query: Query, best: Scored, tied: list[Scored]) -> bool:
    """A tie among variants of one parameter (its sub-rows or per-part rows on one page) when the request names
    no condition or part: the first variant printed is the answer, and the others are reported beside it. When
    the request names one and the variants still tie, the reader could not tell which one it names, unless the
    whole table meets it (the part number it is printed for) and no variant's own row names it: then it tells
    none of them apart."""
    if (query.conditions or query.qualifiers) and not all(_met_by_table_only(query, s) for s in [best, *tied]):
        return False
    return all(siblings(best.candidate, s.candidate) for s in tied)


def _met_by_table_only(query: Query, reading: Scored) -> bool:
    """Whether every requested condition is met in full by what the reading's table says of all its rows (its
    title, the part it is printed for), none by the reading's own row."""
    cand = reading.candidate
    if reading.conditions is None or reading.conditions < 0.99 or cand.source == "line":
        return False
    own = f"{cand.own_label or cand.label} {cand.line_text}"
    return not any(item_score(item, compact(own), content_tokens(own), own) >= 0.99
                   for item in [*query.conditions, *query.qualifiers])


def _confidence(best: Scored, rivals: list[Scored], agreeing: list[Scored]) -> float:
    value = 0.35 + 0.45 * min(1.0, max(0.0, (best.total - MIN_TOTAL) / 0.6))
    if best.conditions is not None:
        value += 0.1 * (best.conditions - 0.5)
    if agreeing:
        value += 0.08
    if rivals:
        value -= 0.15 + 0.05 * min(len(rivals), 3)
    if not best.candidate.aligned:
        value -= 0.1
    if best.candidate.assignment:
        value -= 0.15  # "VCC = +5 V" is how test conditions are written; it is a spec only sometimes
    return round(min(0.97, max(0.05, value)), 2)


def _describe(cand: Candidate) -> str:
    parts = []
    for label, value in (("min", cand.min), ("typ", cand.typical), ("max", cand.max)):
        if value is not None:
            parts.append(f"{label} {value:g}")
    unit = cand.unit.canonical if cand.unit else (cand.unit_text or "")
    label = re.sub(r"\s+", " ", cand.label)[:60]
    own = re.sub(r"\s+", " ", cand.own_label or "")
    if own and own not in re.sub(r"\s+", " ", cand.label):
        label = f"{label} [{own[:60]}]"  # a row named by the row above: its own cell says which conditions
    return f"{label}: {', '.join(parts)} {unit}".strip()


def _reason(best: Scored, rivals: list[Scored], others: list[Scored]) -> str:
    cand = best.candidate
    where = {"table_row": "table row", "table_cell": "table cell", "line": "text line"}[cand.source]
    text = f"read from a {where} on page {cand.page}: {_describe(cand)}"
    if best.conditions is not None:
        text += f"; requested conditions matched {best.conditions:.0%}"
    if best.notes:
        text += "; " + "; ".join(best.notes)
    shown = rivals or others[:2]
    if shown:
        text += "; other readings exist: " + "; ".join(
            f"p{s.candidate.page} {_describe(s.candidate)}" for s in shown[:3])
    return text
