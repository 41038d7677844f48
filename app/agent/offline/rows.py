"""Tables as the table tool returns them (Markdown), turned into candidate readings.

Two shapes of table carry values in datasheets:

* characteristic tables with role columns (Parameter / Symbol / Conditions / Min / Typ / Max / Unit, or a
  single Value / Ratings column), read through the typed table model (``app.documents.table_model``): one
  candidate per row or sub-row, its fields assigned from the column roles alone, its unit from the unit column;
  a row whose roles the layout leaves open becomes a candidate that carries the reason instead of values;
* matrix tables (models down, quantities across, or 12 V / 24 V variants across): one candidate per numeric
  cell, labelled by its row and its column header.
* characteristic tables whose value columns are variants (parts or temperatures heading them): one candidate per
  variant, labelled by the row and its variant; a part is the candidate's grade (a request naming another part
  never reads it, a request naming none reads a row candidate that declines naming the parts), and the 25 °C
  column answers a request naming no temperature.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from app.agent.offline.candidates import (
    ABS_MAX_TITLE,
    NUMERIC_ROLES,
    SECTION_TITLE,
    Candidate,
    from_reading,
    is_section_title,
    limit_in_parentheses,
    limit_leading,
    rated_as_maximum,
)
from app.agent.offline.limit_words import labelled_limits
from app.agent.offline.model_units import modelled_unit, reader_unit
from app.agent.offline.room_and_range import join_room_and_full_range
from app.agent.offline.values import Reading, latin_lookalikes, parse_number, read_values
from app.documents.cell_values import read_cell
from app.documents.table_model import (
    LIMIT_ROLES,
    ColumnRoles,
    ModelRow,
    Role,
    TableModel,
    build_table,
    header_role,
    split_footnote_marks,
)
from app.units import Unit, parse_unit

# --- Markdown tables ---------------------------------------------------------------------------------------

@dataclass
class Table:
    page: int
    rows: list[list[str]]
    title: str = ""
    caption: str = ""  # the text the table tool found above the table ("Absolute Maximum Ratings at TA=25°C")
    continued: bool = False  # the table tool says it continues a table from the previous page


# Letterlike symbols some fonts print for units: the ohm sign (U+2126) is the Greek Omega units are spelled with,
# the Kelvin sign (U+212A) a K.
_LETTERLIKE_UNITS = str.maketrans({"\u2126": "\u03a9", "\u212a": "K"})


def _clean_cell(cell: str) -> str:
    text = latin_lookalikes(cell).translate(_LETTERLIKE_UNITS)
    text = text.replace("<br>", "\n").replace("<br/>", "\n").replace("\\|", "|")
    text = re.sub(r"\*\*|__|(?<![A-Za-z0-9])_(?=\S)|(?<=\S)_(?![A-Za-z0-9])", "", text)
    text = re.sub(r"^Col\d+$", "", text.strip())
    text = re.sub(r"(\d) \.(\d)", r"\1.\2", text)  # "2 .7V": a text-layer split inside a number
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def parse_markdown_tables(markdown: str, page: int) -> list[Table]:
    """Pipe tables in ``markdown`` (GitHub style, ``<br>`` line breaks inside cells)."""
    tables: list[Table] = []
    current: list[list[str]] = []
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("|") and line.endswith("|") and len(line) > 1:
            cells = re.split(r"(?<!\\)\|", line[1:-1])
            if all(re.fullmatch(r"\s*:?-{2,}:?\s*", c) for c in cells if c.strip()) and any(cells):
                continue
            current.append([_clean_cell(c) for c in cells])
        elif current:
            tables.append(Table(page, current))
            current = []
    if current:
        tables.append(Table(page, current))
    return tables


def _cell_role(text: str) -> str | None:
    role = header_role(text)
    return None if role is None else ("conditions" if role is Role.NOTES else role.value)


def _is_number_cell(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and all(parse_number(line.strip().lstrip("<>≤≥~")) is not None for line in lines)


def _is_header_row(row: list[str]) -> bool:
    return not any(_is_number_cell(c) for c in row) and sum(1 for c in row if c) >= 1


def _unit_from_header(text: str) -> tuple[Unit | None, str | None]:
    for inner in re.findall(r"\(([^()]*)\)", text):
        for part in re.split(r"[\s,]+", inner):
            unit = parse_unit(part)
            if unit is not None:
                return unit, part
        unit = parse_unit(inner)
        if unit is not None:
            return unit, inner
    return None, None


_LEADING_UNIT = re.compile(r"^\s*([^\s\d,;=][^\s,;=]{0,9})\s+\S")


def _unit_leading_conditions(conditions: str) -> tuple[Unit | None, str | None]:
    """"mV/°C VCE = VGE, IC = 1 mA" in the conditions cell of a row whose unit cell is empty: the text layer ran
    the unit into the next column, so the leading unit token is the row's unit."""
    match = _LEADING_UNIT.match(conditions)
    if match is None or "=" not in conditions[match.end(1):]:
        return None, None
    unit = parse_unit(match.group(1)) or modelled_unit(match.group(1))  # not "VCE = VGE": a quantity
    return (unit, match.group(1)) if unit is not None else (None, None)


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


_INNER_MARK = re.compile(r"(?<=[a-z])\s?\((\d{1,2})\)")
TYPICAL_NOTE = re.compile(r"\b(?:are|is)\s+typical\s+values?\b|\btypical\s+values?\s+only\b", re.IGNORECASE)


def table_candidates(table: Table, abs_max_hint: bool = False, previous: TableModel | None = None,
                     footnotes: Mapping[str, str] | None = None) -> tuple[list[Candidate], TableModel]:
    """Candidates of one table and its model. A characteristics table gives one candidate per row (per sub-row
    of a multi-row cell), its fields taken from the column roles alone; ``previous`` (the table above on the
    page, or the table's part on the previous page) labels a table printed without a header of its own. Any
    other table is read as a matrix: one candidate per numeric cell, labelled by its row and column."""
    rows = [r for r in table.rows if any(c for c in r)]
    model = build_table(rows, table.caption, previous, table.continued, footnotes)
    if not rows:
        return [], model
    if not model.characteristic:
        found = _matrix_candidates(table.page, rows, table.title, abs_max_hint)
        for cand in found:
            # "Peak Forward Current [1]": the conditions of the rating are in note 1 below the table.
            _, marks = split_footnote_marks(cand.own_label or cand.label)
            # A cell's label runs on into its column's header: the row name's mark sits inside it.
            marks = marks or tuple(_INNER_MARK.findall(cand.label))
            notes = " ".join((footnotes or {}).get(m, "") for m in marks)
            cand.context = " ".join([cand.context, notes])
            _typical_by_note(cand, notes)
        return found, model
    heading = quantity_heading(table.title) or quantity_heading(table.caption)
    model_rows = _shared_conditions(model)
    data = []
    for k, row in enumerate(model_rows):
        names = _role_names(model.row_roles[k])
        if _names_in_first_column(model.row_roles[k], row):
            # "Rating | Symbol | Value | Unit": the first column's header reads as a value or conditions column,
            # but its cells are the rows' names.
            names = ["parameter", *names[1:]]
            model_rows[k] = replace(row, name=row.cells[0].split("\n")[0].strip(),
                                    conditions=row.conditions.replace(row.cells[0], "").strip())
        data.append((list(row.cells), names))
    labels = _wrapped_labels(data)
    labels = _condition_rows(data, labels)
    grades = _grade_rows(data)
    labels, grades = _parts_under_a_name(data, labels, grades)
    unit_columns = _unit_like_columns([cells for cells, _ in data]) if data else set()
    candidates: list[Candidate] = []
    limits: list[Candidate | None] = []
    for k, row in enumerate(model_rows):
        roles = model.row_roles[k]
        names = data[k][1]
        column_labels = [[label] if label else [] for label in roles.labels] or [[] for _ in names]
        title = " ".join(p for p in (table.title, model.caption if len(model.caption) < 80 else "",
                                     " ".join(dict.fromkeys(x for x in roles.labels if x)), row.section) if p)
        abs_max = _under_abs_max(abs_max_hint, row.section, roles.labels)
        found: list[Candidate] = []
        limit = None if row.variants else _limit_candidate(table.page, row, roles, title, abs_max, labels[k])
        limits.append(limit)
        if limit is not None:
            found.append(limit)
        if row.variants:
            found.extend(_variant_candidates(table.page, row, roles, table.title, abs_max, labels[k]))
        elif roles.variant_columns:
            # One number in a cell merged over every variant column: the row's value, for every variant.
            names = ["value" if n == "variant" and row.cells[i].strip() else n for i, n in enumerate(names)]
        found.extend(_row_candidates(table.page, list(row.cells), names, column_labels, unit_columns, title,
                                     abs_max, labels[k] or (row.name if row.is_sub_row else None)))
        for cand in found:
            cand.grades = cand.grades or grades[k]  # a variant column's part is its grade
            # A section row ("COMPARATOR", "Power Stage") names what the rows under it are about.
            cand.heading = " ".join(p for p in (heading, row.section) if p)
            if cand is not limit:  # the limit candidate's context holds the notes already
                cand.context = " ".join([cand.context, *row.notes])
            _typical_by_note(cand, " ".join(row.notes))
        candidates.extend(found)
        if limit is not None and limit.unit is None and not limit.ambiguity:
            candidates.extend(_block_unit_readings(limit, _units_around(model, k)))
    join_room_and_full_range(limits)
    return candidates, model


def _shared_conditions(model: TableModel) -> list[ModelRow]:
    """A row printing neither conditions nor a unit beside a row that prints both (``Total switch charge | QSW | |
    - - 88 |`` above ``Switch-source charge | QSS | ID = 9 A, VGS = 10 V | - - 14 | nC``): the conditions and the
    unit cells are merged over both rows and printed on one, so its conditions and unit are the row's too. When both
    neighbours print both, which block the row belongs to is not said, and it keeps none."""
    rows = list(model.rows)

    def cell(k: int, role: Role) -> str:
        roles = model.row_roles[k]
        return " ".join(rows[k].cells[i] for i in roles.columns(role) if i < len(rows[k].cells)).strip()

    for k, row in enumerate(model.rows):
        roles = model.row_roles[k]
        if (row.is_sub_row or row.conditions or not roles.columns(Role.CONDITIONS) or not roles.columns(Role.UNIT)
                or cell(k, Role.UNIT)):
            continue
        sharing = [j for j in (k - 1, k + 1) if 0 <= j < len(rows) and model.row_roles[j] is roles
                   and model.rows[j].section == row.section and not model.rows[j].is_sub_row
                   and cell(j, Role.CONDITIONS) and cell(j, Role.UNIT)]
        if len(sharing) == 1:
            shared = model.rows[sharing[0]]
            rows[k] = replace(row, conditions=shared.conditions, unit=row.unit or shared.unit)
    return rows


def _units_around(model: TableModel, k: int) -> tuple[Unit, ...]:
    """The units a row with an empty unit cell may share: a unit cell merged over a block of rows is printed on
    one row of it, so the row's unit is the nearest one printed above or below it in the unit column (same
    header, same section). Two different neighbours leave the choice open; the request's dimension may close it."""
    roles = model.row_roles[k]
    column = next(iter(roles.columns(Role.UNIT)), None)
    row = model.rows[k]
    if column is None or column >= len(row.cells) or row.cells[column].strip():
        return ()
    found: list[Unit] = []
    for step in (-1, 1):
        j = k + step
        while 0 <= j < len(model.rows) and model.row_roles[j] is roles and model.rows[j].section == row.section:
            other = model.rows[j]
            if column < len(other.cells) and other.cells[column].strip():
                unit = reader_unit(other.unit)
                if unit is not None and unit.canonical not in [u.canonical for u in found]:
                    found.append(unit)
                break
            j += step
    return tuple(found)


def _block_unit_readings(cand: Candidate, units: tuple[Unit, ...]) -> list[Candidate]:
    """The row read once per unit its block may print: only a request's dimension can pick one, and when two of
    the requested dimension remain they tie and the reader declines."""
    return [replace(cand, unit=unit, unit_text=unit.canonical, unit_from_block=True,
                    alt_labels=list(cand.alt_labels), printed=list(cand.printed)) for unit in units]


_SECTION_WORDS = re.compile(r"\b(?:ratings?|characteristics?|specifications?|electrical|absolute|maximum|"
                            r"recommended|operating|conditions?|data|parameters?|typical|values?)\b", re.IGNORECASE)


def quantity_heading(title: str) -> str:
    """The quantity a table's title names for all its rows ("THERMAL RESISTANCE RATINGS" -> "THERMAL RESISTANCE"),
    or "" for a title that only names the section ("Electrical Characteristics", "Absolute maximum ratings")."""
    if not title or len(title) > 60 or re.search(r"[=\d]", title):
        return ""
    words = _SECTION_WORDS.sub(" ", title).split()
    return " ".join(words) if words and len(words) < len(title.split()) else ""


def _names_in_first_column(roles: ColumnRoles, row: ModelRow) -> bool:
    """A table without a Parameter column whose first column, headed like a value or conditions column ("Rating",
    "Condition") or by no role ("PARAMETER SYMBOL" merged into one cell), holds words while a later column holds
    the values: the first column names the rows."""
    if not roles.roles or roles.columns(Role.PARAMETER) or roles.roles[0] not in (Role.VALUE, Role.CONDITIONS, None):
        return False
    if row.name or row.is_sub_row or not row.cells or not re.match(r"[A-Za-z]", row.cells[0].strip()):
        return False
    later = [i for i in roles.columns(Role.VALUE, *LIMIT_ROLES) if i > 0]
    return any(i < len(row.cells) and read_values(row.cells[i]) for i in later)


def _typical_by_note(cand: Candidate, notes: str) -> None:
    """"Rth are typical values" (the row's note): a characteristic listed among the ratings states no limit."""
    if cand.abs_max and cand.min is None and cand.typical is None and TYPICAL_NOTE.search(notes):
        cand.typical, cand.max = cand.max, None


def _role_names(roles: ColumnRoles) -> list[str | None]:
    return [None if r is None else ("conditions" if r is Role.NOTES else r.value) for r in roles.roles]


def _under_abs_max(hint: bool, section: str, labels: tuple[str, ...]) -> bool:
    """A section title or header naming the absolute maximum ratings overrides the caption's hint; another
    section title ("Electrical characteristics") ends it."""
    for text in (section, " ".join(labels)):
        if ABS_MAX_TITLE.search(text):
            return True
        if SECTION_TITLE.search(text):
            return False
    return hint


def _limit_candidate(page: int, row: ModelRow, roles: ColumnRoles, title: str, abs_max: bool,
                     wrapped_label: str | None) -> Candidate | None:
    """The candidate of a row's Min/Typ/Max cells: fields from the columns' roles, unit from the row's unit."""
    if row.limits is None and row.ambiguity is None:
        return None
    if row.limits is not None and not any(r in LIMIT_ROLES for r in roles.roles):
        return None  # a Value column is read as an expression (ranges, "±16 or 32") with the matrix cells
    own = row.name if not row.is_sub_row else f"{row.name} {row.sub_label}".strip()
    group_symbol = "" if row.symbol or roles.columns(Role.PARAMETER) else _group_symbol(
        [roles.labels[i] for i in roles.columns(*LIMIT_ROLES)[:1] if i < len(roles.labels)])
    cand = Candidate(page, "table_row", (wrapped_label or row.name).strip(), symbol=row.symbol or group_symbol,
                     abs_max=abs_max, explicit_fields=True, symbol_named=bool(group_symbol))
    cand.unit = reader_unit(row.unit)
    unit_cell = next((row.cells[i] for i in roles.columns(Role.UNIT) if i < len(row.cells) and row.cells[i]), "")
    if cand.unit is None and unit_cell and (printed := parse_unit(" ".join(unit_cell.split()))) is not None:
        # A unit the table model cannot model but the reader knows ("ºC" printed with an ordinal sign).
        cand.unit, cand.unit_text = printed, unit_cell
    elif cand.unit is None:
        cand.unit, cand.unit_text = _unit_from_header(row.name)  # "Supply voltage (V)"
        if cand.unit is None:
            cand.unit, cand.unit_text = _unit_leading_conditions(row.conditions)
    else:
        cand.unit_text = row.unit.printed if row.unit else cand.unit.canonical
    notes = " ".join(row.notes)
    cand.context = " ".join(p for p in (title, row.sub_label, row.conditions, notes,
                                        " ".join(c.replace("\n", " ") for c in row.cells if c)) if p)
    cand.alt_labels = [row.sub_label] if row.sub_label else []
    cand.own_label = own
    cand.extra_conditions = row.conditions
    cand.line_text = " ".join(dict.fromkeys(c.replace("\n", " ") for c in row.cells if c))
    if row.ambiguity is not None:
        cand.ambiguity = row.ambiguity
        return cand
    limits = row.limits
    assert limits is not None
    cand.min, cand.typical, cand.max = limits.min, limits.typical, limits.max
    cand.printed = list(limits.printed)
    cand.value_text = " ".join(limits.printed)
    return cand


def _variant_candidates(page: int, row: ModelRow, roles: ColumnRoles, table_title: str, abs_max: bool,
                        wrapped_label: str | None) -> list[Candidate]:
    """One candidate per variant column of a row (a part, a grade or a temperature heading the column), labelled
    by the row and its variant, and all siblings of one line. Parts: each candidate is that part's grade, and a
    row candidate that carries the reason answers a request naming none of them (the reader declines). Per
    temperature: the first column at 25 °C (else the first column) is the row's reading when no temperature is
    asked for, the others are named by their temperature."""
    name = (wrapped_label or row.name).strip()
    own = row.name if not row.is_sub_row else f"{row.name} {row.sub_label}".strip()
    labels = list(dict.fromkeys(v for v in roles.variants if v))
    default = next((v for v in labels if re.search(r"(?<![\d.])\+?25\s*°", v)), labels[0])
    unit = reader_unit(row.unit)
    unit_text = row.unit.printed if row.unit and unit else (unit.canonical if unit else None)
    notes = " ".join(row.notes)
    line = " ".join(dict.fromkeys(c.replace("\n", " ") for c in row.cells if c))
    found: list[Candidate] = []
    if roles.variant_kind == "part":
        reason = Candidate(page, "table_row", name, symbol=row.symbol, abs_max=abs_max, own_label=own,
                           explicit_fields=True,
                           extra_conditions=row.conditions, line_text=line,
                           alt_labels=[row.sub_label] if row.sub_label else [])
        reason.context = " ".join(p for p in (table_title, row.section, row.sub_label, row.conditions, notes) if p)
        reason.unit, reason.unit_text = unit, unit_text
        reason.ambiguity = (f"its value columns are variants ({'; '.join(labels)}), one value each, and the request "
                            f"names none of them")
        found.append(reason)
    for variant, limits in row.variants:
        plain = roles.variant_kind == "temperature" and variant == default
        cand = Candidate(page, "table_cell", name if plain else f"{name} {variant}", symbol=row.symbol,
                         abs_max=abs_max, explicit_fields=True, own_label=own if plain else f"{own} {variant}",
                         extra_conditions=" ".join(p for p in (row.conditions, variant) if p), line_text=line,
                         alt_labels=[row.sub_label] if row.sub_label else [])
        if roles.variant_kind == "part":
            cand.grades = tuple(variant.split())
        cand.context = " ".join(p for p in (table_title, row.section, row.sub_label, row.conditions, variant, notes,
                                            line) if p)
        cand.unit, cand.unit_text = unit, unit_text
        cand.min, cand.typical, cand.max = limits.min, limits.typical, limits.max
        if abs_max and cand.min is None and cand.max is None and rated_as_maximum(cand):
            cand.typical, cand.max = None, cand.typical  # a rating per part: its maximum
        cand.printed = list(limits.printed)
        cand.value_text = " ".join(limits.printed)
        found.append(cand)
    return found


def _matrix_candidates(page: int, rows: list[list[str]], title: str, abs_max_hint: bool) -> list[Candidate]:
    """A table without limit columns: variants across (12 V / 24 V models), quantities down, or the reverse."""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    roles: list[str | None] = [None] * width
    column_labels: list[list[str]] = [[] for _ in range(width)]
    abs_max = abs_max_hint
    unit_columns = _unit_like_columns(rows)
    data: list[tuple[list[str], list[str | None], list[list[str]], str, bool]] = []
    for n, row in enumerate(rows):
        variants = False
        row_roles = [_cell_role(c) for c in row]
        if _is_header_row(row) and (not _looks_like_data_row(row, roles) or sum(1 for r in row_roles if r) >= 3
                                    or (variants := not data and _variant_header(row, rows[n + 1:]))):
            found_roles = [r for r in row_roles if r]
            if len(found_roles) >= 2 or (found_roles and found_roles[0] == "value" and sum(1 for c in row if c) <= 3):
                roles = [r or (roles[i] if roles[i] in ("parameter", "symbol") else None)
                         for i, r in enumerate(row_roles)]
            for i, cell in enumerate(row):
                if cell:
                    column_labels[i] = [cell.replace("\n", " ")] + column_labels[i][:2]
            joined = " ".join(dict.fromkeys(c for c in row if c))
            if ABS_MAX_TITLE.search(joined):
                abs_max = True
            elif any(is_section_title(" ".join(c.split())) for c in row if c):
                abs_max = False
            if not title:
                # Each variant names its own column; as the title of every row they would match any of them. So
                # do the headers of two or more columns of values ("D, LP Suffix Package | P Suffix Package"):
                # each is in its own column's label.
                own = _heads_value_columns(row, rows[n + 1:])
                title = " ".join(c for i, c in enumerate(row)
                                 if c and not (variants and read_values(c)) and i not in own and c not in
                                 {row[j] for j in own})
            continue
        data.append((row, list(roles), [list(c) for c in column_labels], title, abs_max))
    named = [(row, row_roles) for row, row_roles, *_ in data]
    labels, grades = _parts_under_a_name(named, _wrapped_labels(named), _grade_rows(named))
    candidates: list[Candidate] = []
    for (row, row_roles, labels_at, row_title, row_abs_max), label, row_grades in zip(data, labels, grades,
                                                                                    strict=True):
        found = _row_candidates(page, row, row_roles, labels_at, unit_columns, row_title, row_abs_max, label)
        for cand in found:
            cand.grades = row_grades
        candidates.extend(found)
    return candidates


_PART_NUMBER = re.compile(r"\b[A-Z]{1,5}\d{2,}[A-Z0-9]*\b")


def _grade_rows(rows: list[tuple[list[str], list[str | None]]]) -> list[tuple[str, ...]]:
    """The part numbers naming each row that is one grade among its siblings: consecutive rows of one symbol
    whose name cells name different parts ("Input offset voltage LM158A" / "LM258A, LM358A" / "LM358")."""
    grades: list[tuple[str, ...]] = [()] * len(rows)
    i = 0
    while i < len(rows):
        symbol = _first_cell(rows[i][0], rows[i][1], "symbol")
        j = i + 1
        while symbol and j < len(rows) and _first_cell(rows[j][0], rows[j][1], "symbol") == symbol:
            j += 1
        parts = [tuple(_PART_NUMBER.findall(_first_cell(row, roles, "parameter"))) for row, roles in rows[i:j]]
        if len({p for p in parts if p}) >= 2:
            grades[i:j] = parts
        elif (k := _leading_parts(rows, i, j)) > i:
            j = k
            grades[i:j] = [_leading_part(row, roles) for row, roles in rows[i:j]]
        i = j
    return grades


def _parts_under_a_name(rows: list[tuple[list[str], list[str | None]]], labels: list[str | None],
                        grades: list[tuple[str, ...]]) -> tuple[list[str | None], list[tuple[str, ...]]]:
    """A name ending with a part number over rows that print only another part number, with the symbol cell
    merged over them ("Peak off-state voltage ... QT40A4 | VDRM | 200" / "QT40A6 | | 400" / "QT40A8 | | 600"): one
    parameter, one row per part. Each row takes the name without the parts, and its own part as its grade."""
    labels, grades = list(labels), list(grades)
    for i, (row, roles) in enumerate(rows):
        name = " ".join(_first_cell(row, roles, "parameter").split())
        if not _first_cell(row, roles, "symbol") or not name:
            continue
        words = name.replace(",", " ").split()
        parts = list(itertools.takewhile(_PART_NUMBER.fullmatch, reversed(words)))
        j = i + 1
        while j < len(rows) and not _first_cell(rows[j][0], rows[j][1], "symbol") and _only_parts(
                _first_cell(rows[j][0], rows[j][1], "parameter")):
            j += 1
        base = " ".join(words[:len(words) - len(parts)])
        if not parts or j == i + 1 or not re.search(r"[A-Za-z]{3,}", base):
            continue
        labels[i:j] = [base] * (j - i)
        grades[i:j] = [tuple(reversed(parts)), *(tuple(_PART_NUMBER.findall(_first_cell(r, ro, "parameter")))
                                                  for r, ro in rows[i + 1:j])]
    return labels, grades


_LEADING_PART = re.compile(r"^\s*([A-Z]{1,5}\d{2,}[A-Z0-9]*(?:-[A-Z0-9.]*[A-Z0-9])*)(?=\s|$)")


def _leading_part(row: list[str], roles: list[str | None]) -> tuple[str, ...]:
    match = _LEADING_PART.match(_first_cell(row, roles, "conditions"))
    return (match.group(1),) if match else ()


def _leading_parts(rows: list[tuple[list[str], list[str | None]]], i: int, j: int) -> int:
    """The end of a run of rows of one parameter from ``i`` whose conditions cells each open with another part
    ("QX100-1.8 VIN = 3.2V" / "QX100-5.0 VIN = 6.5V"), or ``i`` when there is none. Rows of one symbol are one
    parameter (up to ``j``); rows without a symbol while their name repeats."""
    name = _first_cell(rows[i][0], rows[i][1], "parameter")
    if not _first_cell(rows[i][0], rows[i][1], "symbol"):
        j = i + 1
        while j < len(rows) and name and _first_cell(rows[j][0], rows[j][1], "parameter") == name:
            j += 1
    parts = [_leading_part(row, roles) for row, roles in rows[i:j]]
    return j if all(parts) and len(set(parts)) >= 2 else i


def _wrapped_labels(rows: list[tuple[list[str], list[str | None]]]) -> list[str | None]:
    """Parameter names wrapped over several rows that share one symbol ("Nominal" / "Resistance" / "Tempco",
    all ΔRAB/ΔT; "Resistance" / "(± 20%)" / "" / "", all RAB) are one name for each of those rows."""
    labels: list[str | None] = [None] * len(rows)
    i = 0
    while i < len(rows):
        row, roles = rows[i]
        symbol = _first_cell(row, roles, "symbol")
        j = i + 1
        if symbol:
            while (j < len(rows) and _first_cell(rows[j][0], rows[j][1], "symbol") == symbol
                   and _continues_name(_first_cell(rows[j][0], rows[j][1], "parameter"))):
                j += 1
        if symbol and j - i == 1:
            j = _name_over_sub_rows(rows, i, symbol)
        if j - i > 1:
            parts = [_first_cell(r, ro, "parameter").split("\n")[0].strip() for r, ro in rows[i:j]]
            joined = " ".join(dict.fromkeys(p for p in parts if p))
            if joined:
                labels[i:j] = [joined] * (j - i)
        i = j
    return labels


def _name_over_sub_rows(rows: list[tuple[list[str], list[str | None]]], i: int, symbol: str) -> int:
    """The end of a block of rows of one symbol whose name cell, merged over the block, is printed wrapped over
    its first lines and leaves the last ones empty ("Maximum Latch Release" / "Delay, Set or Reset to Q" / "", one
    row per supply voltage): the name cells are one name. ``i + 1`` when the rows are no such block."""
    names: list[str] = []
    j = i
    while j < len(rows) and _first_cell(rows[j][0], rows[j][1], "symbol") == symbol:
        names.append(_first_cell(rows[j][0], rows[j][1], "parameter").split("\n")[0].strip())
        j += 1
    filled = next((k for k, name in enumerate(names) if not name), len(names))
    if filled < 2 or filled == len(names) or any(names[filled:]) or len(set(names[:filled])) < filled:
        return i + 1
    return j


_ASSIGNMENT_START = re.compile(r"^\s*[A-Za-z][A-Za-z0-9]{0,6}\s*[+-]?\s*=")


def _condition_rows(rows: list[tuple[list[str], list[str | None]]], labels: list[str | None]) -> list[str | None]:
    """Rows of one symbol whose name cell holds only conditions ("Isink | VCC+ = +15 V, Vo = +0.2 V") measure
    the quantity the first row of the symbol names ("Output sink current VCC+ = +15 V, Vo = +2 V"): they take
    that name."""
    result = list(labels)
    head_symbol, head_name = "", ""
    for n, (row, roles) in enumerate(rows):
        symbol = _first_cell(row, roles, "symbol")
        name = _first_cell(row, roles, "parameter").split("\n")[0].strip()
        if symbol and symbol == head_symbol:
            # One symbol, one quantity: rows between ("Tmin < Tamb < Tmax") do not start another.
            if head_name and _ASSIGNMENT_START.match(name) and result[n] is None:
                result[n] = head_name
            elif head_name and _only_parts(name) and result[n] is None:
                # "QX12C, QX12AC" under "Operating range QX12I, QX12AI": the name above, for other parts.
                result[n] = " ".join(_PART_NUMBER.sub(" ", head_name).replace(",", " ").split())
            continue
        # The whole name cell, conditions included, so that both rows name the quantity equally well and only
        # the requested conditions tell them apart (the row's own cell still holds its conditions).
        head_symbol, head_name = symbol, name
    return result


def _only_parts(cell: str) -> bool:
    """A name cell that lists part numbers and nothing else ("QX12C, QX12AC")."""
    words = [w for w in re.split(r"[\s,/;]+", cell) if w]
    return bool(words) and all(_PART_NUMBER.fullmatch(w) for w in words)


def _continues_name(cell: str) -> bool:
    """A name cell that continues the row above rather than naming a parameter of its own: empty, a
    parenthesis or lower-case start ("(± 20%)", "into A, W or B"), or a single word ("Tempco", "LM258")."""
    text = cell.split("\n")[0].strip()
    # A cell without a word ("MT2(−), G(+)", "IC = 2 A") holds the conditions of the parameter named above.
    return (not text or text[0] in "(±" or text[0].islower() or len(text.split()) == 1
            or not re.search(r"[A-Za-z]{3,}", text))


def _first_cell(row: list[str], roles: list[str | None], role: str) -> str:
    for i, r in enumerate(roles):
        if r == role and i < len(row) and row[i].strip():
            return row[i].strip()
    return ""


def _unit_like_columns(rows: list[list[str]]) -> set[int]:
    """Columns that hold mostly unit tokens ("V", "mA", "rpm") even without a "Unit" header."""
    found: set[int] = set()
    width = len(rows[0])
    for i in range(width):
        cells = [r[i] for r in rows if r[i]]
        if len(cells) >= 3 and sum(1 for c in cells if parse_unit(c.split("\n")[0]) is not None) >= 0.6 * len(cells):
            found.add(i)
    return found


_CONDITION_CELL = re.compile(r"^\s*[-+±]?\d+(?:[.,]\d+)?\s*[A-Za-zΩµ°%]{1,4}\s*$")


def _heads_value_columns(row: list[str], below: list[list[str]]) -> set[int]:
    """The header cells over columns of values, when two or more different ones do (a matrix: one column per
    package, part or variant); empty otherwise."""
    heads = set()
    for i, cell in enumerate(row):
        cells = [r[i] for r in below[:6] if i < len(r) and r[i].strip()]
        if cell.strip() and cells and sum(1 for c in cells if read_values(c)) >= 0.6 * len(cells):
            heads.add(i)
    return heads if len({row[i] for i in heads}) >= 2 else set()


def _variant_header(row: list[str], below: list[list[str]]) -> bool:
    """A first row whose value cells are bare conditions ("MOTOR DATA | | 12V | 24V") over columns of plain
    numbers: the variants the columns belong to, not a row of data."""
    columns = [i for i, cell in enumerate(row) if cell and read_values(cell)]
    if len(columns) < 2 or not all(_CONDITION_CELL.match(row[i]) and parse_unit(
            re.sub(r"^[^A-Za-zΩµ°%]*", "", row[i])) is not None for i in columns):
        return False
    cells = [r[i] for r in below[:6] for i in columns if i < len(r) and r[i]]
    plain = [c for c in cells if parse_number(c.strip()) is not None]
    return len(cells) >= 2 and len(plain) >= 0.6 * len(cells)


def _looks_like_data_row(row: list[str], roles: list[str | None]) -> bool:
    """A row without plain numbers may still be data ('VSS — VDD V', '>99.98')."""
    if not any(r in NUMERIC_ROLES or r == "value" for r in roles):
        return any(read_values(c) for c in row[1:] if c)
    return any(read_values(row[i]) for i, r in enumerate(roles) if r in NUMERIC_ROLES or r == "value")


def _row_candidates(page: int, row: list[str], roles: list[str | None], column_labels: list[list[str]],
                    unit_columns: set[int], title: str, abs_max: bool,
                    wrapped_label: str | None = None) -> list[Candidate]:
    param_cells = [row[i] for i, r in enumerate(roles) if r == "parameter" and row[i]]
    # In a table with limit columns, a cell outside them is a condition or a note, not a variant's value.
    limit_table = any(r in NUMERIC_ROLES for r in roles)
    symbol_cells = [row[i] for i, r in enumerate(roles) if r == "symbol" and row[i]]
    cond_cells = [row[i] for i, r in enumerate(roles) if r == "conditions" and row[i]]
    unit_cells = [row[i] for i, r in enumerate(roles) if (r == "unit" or (r is None and i in unit_columns)) and row[i]]
    if not param_cells:
        # No Parameter column: the leading text cells name the row.
        param_cells = []
        for i, cell in enumerate(row):
            if not cell or roles[i] is not None or i in unit_columns:
                continue
            if read_values(cell):
                break
            param_cells.append(cell)
        param_cells = param_cells[:2]
    param_cells = list(dict.fromkeys(param_cells))
    name_lines = _lines(param_cells[0]) if param_cells else []
    label = " ".join([name_lines[0]] if name_lines else []) + " " + " ".join(param_cells[1:])
    own_label = label.strip()
    if wrapped_label:
        label = wrapped_label
    sub_conditions = name_lines[1:]
    conditions = list(dict.fromkeys(cond_cells))
    row_text = " ".join(dict.fromkeys(c.replace("\n", " ") for c in row if c))
    unit_lines = _lines(unit_cells[0]) if unit_cells else []
    symbol = " ".join(dict.fromkeys(s.replace("\n", " ") for s in symbol_cells))
    candidates: list[Candidate] = []

    value_columns = [i for i, r in enumerate(roles) if r == "value"]
    matrix_columns = [i for i, r in enumerate(roles) if r is None and i not in unit_columns and not limit_table
                      and row[i] and not (param_cells and row[i] in param_cells)]
    for i in value_columns + matrix_columns:
        lines = _lines(row[i])
        for k, line in enumerate(lines):
            readings = _prefer_after_or(read_values(line), line)[:2]
            nominal = _nominal_with_tolerance(line, readings)
            line_cands: list[Candidate] = []
            for reading in [nominal] if nominal is not None else readings:
                cand = from_reading(page, reading, "table_row" if i in value_columns else "table_cell")
                header = " ".join(column_labels[i][:2])
                cand.label = label.strip() if i in value_columns else f"{label.strip()} {header}".strip()
                cand.symbol = symbol
                cand.abs_max = abs_max
                cand.context = (f"{_sub_context(title, sub_conditions, conditions, k, len(lines))} {header} "
                                f"{_sub_row_text(row, k, len(lines))}")
                cand.alt_labels = sub_conditions[:3]
                cand.own_label = own_label
                cand.extra_conditions = " ".join(c.replace("\n", " ") for c in conditions)
                cand.line_text = row_text
                cand.aligned = len(lines) == 1 or len(sub_conditions) in (0, len(lines))
                if cand.unit is None:
                    _assign_unit(cand, unit_lines, k, len(lines), roles, column_labels, column=i)
                if cand.unit is None:
                    # A cell of the row that is nothing but a unit ("%", "mA") is the unit column, header or not.
                    bare = [u for j, c in enumerate(row) if j != i and (u := parse_unit(c.strip())) is not None]
                    if len(bare) == 1:
                        cand.unit, cand.unit_text = bare[0], bare[0].canonical
                if reading.kind == "single" and (abs_max or i in value_columns and _junction_rating(own_label, cand)) \
                        and rated_as_maximum(cand):
                    cand.max, cand.typical = cand.typical, None
                elif abs_max and _withstood(own_label, line, cand):
                    cand.max, cand.min = cand.min, None
                elif reading.kind == "single" and (limit := limit_in_parentheses(column_labels[i])):
                    # "Holding Torque (N.cm Min)": the column states which limit its numbers are.
                    setattr(cand, limit, cand.typical)
                    cand.typical = None
                    cand.explicit_fields = True
                elif reading.kind == "single" and (limit := limit_leading(own_label)):
                    setattr(cand, limit, cand.typical)  # "Max. airflow | 186.7 m³/h"
                    cand.typical = None
                line_cands.append(cand)
            candidates.extend(line_cands)
            if nominal is None and i in value_columns:
                candidates.extend(labelled_limits(line, readings, line_cands))  # "35 µA typ, 50 µA max"
    return candidates


# "Junction temperature | Tj | 150 | °C" in a Value column (a thermal data table, outside the ratings): a junction
# temperature printed as one figure is the most the junction may reach, never a typical operating temperature.
_JUNCTION_TEMPERATURE = re.compile(r"^(?:max(?:imum)?\.?\s+|operating\s+)?junction\s+temperature(?:\s*\(\d\))?$",
                                   re.IGNORECASE)


def _junction_rating(name: str, cand: Candidate) -> bool:
    return bool(_JUNCTION_TEMPERATURE.match(name.strip())) and cand.unit is not None and (
        cand.unit.dimension == "temperature")


_ESD = re.compile(r"\besd\b|electrostatic", re.IGNORECASE)


def _withstood(name: str, cell: str, cand: Candidate) -> bool:
    """"ESD Rating | HBM | >2000 | V" among the ratings: the level the part withstands, printed with ">", is its
    ESD rating, which the ratings give as a maximum like any other rating."""
    return (bool(_ESD.search(name)) and bool(re.match(r"\s*[>≥]", cell)) and cand.min is not None
            and cand.typical is None and cand.max is None)


def _group_symbol(labels: list[str]) -> str:
    """The symbol a group title over Min/Typ/Max columns starts with ("Iv (mcd) [2] @ 10mA"), when the table
    has no Parameter or Symbol column to name its rows' quantity."""
    title = labels[0] if labels else ""
    first = title.split()[0] if title.split() else ""
    if _cell_role(title) is None and re.fullmatch(r"[A-Za-zΔθλη][A-Za-z0-9]{0,5}", first):
        return first
    return ""


def _sub_row_text(row: list[str], k: int, count: int) -> str:
    """The text of sub-row ``k``: line k of cells split into ``count`` lines, whole single-line cells, and
    the first line of a name cell that carries its sub-rows' names below it."""
    parts: list[str] = []
    for cell in row:
        lines = _lines(cell)
        if count <= 1 or len(lines) <= 1:
            parts.append(cell.replace("\n", " "))
        elif len(lines) == count:
            parts.append(lines[k])
        elif len(lines) == count + 1:
            parts.extend([lines[0], lines[k + 1]])
    return " ".join(p for p in parts if p)


def _nominal_with_tolerance(cell: str, readings: list[Reading]) -> Reading | None:
    """'2.40±0.100' alone in a value cell (a product list giving each part's threshold): the nominal with the band
    it may deviate by, so min 2.30, typical 2.40, max 2.50 — as a Min/Typ/Max table reads the same cell — rather
    than a typical value and a separate ±0.100 that would rival it."""
    number = read_cell(cell)
    if (number is None or number.tolerance is None or len(readings) != 2 or readings[0].kind != "single"
            or readings[1].kind != "pm" or readings[0].typical is None):
        return None
    nominal, band = readings
    unit = nominal.unit
    if unit is None and band.unit is not None and band.unit.canonical != "%":
        unit = band.unit  # "150±30 mV": the unit printed once, after the band
    unit_text = nominal.unit_text if unit is nominal.unit else band.unit_text
    value, tolerance = nominal.typical, number.tolerance
    return Reading("tolerance", min=round(value - tolerance, 9), typical=value, max=round(value + tolerance, 9),
                   unit=unit, unit_text=unit_text, start=nominal.start, end=band.end,
                   text=cell[nominal.start:band.end], numbers=[*nominal.numbers, *band.numbers])


def _prefer_after_or(readings: list[Reading], text: str) -> list[Reading]:
    """'±16 or 32 V' (split or single supply): the single-supply figure is the rating to report first."""
    if len(readings) >= 2 and readings[0].kind == "pm" and re.fullmatch(
            r"\s*or\s*", text[readings[0].end:readings[1].start]):
        return readings[1:]
    return readings


def _sub_context(title: str, sub_conditions: list[str], conditions: list[str], k: int, count: int) -> str:
    parts = [title]
    if sub_conditions and len(sub_conditions) == count and count > 1:
        parts.append(sub_conditions[k])
    else:
        parts.extend(sub_conditions)
    for cond in conditions:
        lines = _lines(cond)
        parts.append(lines[k] if len(lines) == count and count > 1 else cond.replace("\n", " "))
    return " ".join(p for p in parts if p)


def _assign_unit(cand: Candidate, unit_lines: list[str], k: int, count: int, roles: list[str | None],
                 column_labels: list[list[str]], column: int | None = None) -> None:
    if cand.unit is not None:
        return
    if unit_lines:
        line = unit_lines[k] if len(unit_lines) == count and k < len(unit_lines) else unit_lines[0]
        unit = parse_unit(line)
        if unit is not None:
            cand.unit, cand.unit_text = unit, line
            return
    labels = column_labels[column] if column is not None else []
    for text in labels:
        unit, unit_text = _unit_from_header(text)
        if unit is not None:
            cand.unit, cand.unit_text = unit, unit_text
            return
