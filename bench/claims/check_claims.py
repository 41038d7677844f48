"""Check a claims file against the PyMuPDF text layer of the datasheets it cites.

Run from the repository root:  .venv/bin/python bench/claims/check_claims.py [CLAIMS.yaml ...]
(default: the shared dev claims and bench/claims/heldout_claims.yaml).
``--mutate`` plants wrong claims instead (see ``bench/claims/mutations.py``) and prints how many the checks catch.

For every claim, with whitespace collapsed to single spaces as the claims README prescribes:

* ``source_text`` occurs on the stated page and is at most 200 characters, and every needle occurs in it;
* every stated number (min / typical / max) is printed **in** ``source_text`` with its sign: ``-40`` is -40,
  ``±0.5`` (also ``± 0.5``) may be a min of -0.5 or a max of +0.5, an unsigned number is positive, a dash set
  apart from the number ("- 3.2") may be a sign or an empty cell before it; ``5,25`` and ``1,000`` read both
  ways. In another unit prefix than the page (1250 mW as 1.25 W) only when ``notes`` says "unit conversion";
* the claim's unit is printed in ``source_text``, on the value's line, over its column, or in the table's Unit
  column once for the block of rows the value is in (nearest unit cell above, or just below when the cell is
  centred on the block); any spelling, look-alike letters included ("°С" with a Cyrillic Es, "˚C"); or it
  converts from a unit printed there when ``notes`` says "unit conversion";
* ``min <= typical <= max``, or for a negative quantity, ordered by magnitude (Typ -1.4, Max -2.7) where the
  Min / Typ / Max columns place every stated value in its own field's column;
* where the page has a Min / Typ / Max header above the printed value (in the same table: a later Unit header
  starts another), the value sits in the column of the field the claim names (word x-positions against the
  header words' x-ranges; a header may repeat Min Typ Max once per grade). ``±X`` printed in one column states
  the min as well as the limit of that column.

Exits 1 when any claim fails, printing one line per problem.
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]

from mutations import ROLE_OF_FIELD, Mutant, mutants  # noqa: E402

from evaluation.claims import Claim, ClaimSet, load_claims, resolve_document  # noqa: E402
from evaluation.units import ascii_unit, convert  # noqa: E402

SHARED = Path(os.environ.get("DSX_SHARED_DIR", REPO.parent / "shared"))
DEFAULT_FILES = (SHARED / "eval" / "dev_claims.yaml", REPO / "bench" / "claims" / "heldout_claims.yaml")
MAX_SOURCE_CHARS = 200
CONVERSION_NOTE = "unit conversion"
# A sign counts only where it cannot be a range dash ("2.7-5.5" is two positive numbers).
# A dot leader ("....-55 °C", "....100 mA") ends right at a number: its dots are neither a sign barrier nor a
# decimal point.
_NUMBER = re.compile(r"(?:(?<![\w,])(?P<sign>\+/-|\+/–|[+\-–−±∓]))?(?P<digits>\d[\d,]*(?:\.\d+)?|(?<![.\d])\.\d+)")
_UNIT_WORD = re.compile(r"(?:[^\W\d_]|[°℃])[\w/°℃%().³²·-]*|%")
# A prefix printed apart from its unit: "256k bytes", "2.7K Ohm".
_SPACED_PREFIX = re.compile(r"(?<=\d)\s*([kKMGmuµ])\s+([^\W\d_]+)")
_AC_DC = re.compile(r"^(m?V|k?V|m?A)(AC|DC)$")
_ROLE_HEADER = re.compile(r"^(min|typ|max)(?:imum|ical)?\.?$", re.I)
MAX_HEADER_WORDS = 12
CELL_WORD_GAP = 6.0  # points between the words of one header cell ("Maximum Limit (ppm)")
MAX_HEADER_DISTANCE = 200.0  # points: a Min/Typ/Max header further above heads another table
NEW_TABLE_GAP = 15.0  # points: a header cell this far below a header line belongs to a header of its own
MAX_UNIT_SPAN = 40.0  # points: a unit centred on a block of rows sits at most this far below a row of it
ROLES = ("min", "typ", "max")
_UNIT_HEADER = re.compile(r"^units?\.?$", re.I)
# A sign set apart from its number ("± 12", "- 3.2"), unless a number precedes it (then it is a range dash).
# A detached ± is a sign; a detached dash may be a minus sign or the dash of an empty cell before the next cell
# ("IH − 1.5 10"), so it reads as either sign (marked with the otherwise unused "∓"); after a colon it is a
# list bullet.
_DETACHED_SIGN = re.compile(r"(?<![\d.]\s)(?<![\w,])(\+/-|\+/–|[+\-–−±])\s+(?=\d|\.\d)")
EITHER_SIGN = "∓"
# Text layers that print a look-alike for a unit's letter: a Cyrillic Es in "°С", a ring above in "˚C/W".
_LATIN_LOOKALIKES = str.maketrans("АВЕКМНОРСТХаеорсх˚", "ABEKMHOPCTXaeopcx°")


@dataclass(frozen=True)
class Printed:
    """A number as printed: its magnitude and the signs it may carry (``±`` carries both)."""

    magnitude: float
    signs: frozenset[int]
    symmetric: bool = False  # printed ±X: a negative min or a positive typical / max


@dataclass
class Page:
    text: str  # whitespace collapsed
    words: list[tuple[float, float, float, float, str]]  # x0, y0, x1, y1, text


def collapse(text: str) -> str:
    return " ".join(text.split())


def _readings(digits: str) -> set[float]:
    digits = digits.rstrip(",")
    readings = {digits.replace(",", "")}
    if digits.count(",") == 1 and "." not in digits:
        readings.add(digits.replace(",", "."))
    found: set[float] = set()
    for reading in readings:
        try:
            found.add(float(reading))
        except ValueError:
            continue
    return found


def printed_numbers(text: str) -> list[Printed]:
    """Every number printed in ``text`` with its sign; ``a,b`` yields both the decimal-comma and the
    thousands-separator reading."""
    found: list[Printed] = []
    def attached(match: re.Match[str]) -> str:
        if match.group(1) in ("±", "+/-", "+/–", "+"):
            return match.group(1)
        if match.string[:match.start()].rstrip().endswith(":"):
            return match.group(0)  # a list bullet after a colon ("Operation: - 2 MHz"), no sign
        return EITHER_SIGN

    for match in _NUMBER.finditer(_DETACHED_SIGN.sub(attached, text)):
        sign = match.group("sign") or ""
        symmetric = sign in ("±", "+/-", "+/–")
        signs = frozenset({-1, 1}) if symmetric or sign == EITHER_SIGN else frozenset({-1} if sign in "-–−" and sign
                                                                                       else {1})
        found += [Printed(magnitude, signs, symmetric) for magnitude in _readings(match.group("digits"))]
    return found


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def is_printed(value: float, field: str, printed: list[Printed], converted: bool) -> bool:
    """``value`` (signed) is one of ``printed``; a ``±`` number gives a negative min and a positive max or typical.
    With ``converted`` a factor 1000^k between page and claim is allowed."""
    powers = range(-3, 4) if converted else (0,)
    for number in printed:
        for sign in number.signs:
            if number.symmetric and (sign < 0) != (field == "min"):
                continue
            if any(_close(sign * number.magnitude * 1000.0**power, value) for power in powers):
                return True
    return False


def _clean_token(token: str) -> str:
    token = token.rstrip(".,;:")
    while token.endswith(")") and token.count(")") > token.count("("):
        token = token[:-1]
    while token.endswith("(") or (token.startswith("(") and token.count("(") > token.count(")")):
        token = token[:-1] if token.endswith("(") else token[1:]
    token = re.sub(r"(?<=[A-Za-z])-(?=[A-Za-z])", ".", token)  # "N-cm" is N.cm
    token = re.sub(r"H20$", "H2O", token)  # water column printed with a digit zero: "mmH20"
    return _AC_DC.sub(r"\1", token)  # "VAC" is volts (alternating)


def _unit_tokens(text: str) -> set[str]:
    text = text.translate(_LATIN_LOOKALIKES)
    tokens = list(_UNIT_WORD.findall(text)) + ["".join(m) for m in _SPACED_PREFIX.findall(text)]
    return {ascii_unit(_clean_token(token)) for token in tokens} - {""}


def _same_unit(token: str, unit: str) -> bool:
    if token.casefold().rstrip("s") == unit.casefold().rstrip("s"):  # counted things: "Output" / "outputs"
        return True
    factor = convert(1.0, token, unit)
    return factor is not None and _close(factor, 1.0) and (token.casefold() == unit.casefold()
                                                           or convert(1.0, unit, token) is not None)


def _converts(token: str, unit: str) -> bool:
    return convert(1.0, token, unit) is not None and token.casefold() != unit.casefold()


def _prints_magnitude(word: str, value: float) -> bool:
    """``word`` prints ``value`` up to its sign (which a table may print as a word of its own) and prefix."""
    return any(is_printed(abs(value), "max", [Printed(n.magnitude, frozenset({1}))], True)
               for n in printed_numbers(word))


def _header_cell(page: Page, word: tuple[float, float, float, float, str]) -> list[str]:
    """The words of the header cell ``word`` is part of: its line's words chained to it by word-sized gaps."""
    line = sorted((w for w in page.words if abs(w[1] - word[1]) < 3), key=lambda w: w[0])
    at = line.index(word)
    left = right = at
    while left > 0 and line[left][0] - line[left - 1][2] < CELL_WORD_GAP:
        left -= 1
    while right < len(line) - 1 and line[right + 1][0] - line[right][2] < CELL_WORD_GAP:
        right += 1
    return [w[4] for w in line[left:right + 1]]


def _words_heading(page: Page, source: str, value: float, field: str) -> str:
    """Text of the words on the line of, or in a column header above, each word of the quote printing ``value``:
    where a unit is printed for a table cell that is not in its row's text (``Weight (g)`` over ``280``)."""
    source_words = set(source.split())
    near: list[str] = []
    for x0, y0, x1, _y1, text in page.words:
        if text not in source_words or not _prints_magnitude(text, value):
            continue
        for word in page.words:
            wx0, wy0, wx1 = word[0], word[1], word[2]
            if abs(wy0 - y0) < 3:
                near.append(word[4])
            elif y0 - MAX_HEADER_DISTANCE <= wy0 < y0 and wx0 < x1 and wx1 > x0:
                near += _header_cell(page, word)
    return " ".join(near)


def _unit_column_cells(page: Page, source: str, value: float, field: str) -> str:
    """Text of the Unit column cells nearest above and below each word of the quote printing ``value``: a table
    prints a unit once for a block of rows, on its first row or centred on the block (``mV/°C`` one row up)."""
    source_words = set(source.split())
    cells: list[str] = []
    for _x0, y0, _x1, _y1, text in page.words:
        if text not in source_words or not _prints_magnitude(text, value):
            continue
        headers = [w for w in page.words if _UNIT_HEADER.match(w[4]) and w[1] < y0 - 1]
        if not headers:
            continue
        header = max(headers, key=lambda w: w[1])
        column = [w for w in page.words if header[1] + 1 < w[1] and w[0] < header[2] + CELL_WORD_GAP
                  and w[2] > header[0] - CELL_WORD_GAP and not _prints_magnitude(w[4], value)]
        above = [w for w in column if w[1] <= y0 + 3]
        below = [w for w in column if y0 + 3 < w[1] <= y0 + MAX_UNIT_SPAN]
        for nearest in (max(above, key=lambda w: w[1]) if above else None,
                        min(below, key=lambda w: w[1]) if below else None):
            if nearest is not None:
                cells += [w[4] for w in column if abs(w[1] - nearest[1]) < 3]
    return " ".join(cells)


def unit_problems(claim: Claim, source: str, page: Page, converted: bool) -> list[str]:
    unit = ascii_unit(claim.unit)
    if not unit:
        return []
    in_source = _unit_tokens(source)
    if any(_same_unit(token, unit) for token in in_source):
        return []
    if converted and any(_converts(token, unit) for token in in_source):
        return []
    heading = _unit_tokens(" ".join(_words_heading(page, source, v, f) + " " + _unit_column_cells(page, source, v, f)
                                    for f, v in claim.stated_fields.items()))
    if any(_same_unit(token, unit) for token in heading):
        return []
    if converted and any(_converts(token, unit) for token in heading):
        return []
    return [f"unit {claim.unit!r} printed neither in source_text nor over its column on page {claim.page}"
            + ("" if converted else " (no 'unit conversion' note)")]


def _role_columns(words: list[tuple[float, float, float, float, str]],
                  below_y: float) -> list[tuple[str, float, float]]:
    """Roles and x-ranges of the nearest Min/Typ/Max header line above ``below_y``: a short line with at least
    two of the three, capitalised, left to right, once or once per grade ("Min Typ Max Min Typ Max"); a prose line
    saying "minimum ... maximum" is no header."""
    lines: dict[int, list[tuple[float, float, str]]] = {}
    for x0, y0, x1, _y1, text in words:
        if y0 <= below_y + 1:
            lines.setdefault(round(y0), []).append((x0, x1, text.strip()))
    headers: list[tuple[int, list[tuple[str, float, float]]]] = []
    for y, line in lines.items():
        roles = sorted(((m.group(1).lower(), x0, x1) for x0, x1, text in line
                        if text[:1].isupper() and (m := _ROLE_HEADER.match(text))), key=lambda role: role[1])
        order = [ROLES.index(role) for role, _x0, _x1 in roles]
        # each group left to right: a Min at or left of the role before starts the next group
        groups_in_order = all(b > a or b == 0 for a, b in zip(order, order[1:], strict=False))
        if len({role for role, _x0, _x1 in roles}) >= 2 and len(line) <= MAX_HEADER_WORDS and groups_in_order:
            headers.append((y, roles))
    if not headers:
        return []
    header_y, roles = max(headers, key=lambda item: item[0])
    # A Unit header below the Min/Typ/Max line (and not in its multi-line header) starts another table.
    if any(_UNIT_HEADER.match(text.strip()) and header_y + NEW_TABLE_GAP < y0 < below_y - 1
           for _x0, y0, _x1, _y1, text in words):
        return []
    return roles


def _column_of(x0: float, x1: float, columns: list[tuple[str, float, float]]) -> str | None:
    centre = (x0 + x1) / 2
    role, left, right = min(columns, key=lambda column: abs((column[1] + column[2]) / 2 - centre))
    width = max(right - left, 12.0)
    return role if abs((left + right) / 2 - centre) <= width else None


def _negative_half_of_stated_limit(claim: Claim, value: float, printed: list[Printed]) -> bool:
    return value < 0 and -value in (claim.typical, claim.max) and any(
        number.symmetric and _close(number.magnitude, -value) for number in printed)


def printed_columns(claim: Claim, page: Page, source: str) -> dict[str, set[str]]:
    """For each stated field, the Min/Typ/Max columns its value is printed in; a field whose value is also
    printed outside any such column is left out (nothing to compare)."""
    source_words = set(source.split())
    columns_of: dict[str, set[str]] = {}
    for field, value in claim.stated_fields.items():
        roles_found: set[str] = set()
        for x0, y0, x1, _y1, text in page.words:
            printed = printed_numbers(text)
            if text not in source_words or not is_printed(value, field, printed, False):
                continue
            if field == "min" and _negative_half_of_stated_limit(claim, value, printed):
                continue  # "±X" states both limits in one cell: its column is checked through the positive one
            columns = _role_columns(page.words, y0)
            role = _column_of(x0, x1, columns) if columns else None
            if role is None:
                roles_found = set()
                break
            roles_found.add(role)
        if roles_found:
            columns_of[field] = roles_found
    return columns_of


def column_problems(claim: Claim, page: Page, source: str) -> list[str]:
    """Where the printed value sits under a Min/Typ/Max header, it must be that of the claim's field."""
    return [f"{field} {getattr(claim, field)} is printed in the {'/'.join(sorted(roles))} column"
            for field, roles in printed_columns(claim, page, source).items() if ROLE_OF_FIELD[field] not in roles]


def _ordered_by_magnitude(claim: Claim, ordered: list[float], page: Page, source: str) -> bool:
    """Negative quantities whose Min/Typ/Max columns are ordered by magnitude (Typ -1.4, Max -2.7): accepted
    where the page's columns place every stated value in its field's column."""
    magnitudes = [abs(v) for v in ordered]
    if any(v > 0 for v in ordered) or magnitudes != sorted(magnitudes):
        return False
    columns = printed_columns(claim, page, source)
    return set(columns) == set(claim.stated_fields) and all(
        ROLE_OF_FIELD[field] in roles for field, roles in columns.items())


def claim_problems(claim: Claim, page: Page) -> list[str]:
    problems: list[str] = []
    source = collapse(claim.source_text or "")
    if not source:
        return ["no source_text"]
    if len(source) > MAX_SOURCE_CHARS:
        problems.append(f"source_text is {len(source)} chars (> {MAX_SOURCE_CHARS})")
    if source not in page.text:
        problems.append(f"source_text not on page {claim.page}: {source!r}")
        return problems  # the rest compares against a quote the page does not print
    problems += [f"needle {needle!r} not in source_text" for needle in claim.needles if needle not in source]
    converted = CONVERSION_NOTE in (claim.notes or "").casefold()
    in_source = printed_numbers(source)
    for field, value in claim.stated_fields.items():
        if not is_printed(value, field, in_source, converted):
            problems.append(f"{field} {value} not printed in source_text (with its sign, in the claim's unit)")
    stated = [claim.min, claim.typical, claim.max]
    ordered = [v for v in stated if v is not None]
    if ordered != sorted(ordered) and not _ordered_by_magnitude(claim, ordered, page, source):
        problems.append(f"min/typical/max out of order: {claim.min}/{claim.typical}/{claim.max}")
    problems += unit_problems(claim, source, page, converted)
    if not problems:
        problems += column_problems(claim, page, source)
    return problems


@lru_cache(maxsize=256)
def read_page(pdf_path: Path, page_number: int) -> Page:
    import pymupdf

    with pymupdf.open(pdf_path) as pdf:
        page = pdf[page_number - 1]
        return Page(collapse(page.get_text()), [tuple(w[:5]) for w in page.get_text("words")])


def check_file(path: Path, datasheets: Path) -> list[str]:
    claims: ClaimSet = load_claims(path)
    problems: list[str] = []
    seen: set[str] = set()
    for claim in claims.claims:
        if claim.id in seen:
            problems.append(f"{claim.id}: duplicate id")
        seen.add(claim.id)
        if claim.page is None:
            problems.append(f"{claim.id}: no page")
            continue
        page = read_page(resolve_document(claims.documents[claim.document], datasheets), claim.page)
        problems += [f"{claim.id}: {problem}" for problem in claim_problems(claim, page)]
    return problems


@lru_cache(maxsize=64)
def page_count(pdf_path: Path) -> int:
    import pymupdf

    with pymupdf.open(pdf_path) as pdf:
        return pdf.page_count


def planted_mutants(path: Path, datasheets: Path) -> list[tuple[Mutant, list[str]]]:
    """Every mutant of every claim that passes as written, with the problems the checker reports for it."""
    claims: ClaimSet = load_claims(path)
    results: list[tuple[Mutant, list[str]]] = []
    for claim in claims.claims:
        if claim.page is None:
            continue
        pdf_path = resolve_document(claims.documents[claim.document], datasheets)
        page = read_page(pdf_path, claim.page)
        if claim_problems(claim, page):
            continue  # a claim that already fails measures nothing
        other_number = claim.page + 1 if claim.page < page_count(pdf_path) else claim.page - 1
        other = read_page(pdf_path, other_number) if other_number >= 1 else None
        source = collapse(claim.source_text or "")
        quoted = printed_numbers(source)
        converted = CONVERSION_NOTE in (claim.notes or "").casefold()

        def printed_in_role(value: float, field: str, quoted: list[Printed] = quoted,
                            converted: bool = converted) -> bool:
            return is_printed(value, field, quoted, converted)

        for mutant in mutants(claim, page.text, (other_number, other.text) if other else None, source,
                              printed_in_role, printed_columns(claim, page, source)):
            mutant_page = other if mutant.kind == "page" and other else page
            results.append((mutant, claim_problems(mutant.claim, mutant_page)))
    return results


def print_mutation_score(files: list[Path]) -> int:
    caught = planted = 0
    for path in files:
        results = planted_mutants(path, SHARED / "datasheets")
        escaped = [mutant for mutant, problems in results if not problems]
        caught += len(results) - len(escaped)
        planted += len(results)
        by_kind: dict[str, list[int]] = {}
        for mutant, problems in results:
            tally = by_kind.setdefault(mutant.kind, [0, 0])
            tally[0] += bool(problems)
            tally[1] += 1
        kinds = ", ".join(f"{kind} {c}/{n}" for kind, (c, n) in sorted(by_kind.items()))
        print(f"{path}: {len(results) - len(escaped)}/{len(results)} mutants caught ({kinds})")
        for mutant in escaped:
            print(f"  escaped: {mutant.claim_id} {mutant.kind}")
    print(f"mutation score: {caught}/{planted} caught")
    return 0 if caught == planted else 1


def main(argv: list[str]) -> int:
    mutate = "--mutate" in argv
    files = [Path(a) for a in argv if a != "--mutate"] or list(DEFAULT_FILES)
    if mutate:
        return print_mutation_score(files)
    failed = False
    for path in files:
        problems = check_file(path, SHARED / "datasheets")
        count = len(load_claims(path).claims)
        print(f"{path}: {count} claims, {len(problems)} problems")
        for problem in problems:
            print(f"  {problem}")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
