"""A structural re-read of every grounded value: does the row it came from say what the answer says?

The grounding located each value's own cell (``value_boxes``). Here the row holding that cell is read again with
its table's column roles, taken from the nearest header row above it that names Min / Typ / Max columns
(on the same page, else the last such header of an earlier page: a table continued under a header it printed
once); a header naming one value column ends the search too, since a header further up heads another table.
Then, per reported value:

* a number reported as one field but printed in another field's column (a Max reported as typical);
* a field reported where its own column holds a blank or a dash (the number came from elsewhere);
* a value column holding a number the answer leaves out (the row says Typ 1.5 and Max 10, the answer only
  max 10; a signed ``-15`` is not reported by ``15``; a ``±X`` read as min and max leaves nothing out);
* a unit column that disagrees with the reported unit (another dimension, or a number that is not the
  printed one once both are in one unit);
* a row that names its own limit left of the value (``Min`` and ``Max`` sub-rows of one parameter, its columns
  supply voltages or temperature ranges) while the value was reported as another field, or, in an answer of several
  fields, as its own field while the other sub-row prints the other limit under it and the answer leaves it out;
* a requested condition (``VDD = 5 V``) that the row sets to another value, or that the table's heading sets
  to another value for every row (``VCC = 5V, TA = 25°C``) when the row does not set it itself, or that the
  row prints with other signs only (``MT2(+), G(+)`` for a requested ``MT2(-), G(+)``: another quadrant); a
  condition a terse request gives in its name without a symbol (``... at 5 V``) that the row's one setting of that
  quantity contradicts (``VDD = 3.3 V``).

A row with more words than a short table row has is read only when the value's cell stands apart from its
neighbours (long test conditions); otherwise it is taken for a line of prose. Each is a ``field_mismatch``
finding with the row's boxes as evidence. Where the header cannot be found or a
cell cannot be placed in one column without doubt, nothing is said.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from app.detectors import plausibility
from app.detectors.grounding import GroundingResult
from app.detectors.page_text import NUMBER_REL_TOL, TextNumber, normalised, number_occurs, numbers_in
from app.detectors.row_alignment import Row, is_identifier, tokens, visual_rows
from app.detectors.rules import (
    Context,
    Rule,
    Verdict,
    clean,
    flag,
    not_evaluable,
    submit_span_ids,
    unreadable_on_document,
)
from app.detectors.severity import Severity
from app.detectors.value_rows import CONDITION, ValueCell, best_cell, located_cells, row_sets, value_cell
from app.documents.index import DatasheetIndex, Word

_ROLE_WORDS = {"min": "min", "minimum": "min", "typ": "typical", "typical": "typical", "nom": "typical",
               "nominal": "typical", "max": "max", "maximum": "max", "unit": "unit", "units": "unit"}
_VALUE_ROLES = ("min", "typical", "max")
# Limit words a sub-row prints as its own cell ("Output pulse width | Min | 0.9 | 0.86 | ms").
_SUB_ROW_ROLES = {"min", "typ", "max"}
# Other words column headers are made of. A header without Min/Typ/Max columns still ends the search for one
# further up, which would head another table.
_HEADER_WORDS = {"parameter", "parameters", "symbol", "conditions", "condition", "test", "description", "rating",
                 "ratings", "characteristic", "characteristics", "device", "value", "values", "notes", "note"}
_DASHES = {"-", "–", "—", "‒", "―", "−", "--", "n/a", "na"}
# A cell is placed in a column when its centre is this much closer to that column's centre than to any other.
_PLACEMENT_MARGIN = 0.35
MIN_HEADER_SHARE = 0.35
MAX_ROW_WORDS = 16
MIN_COLUMN_GAP = 6.0
# A parameter's ``Min`` and ``Max`` sub-rows stand within this many line heights of each other.
SUB_ROW_LINES = 1.8
# A second header line (``Typ`` under ``Guaranteed limits``) stands within this many line heights of the first.
HEADER_LINES = 1.6
# A table's heading: at most this many lines of text just above its header row, this close to each other.
MAX_HEADING_ROWS = 3
MAX_HEADING_GAP_LINES = 3.0  # points; a space in body text is about a quarter of the font size
# A cell that is a number: optional sign or ±, digits, optional unit glued on ("12", "-0.3", "±6", "2.7V").
_NUMBER_CELL = re.compile(r"^(?:\+/-|\+/−|[±+\-−–])?\s?(?:\d|[.,]\d)")
_SIGN = re.compile(r"[+\-±]")
# A condition a terse request gives in its name without a symbol: ``at 5 V`` closing the name or a clause of it.
_NAME_SETTING = re.compile(r"(?:\bat|@)\s*([+\-−]?\d+(?:[.,]\d+)?)\s*([A-Za-zµμΩ]+)(?=\s*(?:$|[,;)]|and\b))")
# Digits continuing a number after a space, with the unit glued on (``1 20Hz``): one number split in two.
_SPLIT_DIGITS = re.compile(r"\s*(\d+)([A-Za-zµμΩ°%/]*)")


@dataclass
class Header:
    page: int
    text: str
    centres: dict[str, float]  # role -> x centre of its header word
    y: float = 0.0  # the header row's vertical centre on its page
    # x centres of the header's other column labels (Symbol, Conditions, Figure, VCC, ...): a cell nearest one of
    # them is in that column, not in a value column it happens to stand closer to than to the others.
    others: list[float] = dataclasses.field(default_factory=list)


@dataclass
class Mismatch:
    kind: str  # wrong_column | dash_cell | omitted_field | row_role | unit_column | condition
    value_index: int
    message: str
    detail: dict[str, Any]


def _centre(word: Word) -> float:
    return (word.x0 + word.x1) / 2


def header_of(row: Row) -> dict[str, float]:
    """The x centre of each column a header row names (empty when two groups of Min/Typ/Max stand side by side,
    for two units: which group a cell is in would be a guess)."""
    centres: dict[str, float] = {}
    for word in row.words:
        role = _ROLE_WORDS.get(word.text.strip(".:()[]").casefold())
        if role in centres:
            return {}
        if role:
            centres[role] = _centre(word)
    return centres


def is_header(row: Row) -> bool:
    """A row that names columns: mostly header words, two of them at least (prose that says "minimum ...
    maximum" is not one)."""
    words = [w.text.strip(".:()[]").casefold() for w in row.words]
    named = sum(1 for w in words if w in _ROLE_WORDS or w in _HEADER_WORDS)
    if named < 2 or named < MIN_HEADER_SHARE * len(words):
        return False
    # Column headers stand apart; header words run together with single spaces are a line of text, and the
    # cells below them are not placed in columns by their x positions.
    gaps = sorted(b.x0 - a.x1 for a, b in zip(row.words, row.words[1:], strict=False))
    return bool(gaps) and gaps[len(gaps) // 2] >= MIN_COLUMN_GAP


def other_columns(row: Row) -> list[float]:
    """The x centres of a header row's words that label no value or unit column."""
    return [_centre(w) for w in row.words if w.text.strip(".:()[]").casefold() not in _ROLE_WORDS]


def is_column_labels(row: Row) -> bool:
    """A row of another table's column labels (``THERMAL METRIC  DCY  KCS  UNIT``): set apart in columns, naming
    one header word at least but no Min / Typ / Max (a second header line names them), printing no figure. A
    header further up heads another table than the row below."""
    words = [w.text.strip(".:()[]").casefold() for w in row.words]
    return is_tabular(row) and any(w in _ROLE_WORDS or w in _HEADER_WORDS for w in words) \
        and not any(_ROLE_WORDS.get(w) in _VALUE_ROLES for w in words) and not any(plain_number(w) for w in row.words)


def _header(page: int, row: Row, rows: list[Row]) -> Header:
    """``row`` read as a header, with the roles a second header line adds: a table prints ``Typ`` or ``Unit``
    on the line just below or above the one naming its other columns (under a spanning ``Values`` label)."""
    centres, others = header_of(row), other_columns(row)
    if centres:
        labelled = [w for w in row.words if w.text.strip(".:()[]").casefold() in _ROLE_WORDS]
        for line in rows:
            if line is row or abs(line.y - row.y) > HEADER_LINES * row.height \
                    or any(plain_number(w) for w in line.words):
                continue
            for role, x in header_of(line).items():
                centres.setdefault(role, x)
            # Its other labels are columns too, unless they span the first line's roles (``Values`` over Min,
            # Typ and Max).
            others += [_centre(w) for w in line.words if w.text.strip(".:()[]").casefold() not in _ROLE_WORDS
                       and not any(w.x0 < r.x1 and r.x0 < w.x1 for r in labelled)]
    return Header(page, row.text, centres, row.y, others)


def header_for(index: DatasheetIndex, page_number: int, row_y: float) -> Header | None:
    """The nearest header row above ``row_y`` on the page, else the last header row of an earlier page; ``None``
    when another table's column labels come first."""
    for number in range(page_number, max(0, page_number - 3), -1):
        rows = visual_rows(index, index.page(number))
        above = [r for r in rows if r.y < row_y] if number == page_number else rows
        for row in reversed(above):
            if is_header(row):
                return _header(number, row, rows)
            if is_column_labels(row):
                return None
    return None


def heading_rows(index: DatasheetIndex, header: Header) -> list[Row]:
    """The lines of text just above a table's header row: its caption and the conditions it sets for every row
    (``VCC = 5V, TA = 25°C``). Rows with column gaps, or printing a figure or a dash in a cell of its own, belong
    to a table above and end the heading (a row of long names and conditions has mostly narrow gaps)."""
    rows = [r for r in visual_rows(index, index.page(header.page)) if r.y < header.y]
    heading: list[Row] = []
    below = header.y
    for row in reversed(rows[-MAX_HEADING_ROWS:]):
        if below - row.y > MAX_HEADING_GAP_LINES * row.height or is_tabular(row) or _prints_cell(row):
            break
        heading.insert(0, row)
        below = row.y
    return heading


def table_heading(index: DatasheetIndex, header: Header) -> str:
    """The text of a table's heading (``heading_rows``)."""
    return " ".join(row.text for row in heading_rows(index, header))


def heading_over(rows: list[Row], x: float, requested: list[str] | None = None) -> str:
    """A table's heading as it bears on a cell centred at ``x``. A heading that sets one symbol several times
    (``TA = 25°C  TA = −40 to 85°C  TA = −55 to 125°C`` over columns of limits) sets it per column: the cell's
    column takes the setting printed over it, the one whose words span ``x`` or stand clearly nearest to it;
    where none does, the heading says nothing of that symbol for the cell. Nor does it for a ``requested``
    setting it prints itself: the figure may stand in several columns, and the cell located is one of them."""
    asked = {(m.group(1).casefold(), _figures(m.string[m.start():])) for c in requested or []
             for m in CONDITION.finditer(c)}
    spans: list[tuple[str, str, float, float, float]] = []  # symbol, text, x0, x1, centre
    plain: list[str] = []
    for row in rows:
        starts, at = [], 0
        for word in row.words:
            starts.append(at)
            at += len(word.text) + 1
        found = list(CONDITION.finditer(row.text))
        kept, last = [], 0
        for i, match in enumerate(found):
            end = found[i + 1].start() if i + 1 < len(found) else len(row.text)
            words = [w for w, s in zip(row.words, starts, strict=True) if match.start() <= s < end]
            if not words:
                continue
            x0, x1 = min(w.x0 for w in words), max(w.x1 for w in words)
            spans.append((match.group(1).casefold(), row.text[match.start():end], x0, x1, (x0 + x1) / 2))
            kept.append(row.text[last:match.start()])
            last = end
        plain.append("".join(kept) + row.text[last:])
    by_symbol: dict[str, list[tuple[str, str, float, float, float]]] = {}
    for span in spans:
        by_symbol.setdefault(span[0], []).append(span)
    settings = []
    for symbol, group in by_symbol.items():
        if len(group) == 1:
            settings.append(group[0][1])
            continue
        if any((symbol, _figures(text)) in asked for _, text, *_ in group):
            continue
        over = [s for s in group if s[2] <= x <= s[3]]
        if len(over) == 1:
            settings.append(over[0][1])
            continue
        (nearest, text), (second, _) = sorted((abs(s[4] - x), s[1]) for s in group)[:2]
        if nearest <= _PLACEMENT_MARGIN * (nearest + second):
            settings.append(text)
    return " ".join([*plain, *settings])


def _figures(setting: str) -> tuple[float, ...]:
    """The figures a ``SYMBOL = ...`` setting prints up to its next setting (``−40`` and ``85`` of ``TA = −40 to
    85°C``)."""
    following = CONDITION.search(setting, 1)
    text = setting[:following.start()] if following else setting
    return tuple(v for n in numbers_in(text.split("=", 1)[-1]) for v in n.values)


def _prints_cell(row: Row) -> bool:
    """Whether a row prints a figure or a dash standing apart from its neighbours, as a table cell does."""
    return any((plain_number(w) is not None or w.text.strip() in _DASHES)
               and stands_apart(row, [w.x0, w.y0, w.x1, w.y1]) for w in row.words)


def is_tabular(row: Row) -> bool:
    gaps = sorted(b.x0 - a.x1 for a, b in zip(row.words, row.words[1:], strict=False))
    return bool(gaps) and gaps[len(gaps) // 2] >= MIN_COLUMN_GAP


def _role_of(word: Word, header: Header) -> str | None:
    """The column a cell sits in, when its centre is clearly nearest one header word (``None`` too when that is
    a column without a role: a figure number under ``Figure`` is no Min)."""
    distances = sorted([(abs(_centre(word) - x), role) for role, x in header.centres.items()]
                       + [(abs(_centre(word) - x), "") for x in header.others])
    if len(header.centres) < 2 or len(distances) < 2:
        return None
    (nearest, role), (second, _) = distances[0], distances[1]
    return role or None if nearest <= _PLACEMENT_MARGIN * (nearest + second) else None


def placed_cells(row: Row, header: Header) -> dict[str, list[Word]]:
    """The row's words by the column each is placed in (words between columns are left out)."""
    cells: dict[str, list[Word]] = {}
    for word in row.words:
        role = _role_of(word, header)
        if role:
            cells.setdefault(role, []).append(word)
    return cells


def grounded_row(index: DatasheetIndex, grounding: GroundingResult, request: dict[str, Any] | None = None,
                 value: dict[str, Any] | None = None) -> Row | None:
    """The row that prints a value grounded on a page of the intended datasheet (with ``request`` and ``value``,
    the located row that fits them best); ``None`` when the value was not located there (not grounded, no
    boxes)."""
    cell = value_cell(index, grounding, request, value)
    return cell.row if cell is not None else None


def _row_box(row: Row) -> list[float]:
    return [round(min(w.x0 for w in row.words), 2), round(min(w.y0 for w in row.words), 2),
            round(max(w.x1 for w in row.words), 2), round(max(w.y1 for w in row.words), 2)]


def _matches(number: float, unit: str | None, word: Word, context_units: list[str]) -> bool:

    printed = numbers_in(word.text)
    candidates = list(printed) + [TextNumber(p.values, p.plus_minus, u) for p in printed if not p.unit
                                  for u in context_units]
    return any(number_occurs(number, unit, [c]) for c in candidates)


def _conditions_contradicted(requested: list[str], row_text: str, heading: str = "",
                             located: str = "", cell: ValueCell | None = None) -> list[dict[str, Any]]:
    """Requested ``SYMBOL = value unit`` conditions the row sets to another value of the same quantity. The
    table's heading sets a default for every row (``unless otherwise specified``): the row's own conditions, on
    its line or in the text the value was located in (a condition cell wrapping onto the next line), or printed
    as a cell of its own (a ``3.3V`` under a ``VCC`` column), come first."""
    out = []
    own = {m.group(1).casefold() for text in (located, row_text) for m in CONDITION.finditer(text)}
    printed = {m.group(1).casefold(): m for m in CONDITION.finditer(heading) if m.group(1).casefold() not in own}
    printed.update({m.group(1).casefold(): m for m in CONDITION.finditer(row_text)})
    for condition in requested:
        for wanted in CONDITION.finditer(condition):
            found = printed.get(wanted.group(1).casefold())
            if found is None or (cell is not None and row_sets(cell.row, wanted, cell.word.x0) is True):
                continue
            want = float(wanted.group(2).replace(",", ".").replace("−", "-"))
            readings = [(float(found.group(2).replace(",", ".").replace("−", "-")), found.group(3) or None)]
            # A text layer may split a number's digits with a space (``fRIPPLE =1 20Hz``): read joined too.
            split = _SPLIT_DIGITS.match(found.string, found.end())
            if split and not found.group(3):
                readings.append((float(found.group(2).replace(",", ".").replace("−", "-") + split.group(1)),
                                 split.group(2) or None))
            unit_w = wanted.group(3) or None
            agreed = False
            for have, unit_h in readings:
                converted = plausibility.convert(have, unit_h, unit_w) if unit_w and unit_h else have
                agreed = agreed or converted is None or plausibility.close(converted, want, 1e-6)
            if not agreed:
                out.append({"requested": condition, "row_sets": found.group(0)})
    return out


def _name_settings_contradicted(name: str, row_text: str, heading: str = "", located: str = "",
                                cell: ValueCell | None = None) -> list[dict[str, Any]]:
    """Conditions a terse request gives in its name without a symbol (``Supply current at 5 V, powered up``) that
    the row sets otherwise. The row's settings of that quantity come first, then a cell of its own left of the
    value (a ``3.3V`` under a ``VCC`` column), then the table's heading: where the first of them that says
    anything sets one symbol or cell of the quantity, to another value, the value is for another condition. A row
    setting several (an input and an output voltage) leaves open which one the name meant."""
    out = []
    own = [(m.group(1), _setting_number(m.group(2)), m.group(3) or None)
           for text in (located, row_text) for m in CONDITION.finditer(text)]
    cells = [(f"cell{i}", v, n.unit) for i, w in enumerate(cell.row.words if cell is not None else [])
             if w.x1 <= cell.word.x0 and (n := plain_number(w)) is not None and n.unit for v in n.values]
    heading_settings = [(m.group(1), _setting_number(m.group(2)), m.group(3) or None)
                        for m in CONDITION.finditer(heading)]
    for wanted in _NAME_SETTING.finditer(name):
        unit = wanted.group(2)
        if plausibility.parse_unit(unit) is None or plausibility.compatible(unit, "degC") is not False:
            continue
        want = _setting_number(wanted.group(1))
        for source in (own, cells, heading_settings):
            same = [(symbol, have, have_unit) for symbol, have, have_unit in source
                    if have_unit and plausibility.compatible(have_unit, unit) is True]
            if not same:
                continue
            agreed = any((converted := plausibility.convert(have, have_unit, unit)) is not None
                         and plausibility.close(converted, want, 1e-6) for _, have, have_unit in same)
            if not agreed and len({symbol.casefold() for symbol, _, _ in same}) == 1:
                symbol, have, have_unit = same[0]
                printed = f"{have:g} {have_unit}" if symbol.startswith("cell") else f"{symbol} = {have:g} {have_unit}"
                out.append({"requested": wanted.group(0), "row_sets": printed})
            break
    return out


def _setting_number(text: str) -> float:
    return float(text.replace(",", ".").replace("−", "-"))


def _polarity_contradicted(requested: list[str], row_text: str) -> list[dict[str, Any]]:
    """Requested conditions the row prints with other signs only (``MT2(-), G(+)`` where the row is for
    ``MT2(+), G(+)``): a quadrant or polarity of the same conditions, not the one asked for."""
    row = normalised(row_text)
    out = []
    for condition in requested:
        wanted = normalised(condition)
        if not _SIGN.search(wanted) or wanted in row:
            continue
        pattern = "".join("[+\\-±]" if _SIGN.fullmatch(ch) else re.escape(ch) for ch in wanted)
        found = re.search(pattern, row)
        if found:
            out.append({"requested": condition, "row_sets": found.group(0)})
    return out


def _in_boxes(word: Word, boxes: list[list[float]]) -> bool:
    return any(b[0] - 1 <= word.x0 and word.x1 <= b[2] + 1 and b[1] - 1 <= word.y0 and word.y1 <= b[3] + 1
               for b in boxes)


def stands_apart(row: Row, box: list[float]) -> bool:
    """Whether the value's cell stands apart from its neighbours on the row, as a table cell does: a long row
    (a parameter with long test conditions) is still a table row when its value sits in a column of its own."""
    positions = [i for i, w in enumerate(row.words) if _in_boxes(w, [box])]
    if not positions:
        return False
    first, last = row.words[positions[0]], row.words[positions[-1]]
    before = row.words[positions[0] - 1] if positions[0] > 0 else None
    after = row.words[positions[-1] + 1] if positions[-1] + 1 < len(row.words) else None
    return (before is None or first.x0 - before.x1 >= MIN_COLUMN_GAP) \
        and (after is None or after.x0 - last.x1 >= MIN_COLUMN_GAP)


def plain_number(word: Word) -> TextNumber | None:
    """The one number a value cell prints, when the cell is a number (with its unit) and nothing else: not a
    dash, a footnote mark (``[1]``, ``(2)``), an identifier or an expression (``VDD+0.7V``)."""
    text = word.text.strip()
    if is_identifier(text) or text.casefold() in _DASHES or not _NUMBER_CELL.match(text):
        return None
    printed = numbers_in(text)
    return printed[0] if len(printed) == 1 else None


def reports(number: float, unit: str | None, cell: TextNumber, context_units: list[str]) -> bool:
    """Whether a reported ``number`` is the one ``cell`` prints, sign included (``-15`` is not ``+15``)."""
    units = [cell.unit] if cell.unit else [*context_units, None]
    for cell_unit in units:
        converted = number if not (unit and cell_unit) else plausibility.convert(number, unit, cell_unit)
        if converted is not None and any(plausibility.close(converted, v, NUMBER_REL_TOL) for v in cell.values):
            return True
    return False


def _unnamed_value_column(row: Row, header: Header, shown: dict[str, float], unit: str | None,
                          cells: dict[str, list[Word]], context_units: list[str]) -> bool:
    """Whether the answer was read from a value column the header does not name (a limit per temperature range
    beside a ``Typ`` column, under a spanning ``Guaranteed limits``): no reported number stands in a Min / Typ /
    Max column, but one stands right of where the value columns begin."""

    def prints_reported(word: Word) -> bool:
        number = plain_number(word)
        return number is not None and any(reports(n, unit, number, context_units) for n in shown.values())

    if any(prints_reported(w) for role in _VALUE_ROLES for w in cells.get(role, [])):
        return False
    first = min((x for role, x in header.centres.items() if role in _VALUE_ROLES), default=None)
    if first is None:
        return False
    left = max((x for x in [*header.centres.values(), *header.others] if x < first), default=None)
    start = first - (first - left) / 2 if left is not None else first
    return any(_centre(w) >= start and prints_reported(w) for w in row.words)


def _omitted_fields(value_index: int, shown: dict[str, float], unit: str | None, cells: dict[str, list[Word]],
                    context_units: list[str]) -> list[Mismatch]:
    """Value columns of the row that print a number the answer leaves out (the row says Typ 1.5 and Max 10, the
    answer only max 10): a row's limits are read together, so a partial answer states another specification.
    The cell the value was located on, a cell printing a number the answer already reports, and a ``±X`` cell
    when the answer reports min and max (its reading) are not left out."""
    if not shown:
        return []
    out = []
    for role in _VALUE_ROLES:
        if role in shown:
            continue
        for word in cells.get(role, []):
            number = plain_number(word)
            if number is None or (number.plus_minus and ("min" in shown or "max" in shown)) \
                    or any(reports(n, unit, number, context_units) for n in shown.values()):
                continue
            out.append(Mismatch("omitted_field", value_index,
                                f"the row prints {word.text} in its {role} column, but the answer has no {role}",
                                {"field": role, "cell": word.text}))
            break
    return out


def _row_role(row: Row, box: list[float]) -> str | None:
    """The limit a row names for itself in a cell left of the value (``Min`` / ``Typ`` / ``Max`` sub-rows of one
    parameter, whose columns are supply voltages or temperature ranges); ``None`` when it names none or several.
    Only the short cell words count: ``Maximum`` opens parameter names (``Maximum output current``)."""
    roles = {_ROLE_WORDS[text] for w in row.words if w.x1 <= box[0] + 1
             and (text := w.text.strip(".:()[]").casefold()) in _SUB_ROW_ROLES}
    return roles.pop() if len(roles) == 1 else None


def _sibling_limit(index: DatasheetIndex, page: int, value_index: int, field: str, cell: ValueCell,
                   shown: dict[str, float], unit: str | None) -> list[Mismatch]:
    """The other limit of a parameter printed as ``Min`` and ``Max`` sub-rows: an answer of several fields whose min
    was read from the ``Min`` sub-row while the ``Max`` sub-row next to it prints a figure under it (or the
    reverse) that the answer leaves out. The parameter's limits are read together, as a row's columns are."""
    other = {"min": "max", "max": "min"}.get(field)
    if other is None or other in shown or len(shown) < 2:
        return []  # one limit alone is an answer about that limit
    # The word printing the reported limit on its sub-row (the located cell may be another field's).
    holder = next((w for w in cell.row.words if (printed := plain_number(w)) is not None
                   and reports(shown[field], unit, printed, [])), None)
    rows = visual_rows(index, index.page(page))
    position = rows.index(cell.row) if cell.row in rows else -1
    if holder is None or position < 0:
        return []
    for neighbour in rows[max(0, position - 1):position] + rows[position + 1:position + 2]:
        if abs(neighbour.y - cell.row.y) > SUB_ROW_LINES * cell.row.height \
                or _row_role(neighbour, [holder.x0, holder.y0, holder.x1, holder.y1]) != other:
            continue
        under = next((w for w in neighbour.words if w.x0 < holder.x1 and holder.x0 < w.x1
                      and plain_number(w) is not None), None)
        if under is not None:
            return [Mismatch("omitted_field", value_index, f"the parameter's {other} sub-row prints {under.text} "
                             f"under the reported {field}, but the answer has no {other}",
                             {"field": other, "cell": under.text})]
    return []


def _field_cell(cells: list[ValueCell], primary: ValueCell, number: float, unit: str | None,
                request: dict[str, Any], value: dict[str, Any]) -> ValueCell:
    """The cell a reported field was read from: on the value's row when that row prints its number, else the
    best-fitting located cell that prints it (``Min`` and ``Max`` sub-rows of one parameter each print their own
    limit), else the value's own cell."""
    printing = [c for c in cells if len(numbers_in(c.word.text)) == 1 and _matches(number, unit, c.word, [])]
    if not printing or any(c.row is primary.row for c in printing):
        return primary
    return best_cell(printing, request, value) or primary


def _column_mismatches(value_index: int, field: str, number: float, unit: str | None, row: Row,
                       header: Header) -> list[Mismatch]:
    """A field printed in another value column of its row, or reported where its own column is empty."""
    cells = placed_cells(row, header)
    # Bare numbers are read in the unit column's unit only: another unit on the row belongs to another cell.
    context_units = [w.text for w in cells.get("unit", []) if plausibility.parse_unit(w.text) is not None][:1]
    # A cell printing a whole range ("580ns~1µs") belongs to no single field.
    holders = [w for w in row.words if not is_identifier(w.text) and len(numbers_in(w.text)) == 1
               and _matches(number, unit, w, context_units)]
    placed = {_role_of(w, header) for w in holders} - {None}
    # A printed ±X is a range whatever its column: min -X / max X (or max X) is a faithful reading of it, the ±
    # glued to the number or printed as a word of its own before it (``±  100``).
    plus_minus = any(n.plus_minus for w in holders for n in numbers_in(w.text)) \
        or any(_signed_apart(row, w) for w in holders)
    plus_minus = plus_minus and field in ("min", "max")
    out = []
    if placed and field not in placed and placed <= set(_VALUE_ROLES) and not plus_minus:
        column = sorted(placed)[0]
        out.append(Mismatch("wrong_column", value_index,
                            f"{number:g} is printed in the {column} column but was reported as {field}",
                            {"field": field, "column": column, "number": number}))
    own = cells.get(field)
    if own and all(w.text.strip().casefold() in _DASHES for w in own) and field not in placed and not plus_minus:
        out.append(Mismatch("dash_cell", value_index,
                            f"the row's {field} cell is empty (“{own[0].text}”) but {field} {number:g} "
                            "was reported", {"field": field, "cell": own[0].text}))
    return out


_PLUS_MINUS_WORDS = {"±", "+/-", "+/−", "+-"}


def _signed_apart(row: Row, word: Word) -> bool:
    """Whether a number's cell is preceded by a ``±`` printed as a word of its own."""
    position = row.words.index(word)
    return position > 0 and row.words[position - 1].text.strip() in _PLUS_MINUS_WORDS


def reread(index: DatasheetIndex, value_index: int, value: dict[str, Any], grounding: GroundingResult,
           request: dict[str, Any]) -> tuple[list[Mismatch], dict[str, Any]] | None:
    """The mismatches between one value and its row, and the row's evidence; ``None`` when the row or its
    header cannot be read. The row is the located one that fits the request best (``value_rows``); each field
    is read on the row that prints its number."""
    located = located_cells(index, grounding)
    primary = best_cell(located, request, value)
    if primary is None or (len(primary.row.words) > MAX_ROW_WORDS and not stands_apart(primary.row, primary.box)):
        return None  # a line of prose, not a table row
    row = primary.row
    header = header_for(index, grounding.page, row.y)
    lines = heading_rows(index, header) if header else []
    heading = " ".join(line.text for line in lines)
    over_cell = heading_over(lines, _centre(primary.word), list(request.get("conditions") or []))
    evidence = {"page": grounding.page, "row_box": _row_box(row), "row_text": row.text,
                "header": header.text if header else None, "header_page": header.page if header else None,
                "heading": heading or None}
    mismatches: list[Mismatch] = []
    conditions = _conditions_contradicted(list(request.get("conditions") or []), row.text, over_cell,
                                          str(grounding.detail.get("located_text") or ""), primary)
    conditions += _polarity_contradicted(list(request.get("conditions") or []), row.text)
    conditions += _name_settings_contradicted(str(request.get("name") or ""), row.text, over_cell,
                                              str(grounding.detail.get("located_text") or ""), primary)
    for item in conditions:
        mismatches.append(Mismatch("condition", value_index, f"the request sets {item['requested']}, but the row "
                                   f"it came from is for {item['row_sets']}", item))
    shown = plausibility.numbers_of(value)
    unit = value.get("unit")
    for field, number in shown.items():
        cell = _field_cell(located, primary, number, unit, request, value)
        field_header = header if cell.row is row else header_for(index, grounding.page, cell.row.y)
        placed = _role_of(cell.word, field_header) if field_header else None
        own_role = _row_role(cell.row, cell.box)
        # A cell under a Typ column of its own is no limit of the sub-row it stands on.
        if own_role and field != own_role and placed not in _VALUE_ROLES:
            mismatches.append(Mismatch("row_role", value_index, f"the row is the parameter's {own_role} sub-row, "
                                       f"but the value was reported as {field}", {"field": field, "row": own_role}))
        if field_header is not None:
            mismatches.extend(_column_mismatches(value_index, field, number, unit, cell.row, field_header))
        if own_role == field:
            mismatches.extend(_sibling_limit(index, grounding.page, value_index, field, cell, shown, unit))
    if header is None:
        return mismatches, evidence
    cells = placed_cells(row, header)
    context_units = [w.text for w in cells.get("unit", []) if plausibility.parse_unit(w.text) is not None][:1]
    if not _unnamed_value_column(row, header, shown, unit, cells, context_units):
        mismatches.extend(_omitted_fields(value_index, shown, unit, cells, context_units))
    # A condition's symbol standing near the unit column (``TJ = 125°C``, the row's unit in a cell merged over
    # its neighbours) is no unit cell.
    unit_cells = [w.text for w in cells.get("unit", []) if tokens(w.text) and not _opens_condition(row, w)]
    if unit and unit_cells:
        printed_unit = unit_cells[0]
        if plausibility.compatible(_temperature_letter(unit, printed_unit), printed_unit) is False:
            mismatches.append(Mismatch("unit_column", value_index,
                                       f"the unit column says {printed_unit}, but the answer is in {unit}",
                                       {"unit": unit, "unit_column": printed_unit}))
    return mismatches, evidence


def _opens_condition(row: Row, word: Word) -> bool:
    position = row.words.index(word)
    after = row.words[position + 1].text if position + 1 < len(row.words) else ""
    return "=" in word.text or after.startswith("=")


def _temperature_letter(unit: str, printed_unit: str) -> str:
    """A bare ``C`` or ``F`` reported where the page prints a temperature unit is that temperature, not coulombs
    or farads."""
    letter = unit.strip()
    if letter in ("C", "F") and plausibility.compatible(printed_unit, "degC"):
        return f"deg{letter}"
    return unit


def _field_mismatch(rule: Rule, ctx: Context) -> Verdict:
    if (unreadable := unreadable_on_document(rule, ctx)) is not None:
        return unreadable
    mismatches: list[Mismatch] = []
    rows: list[dict[str, Any]] = []
    read = False
    for grounding in ctx.groundings:
        if grounding.value_index >= len(ctx.submission.values):
            continue
        result = reread(ctx.document, grounding.value_index, ctx.submission.values[grounding.value_index],
                        grounding, dict(ctx.request))
        if result is None:
            continue
        read = True
        found, evidence = result
        if found:
            mismatches.extend(found)
            rows.append({"value_index": grounding.value_index, **evidence})
    if not read:
        return not_evaluable(rule, "no reported value could be placed on a table row")
    if not mismatches:
        return clean(rule)
    sentence = "; ".join(f"value {m.value_index + 1}: {m.message}" for m in mismatches)
    return flag(rule, rule.finding(ctx, f"The row the value came from says otherwise: {sentence}.", {
        "span_ids": submit_span_ids(ctx),
        "mismatches": [{"kind": m.kind, "value_index": m.value_index, **m.detail} for m in mismatches],
        "rows": rows,
    }))


STRUCTURAL_RULES: tuple[Rule, ...] = (
    Rule("field_mismatch", "8", Severity.warning,
         "The value's table row, read with its column roles, contradicts the reported field, unit or condition.",
         _field_mismatch),
)
