"""Numbers, ranges and limits as datasheets print them.

A value in a datasheet is rarely a bare number: ``1.7 – 3.6 V``, ``-0.6V to +7.0V``, ``±50 ppm/°C``,
``>280µs``, ``220ns~380ns``, ``5,25V`` (decimal comma), ``.020`` (no leading zero), ``10,000`` (thousands
separator). This module turns such text into ``Reading`` objects (min / typical / max plus unit) and keeps the
character span each came from, so the caller can quote the document verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from app.agent.offline.model_units import unit_after_number
from app.units import UNIT_TOKEN_RE, Unit, parse_unit

_SIGN = r"[+\-−–]"
# Thousands groups first ("10,000"), then decimals with point or comma ("5,25"), then leading-dot decimals.
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+(?![\d.,])|\d+(?:[.,]\d+)?|\.\d+)"


# Cyrillic letters that look like Latin ones: some text layers print "°С" with a Cyrillic Es, which reads as
# no unit at all. Replaced one for one, so character spans still index the original text.
_LATIN_LOOKALIKES = str.maketrans("АВСЕНКМОРТХаседорхуΑΒΕΚΜΝΟΡΤΧ", "ABCEHKMOPTXacedopxyABEKMNOPTX")


def latin_lookalikes(text: str) -> str:
    """``text`` with Cyrillic and Greek capitals that look like Latin letters replaced by those letters."""
    return text.translate(_LATIN_LOOKALIKES)


def _num(name: str) -> str:
    return rf"(?P<{name}s>{_SIGN})?(?P<{name}>{_NUMBER})"


def _unit(name: str) -> str:
    return rf"(?:\s?(?P<{name}>{UNIT_TOKEN_RE})(?![A-Za-z]))"


_RANGE_SEP = r"\s*(?:to|~|～|∼|\.\.\.|…|–|—|−)\s*|(?<=\d)-(?=[+\-]?\d)|(?<=\d) - (?=\d)|(?<=[a-zA-Zµμ°℃Ω])\s?-\s?(?=\d)"
_PM = r"(?:±|\+\s?/\s?[-–−]|\+-|\+–)"
_GE = r"(?:≥|>=|＞|>|≧)"
_LE = r"(?:≤|<=|＜|<|≦)"

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # "–40°C ≤ TA ≤ +125°C": a range written as bounds around a symbol.
    ("between", re.compile(rf"(?<![\w.,]){_num('a')}{_unit('ua')}?\s?(?:≤|<=|<|£)\s?[A-Za-z][\w ]{{0,8}}?\s?"
                           rf"(?:≤|<=|<|£)\s?{_num('b')}{_unit('ub')}?")),
    ("pm", re.compile(rf"{_PM}\s?{_num('a')}{_unit('ua')}?")),
    ("range", re.compile(
        rf"(?<![\w.,/\-–]){_num('a')}{_unit('ua')}?(?:{_RANGE_SEP})"
        rf"{_num('b')}{_unit('ub')}?")),
    ("ge", re.compile(rf"{_GE}\s?{_num('a')}{_unit('ua')}?")),
    ("le", re.compile(rf"{_LE}\s?{_num('a')}{_unit('ua')}?")),
    ("single", re.compile(rf"(?<![\w.,/\-–]){_num('a')}{_unit('ua')}?")),
]

# The word may follow the same value restated in other units: "0.35 N-cm (0.5 oz.-in.) maximum".
_TRAILING_QUALIFIER = re.compile(r"^\s*(?:\([^()]{1,24}\)\s*)?\(?\s*(typical|typ\.?|nominal|nom\.?|maximum|max\.?|"
                                 r"minimum|min\.?)\b", re.IGNORECASE)
_LEADING_QUALIFIER = re.compile(r"\b(typical|typ\.?|nominal|maximum|max\.?|minimum|min\.?|up to|approx\.?)\s*:?\s*$",
                                re.IGNORECASE)
EMPTY_CELL = re.compile(r"^[\s\-—–−_/]*$")


@dataclass
class Reading:
    """One value expression read from text. ``start``/``end`` index the text it was read from."""

    kind: str  # pm | range | ge | le | single
    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: Unit | None = None
    unit_text: str | None = None
    start: int = 0
    end: int = 0
    text: str = ""
    numbers: list[str] = field(default_factory=list)

    @property
    def has_value(self) -> bool:
        return any(v is not None for v in (self.min, self.typical, self.max))

    def signature(self) -> tuple[float | None, float | None, float | None]:
        """Values in SI, for telling two readings apart regardless of how they were printed."""
        factor = self.unit.factor if self.unit else 1.0
        return tuple(None if v is None else round(v * factor, 12) for v in (self.min, self.typical, self.max))


def parse_number(text: str) -> float | None:
    """A single printed number (sign, decimal comma, thousands separator, leading dot) or None."""
    match = re.fullmatch(rf"\s*({_SIGN})?\s?({_NUMBER})\s*", text)
    if not match:
        return None
    return _to_float(match.group(1), match.group(2))


def _to_float(sign: str | None, digits: str) -> float:
    digits = digits.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+", digits) else digits.replace(",", ".")
    value = float(digits)
    if sign and sign.strip() in ("-", "−", "–"):
        value = -value
    return value


def _unit_of(token: str | None) -> Unit | None:
    return parse_unit(token) if token else None


def _span_free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end <= s or start >= e for s, e in taken)


@lru_cache(maxsize=50_000)
def _read_values_cached(text: str) -> tuple[Reading, ...]:
    return tuple(_read_values(text))


def read_values(text: str) -> list[Reading]:
    """Every value expression in ``text``, in reading order, the most specific form winning overlaps.
    (Cached: the same cells and lines are read on every step of a conversation; callers must not mutate.)"""
    return list(_read_values_cached(text))


# Four dots or more, or an ellipsis run into more dots ("……", "…..."): a single "…" is a range ("1…5").
_LEADER = r"(?:\.{4,}|\.*…[.…]+|\.+…)"
_DOT_LEADER = re.compile(_LEADER)
_DETACHED_SIGN = re.compile(rf"(?P<lead>{_LEADER}\s?|\bto\s|=\s?)(?P<sign>[+\-−–])\s(?=\d)")
# Full-width signs some text layers print ("－40℃ to 85℃"), replaced one for one so spans still index the text.
_FULLWIDTH_SIGNS = str.maketrans("－＋", "−+")
_NOTE_REFERENCE = re.compile(r"\b(?:notes?|footnote)\s*$", re.IGNORECASE)


def _read_values(text: str) -> list[Reading]:
    printed = latin_lookalikes(text)
    text = printed.translate(_FULLWIDTH_SIGNS)
    taken: list[tuple[int, int]] = []
    readings: list[Reading] = []
    # A dot leader ("Weight ........ 19 g") only joins a name to its value; blanked to spaces of the same
    # length, it no longer glues to the number and every span still indexes the original text.
    # "VDD....- 0.3V to + 3.6V": a sign set apart from its number right after a dot leader, "to" or "=" (where it
    # subtracts from nothing) is moved next to the number (same length, so spans still index the original text).
    scan = _DETACHED_SIGN.sub(lambda m: f"{m.group('lead')} {m.group('sign')}", text)
    scan = _DOT_LEADER.sub(lambda m: " " * len(m.group(0)), scan)
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(scan):
            start, end = match.span()
            if not _span_free(taken, start, end):
                continue
            reading = _build(kind, match, scan)
            if reading is None:
                continue
            taken.append((start, end))
            readings.append(reading)
    for reading in readings:
        if scan[reading.start:reading.end] != text[reading.start:reading.end] and re.search(
                r"[+\-−–]\s\d", text[max(0, reading.start - 1):reading.end]):
            # A moved sign: the printed value starts at the sign, one place to the left.
            reading.start -= 1 if scan[reading.start] != text[reading.start] else 0
            reading.text = text[reading.start:reading.end]
    readings.sort(key=lambda r: r.start)
    _units_pint_knows(readings, text)
    _share_units(readings, text)
    for reading in readings:
        _apply_qualifier_words(reading, text)
        if printed != text and reading.text == text[reading.start:reading.end]:
            reading.text = printed[reading.start:reading.end]  # quoted as printed, full-width sign and all
    return readings


def _build(kind: str, match: re.Match[str], text: str) -> Reading | None:
    groups = match.groupdict()
    end_char = text[match.end():match.end() + 1]
    if end_char and (end_char.isalnum() or end_char in "_-") and not re.search(r"[A-Za-zµμΩΩ°℃%]$", match.group(0)):
        return None  # "1234P-2", "103L": part of an identifier
    a = _to_float(groups.get("as"), groups["a"])
    unit_a = _unit_of(groups.get("ua"))
    start, end = match.span()
    if _NOTE_REFERENCE.search(text[max(0, start - 12):start]):
        return None  # "(Note 1)", "Notes 2": a footnote reference, not a value
    if kind == "between":
        kind = "range"
    if kind == "range":
        b = _to_float(groups.get("bs"), groups["b"])
        unit_b = _unit_of(groups.get("ub"))
        unit = unit_b or unit_a
        if unit_a and unit_b and unit_a.dimension == unit_b.dimension and unit_a.factor != unit_b.factor:
            # "580ns~1µs": report both ends in the unit of the first.
            b = float(f"{b * unit_b.factor / unit_a.factor:.12g}")
            unit = unit_a
        elif unit_a and unit_b and unit_a.dimension != unit_b.dimension:
            return None
        if b < a and not (groups.get("bs") or "").strip():
            # "3-5" reads as a range only when it ascends; otherwise it is likely a part number or a date.
            return None
        unit_text = groups.get("ub") or groups.get("ua")
        if unit is unit_a and groups.get("ua"):
            unit_text = groups.get("ua")
        return Reading("range", min=a, max=b, unit=unit, unit_text=unit_text, start=start, end=end,
                       text=match.group(0), numbers=[groups["a"], groups["b"]])
    if kind == "pm":
        return Reading("pm", min=-abs(a), max=abs(a), unit=unit_a, unit_text=groups.get("ua"), start=start,
                       end=end, text=match.group(0), numbers=[groups["a"]])
    if kind == "ge":
        return Reading("ge", min=a, unit=unit_a, unit_text=groups.get("ua"), start=start, end=end,
                       text=match.group(0), numbers=[groups["a"]])
    if kind == "le":
        return Reading("le", max=a, unit=unit_a, unit_text=groups.get("ua"), start=start, end=end,
                       text=match.group(0), numbers=[groups["a"]])
    # A digit glued to letters on its left ("VDD5", "pin8", "IP40") is an identifier, not a value; a number
    # added to a symbol ("VDD + 0.3V", "VCC-1.5") is an offset, not a value either.
    if start > 0 and (text[start - 1].isalpha() or text[start - 1] in "_#"):
        return None
    if groups.get("as") and start > 0 and text[start - 1].isalnum():
        return None  # "BC807-25", "LM1117-3.3": a dash glued to a part number starts its suffix, not a sign
    if re.search(r"[A-Za-z]\w*(?:[+\-−–]|\s+[+\-−–]\s+)$", text[:match.start("a")]):
        return None
    if unit_a is None and text[start - 1:start] == "[" and text[end:end + 1] == "]":
        return None  # "[1]": a reference to a note
    if unit_a is None and re.match(r"\s*:(?!\d)", text[end:]) and re.search(r"[A-Za-z]\s*$", text[:start]):
        return None  # "Selection -25:", "Step 3:": a number ending a heading names a group, it states no value
    return Reading("single", typical=a, unit=unit_a, unit_text=groups.get("ua"), start=start, end=end,
                   text=match.group(0), numbers=[groups["a"]])


def _units_pint_knows(readings: list[Reading], text: str) -> None:
    """'300 – 1200 hPa': a unit symbol outside the reader's vocabulary that pint knows is still the unit."""
    for n, reading in enumerate(readings):
        if reading.unit is not None:
            continue
        limit = readings[n + 1].start if n + 1 < len(readings) else len(text)
        unit, unit_text, taken = unit_after_number(text[reading.end:limit])
        if unit is not None:
            reading.unit, reading.unit_text = unit, unit_text
            reading.end += taken
            reading.text = text[reading.start:reading.end]


def _share_units(readings: list[Reading], text: str) -> None:
    """'+/-16 or 32 V', '3 to 30 V': a unit printed once after the last number applies to the ones before."""
    for i in range(len(readings) - 2, -1, -1):
        current, nxt = readings[i], readings[i + 1]
        if current.unit is None and nxt.unit is not None:
            between = text[current.end:nxt.start]
            if re.fullmatch(r"\s*(?:or|and|/|,)?\s*", between):
                current.unit, current.unit_text = nxt.unit, nxt.unit_text


_TO_EXPRESSION = re.compile(r"^\s*(?:~|～|∼|to|–|—)\s*[A-Z][A-Za-z0-9]{0,5}(?:\s*[+\-−]|\s*$|[^\w\s])")
_FROM_EXPRESSION = re.compile(r"[A-Za-z][\w+\-.]*\s*(?:~|～|∼|to|–|—)\s*$")


def _apply_qualifier_words(reading: Reading, text: str) -> None:
    """'2.5 uA typical', 'max. 5 mA', '(1.5V typical)': the word next to a single number names its field.
    '-0.3V ~ VDD+0.7': a number ranging to a symbolic bound is the lower end (and 'VSS ~ 5.5 V' the upper)."""
    if reading.kind != "single":
        return
    if _TO_EXPRESSION.match(text[reading.end:reading.end + 12]):
        reading.typical, reading.min = None, reading.typical
        return
    if _FROM_EXPRESSION.search(text[max(0, reading.start - 12):reading.start]):
        reading.typical, reading.max = None, reading.typical
        return
    after = _TRAILING_QUALIFIER.match(text[reading.end:reading.end + 40])
    before = _LEADING_QUALIFIER.search(text[max(0, reading.start - 14):reading.start])
    word = (after.group(1) if after else before.group(1) if before else "").lower()
    value = reading.typical
    if word.startswith("max") or word == "up to":
        reading.typical, reading.max = None, value
    elif word.startswith("min"):
        reading.typical, reading.min = None, value
