"""The candidate reading: one value the reader could answer with, and everything needed to judge and quote it.

Table rows, table cells and text lines all become ``Candidate`` objects (``rows.py`` and ``lines.py``) without
any judgement about which one answers the request; ``reader.py`` scores them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.agent.offline.values import Reading
from app.units import Unit

NUMERIC_ROLES = ("min", "typical", "max")
# ESD ratings (human body, charged device, machine model) are the most a pin takes, like the absolute maximum ratings
# they are often printed beside.
ABS_MAX_TITLE = re.compile(r"absolute\s*max(imum)?\s*ratings?|maximum\s*ratings|esd\s*ratings?", re.IGNORECASE)
SECTION_TITLE = re.compile(
    r"absolute\s*max(imum)?\s*ratings?|maximum\s*ratings|esd\s*ratings?|electrical\s*(?:/\s*optical\s*)?characteristics|"
    r"recommended\s*operat(?:ing|ion)|operating\s*ratings?|"
    r"operat(?:ing|ion)\s*conditions|dc\s*characteristics|ac\s*characteristics|switching\s*characteristics|"
    r"timing\s*(characteristics|requirements)|features|specifications|thermal\s*characteristics|"
    r"temperature\s*characteristics",
    re.IGNORECASE,
)

# A long line can still be a section's title when the title leads it and the rest only says where the section
# applies: "MAXIMUM RATINGS (Full operating ambient temperature range applies, unless otherwise noted.)".
_LEADING_TITLE = re.compile(r"^\W*(?:\d+(?:\.\d+)*\.?\s*)?(?:" + SECTION_TITLE.pattern + r")\s*"
                            r"(?:$|[(\[:,]|\b(?:at|over|for|unless|of|with|in)\b)", re.IGNORECASE)
SECTION_TITLE_CHARS = 80


def is_section_title(line: str) -> bool:
    """Whether a line titles a section: a short line naming one, or a line that opens with the title and goes on
    with where the section applies."""
    if _LEADING_TITLE.match(line):
        return True
    # A short line that names a section inside a sentence ("Distributors for availability and specifications.")
    # is prose running on, not a title.
    sentence = line.rstrip().endswith(".") and len(line.split()) >= 4
    return len(line) < SECTION_TITLE_CHARS and not sentence and bool(SECTION_TITLE.search(line))


_LIMIT_LEADING_NAME = re.compile(r"^\W*(max|maximum|min|minimum)\b", re.IGNORECASE)


def limit_leading(name: str) -> str | None:
    """'max' or 'min' when a name starts with a limit word ("Max. airflow"): its one value is that limit."""
    match = _LIMIT_LEADING_NAME.match(name)
    if not match:
        return None
    return "max" if match.group(1).lower().startswith("max") else "min"


_HEADER_LIMIT = re.compile(r"\(([^()]*)\)\s*$")
_LIMIT_WORD = re.compile(r"\b(min|max|minimum|maximum)\b\.?", re.IGNORECASE)


def limit_in_parentheses(labels: list[str]) -> str | None:
    """'min' or 'max' when a header ends in a parenthesis naming one limit ("(N.cm Min)", "(approx., max.)")."""
    for text in labels:
        inner = _HEADER_LIMIT.search(" ".join(text.split()))
        words = {w.lower()[:3] for w in _LIMIT_WORD.findall(inner.group(1))} if inner else set()
        if len(words) == 1:
            return "min" if words == {"min"} else "max"
    return None


@dataclass(eq=False)
class Candidate:
    """A value the reader could answer with, and everything needed to judge and quote it."""

    page: int
    source: str  # table_row | table_cell | line
    label: str  # text that should name the parameter
    symbol: str = ""
    context: str = ""  # conditions and surroundings, matched against requested conditions
    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: Unit | None = None
    unit_text: str | None = None
    printed: list[str] = field(default_factory=list)  # numbers as printed, for quoting and cross-checks
    value_text: str = ""
    abs_max: bool = False
    explicit_fields: bool = False  # fields come from Min/Typ/Max columns, not from wording
    aligned: bool = True  # False when multi-line cells could not be paired line by line
    line_text: str = ""  # for line candidates: the whole line
    alt_labels: list[str] = field(default_factory=list)  # other lines that may name the parameter
    own_label: str | None = None  # this row's own name cell when ``label`` joins a name wrapped over rows
    merged: bool = False  # nominal and range of one line read together
    assignment: bool = False  # printed as "X = value", the way test conditions are written
    in_parentheses: bool = False  # printed inside "( … )", where tolerances and conditions usually go
    caption: bool = False  # part of a figure caption ("FIGURE 2-24: ... 10 kΩ"), which describes a plot
    extra_conditions: str = ""  # row conditions the request did not mention
    grades: tuple[str, ...] = ()  # part numbers naming this row, one grade among sibling rows of other grades
    after_value: bool = False  # printed right after another value ("38.5 +/- 2"), where tolerances go
    size_factor: bool = False  # one factor of a size printed "A x B" ("600mm x 1.000mm"), not a quantity alone
    in_notes: bool = False  # a numbered line of a "Notes:" list, where tolerances and test remarks go
    symbol_named: bool = False  # named only by a symbol heading its value columns ("Iv (mcd) Min. Typ.")
    following: str = ""  # for line candidates: the words right after the value ("16 analog inputs")
    ambiguity: str | None = None  # why this row's values cannot be assigned to fields (then it has none)
    heading: str = ""  # the quantity a table's title names for all its rows ("Thermal resistance ratings")
    table_conditions: str = ""  # a table caption setting the conditions of all its rows ("VCC = 5V, TA = 25°C")
    table_part: str = ""  # the part a table is printed for, named above it ("LM78L05" over its own table)
    listed_parts: tuple[str, ...] = ()  # the parts a rating lists between its name and its value
    unit_from_block: bool = False  # unit cell empty: the unit is the one printed on a neighbouring row of its block

    def values(self) -> tuple[float | None, float | None, float | None]:
        return self.min, self.typical, self.max

    def signature(self) -> tuple[float | None, ...]:
        """Values in SI, for telling readings apart however they were printed (computed once: candidates are
        read-only once built)."""
        cached = self.__dict__.get("_signature")
        if cached is None:
            factor = self.unit.factor if self.unit else 1.0
            cached = tuple(None if v is None else round(v * factor, 12) for v in self.values())
            self.__dict__["_signature"] = cached
        return cached


def from_reading(page: int, reading: Reading, source: str) -> Candidate:
    return Candidate(page, source, "", min=reading.min, typical=reading.typical, max=reading.max,
                     unit=reading.unit, unit_text=reading.unit_text, printed=list(reading.numbers),
                     value_text=reading.text)


def rated_as_maximum(cand: Candidate) -> bool:
    """Whether a single figure printed among the absolute maximum ratings, with no column or word naming its limit,
    is a maximum. A thermal resistance listed there (``θJA … 205.9 °C/W``) describes the package rather than
    limiting its use: a typical figure."""
    return cand.unit is None or cand.unit.dimension != "thermal_resistance"
