"""The structural re-read: a grounded value's row read again with its table's column roles."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.structural import STRUCTURAL_RULES, header_for
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

NAME, SYMBOL, COND, MIN, TYP, MAX, UNIT = 40, 140, 190, 330, 380, 430, 480


pytestmark = pytest.mark.usefixtures("isolated_index_cache")


def row(y: float, name: str, symbol: str, cond: str, cells: tuple[str, str, str], unit: str) -> list:
    placed = [(NAME, y, name), (SYMBOL, y, symbol), (COND, y, cond), (UNIT, y, unit)]
    return placed + [(x, y, text) for x, text in zip((MIN, TYP, MAX), cells, strict=True) if text]


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    header = [(NAME, 80, "Parameter"), (SYMBOL, 80, "Symbol"), (COND, 80, "Conditions"), (MIN, 80, "Min"),
              (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit")]
    page1 = [(NAME, 60, "Operating characteristics"), *header,
             *row(100, "Drain current", "IDR", "VQ = 3 V", ("-", "-", "12"), "mA"),
             *row(120, "Wake time", "tWK", "cold start", ("2.5", "4.0", "9.0"), "ms")]
    # The table continues on the next page without repeating its header. (Dashes are hyphens: the built-in
    # font has no en dash.)
    page2 = [*row(80, "Leak current", "ILK", "VQ = 3 V", ("-", "0.8", "2"), "uA"),
             *row(100, "Bias level", "VBS", "open load", ("1.1", "1.2", "1.3"), "V")]
    path = tmp_path_factory.mktemp("pdf") / "structure.pdf"
    placed_pdf([page1, page2], path=path)
    return open_index(path)


def field_mismatch(index: DatasheetIndex, value: dict[str, Any], quote: str, page: int,
                   conditions: list[str] | None = None) -> Any:
    request = {"name": "x", "unit": None, "conditions": conditions or []}
    [verdict] = audit_answer(index, value, quote, request, STRUCTURAL_RULES, page=page, confidence=0.9)
    return verdict


def test_a_faithful_reading_is_clean(document: DatasheetIndex) -> None:
    verdict = field_mismatch(document, {"min": 2.5, "typical": 4.0, "max": 9.0, "unit": "ms"},
                             "Wake time tWK cold start 2.5 4.0 9.0 ms", 1)
    assert verdict.evaluable and not verdict.findings


def test_max_column_reported_as_typical_is_flagged_with_the_row_as_evidence(document: DatasheetIndex) -> None:
    verdict = field_mismatch(document, {"typical": 12, "unit": "mA"}, "Drain current IDR VQ = 3 V - - 12 mA", 1)
    [finding] = verdict.findings
    kinds = {(m["kind"], m["field"]) for m in finding.evidence["mismatches"]}
    assert ("wrong_column", "typical") in kinds and ("dash_cell", "typical") in kinds
    [evidence] = finding.evidence["rows"]
    assert evidence["page"] == 1 and evidence["header"].startswith("Parameter")
    x0, y0, x1, y1 = evidence["row_box"]
    assert x0 <= NAME + 1 and x1 >= UNIT and y0 < 100 < y1 + 3  # the whole row, not the quote's words only


def test_header_is_inherited_from_an_earlier_section_of_the_table(document: DatasheetIndex) -> None:
    header = header_for(document, 2, 80.0)
    assert header is not None and header.page == 1 and set(header.centres) >= {"min", "typical", "max", "unit"}
    verdict = field_mismatch(document, {"typical": 2, "unit": "uA"}, "Leak current ILK VQ = 3 V - 0.8 2 uA", 2)
    assert [m["column"] for m in verdict.findings[0].evidence["mismatches"]] == ["max"]
    assert not field_mismatch(document, {"typical": 0.8, "max": 2, "unit": "uA"},
                              "Leak current ILK VQ = 3 V - 0.8 2 uA", 2).findings


def test_unit_column_disagreeing_with_the_reported_unit(document: DatasheetIndex) -> None:
    verdict = field_mismatch(document, {"min": 1.1, "typical": 1.2, "max": 1.3, "unit": "A"},
                             "Bias level VBS open load 1.1 1.2 1.3 V", 2)
    assert [m["kind"] for m in verdict.findings[0].evidence["mismatches"]] == ["unit_column"]


def test_requested_conditions_contradicted_by_the_row(document: DatasheetIndex) -> None:
    verdict = field_mismatch(document, {"max": 12, "unit": "mA"}, "Drain current IDR VQ = 3 V - - 12 mA", 1,
                             conditions=["VQ = 5 V"])
    assert [m["kind"] for m in verdict.findings[0].evidence["mismatches"]] == ["condition"]
    same = field_mismatch(document, {"max": 12, "unit": "mA"}, "Drain current IDR VQ = 3 V - - 12 mA", 1,
                          conditions=["VQ = 3000 mV"])
    assert not same.findings


@pytest.fixture(scope="module")
def limits(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    header = [(NAME, 80, "Parameter"), (SYMBOL, 80, "Symbol"), (COND, 80, "Conditions"), (MIN, 80, "Min"),
              (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit")]
    # Long test conditions in small print: more words on the row than a short table row has.
    long_conditions = [(COND + 11 * i, 160, word) for i, word in enumerate("abcdefghijk")]
    page = [*header,
            *row(100, "Hold current", "IHD", "gate open", ("-", "1.5", "10"), "mA"),
            *row(120, "Trim offset", "VTO", "any input", ("-15", "", "+15"), "mV"),
            *row(140, "Offset error", "VOS", "any input", ("", "±6", ""), "mV"),
            (NAME, 160, "Ref level"), (SYMBOL, 160, "VRF"), *long_conditions, (MIN, 160, "1.2"), (TYP, 160, "1.25"),
            (MAX, 160, "1.3"), (UNIT, 160, "V"),
            # A footnote mark printed at the end of the conditions, where the Min column begins.
            *row(180, "Gate trigger", "IGT", "quadrant", ("", "", "7.0"), "mA"), (MIN - 4, 180, "[1]")]
    path = tmp_path_factory.mktemp("pdf") / "limits.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def omitted(verdict: Any) -> list[str]:
    return [m["field"] for f in verdict.findings for m in f.evidence["mismatches"] if m["kind"] == "omitted_field"]


def test_a_value_column_the_answer_leaves_out_is_flagged(limits: DatasheetIndex) -> None:
    quote = "Hold current IHD gate open - 1.5 10 mA"
    assert omitted(field_mismatch(limits, {"max": 10, "unit": "mA"}, quote, 1)) == ["typical"]
    # The dash under Min specifies nothing: the full reading is clean.
    assert not field_mismatch(limits, {"typical": 1.5, "max": 10, "unit": "mA"}, quote, 1).findings


def test_a_signed_limit_is_not_reported_by_its_opposite(limits: DatasheetIndex) -> None:
    quote = "Trim offset VTO any input -15 +15 mV"
    assert omitted(field_mismatch(limits, {"max": 15, "unit": "mV"}, quote, 1)) == ["min"]
    assert not field_mismatch(limits, {"min": -15, "max": 15, "unit": "mV"}, quote, 1).findings


def test_a_plus_minus_cell_read_as_min_and_max_leaves_nothing_out(limits: DatasheetIndex) -> None:
    assert not field_mismatch(limits, {"min": -6, "max": 6, "unit": "mV"}, "Offset error VOS any input ±6 mV",
                              1).findings


def test_a_long_row_whose_value_stands_in_its_own_column_is_still_read(limits: DatasheetIndex) -> None:
    quote = "Ref level VRF a b c d e f g h i j k 1.2 1.25 1.3 V"
    assert omitted(field_mismatch(limits, {"max": 1.3, "unit": "V"}, quote, 1)) == ["min", "typical"]


def test_a_footnote_mark_is_not_a_value(limits: DatasheetIndex) -> None:
    assert not field_mismatch(limits, {"max": 7.0, "unit": "mA"}, "Gate trigger IGT quadrant [1] 7.0 mA",
                              1).findings


@pytest.fixture(scope="module")
def headed(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 50, "Switching characteristics"), (NAME, 62, "VCC = 5 V, TA = 25 C unless otherwise specified"),
            (NAME, 80, "Parameter"), (COND, 80, "Conditions"), (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
            (NAME, 100, "Rise delay"), (TYP, 100, "22"), (MAX, 100, "33"), (UNIT, 100, "ns"),
            (NAME, 120, "Fall delay"), (COND, 120, "VCC = 3 V"), (TYP, 120, "31"), (MAX, 120, "45"), (UNIT, 120, "ns")]
    path = tmp_path_factory.mktemp("pdf") / "headed.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def conditions(verdict: Any) -> list[str]:
    return [m["row_sets"] for f in verdict.findings for m in f.evidence["mismatches"] if m["kind"] == "condition"]


def test_a_condition_the_tables_heading_sets_otherwise_is_flagged(headed: DatasheetIndex) -> None:
    value, quote = {"typical": 22, "max": 33, "unit": "ns"}, "Rise delay 22 33 ns"
    assert conditions(field_mismatch(headed, value, quote, 1, conditions=["VCC = 4.5 V"])) == ["VCC = 5 V"]
    assert not field_mismatch(headed, value, quote, 1, conditions=["VCC = 5 V"]).findings


def test_a_rows_own_condition_comes_before_the_heading(headed: DatasheetIndex) -> None:
    value, quote = {"typical": 31, "max": 45, "unit": "ns"}, "Fall delay VCC = 3 V 31 45 ns"
    assert not field_mismatch(headed, value, quote, 1, conditions=["VCC = 3 V"]).findings
    assert conditions(field_mismatch(headed, value, quote, 1, conditions=["VCC = 5 V"])) == ["VCC = 3 V"]


@pytest.fixture(scope="module")
def quadrants(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    header = [(NAME, 80, "Parameter"), (MIN, 80, "Min"), (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit")]
    page = [*header, (NAME, 100, "Trigger current"), (UNIT, 100, "mA"),
            (NAME, 112, "T2(+), G(+)"), (MAX, 112, "5.0"), (NAME, 124, "T2(-), G(+)"), (MAX, 124, "7.0")]
    path = tmp_path_factory.mktemp("pdf") / "quadrants.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def test_a_condition_the_row_prints_with_other_signs_is_another_quadrant(quadrants: DatasheetIndex) -> None:
    wrong = field_mismatch(quadrants, {"max": 5.0, "unit": "mA"}, "T2(+), G(+) 5.0", 1, conditions=["T2(-), G(+)"])
    assert conditions(wrong) == ["t2(+),g(+)"]
    assert not field_mismatch(quadrants, {"max": 7.0, "unit": "mA"}, "T2(-), G(+) 7.0", 1,
                              conditions=["T2(-), G(+)"]).findings


@pytest.fixture(scope="module")
def sub_rows(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    """One parameter stated on Min and Max sub-rows, its columns supply voltages."""
    cols = (260, 330, 400)
    header = [(NAME, 80, "Parameter"), (COND, 80, "Conditions"), (210, 80, "Limit"), (cols[0], 80, "2.5V"),
              (cols[1], 80, "4.0V"), (cols[2], 80, "6.0V"), (UNIT, 80, "Units")]
    low = [(NAME, 100, "Hold time"), (COND, 100, "CX = 3 nF"), (210, 100, "Min"),
           *zip(cols, (100, 100, 100), ("3.7", "3.3", "3.1"), strict=True), (UNIT, 100, "us")]
    high = [(COND, 112, "RX = 7 k"), (210, 112, "Max"), *zip(cols, (112, 112, 112), ("4.6", "4.4", "4.2"),
                                                               strict=True), (UNIT, 112, "us")]
    path = tmp_path_factory.mktemp("pdf") / "sub_rows.pdf"
    placed_pdf([[*header, *low, *high]], path=path)
    return open_index(path)


def test_a_value_of_a_min_sub_row_reported_as_typical_is_flagged(sub_rows: DatasheetIndex) -> None:
    verdict = field_mismatch(sub_rows, {"typical": 3.3, "unit": "us"}, "Hold time CX = 3 nF Min 3.7 3.3 3.1 us", 1)
    [finding] = verdict.findings
    assert [(m["kind"], m["field"], m["row"]) for m in finding.evidence["mismatches"]] == [
        ("row_role", "typical", "min")]


def test_values_reported_as_the_sub_rows_own_limits_are_clean(sub_rows: DatasheetIndex) -> None:
    assert not field_mismatch(sub_rows, {"min": 3.3, "unit": "us"}, "Hold time CX = 3 nF Min 3.7 3.3 3.1 us",
                              1).findings
    assert not field_mismatch(sub_rows, {"max": 4.4, "unit": "us"}, "RX = 7 k Max 4.6 4.4 4.2 us", 1).findings


@pytest.fixture(scope="module")
def typ_and_sub_rows(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    """A Typ column and limit columns per temperature range, one parameter stated on Min and Max sub-rows."""
    header = [(NAME, 80, "Parameter"), (COND, 80, "Conditions"), (272, 80, "VCC"), (UNIT, 80, "Units"),
              (300, 88, "Typ"), (360, 88, "Guaranteed Limits")]
    low = [(NAME, 104, "Pulse width"), (COND, 104, "CX = 0.2 uF"), (252, 104, "Min"), (272, 104, "5.0V"),
           (300, 104, "2"), (340, 104, "1.8"), (380, 104, "1.7"), (UNIT, 104, "ms")]
    high = [(COND, 116, "RX = 10 k"), (250, 116, "Max"), (272, 116, "5.0V"), (300, 116, "2"), (340, 116, "2.2"),
            (380, 116, "2.3"), (UNIT, 116, "ms")]
    path = tmp_path_factory.mktemp("pdf") / "typ_sub_rows.pdf"
    placed_pdf([[*header, *low, *high]], path=path)
    return open_index(path)


def test_an_answer_leaving_out_the_other_sub_rows_limit_is_partial(typ_and_sub_rows: DatasheetIndex) -> None:
    quote = "Pulse width CX = 0.2 uF Min 5.0V 2 1.8 1.7 ms"
    verdict = field_mismatch(typ_and_sub_rows, {"min": 1.8, "typical": 2, "unit": "ms"}, quote, 1)
    assert [(m["kind"], m["field"]) for f in verdict.findings for m in f.evidence["mismatches"]] == [
        ("omitted_field", "max")]
    # With both limits, or one limit alone, nothing is left out.
    assert not field_mismatch(typ_and_sub_rows, {"min": 1.8, "typical": 2, "max": 2.2, "unit": "ms"},
                              "Pulse width CX = 0.2 uF Min 5.0V 2 1.8 1.7 ms RX = 10 k Max 5.0V 2 2.2 2.3 ms",
                              1).findings
    assert not field_mismatch(typ_and_sub_rows, {"min": 1.8, "unit": "ms"}, quote, 1).findings
