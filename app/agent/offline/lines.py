"""Text lines as the text tools return them, turned into candidate readings.

Feature lists ("Supply voltage: 1.7 – 3.6 V"), dot-leader rating lists, sentences ("operates at a frequency of
16 MHz") and table rows flattened by the text layer to one cell per line all carry values; each value
expression becomes a candidate labelled by the text around it.
"""

from __future__ import annotations

import re

from app.agent.offline.candidates import (
    ABS_MAX_TITLE,
    Candidate,
    from_reading,
    is_section_title,
    limit_in_parentheses,
    limit_leading,
    rated_as_maximum,
)
from app.agent.offline.limit_words import labelled_limits
from app.agent.offline.synonyms import fold
from app.agent.offline.values import EMPTY_CELL, Reading, parse_number, read_values
from app.units import Unit, parse_unit

_NOT_NAMES = frozenset({"typ", "typical", "max", "maximum", "min", "minimum", "nom", "nominal", "for", "and", "the",
                        "per", "with", "from", "approx", "see", "note", "notes", "unit", "units"})


def _naming_words(text: str) -> list[str]:
    """Words that can name a quantity ("EEPROM", "current"), not qualifiers ("typical", "for")."""
    return [w for w in re.findall(r"[A-Za-z]{3,}", text) if w.lower() not in _NOT_NAMES]


_CAPTION = re.compile(r"^\s*(?:FIGURE|Figure|Fig\.)\s*\d")
_DOT_LEADER = re.compile(r"\s*(?:\.{3,}|\.*…[.…]*)\s*")


def line_candidates(page: int, lines: list[str], abs_max_lines: set[int] | None = None) -> list[Candidate]:
    """One candidate per value expression of each line. The label is the text around the value, bounded by
    the neighbouring values ("5mA operating current per channel" names its value after it), joined with the
    previous line when the line is only a continuation (wrapped bullets, rating lists, one cell per line)."""
    candidates: list[Candidate] = []
    abs_max_lines = abs_max_lines or set()
    notes = _notes_lines(lines)
    parts = part_blocks(lines)
    operating_ratings = section_line_numbers(lines, _OPERATING_RATINGS)
    for idx, line in enumerate(lines):
        readings = [r for r in read_values(line) if r.has_value]
        if not readings:
            continue
        previous = lines[idx - 1].strip() if idx > 0 else ""
        following = lines[idx + 1].strip() if idx + 1 < len(lines) else ""
        # Text printed just above a caption belongs to the plot it captions (axis labels, legends).
        caption = bool(_CAPTION.match(line) or _CAPTION.match(following))
        # "Maximum Input Voltage" over "LM1117-ADJ, LM1117-1.8," ... "LM1117I-5.0" over "20V": the parts listed
        # between a rating's name and its value say which parts it applies to, so the name is read past them.
        nearby = " ".join(_rating_lines_above(lines, idx))
        heading = _heading_above(lines, idx)
        limit_above = limit_in_parentheses([_label_above(lines, idx)])
        line_cands: list[Candidate] = []
        for n, reading in enumerate(readings):
            left = readings[n - 1].end if n > 0 else 0
            right = readings[n + 1].start if n + 1 < len(readings) else len(line)
            before = _DOT_LEADER.sub(" ", line[left:reading.start]).strip(" :=-–,;")
            if len(re.findall(r"[A-Za-z]{3,}", before)) < 2:
                # "Speed (+/–10%) 3000 RPM": the name is further left, before the other value.
                before = _DOT_LEADER.sub(" ", line[:reading.start]).strip(" :=-–,;")
            after = _DOT_LEADER.sub(" ", line[reading.end:right]).strip(" :=-–,;.")
            label = f"{before} {after}".strip() if len(after) < 60 else before
            unit_cell = None
            lead_text = before
            if not _naming_words(label) and previous:
                unit_cell = parse_unit(previous) if reading.unit is None and len(previous) <= 8 else None
                # "Transmission Single" / "%" / "38.5": a unit column printed before the value column.
                above = lines[idx - 2].strip() if unit_cell is not None and idx >= 2 else previous
                label = f"{above} {label}".strip()
                # "Charge Current Up" / "to 1000mA": a limit word wrapped onto the value's line.
                lead_text = f"{above} {before}" if unit_cell is None else before
            cand = from_reading(page, reading, "line")
            cand.label = label
            cand.context = f"{line} {previous}"
            if (parts_at := _parts_above(lines, idx)) < idx:
                cand.context = f"{cand.context} {nearby}"  # the rating's name and conditions above its parts
                cand.listed_parts = tuple(re.findall(_PART_NAME, " ".join(lines[parts_at:idx])))
            if unit_cell is not None:
                cand.unit, cand.unit_text = unit_cell, previous
                if re.fullmatch(r"\(.*\)", following):
                    cand.context += f" {following}"  # "(400-750nm)": the conditions cell after the value
            # The lines above name a value only when its own line does not ("4" under "Quiescent Current");
            # a heading over a bullet list names what the bullets are about.
            cand.alt_labels = ([f"{nearby} {before}"] if not _naming_words(f"{before} {after}") else []) + (
                [f"{heading} {before} {after}"] if heading else [])
            if previous != heading and _is_label_line(previous):
                # "Dielectric Withstanding Voltage (MIL-STD-202, Method 301)" over "Sea Level ..... 1,500 VAC":
                # a label line over a dot-leader line names the quantity its sub-label qualifies.
                cand.alt_labels.append(f"{previous} {before} {after}")
            cand.line_text = line
            cand.following = after
            if parts[idx]:
                cand.table_part = parts[idx]
                cand.context = f"{cand.context} {parts[idx]}"
            if cand.unit is None:
                cand.unit, cand.unit_text = _counted_unit(after)
            cand.abs_max = idx in abs_max_lines or bool(ABS_MAX_TITLE.search(before) or
                                                        re.search(r"absolute\s+max", before, re.I))
            cand.caption = caption
            cand.in_notes = idx in notes
            cand.after_value = n > 0 and not line[readings[n - 1].end:reading.start].strip()
            cand.size_factor = _size_factor(line, readings, n)
            cand.assignment = bool(re.search(r"=\s*$", line[left:reading.start]))
            cand.in_parentheses = line[:reading.start].count("(") > line[:reading.start].count(")")
            if reading.kind == "single" and reading.typical is not None:
                lead = fold(lead_text)
                if (re.search(r"\b(max|maximum|up to|(?:not|no) more than|at most|not exceeding)\b", lead)
                        or re.match(r"^\W*(max|maximum|or (?:less|lower|smaller|below))\b", fold(after))):
                    cand.max, cand.typical = cand.typical, None
                elif (re.search(r"\b(min|minimum|at least|(?:not|no) less than)\b", lead)
                      or re.match(r"^\W*(min|minimum|or (?:larger|greater|more|higher|above))\b", fold(after))):
                    cand.min, cand.typical = cand.typical, None
                elif (cand.abs_max or idx in operating_ratings) and rated_as_maximum(cand):
                    cand.max, cand.typical = cand.typical, None
                elif limit_above:
                    # "Speed (approx., max.)" over "Continuous shooting: Hi+: 11 fps": the label states the limit.
                    setattr(cand, limit_above, cand.typical)
                    cand.typical = None
            line_cands.append(cand)
        candidates.extend(line_cands)
        candidates.extend(_nominal_with_range(line_cands))
        candidates.extend(labelled_limits(line, readings, line_cands))
    return candidates


# "1,000,000 shaft revolutions", "10 years": counts and durations written as words name their unit even when
# one word stands between them and the number.
_COUNTED_WORD = re.compile(r"^(?:[a-z]+\s+)?(revolutions?|cycles?|years?|hours?|pixels?)\b", re.IGNORECASE)


def _counted_unit(after: str) -> tuple[Unit | None, str | None]:
    match = _COUNTED_WORD.match(after)
    if match is None:
        return None, None
    return parse_unit(match.group(1)), match.group(1)


_NOTES_HEADING = re.compile(r"^\s*notes?\s*:?\s*$", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*\d{1,2}\s*[.)]\s*\D")


def _notes_lines(lines: list[str]) -> set[int]:
    """Indices of the numbered lines under a "Notes:" heading ("2. Forward Voltage: +/-0.1V.")."""
    found: set[int] = set()
    inside = False
    for idx, line in enumerate(lines):
        if _NOTES_HEADING.match(line):
            inside = True
        elif inside and _NUMBERED.match(line):
            found.add(idx)
        else:
            inside = False
    return found


_NOTE_LINE = re.compile(r"^\s*(\d{1,2})\s*[.)]\s*(\S.*)$")


_BARE_NOTE_NUMBER = re.compile(r"^\s*(\d{1,2})\.\s*$")
_NOTE_TEXT = re.compile(r"^\s*[A-Z][\w-]+[ ,:][^\n]{20,}$")


def footnotes(lines: list[str]) -> dict[str, list[str]]:
    """The numbered notes of a page ("1. 1/10 Duty Cycle, 0.1ms Pulse Width."), by number; a page with several
    "Notes:" lists gives each number every text it has."""
    found: dict[str, list[str]] = {}
    inside = False
    for idx, line in enumerate(lines):
        number = _BARE_NOTE_NUMBER.match(line)
        if number and idx + 1 < len(lines) and _NOTE_TEXT.match(lines[idx + 1]):
            # A note printed inside its table: its number alone on a line, its text on the next.
            found.setdefault(number.group(1), []).append(lines[idx + 1].strip())
            continue
        if _NOTES_HEADING.match(line):
            inside = True
            continue
        match = _NOTE_LINE.match(line) if inside else None
        if match is None:
            inside = False
            continue
        found.setdefault(match.group(1), []).append(match.group(2).strip())
    return found


_FOOTNOTE_MARK = re.compile(r"^\W*\d{0,2}\W*$")


def _label_above(lines: list[str], idx: int) -> str:
    """The line just above (past footnote marks such as "*5"), when it is a label without values."""
    for back in range(idx - 1, max(-1, idx - 3), -1):
        text = lines[back].strip()
        if _FOOTNOTE_MARK.match(text):
            continue
        return "" if read_values(text) else text
    return ""


_PART_NAME = r"[A-Z]{1,5}\d{2,}[A-Z0-9]*(?:-[A-Z0-9.]+)*"
_PART_LIST = re.compile(rf"^\s*{_PART_NAME}(?:\s*[,/&]?\s*{_PART_NAME})*\s*,?\s*$")


_TIMES = re.compile(r"^\s*[x×X*]\s*$")


def _size_factor(line: str, readings: list[Reading], n: int) -> bool:
    """Whether the n-th value is one factor of a size printed 'A x B' ('600mm x 1.000mm', '120 x 66.9 x 59.4 mm')."""
    before = n > 0 and bool(_TIMES.match(line[readings[n - 1].end:readings[n].start]))
    after = n + 1 < len(readings) and bool(_TIMES.match(line[readings[n].end:readings[n + 1].start]))
    return before or after


def part_list(line: str) -> bool:
    """A line that only lists part numbers ("LM1117-ADJ, LM1117-1.8,"): which parts the row above applies to."""
    return bool(_PART_LIST.match(line))


def _parts_above(lines: list[str], idx: int) -> int:
    """The index of the first line of the run of part-number lines just above (and including) ``idx - 1``."""
    start = idx
    while start > 0 and part_list(lines[start - 1]):
        start -= 1
    return start


# "ATmega16U2", "QX540 Controller": a part number alone on a line, or with one noun saying what the part is.
_PART_HEADING = re.compile(r"^\s*([A-Z][A-Za-z]{0,6}\d{2,}[A-Z0-9]*)(?:\s+[A-Z][a-z]{2,})?\s*$")


def part_blocks(lines: list[str]) -> list[str]:
    """The part each line is listed under, where a page lists features part by part (a board's two processors,
    each with its own lines under its part number): "" for lines of a page with fewer than two such parts."""
    headings = [m.group(1) if (m := _PART_HEADING.match(line)) else "" for line in lines]
    if len(set(filter(None, headings))) < 2:
        return [""] * len(lines)
    found: list[str] = []
    current = ""
    for line, heading in zip(lines, headings, strict=True):
        # A section title ends the list ("QX12 Electrical Characteristics" starts the tables of all parts).
        current = heading or ("" if is_section_title(line) else current)
        found.append(current)
    return found


def _rating_lines_above(lines: list[str], idx: int) -> list[str]:
    """The lines naming the value on line ``idx``: the three lines above, or the rating's name and the parts
    listed under it. A rating printed per group of parts ("Input Voltage" / "QX1-ADJ, QX1-5.0" / "15V" /
    "QX1-2.5" / "10V") lists each later group under the value of the one before: its name is above the first."""
    start = _parts_above(lines, idx)
    first = start
    while first < idx and first >= 2 and _value_only(lines[first - 1]) and part_list(lines[first - 2]):
        first = _parts_above(lines, first - 1)
    if first == start:
        return lines[max(0, min(idx - 3, start - 1)):idx]
    return lines[max(0, first - 1):first] + lines[start:idx]


def _value_only(line: str) -> bool:
    """A line that holds one value and nothing else ("15V")."""
    readings = read_values(line)
    return len(readings) == 1 and not re.sub(r"[\d.,\s%+\-–−]+", "", line[:readings[0].start]).strip() and (
        len(line.strip()) <= 16)


def _heading_above(lines: list[str], idx: int, reach: int = 12) -> str | None:
    """The nearest short title line above a line ("PWM control input signal" over its bullet list): it names
    what the bullets below it are about. Lines that only list the parts a rating applies to are not titles."""
    for back in range(idx - 1, max(-1, idx - reach - 1), -1):
        text = lines[back].strip()
        if part_list(text):
            continue
        if (4 <= len(text) <= 60 and text[0].isalpha() and text[0].isupper() and not text.endswith((".", ",", ":"))
                and not read_values(text) and len(text.split()) <= 8):
            return text
    return None


def _nominal_with_range(cands: list[Candidate]) -> list[Candidate]:
    """'Target frequency: 25kHz, acceptable range 21kHz to 28kHz': a nominal and a range of the same quantity
    on one line read as one min / typical / max value."""
    singles = [c for c in cands if c.typical is not None and c.min is None and c.max is None]
    ranges = [c for c in cands if c.min is not None and c.max is not None and c.typical is None]
    merged: list[Candidate] = []
    if len(singles) == 1 and len(ranges) == 1:
        single, rng = singles[0], ranges[0]
        if (single.unit and rng.unit and single.unit == rng.unit and rng.min is not None and rng.max is not None
                and rng.min <= single.typical <= rng.max):  # type: ignore[operator]
            merged.append(Candidate(
                single.page, "line", f"{single.label} {rng.label}", context=single.context, min=rng.min,
                typical=single.typical, max=rng.max, unit=single.unit, unit_text=single.unit_text,
                printed=single.printed + rng.printed, value_text=single.value_text, line_text=single.line_text,
                alt_labels=single.alt_labels, abs_max=single.abs_max, merged=True))
    return merged


_HEADER_ROLE = re.compile(r"^\s*(min|typ|tpy|max)\.?\s*$", re.IGNORECASE)


def vertical_row_candidates(page: int, lines: list[str], abs_max_lines: set[int] | None = None) -> list[Candidate]:
    """Table rows as a plain text layer gives them: one cell per line ("Operating Supply Voltage" / "VDD" /
    "2.7" / "—" / "5.5" / "V"). A run of number or empty-cell lines closed by a unit line is one row; its
    numbers take the Min/Typ/Max order of the nearest header above when the counts agree, or min/typ/max
    when there are three."""
    abs_max_lines = abs_max_lines or set()
    candidates: list[Candidate] = []
    header: list[str] = []
    idx = 0
    while idx < len(lines):
        text = lines[idx].strip()
        if _HEADER_ROLE.match(text):
            start = idx
            header = []
            while idx < len(lines) and _HEADER_ROLE.match(lines[idx].strip()):
                word = lines[idx].strip().lower()[:3]
                header.append({"min": "min", "typ": "typical", "tpy": "typical", "max": "max"}[word])
                idx += 1
            if idx - start >= 2:
                continue
            header = []
            continue
        cells: list[str] = []
        end = idx
        while end < len(lines) and (parse_number(lines[end].strip()) is not None or EMPTY_CELL.match(lines[end])):
            cells.append(lines[end].strip())
            end += 1
        unit = parse_unit(lines[end].strip()) if end < len(lines) and end > idx else None
        if unit is not None and end + 1 < len(lines) and parse_unit(lines[end + 1].strip()) is not None:
            unit = None  # "dB" / "dB": two sub-rows interleaved cell by cell, which the text alone cannot pair
        numbers = [c for c in cells if parse_number(c) is not None]
        limited = _limit_list_row(page, lines, idx, end) if unit is None and len(numbers) == len(cells) == 1 else None
        if limited is not None:
            limited.abs_max = idx in abs_max_lines
            candidates.append(limited)
            idx = end + 1
            continue
        if unit is not None and len(cells) >= 2 and numbers:
            while len(cells) > max(len(header), 3) and not cells[0].strip():
                cells = cells[1:]  # an empty Conditions cell before the Min/Typ/Max cells
            roles = header if len(header) == len(cells) else (["min", "typical", "max"] if len(cells) == 3 else [])
            if roles:
                label_lines = [line.strip() for line in lines[max(0, idx - 8):idx] if line.strip()][-4:]
                cand = Candidate(page, "line", label_lines[-1] if label_lines else "", unit=unit,
                                 unit_text=lines[end].strip(), explicit_fields=True)
                for role, cell in zip(roles, cells, strict=True):
                    value = parse_number(cell)
                    if value is not None:
                        setattr(cand, role, value)
                        cand.printed.append(cell)
                cand.alt_labels = [" ".join(label_lines[-k:]) for k in (2, 3, 4) if len(label_lines) >= k]
                # The cell after the unit is the row's test conditions when it reads as one ("IF=20mA"), and
                # otherwise the name of the next row.
                after_unit = lines[end + 1].strip() if end + 1 < len(lines) else ""
                after_unit = after_unit if re.search(r"[=≤≥<>@]", after_unit) else ""
                cand.context = " ".join([*label_lines, after_unit])
                cand.value_text = " ".join(cand.printed)
                cand.abs_max = idx in abs_max_lines
                candidates.append(cand)
            idx = end + 1
            continue
        idx += 1
    return candidates


# "ns min", "MHz max": a unit cell that also says which limit its row's one number is.
_UNIT_THEN_LIMIT = re.compile(r"^(\S+)\s+(min|max|typ)\.?$", re.IGNORECASE)


def _limit_list_row(page: int, lines: list[str], idx: int, end: int) -> Candidate | None:
    """Timing lists with one limit column: "t2" / "25" / "ns min" / "SCLK high pulse width" (symbol, limit, unit
    with the limit word, then the description). The number is the limit its unit cell names; the description
    after it names the row, else the nearest label line above."""
    if end >= len(lines):
        return None
    match = _UNIT_THEN_LIMIT.match(lines[end].strip())
    unit = parse_unit(match.group(1)) if match else None
    if match is None or unit is None:
        return None
    after = lines[end + 1].strip() if end + 1 < len(lines) else ""
    above = [line.strip() for line in lines[max(0, idx - 3):idx] if line.strip()]
    label = after if _is_label_line(after) else next((a for a in reversed(above) if _is_label_line(a)), "")
    if not label:
        return None
    symbol = above[-1] if above and len(above[-1]) <= 8 and not _is_label_line(above[-1]) else ""
    cand = Candidate(page, "line", label, symbol=symbol, unit=unit, unit_text=match.group(1), explicit_fields=True)
    role = {"min": "min", "max": "max", "typ": "typical"}[match.group(2).lower()]
    setattr(cand, role, parse_number(lines[idx].strip()))
    cand.printed = [lines[idx].strip()]
    cand.value_text = lines[idx].strip()
    cand.context = " ".join([*above, lines[idx].strip(), lines[end].strip(), label])
    # Quoted from the number on, so that the symbol's digit ("t2") is not read as a value.
    cand.line_text = " ".join(t for t in (lines[idx].strip(), lines[end].strip(), label) if t)
    return cand


def abs_max_line_numbers(lines: list[str]) -> set[int]:
    """Indices of lines that lie under an "Absolute Maximum Ratings" heading (until the next section title)."""
    return section_line_numbers(lines, ABS_MAX_TITLE)


# "Operating Ratings": the limits the part is specified to work within; a single figure there is the most it may
# be run at ("Input Voltage ... 15V"), as among the absolute maximum ratings, though it is no absolute maximum.
_OPERATING_RATINGS = re.compile(r"^\W*operating\s+ratings?\b", re.IGNORECASE)


def section_line_numbers(lines: list[str], title: re.Pattern[str]) -> set[int]:
    """Indices of lines that lie under a section title matching ``title`` (until the next section title)."""
    inside = False
    found: set[int] = set()
    for idx, line in enumerate(lines):
        if is_section_title(line):
            inside = bool(title.search(line))
        if inside:
            found.add(idx)
    return found


_PARENTHESES = re.compile(r"\([^()]*\)")
_MIN_BLOCK = 3


def _is_label_line(text: str) -> bool:
    """A short line that names something and states no value of its own ("Max. rotational speed (+/–10%)": a
    tolerance in parentheses is part of the label)."""
    text = text.strip()
    return (2 <= len(text) <= 60 and text[0].isalpha() and len(_naming_words(text)) >= 1
            and not read_values(_PARENTHESES.sub(" ", text)))


def block_pair_candidates(page: int, lines: list[str]) -> list[Candidate]:
    """Spec sheets that print a block of labels beside a block of values, which the text layer gives as one
    run of labels right after (or before) a run of as many value lines: the i-th label names the i-th value."""
    candidates: list[Candidate] = []
    idx = 0
    while idx < len(lines):
        if not _is_label_line(lines[idx]):
            idx += 1
            continue
        end = idx
        while end < len(lines) and _is_label_line(lines[end]):
            end += 1
        count = end - idx
        if count >= _MIN_BLOCK:
            blocks = [b for b in (lines[idx - count:idx] if idx >= count else [], lines[end:end + count])
                      if len(b) == count]
            valued = [b for b in blocks if sum(1 for v in b if read_values(v)) * 2 >= count]
            if valued:
                block = max(valued, key=lambda b: sum(1 for v in b if read_values(v)))
                for label, value_line in zip(lines[idx:end], block, strict=True):
                    candidates.extend(_paired_candidates(page, label.strip(), value_line))
        idx = end
    return candidates


def _paired_candidates(page: int, label: str, value_line: str) -> list[Candidate]:
    found: list[Candidate] = []
    limit = limit_in_parentheses([label]) or limit_leading(label)
    for reading in read_values(value_line):
        if not reading.has_value:
            continue
        cand = from_reading(page, reading, "line")
        cand.label = label
        cand.context = f"{label} {value_line}"
        cand.line_text = value_line
        cand.following = value_line[reading.end:].strip()
        if reading.kind == "single" and reading.typical is not None and limit:
            setattr(cand, limit, cand.typical)
            cand.typical = None
        found.append(cand)
    return found


_PART_ALONE = re.compile(r"^\s*([A-Z]{1,5}\d{2,}[A-Z0-9-]*)\s*$")
_CONTINUED = re.compile(r"^\s*\(?\s*continued\s*\)?\s*$", re.IGNORECASE)


def part_above_caption(caption: str, lines: list[str]) -> str:
    """The part a table is printed for, in datasheets that print one table per part of a family: its caption is the
    part number, or a part number stands alone on the line above its caption ("LM78L05" over "Unless otherwise
    specified, VIN = 10V"), a "(Continued)" line allowed between. "" when there is none, or when the caption recurs
    on the page and so does not say which table it heads."""
    text = " ".join(caption.split())
    if not text:
        return ""
    if titled := _PART_ALONE.match(text):
        return titled.group(1)  # the table titled by the part number itself
    at = [i for i, line in enumerate(lines) if " ".join(line.split()) == text]
    if len(at) != 1:
        return ""
    above = [line for line in lines[max(0, at[0] - 2):at[0]] if not _CONTINUED.match(line)]
    match = _PART_ALONE.match(above[-1]) if above else None
    return match.group(1) if match else ""

