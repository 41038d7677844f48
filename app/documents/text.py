"""Text normalisation shared by search, ToC matching and table building.

Datasheet text layers spell the same thing many ways: µ (micro sign) and μ (Greek mu), Ω (ohm sign) and Ω
(omega), ℃ and °C, five kinds of dash, ligature glyphs (ﬁ) that extractors sometimes follow with a spurious
space ("Coefﬁ cient"), and words hyphenated across lines. Everything that compares text goes through here so
that a query typed in ASCII ("uA", "kohm", "degC") finds what the page prints.
"""

from __future__ import annotations

import re
import unicodedata

DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d"
_DASH_RE = re.compile(f"[{DASHES}]")
_LIGATURE_SPLIT_RE = re.compile("([\ufb00-\ufb06]) (?=[a-z])")
_WS_RE = re.compile(r"\s+")

# Applied after NFKC (which already folds µ→μ, Ω→Ω, ℃→°C, ligatures→letters).
_SYMBOLS = (
    ("Ω", "ohm"),  # glued: "kΩ" must read "kohm" as typed, "10Ω" splits into number and unit later
    ("ω", "ohm"),
    ("μ", "u"),
    ("°c", " degc "),
    ("°f", " degf "),
    ("°", " deg "),
    ("±", " +- "),
    ("≤", " <= "),
    ("≥", " >= "),
    ("×", " x "),
)

STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "its", "of", "on", "or",
    "per", "the", "this", "that", "to", "with",
})

_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_NUM_UNIT_RE = re.compile(r"^(\d+(?:\.\d+)?)([a-z]+)$")
_DECIMAL_COMMA_RE = re.compile(r"^(\d+),(\d{1,2})$")  # "5,25" is a decimal; "10,000" is thousands


def collapse_ws(text: str) -> str:
    return _WS_RE.sub(" ", text).strip()


def repair(text: str) -> str:
    """Undo extraction artefacts without changing meaning: ligature splits and unicode compatibility forms."""
    text = _LIGATURE_SPLIT_RE.sub(r"\1", text)
    return unicodedata.normalize("NFKC", text)


def _fold(text: str) -> str:
    if text.isascii():  # the common case: nothing to repair or fold
        return text.lower()
    text = repair(text).lower()
    text = _DASH_RE.sub("-", text)
    for src, dst in _SYMBOLS:
        if src in text:
            text = text.replace(src, dst)
    return text


def fold(text: str) -> str:
    """Lower-case, symbol-folded text for matching (µ→u, Ω→ohm, °C→degc, dashes→'-'), whitespace collapsed."""
    return collapse_ws(_fold(text))


def _number(token: str) -> str:
    """"5.0" and "5" are the same number to a reader: drop trailing fractional zeros."""
    if "." in token and token.replace(".", "", 1).isdigit():
        token = token.rstrip("0").rstrip(".")
    return token or "0"


def _stem(token: str) -> str:
    if len(token) >= 5 and token.endswith("s") and not token.endswith(("ss", "us", "is")) and token.isalpha():
        return token[:-1]
    return token


def tokens(text: str, keep_stopwords: bool = False) -> list[str]:
    """Search tokens: folded words, numbers (decimal commas folded) and units split from their numbers."""
    out: list[str] = []
    for raw in _TOKEN_RE.findall(_fold(text)):
        if raw.isalpha():
            if keep_stopwords or raw not in STOPWORDS:
                out.append(_stem(raw))
            continue
        decimal = _DECIMAL_COMMA_RE.match(raw)
        raw = f"{decimal.group(1)}.{decimal.group(2)}" if decimal else raw.replace(",", "")
        m = _NUM_UNIT_RE.match(raw)
        if m:
            out.append(_number(m.group(1)))
            out.append(m.group(2))
            continue
        if raw[0].isdigit() and "." in raw:
            raw = _number(raw)
        if not keep_stopwords and raw in STOPWORDS:
            continue
        out.append(_stem(raw))
    return out


# A cell that holds a value: a number with optional sign/comparator and unit, a range of two, or a placeholder dash.
_NUM = r"(?:\d+(?:[.,]\d+)*|\.\d+)"
_UNIT = r"(?:[A-Za-zµμΩΩ°%‰/²³]{1,8})"
_SIGN = rf"[<>≤≥±+\-~≈{DASHES}]"
_VALUE_RE = re.compile(
    rf"^\(?{_SIGN}?\s*{_NUM}\s*{_UNIT}?\)?(?:\s*(?:to|~|\.\.|…|/|{_SIGN})\s*{_SIGN}?\s*{_NUM}\s*{_UNIT}?)?$"
)
_PLACEHOLDER_RE = re.compile(rf"^[{DASHES}\-–—]+$|^(?:n/a|tbd)$", re.IGNORECASE)


def is_value(text: str) -> bool:
    """True for table cells that carry a value ("2.7", "-40", "+125 °C", "0.7 to 1.2", "—")."""
    s = text.strip()
    if not s or len(s) > 24:
        return False
    return bool(_VALUE_RE.match(s) or _PLACEHOLDER_RE.match(s))


def has_digit(text: str) -> bool:
    return any(ch.isdigit() for ch in text)


def match_key(text: str) -> str:
    """Key for fuzzy title matching: folded, punctuation dropped."""
    return " ".join(tokens(text, keep_stopwords=True))


_DECO = r"\s\x00-\x1f\x7f-\x9f\u2022\u2023\u2043\u25a0-\u25ff\u00b7\ue000-\uf8ff*"
_DECORATION_RE = re.compile(f"^[{_DECO}]+$")
_LEADING_DECORATION_RE = re.compile(f"^[{_DECO}]+")


def is_decoration(text: str) -> bool:
    """Bullets, control characters and symbol-font glyphs (private-use code points): no words."""
    return bool(_DECORATION_RE.match(text))


def strip_decoration(text: str) -> str:
    return _LEADING_DECORATION_RE.sub("", text).strip()
