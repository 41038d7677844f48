"""Columns named by a limit-word header (Min / Typ / Max / Unit) whose words, or whose values, the text layer
prints as one span: each word goes to the column it sits over."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from app.documents.tables import page_tables
from tests.support.synthetic_datasheets import ask_reader, index_of

HELV = pymupdf.Font("helv")
SIZE = 9
GAP = "   "  # three spaces: a narrower gap than the cell splitter's, so each run stays one span and one cell


def _text(page: pymupdf.Page, x: float, y: float, text: str) -> None:
    writer = pymupdf.TextWriter(page.rect)
    writer.append((x, y), text, font=HELV, fontsize=SIZE)
    writer.write_text(page)


def _x_of(run: str, word_index: int, x: float) -> float:
    """Left edge of one word of a run written at ``x`` (past the last word: where the next one would start)."""
    words = run.split(GAP)
    return x + HELV.text_length(GAP.join(words[:word_index]) + (GAP if word_index else ""), fontsize=SIZE)


def _rows(markdown: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines()
            if not line.startswith("|---")]


LIMITS = GAP.join(["MIN", "TYP", "MAX"])
X_NAME, X_COND, X_LIMITS, X_UNIT = 50, 170, 330, 440


@pytest.fixture(scope="module")
def merged_runs_pdf(tmp_path_factory) -> Path:
    """A borderless table: the header ``MIN TYP MAX`` is one span, and so is each full row of values; a row with
    only a min and a max places them under their headers."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    _text(page, 50, 60, "ELECTRICAL CHARACTERISTICS")
    y = 90
    for name, cond, unit in (("Parameter", "Test conditions", "Unit"),):
        _text(page, X_NAME, y, name)
        _text(page, X_COND, y, cond)
        _text(page, X_LIMITS, y, LIMITS)
        _text(page, X_UNIT, y, unit)
    rows = [
        ("Input voltage range", "VIN = 5 V", ("1.10", "2.20", "3.30"), "V"),
        ("Output current", "VOUT = 1.8 V", ("0.45", "0.60", "0.85"), "A"),
        ("Bias current", "TA = 25 °C", ("1.50", "", "2.75"), "mA"),
        ("Wake-up delay", "from standby", ("", "140", ""), "us"),
    ]
    for name, cond, values, unit in rows:
        y += 16
        _text(page, X_NAME, y, name)
        _text(page, X_COND, y, cond)
        if all(values):
            _text(page, X_LIMITS, y, GAP.join(values))
        else:
            for k, value in enumerate(values):
                if value:  # each value under its header word
                    _text(page, _x_of(LIMITS, k, X_LIMITS), y, value)
        _text(page, X_UNIT, y, unit)
    path = tmp_path_factory.mktemp("colroles") / "merged_runs.pdf"
    doc.save(str(path))
    doc.close()
    return path


def _table(path: Path) -> list[list[str]]:
    tables = page_tables(index_of(path), 1)
    assert len(tables) == 1
    return _rows(tables[0].markdown())


def test_one_span_header_and_one_span_values_become_three_columns(merged_runs_pdf: Path) -> None:
    rows = _table(merged_runs_pdf)
    assert rows[0] == ["Parameter", "Test conditions", "MIN", "TYP", "MAX", "Unit"]
    assert rows[1] == ["Input voltage range", "VIN = 5 V", "1.10", "2.20", "3.30", "V"]
    assert rows[2] == ["Output current", "VOUT = 1.8 V", "0.45", "0.60", "0.85", "A"]


def test_a_row_without_typical_places_min_and_max_by_position(merged_runs_pdf: Path) -> None:
    rows = _table(merged_runs_pdf)
    assert rows[3] == ["Bias current", "TA = 25 °C", "1.50", "", "2.75", "mA"]
    assert rows[4] == ["Wake-up delay", "from standby", "", "140", "", "us"]


def test_names_and_conditions_with_spaces_stay_whole(merged_runs_pdf: Path) -> None:
    rows = _table(merged_runs_pdf)
    assert [r[0] for r in rows[1:]] == ["Input voltage range", "Output current", "Bias current", "Wake-up delay"]
    assert [r[1] for r in rows[1:]] == ["VIN = 5 V", "VOUT = 1.8 V", "TA = 25 °C", "from standby"]


def test_the_reader_answers_each_limit_from_the_split_columns(merged_runs_pdf: Path, dsx_env) -> None:  # noqa: ANN001
    index = index_of(merged_runs_pdf)
    answer = ask_reader(index, "Output current", "A")
    assert answer["found"] is True, answer.get("reason")
    value = answer["values"][0]
    assert (value["min"], value["typical"], value["max"]) == (0.45, 0.60, 0.85)
    answer = ask_reader(index, "Bias current", "mA")
    assert answer["found"] is True, answer.get("reason")
    value = answer["values"][0]
    assert (value["min"], value["typical"], value["max"]) == (1.50, None, 2.75)


def test_merged_header_words_over_separate_ruled_value_cells(tmp_path: Path) -> None:
    """The header ``Min. Typ. Max. Units`` is one span across four ruled columns whose values are separate."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    top, row_h = 80, 18
    header, x_header = GAP.join(["Min.", "Typ.", "Max.", "Units"]), 203
    # Each header word sits inside its ruled column, but the run is one span that crosses the rules.
    cols = [50] + [_x_of(header, k, x_header) - 3 for k in range(4)] + [_x_of(header, 4, x_header) + 30, 500]
    _text(page, cols[0] + 3, top + 12, "Symbol Definition")
    _text(page, x_header, top + 12, header)
    _text(page, cols[5] + 3, top + 12, "Test Conditions")
    body = [("Input rise time", "—", "32", "48", "ns", "CL = 1 nF"),
            ("Input fall time", "—", "21", "37", "ns", "CL = 1 nF"),
            ("Output hold time", "12", "—", "—", "ns", "VS = 0 V")]
    y = top + row_h
    for row in body:
        for x, text in zip(cols, row, strict=False):
            _text(page, x + 3, y + 12, text)
        y += row_h
    for k in range(len(body) + 2):
        page.draw_line((cols[0], top + k * row_h), (cols[-1], top + k * row_h))
    for x in cols:
        page.draw_line((x, top), (x, y))
    path = tmp_path / "ruled_merged_header.pdf"
    doc.save(str(path))
    doc.close()
    rows = _table(path)
    assert rows[0][1:] == ["Min.", "Typ.", "Max.", "Units", "Test Conditions"]
    assert rows[1] == ["Input rise time", "—", "32", "48", "ns", "CL = 1 nF"]
    assert rows[3] == ["Output hold time", "12", "—", "—", "ns", "VS = 0 V"]


def _grid(page: pymupdf.Page, top: float, rows: list[tuple[str, str, str, str, str]], xs: dict[str, float],
          edges: list[float]) -> float:
    """Ruled rows whose limit values share one ruled column (no rules between Min, Typ and Max)."""
    row_h = 16
    for k, (name, low, typ, high, unit) in enumerate(rows):
        base = top + k * row_h + 11
        _text(page, edges[0] + 3, base, name)
        for key, value in (("min", low), ("typ", typ), ("max", high), ("unit", unit)):
            if value:
                _text(page, xs[key], base, value)
    bottom = top + len(rows) * row_h
    for k in range(len(rows) + 1):
        page.draw_line((edges[0], top + k * row_h), (edges[-1], top + k * row_h))
    for x in edges:
        page.draw_line((x, top), (x, bottom))
    return bottom


def test_a_header_printed_once_above_names_the_grids_under_it(tmp_path: Path) -> None:
    """One header row over two ruled grids that a caption separates: neither grid has a header of its own."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    xs = {"min": 300.0, "typ": 345.0, "max": 390.0, "unit": 445.0}
    edges = [50, 290, 435, 490]
    _text(page, 53, 100, "PARAMETER")
    for key, label in (("min", "MIN"), ("typ", "TYP"), ("max", "MAX"), ("unit", "UNIT")):
        _text(page, xs[key], 100, label)
    _text(page, 53, 120, "OSCILLATOR")
    bottom = _grid(page, 130, [("Start-up time", "0.20", "0.35", "0.90", "ms"),
                               ("Frequency drift", "", "12", "40", "ppm"),
                               ("Duty cycle", "45", "", "55", "%")], xs, edges)
    _text(page, 53, bottom + 60, "OUTPUT STAGE")  # far enough below that the two grids stay two tables
    _grid(page, bottom + 70, [("Rise time", "", "6.5", "9.0", "ns"),
                              ("Fall time", "", "5.5", "8.0", "ns"),
                              ("Output swing", "2.9", "3.1", "", "V")], xs, edges)
    path = tmp_path / "header_above.pdf"
    doc.save(str(path))
    doc.close()
    tables = page_tables(index_of(path), 1)
    grids = [_rows(t.markdown()) for t in tables if "Rise time" in t.markdown() or "Duty cycle" in t.markdown()]
    assert len(grids) == 2
    for rows in grids:
        assert rows[0] == ["PARAMETER", "MIN", "TYP", "MAX", "UNIT"]
    assert grids[0][2] == ["Frequency drift", "", "12", "40", "ppm"]
    assert grids[0][3] == ["Duty cycle", "45", "", "55", "%"]
    assert grids[1][1] == ["Rise time", "", "6.5", "9.0", "ns"]
    assert grids[1][3] == ["Output swing", "2.9", "3.1", "", "V"]


def test_a_sentence_naming_a_minimum_and_a_maximum_splits_nothing(tmp_path: Path) -> None:
    """A note inside a table that speaks of a minimum and a maximum, over values, is not a header row."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    y = 100
    for name, first, second in (("Profile step", "Process A", "Process B"), ("Soak time", "60 s", "90 s"),
                                ("Peak level", "12.5", "14.0"), ("Hold time", "20", "30"), ("Cool time", "25", "35")):
        _text(page, 50, y, name)
        _text(page, 250, y, first)
        _text(page, 400, y, second)
        y += 16
        if name == "Peak level":  # a note between rows; its two limit words fall inside the second column
            _text(page, 180, y, "* a minimum or a maximum")
            y += 16
    path = tmp_path / "footnote.pdf"
    doc.save(str(path))
    doc.close()
    tables = page_tables(index_of(path), 1)
    assert tables
    rows = _rows(tables[0].markdown())
    assert rows[1] == ["Soak time", "60 s", "90 s"]
    assert rows[-1] == ["Cool time", "25", "35"]
