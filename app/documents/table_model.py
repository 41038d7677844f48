"""A datasheet characteristics table as typed rows: which column says what, and what each row specifies.

The table tool returns cells, cell for cell; reading them takes the conventions every electronics datasheet
follows, and this module is their one home:

* column roles (parameter, symbol, conditions, min, typ, max, unit, value, notes) come from a header row, from a
  group header (``Values`` over ``Min. Typ. Max.``, or joined into one cell as ``Values Min.``), from the table
  above on the same page or the part of the table on the previous page (sections printed without a header of
  their own), and otherwise from the standard layout (three value columns before a unit column are Min, Typ,
  Max);
* a row with text in its first cell only is a section title (``Power Stage``), not a parameter;
* a row whose name cell is empty continues the parameter above (a multi-row cell: one parameter, several modes
  or conditions, each with its own values), and so does each line of a cell that holds several lines;
* footnote marks after a name (``Supply current (1)``, ``[2]``, ``*3``, ``¹``) are taken off the name and
  resolved to their note's text when the caller has the notes;
* ``–``, ``—``, ``-``, ``n/a`` and blank cells mean "not specified";
* a header cell naming two or three limits (``MIN MAX``, ``Min Typ``: the text layer merged the columns) holds
  one number per limit named, in order; a cell there with fewer numbers than limits does not say which limit
  its number is, and the row is left undecided;
* ``±X`` in a Typ or Max column is a symmetric limit (min −X, max +X) for quantities that are limits (accuracy,
  error, offset, tolerance, ripple), and ``N ± T`` is a nominal with its tolerance;
* the unit column's unit (compound units kept: ``PaRMS``, ``mVpp``, ``ADC counts/(W/m2)``) is the unit of every
  value of its row.
* header cells naming parts (``QX410 QX411 | Value QX420 QX421 | QX430``) or temperatures (``TA = 25°C |
  TA = −40 to 85°C | TA = −55 to 125°C``, also when the text layer merged them over the wrong columns) over value
  columns make those columns variants: one value per variant, never min / typical / max; its field is the
  header's (a guaranteed limit or rating is a maximum, a minimum when the row's name or conditions say so; else a
  typical value for parts, undecided for temperatures), a Typ column headed by the same temperature joins that
  temperature's reading, and one number in a cell merged over every variant column is the row's one value.

Nothing here knows about requests or answers: the reader and the review layer both build on it. What the
layout leaves undecided is recorded as ``ambiguity`` on the table or the row, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from app.documents.cell_units import UnitCell, parse_unit_cell
from app.documents.cell_values import CellNumber, not_specified, read_cell


class Role(StrEnum):
    PARAMETER = "parameter"
    SYMBOL = "symbol"
    CONDITIONS = "conditions"
    MIN = "min"
    TYP = "typical"
    MAX = "max"
    UNIT = "unit"
    VALUE = "value"
    NOTES = "notes"
    VARIANT = "variant"  # one value column per part, grade or temperature: ``ColumnRoles.variants`` names it


LIMIT_ROLES = (Role.MIN, Role.TYP, Role.MAX)
VALUE_ROLES = (*LIMIT_ROLES, Role.VALUE)


class RoleSource(StrEnum):
    """Where a table's column roles came from, most to least certain."""

    HEADER = "header"  # a header row of this table
    GROUP_HEADER = "group_header"  # a group title over sub-headers (``Values`` over ``Min. Typ. Max.``)
    INHERITED = "inherited"  # the header of an earlier table on the same page
    CONTINUED = "continued"  # the header of the same table on the previous page
    LAYOUT = "layout"  # the standard layout, no header anywhere
    NONE = "none"  # not a characteristics table (a matrix of variants, a pin list)


_ROLE_WORDS: dict[Role, re.Pattern[str]] = {
    Role.MIN: re.compile(r"^(?:min|minimum|min value|lower|lower limit|low)$"),
    Role.TYP: re.compile(r"^(?:typ|typical|tpy|nom|nominal|typ value|nominal value)$"),
    Role.MAX: re.compile(r"^(?:max|maximum|max value|upper|upper limit|high)$"),
    Role.UNIT: re.compile(r"^(?:units?|unit of measure|dim|dimension)$"),
    Role.PARAMETER: re.compile(r"^(?:parameters?|characteristics?|descriptions?|definitions?|specifications?|"
                               r"items?|name|features?|properties|property)$"),
    Role.SYMBOL: re.compile(r"^(?:symbols?|sym|abbr)$"),
    Role.CONDITIONS: re.compile(r"^(?:(?:test )?conditions?|test setup|remarks?|comments?|(?:operating )?modes?|"
                                r"settings?|configurations?)$"),
    Role.VALUE: re.compile(r"^(?:values?|ratings?|rated|rating value|specs?|data|limits?)$"),
    Role.NOTES: re.compile(r"^(?:notes?|ref|reference)$"),
}
# Words that title a group of value columns and say nothing about which limit each column is.
_GROUP_WORDS = frozenset({"value", "values", "limit", "limits", "specification", "specifications", "rating",
                          "ratings", "spec", "specs"})
_FOOTNOTE_MARK = re.compile(r"\s*(?:\((?:note\s*)?\d{1,2}\)|\[\s*\d{1,2}\s*\]|\*\d{0,2}|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|"
                            r"\bnote\s+\d{1,2})\s*$", re.IGNORECASE)
_SUPERSCRIPTS = str.maketrans("¹²³⁴⁵⁶⁷⁸⁹⁰", "1234567890")
# Quantities whose "±X" is a pair of limits rather than a nominal value.
LIMIT_QUANTITY = re.compile(r"accura|error|offset|toleran|ripple|deviation|nonlinearit|non-linearit|drift|"
                            r"mismatch|precision|repeatab|hysteres|variation|uncertaint|stabilit", re.IGNORECASE)
_SYMBOL = re.compile(r"^[A-Za-zΔθλητ][A-Za-z0-9_,+\-()/ ]{0,9}$")


@dataclass(frozen=True)
class ColumnRoles:
    """The role of each column, and where that knowledge came from.

    Invariants: ``len(roles)`` is the table's width; ``ambiguity`` is set (and the value columns' roles left
    ``None``) when the layout shows value columns without saying which limit each is.
    """

    roles: tuple[Role | None, ...]
    source: RoleSource
    header_units: tuple[UnitCell | None, ...] = ()  # "Min (V)": a unit printed in a column's header
    ambiguity: str | None = None
    labels: tuple[str, ...] = ()  # each column's header text (group title first), "" where none
    # Per column, the limits a merged header cell names in order ("MIN MAX" -> (MIN, MAX)); () elsewhere.
    # Such a column's role is its first limit, so it counts as a value column.
    merged: tuple[tuple[Role, ...], ...] = ()
    # Per column, the variant a VARIANT column holds ("QX420 QX421", "TA = -40 to 85°C"); "" elsewhere.
    variants: tuple[str, ...] = ()
    # What every variant column's number is: MAX (a guaranteed limit, a rating), TYP, or None when the header
    # says neither and the name cannot tell (a row then states the bound it is, else it is left undecided).
    variant_field: Role | None = None
    variant_kind: str = ""  # "part" or "temperature"

    def merged_at(self, column: int) -> tuple[Role, ...]:
        return self.merged[column] if column < len(self.merged) else ()

    def columns(self, *wanted: Role) -> list[int]:
        return [i for i, role in enumerate(self.roles) if role in wanted]

    @property
    def value_columns(self) -> list[int]:
        return self.columns(*VALUE_ROLES)

    @property
    def variant_columns(self) -> list[int]:
        return self.columns(Role.VARIANT)

    @property
    def characteristic(self) -> bool:
        """A table of parameters with limits (as opposed to a matrix of variants or a list of pins); variant
        columns under a header naming them make one too: the header says what each column is."""
        return bool(self.value_columns) or bool(self.variant_columns) or self.ambiguity is not None


@dataclass(frozen=True)
class Limits:
    """What one row specifies.

    Invariants: at least one of ``min``/``typical``/``max`` is set; a ``±X`` symmetric limit has ``min == -max``
    and ``symmetric`` True; ``tolerance`` is only set for a nominal printed ``N ± T`` (then ``typical`` is N and,
    unless the row prints its own limits, ``min``/``max`` are N − T and N + T);
    ``printed`` holds the value cells as printed, left to right, for quoting.
    """

    min: float | None = None
    typical: float | None = None
    max: float | None = None
    symmetric: bool = False
    tolerance: float | None = None
    printed: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelRow:
    """One specified parameter (or one mode or condition of it) of a table.

    Invariants: ``name`` is the parameter's name without footnote marks; a sub-row carries its parent's name,
    symbol and unit, ``parent_index`` points at the parent, and ``sub_label`` is its own mode or condition;
    ``conditions`` joins the sub-row's line label and its conditions cell; ``unit`` is the unit column's unit (or the
    column header's, or the unit printed in the value cell), None when the row prints none; ``notes`` are the
    resolved footnote texts; ``ambiguity`` says why the row's values cannot be assigned to fields (then
    ``limits`` is None).
    """

    index: int
    name: str
    symbol: str = ""
    conditions: str = ""
    sub_label: str = ""
    section: str = ""
    limits: Limits | None = None
    unit: UnitCell | None = None
    notes: tuple[str, ...] = ()
    footnote_marks: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    ambiguity: str | None = None
    parent_index: int | None = None  # the row this one continues (a sub-row of a multi-row cell)
    # Under variant columns: one reading per variant the row prints a number for, in column order.
    variants: tuple[tuple[str, Limits], ...] = ()

    @property
    def is_sub_row(self) -> bool:
        return self.parent_index is not None


@dataclass(frozen=True, eq=False)
class TableModel:
    """A table read as a characteristics table. Compared and hashed by identity: a model is the key of the next
    table's reading, and hashing every cell of it on every turn would cost more than the reading.

    Invariants: ``rows`` hold data rows only (header and section-title rows are consumed); ``roles`` apply to every
    row (a header later in the table re-labels the rows after it, recorded in ``row_roles``); ``sections`` lists
    the section titles in order.
    """

    roles: ColumnRoles
    rows: tuple[ModelRow, ...]
    caption: str = ""
    sections: tuple[str, ...] = ()
    width: int = 0
    row_roles: tuple[ColumnRoles, ...] = field(default=(), repr=False)

    @property
    def characteristic(self) -> bool:
        return self.roles.characteristic


# --- header rows -----------------------------------------------------------------------------------------------

def _words(text: str) -> str:
    without_units = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", text.replace("\n", " "))
    return " ".join(re.sub(r"[^a-z ]", " ", without_units.casefold()).split())


@lru_cache(maxsize=4096)
def header_role(text: str) -> Role | None:
    """The role a header cell names: ``Min.``, ``Typ (V)``, ``Test Conditions``, ``Values Min.`` (a group title
    joined to its sub-header), ``Max. Unit`` (a merged cell whose values carry their unit)."""
    key = _words(text)
    if not key:
        return None
    for role, pattern in _ROLE_WORDS.items():
        if pattern.match(key):
            return role
    words = key.split()
    meaningful = [w for w in words if w not in _GROUP_WORDS]
    if meaningful and len(meaningful) < len(words):
        # "Values Min", "Limits Max": the group title says nothing about the column, the sub-header does.
        inner = header_role(" ".join(meaningful))
        if inner is not None:
            return inner
    if 2 <= len(words) <= 3:
        limits = [r for w in words for r in LIMIT_ROLES if _ROLE_WORDS[r].match(w)]
        rest_ok = all(_ROLE_WORDS[Role.UNIT].match(w) or _ROLE_WORDS[Role.CONDITIONS].match(w)
                      or any(_ROLE_WORDS[r].match(w) for r in LIMIT_ROLES) for w in words)
        if len(limits) == 1 and rest_ok:
            return limits[0]
    return None


def merged_limits(text: str) -> tuple[Role, ...]:
    """The limits a header cell names when the text layer merged two or three limit columns into it ("MIN MAX",
    "Min. Typ.", "Minimum Typical"), in order; () for any other cell."""
    words = _words(text).split()
    roles = tuple(r for w in words for r in LIMIT_ROLES if _ROLE_WORDS[r].match(w))
    if len(roles) < 2 or len(roles) != len(words) or len(set(roles)) != len(roles):
        return ()
    return roles


def _header_unit(text: str) -> UnitCell | None:
    for inner in re.findall(r"[(\[]([^()\[\]]*)[)\]]", text):
        unit = parse_unit_cell(inner.strip())
        if unit is not None and unit.recognised:
            return unit
    return None


def _is_value_cell(text: str) -> bool:
    return read_cell(text) is not None


_TRAILING_LIMITS = re.compile(r"(?:\s*\b(?:min|typ|tpy|max)\b\.?)+\s*$", re.IGNORECASE)


def _trailing_limits(row: Sequence[str], roles: list[Role | None]) -> dict[int, str]:
    """Header cells into which the text layer merged a group title and the first sub-header(s) ("Quiescent
    current Min." | "Typ." | "Max.", or "Iv (mcd) Min. Typ." | "" | "Max."): the trailing limit words give the
    roles of that cell and of the empty cells after it. Returns the group title of each column so labelled."""
    titles: dict[int, str] = {}
    for i, cell in enumerate(row):
        text = " ".join(cell.split())
        match = _TRAILING_LIMITS.search(text) if roles[i] is None and text else None
        if match is None or match.start() == 0:
            continue
        words = re.findall(r"min|typ|tpy|max", match.group(0), re.IGNORECASE)
        targets = list(range(i, i + len(words)))
        if targets[-1] >= len(row) or any(row[j].strip() for j in targets[1:]):
            continue
        if len(words) == 1 and not any(r in LIMIT_ROLES for r in roles):
            continue  # one trailing "max" with no limit column beside it is more likely part of a name
        for j, word in zip(targets, words, strict=True):
            roles[j] = header_role(word)
            titles[j] = text[:match.start()].strip()
    return titles


def _header_roles(row: Sequence[str]) -> list[Role | None] | None:
    """The roles a row names when it is a header row (no values, at least two role names or one limit). A
    temperature heading a column ("25°C", "85°C Limit") is no value."""
    if any(_is_value_cell(c) and not _TEMPERATURE_HEADER.match(c) for c in row if c.strip()):
        return None
    roles = [header_role(c) for c in row]
    _trailing_limits(row, roles)
    for i, cell in enumerate(row):
        if roles[i] is None and (merged := merged_limits(cell)):
            roles[i] = merged[0]
        elif roles[i] is None and (symbol_at := _merged_name_and_symbol(cell, i)) is not None:
            # "Symbol Parameter" over the names, the text layer having merged the header of the unheaded symbol
            # column beside it: the names are here, the symbols in the empty-headed column on the side it says.
            roles[i] = Role.PARAMETER
            if 0 <= symbol_at < len(row) and not row[symbol_at].strip() and roles[symbol_at] is None:
                roles[symbol_at] = Role.SYMBOL
    if (roles and roles[0] is None and not row[0].strip() and Role.PARAMETER not in roles
            and any(r in VALUE_ROLES for r in roles)):
        roles[0] = Role.PARAMETER  # "| | MIN MAX | UNIT": the unheaded first column names the rows
    named = [r for r in roles if r is not None]
    if len(named) >= 2 or (named and named[0] in VALUE_ROLES and sum(1 for c in row if c.strip()) <= 3):
        return roles
    return None


def _merged_name_and_symbol(text: str, column: int) -> int | None:
    """For a header cell naming the symbol and the parameter columns at once ("Symbol Parameter", "Parameter
    Symbol"), the column the symbols would sit in (before or after, in the order named); None for any other cell."""
    words = _words(text).split()
    if len(words) != 2:
        return None
    roles = [header_role(w) for w in words]
    if roles == [Role.SYMBOL, Role.PARAMETER]:
        return column - 1
    if roles == [Role.PARAMETER, Role.SYMBOL]:
        return column + 1
    return None


def _group_roles(upper: Sequence[str], lower: Sequence[str]) -> list[Role | None] | None:
    """``Values`` (or ``Limits``) over ``Min. Typ. Max.``: the lower row names the limits, the upper row the
    other columns. Returns None when the two rows are not such a pair."""
    lower_roles = [header_role(c) for c in lower]
    if sum(1 for r in lower_roles if r in LIMIT_ROLES) < 2 or any(_is_value_cell(c) for c in upper if c.strip()):
        return None
    upper_roles = [header_role(c) for c in upper]
    return [low if low is not None else up for up, low in zip(upper_roles, lower_roles, strict=True)]


def _is_section_row(row: Sequence[str]) -> bool:
    """Text in the first filled cell only (or the same text repeated across merged cells), no value."""
    filled = [c.strip() for c in row if c.strip()]
    if not filled or not row[0].strip() or len(set(filled)) != 1:
        return False
    text = filled[0]
    return not _is_value_cell(text) and header_role(text) is None and len(text) <= 80


# --- variant columns ----------------------------------------------------------------------------------------------

_PART = re.compile(r"\b[A-Z]{1,5}\d{2,}[A-Z0-9]*\b")
_TEMPERATURE = re.compile(r"(?:\bT[A-Za-z]{0,4}\s*=\s*)?[-+−–]?\d+(?:\s*°\s*C)?"
                          r"(?:\s*(?:to|\.\.\.?|…|~)\s*[-+−–]?\d+)?\s*°\s*C")
_TEMPERATURE_HEADER = re.compile(rf"^\s*(?:{_TEMPERATURE.pattern})(?:\s+[A-Za-z.]+)*\s*$")
_RELATIVE_LIMIT = re.compile(r"^[A-Z][A-Za-z0-9()]{1,8}\s*[+\-−–]\s*\d+(?:\.\d+)?$")
_MAX_WORDS = re.compile(r"guarantee|\blimits?\b|\bmax|\bratings?\b", re.IGNORECASE)
_TYP_WORDS = re.compile(r"\btyp", re.IGNORECASE)


@dataclass(frozen=True)
class _Variants:
    columns: dict[int, str]
    kind: str
    field: Role | None
    roles: dict[int, Role]  # other columns the variant header names ("TA = 25°C Typ": a Typ column)


def _numbers_under(rows: Sequence[Sequence[str]], columns: Sequence[int]) -> bool:
    """Whether the rows print numbers under every one of ``columns``."""
    return all(any(i < len(r) and _is_value_cell(r[i]) for r in rows) for i in columns)


def _variant_columns(labels: Sequence[str], roles: Sequence[Role | None], below: Sequence[Sequence[str]]
                     ) -> _Variants | None:
    """Header cells over value columns that name parts ("QX410 QX411 | QX420 QX421 | QX430") or temperatures
    ("TA = 25°C | TA = −40 to 85°C | TA = −55 to 125°C") make those columns variants of every row, one value
    each, never min / typical / max. A temperature header the text layer merged over its columns ("TA = 25°C
    Typ" | "" | "Guaranteed Limits" | "TA = −40 to 85°C TA = −55 to 125°C") gives its temperatures, in order,
    to the value columns it spans that are no Typ column. None when the header names no such variants."""
    width = len(labels)
    unit_at = next((i for i, r in enumerate(roles) if r is Role.UNIT), width)
    parts = {i: " ".join(dict.fromkeys(_PART.findall(labels[i]))) for i in range(unit_at)
             if roles[i] in (None, Role.VALUE) and _PART.search(labels[i])}
    if not any(r in LIMIT_ROLES for r in roles) and len(parts) >= 2:
        columns = sorted(parts)
        if columns == list(range(columns[0], columns[-1] + 1)) and _numbers_under(below, columns):
            text = " ".join(labels[i] for i in columns)
            field = Role.MAX if _MAX_WORDS.search(text) else Role.TYP
            return _Variants(parts, "part", field, {})
    first = next((i for i in range(unit_at) if _TEMPERATURE.search(labels[i])), None)
    if first is None:
        return None
    temperatures: list[str] = []
    targets: list[int] = []
    other: dict[int, Role] = {}
    for i in range(first, unit_at):
        found = [" ".join(t.split()) for t in _TEMPERATURE.findall(labels[i])]
        rest = _TEMPERATURE.sub(" ", labels[i])
        for t in found:
            if not temperatures or temperatures[-1] != t:
                temperatures.append(t)
        limit = header_role(rest) if rest.strip() else None
        if roles[i] in LIMIT_ROLES or limit in LIMIT_ROLES:
            role = roles[i] if roles[i] in LIMIT_ROLES else limit
            if role is Role.TYP:
                other[i] = Role.TYP
                continue
            return None  # Min / Max columns under temperatures: a layout of its own, not read here
        if roles[i] is not None and roles[i] is not Role.VALUE:
            return None
        targets.append(i)
    if len(targets) < 2 or len(temperatures) != len(targets) or not _numbers_under(below, targets):
        return None
    text = " ".join(labels[i] for i in targets)
    field = Role.MAX if _MAX_WORDS.search(text) else (Role.TYP if _TYP_WORDS.search(text) else None)
    return _Variants(dict(zip(targets, temperatures, strict=True)), "temperature", field, other)


def _part_groups(header: Sequence[Role | None], labels: Sequence[str]) -> tuple[str, ...]:
    """Min / Typ / Max printed once per part ("Min | QX12I Typ | Max | Min | QX12C Typ | Max"): per column, the
    part whose group of limit columns it is in ("" elsewhere); () unless every group names exactly one part."""
    groups: list[list[int]] = []
    for i, role in enumerate(header):
        if role not in LIMIT_ROLES:
            continue
        current = [header[j] for j in groups[-1]] if groups else []
        if not current or role in current or LIMIT_ROLES.index(role) < LIMIT_ROLES.index(current[-1]):
            groups.append([])
        groups[-1].append(i)
    if len(groups) < 2:
        return ()
    names: dict[int, str] = {}
    for columns in groups:
        parts = list(dict.fromkeys(p for i in columns for p in _PART.findall(labels[i])))
        if len(parts) != 1:
            return ()
        names.update((i, parts[0]) for i in columns)
    return tuple(names.get(i, "") for i in range(len(header)))


def _variant_roles(header: Sequence[Role | None], variants: _Variants, labels: tuple[str, ...], source: RoleSource,
                   units: tuple[UnitCell | None, ...], merged: tuple[tuple[Role, ...], ...]) -> ColumnRoles:
    """The roles of a header with variant columns: those columns, the limit columns the variant header names,
    and the text columns before them (the first unnamed one names the rows, other headed ones hold conditions:
    "VCC" over "2.0V", "4.5V")."""
    roles = list(header)
    for i in variants.columns:
        roles[i] = Role.VARIANT
    for i, role in variants.roles.items():
        roles[i] = role
    first = min([*variants.columns, *variants.roles])
    for i in range(first):
        if roles[i] is None and Role.PARAMETER not in roles:
            roles[i] = Role.PARAMETER
        elif roles[i] is None and labels[i]:
            roles[i] = Role.CONDITIONS
    names = tuple(variants.columns.get(i, "") for i in range(len(roles)))
    return ColumnRoles(tuple(roles), source, units, labels=labels, merged=merged, variants=names,
                       variant_field=variants.field, variant_kind=variants.kind)


# --- layout inference -------------------------------------------------------------------------------------------

def _column_kinds(rows: Sequence[Sequence[str]], width: int) -> list[str]:
    """Per column: ``value`` (numbers and not-specified marks, at least one number), ``unit``, ``symbol``,
    ``empty`` or ``text``."""
    kinds = []
    for i in range(width):
        # A cell holding several lines (one per sub-row) is judged line by line.
        cells = [line.strip() for r in rows if i < len(r) for line in r[i].split("\n")]
        filled = [c for c in cells if c and not not_specified(c)]
        if not filled:
            kinds.append("empty")
            continue
        numbers = sum(1 for c in filled if _is_value_cell(c))
        units = sum(1 for c in filled if (u := parse_unit_cell(c)) is not None and (u.recognised or "/" in c))
        symbols = sum(1 for c in filled if _SYMBOL.match(c) and not c.islower() and len(c.split()) == 1)
        if numbers and numbers >= 0.6 * len(filled):
            kinds.append("value")
        elif units >= 0.6 * len(filled) and len(filled) >= max(2, len(rows) // 2):
            # A unit column fills most rows; one stray letter ("C", "A") in a header is no unit column.
            kinds.append("unit")
        elif symbols >= 0.6 * len(filled):
            kinds.append("symbol")
        else:
            kinds.append("text")
    return kinds


def _assign_text_roles(kinds: list[str], roles: list[Role | None], before: int) -> None:
    """Text columns before the value block: the first names the parameter, a symbol-like one is the symbol,
    others are conditions."""
    named = False
    for i in range(before):
        if roles[i] is not None:
            continue
        if kinds[i] == "symbol" and named:
            roles[i] = Role.SYMBOL
        elif kinds[i] in ("text", "symbol") and not named:
            roles[i] = Role.PARAMETER
            named = True
        elif kinds[i] == "text":
            roles[i] = Role.CONDITIONS


def _value_block(kinds: list[str]) -> tuple[int | None, list[int]]:
    """The unit column (rightmost unit-like column after the values) and the value columns just before it."""
    unit_at = next((i for i in range(len(kinds) - 1, 0, -1) if kinds[i] == "unit"), None)
    end = unit_at if unit_at is not None else len(kinds)
    block: list[int] = []
    i = end - 1
    while i > 0 and kinds[i] in ("value", "empty"):
        block.insert(0, i)
        i -= 1
    while block and kinds[block[0]] == "empty":
        block.pop(0)
    return unit_at, block


def infer_roles(rows: Sequence[Sequence[str]], width: int) -> ColumnRoles:
    """Roles from the standard layout when no header says them: [parameter, symbol?, conditions?, values…,
    unit]. Three value columns are Min, Typ, Max; one is the value; two cannot be told apart."""
    kinds = _column_kinds(rows, width)
    unit_at, block = _value_block(kinds)
    roles: list[Role | None] = [None] * width
    if not block or unit_at is None:
        # Value columns with no unit column after them are variants of a part (12 V / 24 V models) as often as
        # limits: only the full standard layout says which.
        return ColumnRoles(tuple(roles), RoleSource.NONE)
    roles[unit_at] = Role.UNIT
    ambiguity = None
    if len(block) == 3:
        for i, role in zip(block, LIMIT_ROLES, strict=True):
            roles[i] = role
    elif len(block) == 1:
        roles[block[0]] = Role.VALUE
    else:
        ambiguity = (f"{len(block)} value columns without a header: which is min, typical or max is not "
                     f"printed")
    _assign_text_roles(kinds, roles, block[0])
    return ColumnRoles(tuple(roles), RoleSource.LAYOUT, ambiguity=ambiguity)


def _carry(previous: ColumnRoles, rows: Sequence[Sequence[str]], width: int, source: RoleSource
           ) -> ColumnRoles | None:
    """An earlier header's roles applied to a header-less table, when its layout fits them: the same width and
    no text where the earlier header put values; or, when empty columns were dropped, the same number of value
    columns before the unit column."""
    kinds = _column_kinds(rows, width)
    if len(previous.roles) == width:
        fits = all(kinds[i] in ("value", "empty") for i in previous.value_columns)
        if fits and previous.value_columns:
            return ColumnRoles(previous.roles, source, previous.header_units, labels=previous.labels,
                               merged=previous.merged)
    if any(previous.merged):
        return None  # merged limit columns cannot be matched to a narrower layout column by column
    wanted = [r for r in previous.roles if r in VALUE_ROLES]
    unit_at, block = _value_block(kinds)
    if not wanted or len(block) != len(wanted):
        return None
    roles: list[Role | None] = [None] * width
    for i, role in zip(block, wanted, strict=True):
        roles[i] = role
    if unit_at is not None:
        roles[unit_at] = Role.UNIT
    _assign_text_roles(kinds, roles, block[0])
    return ColumnRoles(tuple(roles), source)


# --- rows -------------------------------------------------------------------------------------------------------

def split_footnote_marks(name: str) -> tuple[str, tuple[str, ...]]:
    """``Supply current (1)`` -> (``Supply current``, (``1``,)); marks repeated (``[1][2]``) all come off."""
    marks: list[str] = []
    text = name.strip()
    while True:
        match = _FOOTNOTE_MARK.search(text)
        if match is None or match.start() == 0:
            break
        marks.insert(0, re.sub(r"\D", "", match.group(0).translate(_SUPERSCRIPTS)))
        text = text[:match.start()].rstrip()
    return text, tuple(m for m in marks if m)


def _cell(row: Sequence[str], roles: ColumnRoles, *wanted: Role) -> str:
    for i in roles.columns(*wanted):
        if i < len(row) and row[i].strip():
            return " ".join(row[i].split())
    return ""


def _number(text: str) -> CellNumber | None:
    """A value cell's number; trailing text must be a unit or a footnote mark, else the cell is not a number."""
    number = read_cell(text)
    if number is None or number.unit_text is None:
        return number
    rest = number.unit_text
    if _FOOTNOTE_MARK.fullmatch(" " + rest) or parse_unit_cell(rest) is not None:
        return number
    return None


def _merged_numbers(text: str, limits: tuple[Role, ...]) -> list[tuple[Role, CellNumber]] | None:
    """The numbers of a cell under a merged header, each with its limit: as many numbers as limits named, in
    order. [] for a cell without numbers; None when the cell does not say which limit its numbers are."""
    tokens: list[str] = []
    # "3.5/5" under "Typ./Max.": the slash the header puts between its limits separates their numbers too.
    for token in re.split(r"\s+|(?<=\d)/(?=[+\-−–]?\.?\d)", text.strip()):
        if tokens and tokens[-1] in ("±", "+", "-", "−", "–"):
            tokens[-1] += token  # "± 12", "- 0.5": a sign printed apart from its number
        else:
            tokens.append(token)
    numbers = [read_cell(t) for t in tokens]
    if all(n is None for n in numbers):
        return []
    if len(numbers) > 1 and numbers[-1] is None and parse_unit_cell(tokens[-1]) is not None:
        numbers = numbers[:-1]  # "4.5 5 V": the unit after the last number
    if len(numbers) != len(limits) or any(n is None or n.symmetric for n in numbers):
        return None
    return [(role, n) for role, n in zip(limits, numbers, strict=True) if n is not None]


def _limits(cells: dict[Role, CellNumber], name: str, printed: list[str]) -> Limits | None:
    if not cells:
        return None
    fields: dict[str, float | None] = {"min": None, "typical": None, "max": None}
    symmetric = False
    tolerance = None
    limit_quantity = bool(LIMIT_QUANTITY.search(name))
    for role, number in cells.items():
        slot = "typical" if role in (Role.TYP, Role.VALUE) else role.value
        if number.symmetric and role in (Role.TYP, Role.MAX, Role.VALUE) and limit_quantity:
            fields["min"], fields["max"] = -number.value, number.value
            symmetric = True
            continue
        if number.tolerance is not None:
            tolerance = number.tolerance
        if number.symmetric and role is Role.MIN:
            fields["min"] = -number.value
            continue
        fields[slot] = number.value
    if all(v is None for v in fields.values()):
        return None
    if tolerance is not None and fields["typical"] is not None and fields["min"] is None and fields["max"] is None:
        # "40 ± 2": the nominal with the band it may deviate by.
        fields["min"], fields["max"] = fields["typical"] - tolerance, fields["typical"] + tolerance
    return Limits(fields["min"], fields["typical"], fields["max"], symmetric, tolerance, tuple(printed))


def _split_lines(row: Sequence[str], roles: ColumnRoles) -> list[tuple[list[str], str]] | None:
    """A row whose value cells hold several lines each (one per mode or condition): its sub-rows, line by line,
    each with its own label. The name cell may hold the parameter on its first line and one label per sub-row
    below it; single-line cells (the symbol, the unit) belong to every sub-row."""
    value_lines = [len(row[i].split("\n")) for i in (*roles.value_columns, *roles.variant_columns)
                   if row[i].strip()]
    if not value_lines or max(value_lines) < 2 or len(set(value_lines)) != 1:
        return None
    count = value_lines[0]
    out: list[tuple[list[str], str]] = [([""] * len(row), "") for _ in range(count)]
    for i, cell in enumerate(row):
        lines = [line.strip() for line in cell.split("\n")]
        for k in range(count):
            if len(lines) == count:
                out[k][0][i] = lines[k]
            elif len(lines) == count + 1 and roles.roles[i] is Role.PARAMETER:
                out[k] = (out[k][0], lines[k + 1])
                out[k][0][i] = lines[0]
            else:
                out[k][0][i] = " ".join(lines)
    return out


@dataclass
class _Parent:
    index: int
    name: str
    symbol: str
    unit: UnitCell | None
    marks: tuple[str, ...]


def _row_unit(row: Sequence[str], roles: ColumnRoles, numbers: list[tuple[int, CellNumber]]) -> UnitCell | None:
    unit_text = _cell(row, roles, Role.UNIT)
    if unit_text:
        return parse_unit_cell(unit_text)
    for i, _ in numbers:
        if i < len(roles.header_units) and roles.header_units[i] is not None:
            return roles.header_units[i]
    for _, number in numbers:
        if number.unit_text and (unit := parse_unit_cell(number.unit_text)) is not None:
            return unit
    for i in roles.value_columns:
        # Under a merged "Max. Unit" header a row without a maximum prints its unit alone in that cell.
        if (unit := parse_unit_cell(row[i])) is not None and unit.recognised:
            return unit
    return None


_LEADING_BOUND = re.compile(r"^\W*(max|maximum|min|minimum)\b", re.IGNORECASE)


def _model_row(index: int, row: Sequence[str], roles: ColumnRoles, section: str, parent: _Parent | None,
               footnotes: Mapping[str, str], line_label: str = "", previous: ModelRow | None = None
               ) -> tuple[ModelRow, _Parent]:
    own_name, marks = split_footnote_marks(_cell(row, roles, Role.PARAMETER))
    symbol = _cell(row, roles, Role.SYMBOL)
    conditions = " ".join(c for c in (line_label, _conditions(row, roles)) if c)
    numbers: list[tuple[int, CellNumber]] = []
    by_role: dict[Role, CellNumber] = {}
    undecided = None
    for i in roles.value_columns:
        merged = roles.merged_at(i)
        if merged:
            found = _merged_numbers(row[i], merged)
            if found is None:
                undecided = (f"the cell '{' '.join(row[i].split())}' under the merged header "
                             f"'{roles.labels[i] if i < len(roles.labels) else ''}' does not say which limit "
                             f"each of its numbers is")
                continue
            numbers.extend((i, n) for _, n in found)
            by_role.update(found)
        elif (n := _number(row[i])) is not None:
            numbers.append((i, n))
            role = roles.roles[i]
            if role is not None:
                by_role[role] = n
    relative = next((" ".join(row[i].split()) for i in roles.value_columns
                     if i < len(row) and _RELATIVE_LIMIT.match(" ".join(row[i].split()))), None)
    if relative is not None and by_role and undecided is None:
        # "-0.3 | VSS + 25": one limit a number, the other relative to another pin's voltage; the number alone
        # would read as a range open on the other side.
        undecided = f"one of its limits is printed relative to another quantity ('{relative}'), not as a number"
    if Role.TYP in by_role and Role.VALUE in by_role:
        # "Typ | Limit": the limit column holds the guaranteed limit, a maximum or a minimum as the name says.
        bound = _LEADING_BOUND.match(own_name or (parent.name if parent else ""))
        if bound is None:
            undecided = "a limit column beside a typical column does not say whether it holds a minimum or a maximum"
        else:
            by_role[Role.MAX if bound.group(1).lower().startswith("max") else Role.MIN] = by_role.pop(Role.VALUE)
    variants, variant_numbers, variant_undecided = _variant_readings(row, roles, by_role, own_name or (
        parent.name if parent else ""), symbol or (parent.symbol if parent else ""), previous)
    if not roles.variant_columns and any(roles.variants):
        variants = _group_readings(row, roles, own_name or (parent.name if parent else ""))
    undecided = undecided or variant_undecided
    unit = _row_unit(row, roles, numbers + variant_numbers)
    parent_index = None
    sub_label = ""
    name = own_name
    repeats_parent = parent is not None and own_name == parent.name and marks in ((), parent.marks)
    if parent is not None and roles.columns(Role.PARAMETER) and (not own_name or repeats_parent):
        # An empty name cell (or one repeating the name above, merged): a mode or condition of that parameter.
        parent_index, name = parent.index, parent.name
        marks = marks or parent.marks
        sub_label = line_label or conditions or (symbol if symbol != parent.symbol else "")
        symbol = symbol or parent.symbol
        unit = unit or parent.unit
    elif line_label:
        sub_label = line_label
    printed = list(dict.fromkeys(" ".join(row[i].split()) for i, _ in numbers))
    limits = _limits(by_role, name, printed)
    ambiguity = roles.ambiguity if roles.ambiguity and any(_is_value_cell(c) for c in row) else undecided
    notes = tuple(footnotes[m] for m in marks if m in footnotes)
    model = ModelRow(index, name, symbol, conditions, sub_label, section, None if ambiguity else limits, unit,
                     notes, marks, tuple(row), ambiguity, parent_index, () if ambiguity else variants)
    next_parent = parent if parent_index is not None else _Parent(index, name, symbol, unit, marks)
    return model, next_parent


def _conditions(row: Sequence[str], roles: ColumnRoles) -> str:
    """The row's conditions cell; under a variant header, every conditions cell, a bare quantity printed under
    the symbol it sets ("VCC" over "6.0V") as that assignment ("VCC = 6.0V")."""
    if not roles.variant_columns:
        return _cell(row, roles, Role.CONDITIONS)
    parts: list[str] = []
    for i in roles.columns(Role.CONDITIONS):
        text = " ".join(row[i].split()) if i < len(row) else ""
        if not text:
            continue
        label = roles.labels[i] if i < len(roles.labels) else ""
        if _is_value_cell(text) and _SYMBOL.match(label) and len(label.split()) == 1:
            text = f"{label} = {text}"
        parts.append(text)
    return " ".join(dict.fromkeys(parts))


_TRAILING_BOUND = re.compile(r"\b(max|maximum|min|minimum)\.?\s*$", re.IGNORECASE)


_VariantReadings = tuple[tuple[tuple[str, Limits], ...], list[tuple[int, CellNumber]], str | None]


def _variant_readings(row: Sequence[str], roles: ColumnRoles, by_role: dict[Role, CellNumber], name: str,
                      symbol: str, previous: ModelRow | None) -> _VariantReadings:
    """One reading per variant column holding a number: the header's field (a guaranteed limit is a maximum, a
    minimum when the name or the conditions say so). A Typ column headed by the same temperature joins that
    temperature's reading. Returns the readings, the numbers read and why the fields are unknown, if they are."""
    numbers = [(i, n) for i in roles.variant_columns if i < len(row) and (n := _number(row[i])) is not None]
    if not numbers:
        return (), [], None
    blank = [i for i in roles.variant_columns if i < len(row) and not row[i].strip()]
    if len(numbers) == 1 and len(blank) == len(roles.variant_columns) - 1:
        return (), [], None  # one number in a cell merged over every variant column: the row's one value
    field = roles.variant_field
    cells = [" ".join(row[i].split()) for i in roles.columns(Role.CONDITIONS) if i < len(row)]
    bound = _LEADING_BOUND.match(name) or next((m for c in cells if (m := _TRAILING_BOUND.search(c))), None)
    said = None if bound is None else (Role.MAX if bound.group(1).lower().startswith("max") else Role.MIN)
    if said is None and previous is not None and previous.symbol and previous.symbol == symbol and previous.variants:
        # A name wrapped over the rows of one symbol ("Minimum HIGH Level Input" / "Voltage"): the bound its first
        # row states holds for the rows under it.
        first = previous.variants[0][1]
        said = Role.MIN if first.min is not None and first.max is None else (
            Role.MAX if first.max is not None and first.min is None else None)
    if field in (Role.MAX, None) and said is not None:
        field = said
    if field is None:
        return (), numbers, (f"its value columns are variants ({', '.join(v for v in roles.variants if v)}) "
                             f"whose header does not say whether each holds a typical value or a limit")
    typical = by_role.get(Role.TYP)
    typ_label = next((_compact(roles.labels[i]) for i in roles.columns(Role.TYP) if i < len(roles.labels)), "")
    readings = []
    for i, number in numbers:
        variant = roles.variants[i]
        cells: dict[Role, CellNumber] = {field: number}
        printed = [" ".join(row[i].split())]
        if typical is not None and field is not Role.TYP and _compact(variant) in typ_label:
            cells = {Role.TYP: typical, field: number}
            printed.insert(0, typical.printed)
        limits = _limits(cells, name, printed)
        if number.symmetric and field is Role.MAX and limits is not None:
            # "±1.0" as a guaranteed limit bounds the magnitude: -1.0 to +1.0.
            limits = Limits(-number.value, limits.typical, number.value, True, None, tuple(printed))
        if limits is not None:
            readings.append((variant, limits))
    return tuple(readings), numbers, None


def _group_readings(row: Sequence[str], roles: ColumnRoles, name: str) -> tuple[tuple[str, Limits], ...]:
    """One reading per part whose own Min / Typ / Max columns hold numbers in this row (see ``_part_groups``)."""
    readings = []
    for part in dict.fromkeys(v for v in roles.variants if v):
        cells: dict[Role, CellNumber] = {}
        printed = []
        for i in (i for i, v in enumerate(roles.variants) if v == part and i < len(row)):
            role = roles.roles[i]
            if role is not None and (number := _number(row[i])) is not None:
                cells[role] = number
                printed.append(" ".join(row[i].split()))
        if cells and (limits := _limits(cells, name, printed)) is not None:
            readings.append((part, limits))
    if len({(lim.min, lim.typical, lim.max) for _, lim in readings}) == 1 and len(readings) == len(
            set(filter(None, roles.variants))):
        return ()  # every part prints the same limits: the row's one reading, for all of them
    return tuple(readings)


def _compact(text: str) -> str:
    return re.sub(r"[\s=]+", "", text.replace("−", "-").replace("–", "-")).casefold()


# --- the table ----------------------------------------------------------------------------------------------------

def build_table(rows: Sequence[Sequence[str]], caption: str = "", previous: TableModel | None = None,
                continued: bool = False, footnotes: Mapping[str, str] | None = None) -> TableModel:
    """The model of one table (``rows`` as cell strings, a cell may hold several lines separated by ``\\n``).

    ``previous`` is the table just above on the same page, or (with ``continued``) the part of this table on the
    previous page: its roles label a table that has no header of its own when the layout fits them.
    ``footnotes`` maps a footnote mark ("1") to its text.
    """
    footnotes = footnotes or {}
    filled = [list(r) for r in rows if any(c.strip() for c in r)]
    if not filled:
        return TableModel(ColumnRoles((), RoleSource.NONE), (), caption)
    width = max(len(r) for r in filled)
    filled = [r + [""] * (width - len(r)) for r in filled]
    roles: ColumnRoles | None = None
    spans: list[tuple[ColumnRoles | None, list[tuple[str, list[str]]]]] = [(None, [])]
    section = ""
    sections: list[str] = []
    n = 0
    while n < len(filled):
        row = filled[n]
        group = _group_roles(row, filled[n + 1]) if n + 1 < len(filled) else None
        header = group or _header_roles(row)
        if header is not None:
            source = RoleSource.GROUP_HEADER if group else RoleSource.HEADER
            header_rows = filled[n:n + 2] if group else [row]
            units = tuple(next((u for r in header_rows if (u := _header_unit(r[i])) is not None), None)
                          for i in range(width))
            labels = tuple(" ".join(dict.fromkeys(" ".join(r[i].split()) for r in header_rows if r[i].strip()))
                           for i in range(width))
            merged = tuple(merged_limits(labels[i]) if header[i] is not None else () for i in range(width))
            variants = _variant_columns(labels, header, filled[n + len(header_rows):])
            if variants is not None:
                roles = _variant_roles(header, variants, labels, source, units, merged)
            elif groups := _part_groups(header, labels):
                roles = ColumnRoles(tuple(header), source, units, labels=labels, merged=merged, variants=groups,
                                    variant_kind="part")
            else:
                roles = ColumnRoles(tuple(header), source, units, labels=labels, merged=merged)
            spans.append((roles, []))
            n += 2 if group else 1
            continue
        if _is_section_row(row):
            section = " ".join(row[0].split())
            sections.append(section)
        else:
            spans[-1][1].append((section, row))
        n += 1
    data_rows = [row for _, span in spans for _, row in span]
    first_roles = spans[1][0] if len(spans) > 1 and spans[1][0] is not None else None
    if spans[0][1]:
        # Rows before any header of this table: labelled by the earlier table, else by the layout.
        inherited = None
        if previous is not None and previous.roles.characteristic and not previous.roles.ambiguity:
            inherited = _carry(previous.roles, [r for _, r in spans[0][1]], width,
                               RoleSource.CONTINUED if continued else RoleSource.INHERITED)
        spans[0] = (inherited or first_roles or infer_roles(data_rows, width), spans[0][1])
    model_rows: list[ModelRow] = []
    row_roles: list[ColumnRoles] = []
    for span_roles, span in spans:
        if span_roles is None or not span:
            continue
        if not span_roles.characteristic and span_roles.source in (RoleSource.HEADER, RoleSource.GROUP_HEADER):
            # A header naming no value column ("Parameter | Symbol | Conditions") over values: the layout
            # says where the values are.
            laid_out = infer_roles([r for _, r in span], width)
            if laid_out.characteristic:
                merged = zip(span_roles.roles, laid_out.roles, strict=True)
                span_roles = ColumnRoles(tuple(named or found for named, found in merged),
                                         span_roles.source, span_roles.header_units, laid_out.ambiguity,
                                         span_roles.labels, span_roles.merged)
        parent: _Parent | None = None
        current_section = None
        for section_name, row in span:
            if section_name != current_section:
                parent, current_section = None, section_name
            for sub, line_label in _split_lines(row, span_roles) or [(list(row), "")]:
                model, parent = _model_row(len(model_rows), sub, span_roles, section_name, parent, footnotes,
                                           line_label, model_rows[-1] if model_rows else None)
                model_rows.append(model)
                row_roles.append(span_roles)
    overall = next((r for r, span in spans if r is not None and span), roles or ColumnRoles(
        (None,) * width, RoleSource.NONE))
    return TableModel(overall, tuple(model_rows), caption, tuple(sections), width, tuple(row_roles))
