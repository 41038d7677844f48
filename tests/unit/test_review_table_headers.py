"""Reading a row's columns under table headers as datasheets print them: columns without a role (Figure, VCC),
a header on two lines, a table whose column labels name no Min / Typ / Max, limits printed as ``±X``."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.structural import STRUCTURAL_RULES, header_for
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    # A Figure column between the definition and Min: its figure numbers stand closer to Min than to Typ.
    figures = [(40, 60, "Symbol"), (100, 60, "Definition"), (298, 60, "Figure"), (335, 60, "Min."),
               (364, 60, "Typ."), (390, 60, "Max."), (418, 60, "Units"),
               (40, 76, "tup"), (100, 76, "Wake delay"), (311, 76, "4"), (341, 76, "-"), (367, 76, "210"),
               (394, 76, "260"), (420, 76, "ns"),
               (40, 90, "tdn"), (100, 90, "Sleep delay"), (311, 90, "5"), (341, 90, "-"), (370, 90, "83"),
               (394, 90, "115"), (420, 90, "ns"),
               # Rows without a figure reference.
               (40, 104, "ILKA"), (100, 104, "Pin leakage"), (341, 104, "-"), (367, 104, "-"),
               (390, 104, "+/-250"), (420, 104, "nA"),
               (40, 118, "ILKB"), (100, 118, "Pad current"), (341, 118, "-"), (367, 118, "-"),
               (394, 118, "250"), (420, 118, "nA"),
               (40, 132, "TS"), (100, 132, "Storage temperature"), (311, 132, "6"), (341, 132, "-65"),
               (394, 132, "160"), (418, 132, "\u00b0C")]
    # A ratings table (Min / Max), then a thermal table whose column labels are packages: its rows are no Min
    # or Max.
    ratings = [(40, 180, "Parameter"), (330, 180, "MIN"), (380, 180, "MAX"), (440, 180, "UNIT"),
               (40, 196, "Sink current"), (330, 196, "0.02"), (380, 196, "2.5"), (440, 196, "A"),
               (40, 216, "Thermal information"),
               (250, 232, "QFN"), (300, 232, "SOIC"), (350, 232, "MSOP"), (400, 232, "TSSOP"),
               (40, 236, "THERMAL METRIC"), (440, 236, "UNIT"),
               (40, 252, "Case-to-air impedance"), (250, 252, "41.2"), (300, 252, "77.4"),
               (350, 252, "52.6"), (400, 252, "49.0"), (440, 252, "C/W")]
    # A header on two lines: the columns on the first, Typ (and the spanning label of the limit columns, one per
    # temperature range) on the second.
    two_lines = [(40, 300, "Symbol"), (90, 300, "Parameter"), (230, 300, "Conditions"), (300, 300, "VCC"),
                 (490, 300, "Units"),
                 (335, 308, "Typ"), (396, 308, "Guaranteed Limits"),
                 (40, 324, "tf"), (90, 324, "Fall time"), (300, 324, "3.0V"), (339, 324, "11"), (367, 324, "24"),
                 (407, 324, "29"), (459, 324, "33"), (496, 324, "ns"),
                 (300, 336, "5.5V"), (339, 336, "9"), (367, 336, "18"), (407, 336, "21"), (459, 336, "33"),
                 (496, 336, "ns")]
    # A heading setting VCC for the whole table, and a VCC column whose cells set it row by row.
    supply = [(40, 60, "Unless otherwise noted VCC = 5V, TA = 25C"),
              (40, 80, "Parameter"), (200, 80, "VCC"), (330, 80, "Min"), (380, 80, "Typ"), (430, 80, "Max"),
              (480, 80, "Unit"),
              (40, 100, "Supply current"), (200, 100, "3.3V"), (380, 100, "1.2"), (430, 100, "2.0"), (480, 100, "mA"),
              (200, 112, "5.0V"), (380, 112, "1.8"), (430, 112, "3.0"), (480, 112, "mA")]
    # A heading setting the temperature once per limit column, over a header on two lines (Typ, then the spanning
    # label of the limit columns).
    per_column = [(40, 40, "DC characteristics"),
                  (322, 52, "TA = 25\u00b0C"), (372, 52, "TA = -40 to 85\u00b0C"), (442, 52, "TA = -55 to 125\u00b0C"),
                  (40, 62, "Symbol"), (90, 62, "Parameter"), (170, 62, "Conditions"), (256, 62, "VCC"),
                  (530, 62, "Units"),
                  (300, 70, "Typ"), (380, 70, "Guaranteed Limits"),
                  (40, 86, "ICC"), (70, 86, "Quiescent"), (150, 86, "VI = VDD or VSS"), (256, 86, "6.0V"),
                  (336, 86, "4.0"), (398, 86, "40"), (464, 86, "90"), (530, 86, "\u00b5A"),
                  (40, 100, "IIN"), (70, 100, "Input"), (150, 100, "VI = VDD or VSS"), (256, 100, "6.0V"),
                  (334, 100, "\u00b10.2"), (394, 100, "\u00b12.0"), (460, 100, "\u00b12.0"), (530, 100, "\u00b5A")]
    # A ± printed as a word of its own before the limit; a number split by a space in a condition.
    apart = [(40, 60, "Parameter"), (120, 60, "Symbol"), (170, 60, "Test Conditions"), (330, 60, "Min."),
             (370, 60, "Typ."), (410, 60, "Max."), (450, 60, "Unit"),
             (40, 76, "Gate leak"), (120, 76, "IGSS"), (170, 76, "VG = 8 V"), (398, 76, "\u00b1"),
             (408, 76, "50"), (450, 76, "nA"),
             (40, 90, "Drain leakage"), (120, 90, "IDSS"), (170, 90, "VDS = 24 V"), (408, 90, "50"),
             (450, 90, "nA"),
             (40, 104, "Ripple rejection"), (170, 104, "fR =2 40Hz"), (330, 104, "55"), (372, 104, "70"),
             (450, 104, "dB")]
    path = tmp_path_factory.mktemp("pdf") / "headers.pdf"
    placed_pdf([[*figures, *ratings, *two_lines], supply, per_column, apart], path=path)
    return open_index(path)


def field_mismatch(index: DatasheetIndex, value: dict[str, Any], quote: str,
                   conditions: list[str] | None = None, page: int = 1) -> Any:
    request = {"name": "x", "unit": value.get("unit"), "conditions": conditions or []}
    [verdict] = audit_answer(index, value, quote, request, STRUCTURAL_RULES, page=page, confidence=0.9)
    return verdict


def kinds(verdict: Any) -> list[tuple[str, str | None]]:
    return [(m["kind"], m.get("field")) for f in verdict.findings for m in f.evidence["mismatches"]]


def test_a_figure_number_is_not_read_as_a_min(document: DatasheetIndex) -> None:
    assert not field_mismatch(document, {"typical": 210, "max": 260, "unit": "ns"},
                              "tup Wake delay 4 - 210 260").findings
    # The row's own limits are still read: a partial answer leaves its max out.
    assert kinds(field_mismatch(document, {"typical": 83, "unit": "ns"}, "tdn Sleep delay 5 - 83 115")) \
        == [("omitted_field", "max")]


def test_a_plus_minus_limit_covers_the_min_whose_cell_is_a_dash(document: DatasheetIndex) -> None:
    assert not field_mismatch(document, {"min": -250, "max": 250, "unit": "nA"},
                              "ILKA Pin leakage - - +/-250 nA").findings
    # A plain max does not: the min was made up.
    assert ("dash_cell", "min") in kinds(field_mismatch(document, {"min": -250, "max": 250, "unit": "nA"},
                                                        "ILKB Pad current - - 250 nA"))


def test_a_temperature_reported_in_a_bare_c_is_in_degrees(document: DatasheetIndex) -> None:
    assert not field_mismatch(document, {"min": -65, "max": 160, "unit": "C"},
                              "TS Storage temperature 6 -65 160 \u00b0C").findings
    assert ("unit_column", None) in kinds(field_mismatch(document, {"min": -65, "max": 160, "unit": "V"},
                                                         "TS Storage temperature 6 -65 160 \u00b0C"))


def test_another_tables_column_labels_end_the_search_for_a_header(document: DatasheetIndex) -> None:
    rows = [r for r in document.page(1).words if r.text == "49.0"]
    assert header_for(document, 1, (rows[0].y0 + rows[0].y1) / 2) is None
    assert not field_mismatch(document, {"typical": 49.0, "unit": "C/W"},
                              "Case-to-air impedance 41.2 77.4 52.6 49.0 C/W").findings
    # The ratings table above is still read under its own header.
    assert kinds(field_mismatch(document, {"min": 2.5, "unit": "A"}, "Sink current 0.02 2.5 A")) \
        == [("wrong_column", "min")]


def test_a_second_header_line_adds_its_roles_and_its_columns(document: DatasheetIndex) -> None:
    words = [w for w in document.page(1).words if w.text == "3.0V"]
    header = header_for(document, 1, (words[0].y0 + words[0].y1) / 2)
    assert header is not None and set(header.centres) == {"typical", "unit"}
    # A limit read from a temperature column: the Typ column beside it is not left out.
    assert not field_mismatch(document, {"max": 33, "unit": "ns"}, "5.5V 9 18 21 33 ns").findings
    # A Typ read as a limit is still a Typ.
    assert kinds(field_mismatch(document, {"max": 11, "unit": "ns"}, "Fall time 3.0V 11 24 29 33 ns")) \
        == [("wrong_column", "max")]


def test_a_condition_column_overrides_the_tables_heading(document: DatasheetIndex) -> None:
    assert not field_mismatch(document, {"typical": 1.2, "max": 2.0, "unit": "mA"},
                              "Supply current 3.3V 1.2 2.0 mA", ["VCC = 3.3V"], page=2).findings
    # The sub-row for the heading's own supply still contradicts the requested one.
    assert ("condition", None) in kinds(field_mismatch(document, {"typical": 1.8, "max": 3.0, "unit": "mA"},
                                                       "5.0V 1.8 3.0 mA", ["VCC = 3.3V"], page=2))


def test_a_heading_setting_a_condition_per_column_is_read_over_the_values_column(document: DatasheetIndex) -> None:
    # The 85 °C limit, requested at that range: the heading's other ranges stand over other columns.
    assert ("condition", None) not in kinds(field_mismatch(document, {"max": 40, "unit": "uA"},
                                                           "ICC Quiescent VI = VDD or VSS 6.0V 4.0 40 90",
                                                           ["VCC = 6.0V", "TA = -40 to 85\u00b0C"], page=3))
    assert ("condition", None) not in kinds(field_mismatch(document, {"min": -2.0, "max": 2.0, "unit": "uA"},
                                                           "IIN Input VI = VDD or VSS 6.0V \u00b10.2 \u00b12.0",
                                                           ["TA = -40 to 85\u00b0C"], page=3))
    assert ("condition", None) not in kinds(field_mismatch(document, {"max": 4.0, "unit": "uA"},
                                                           "ICC Quiescent VI = VDD or VSS 6.0V 4.0",
                                                           ["TA = 25\u00b0C"], page=3))
    # A range the heading prints over another column says nothing: the figure may stand in several columns.
    assert ("condition", None) not in kinds(field_mismatch(document, {"max": 40, "unit": "uA"},
                                                           "ICC Quiescent VI = VDD or VSS 6.0V 4.0 40 90",
                                                           ["TA = -55 to 125\u00b0C"], page=3))
    # A range the heading does not print is contradicted by the value's column.
    assert ("condition", None) in kinds(field_mismatch(document, {"max": 40, "unit": "uA"},
                                                       "ICC Quiescent VI = VDD or VSS 6.0V 4.0 40 90",
                                                       ["TA = 0 to 70\u00b0C"], page=3))


def test_a_plus_minus_printed_apart_covers_the_min(document: DatasheetIndex) -> None:
    assert not kinds(field_mismatch(document, {"min": -50, "max": 50, "unit": "nA"},
                                    "Gate leak IGSS VG = 8 V \u00b1 50 nA", page=4))
    # Without the sign the min was made up.
    assert ("wrong_column", "min") in kinds(field_mismatch(document, {"min": -50, "max": 50, "unit": "nA"},
                                                           "Drain leakage IDSS VDS = 24 V 50 nA", page=4))


def test_a_condition_whose_digits_the_text_layer_split_is_read_joined(document: DatasheetIndex) -> None:
    quote = "Ripple rejection fR =2 40Hz 55 70 dB"
    assert ("condition", None) not in kinds(field_mismatch(document, {"min": 55, "typical": 70, "unit": "dB"},
                                                           quote, ["fR = 240Hz"], page=4))
    assert ("condition", None) in kinds(field_mismatch(document, {"min": 55, "typical": 70, "unit": "dB"},
                                                       quote, ["fR = 200Hz"], page=4))


def test_a_condition_given_in_a_terse_requests_name_is_read_against_the_rows_setting(
        document: DatasheetIndex) -> None:
    def named(name: str, value: dict[str, Any], quote: str) -> list[tuple[str, str | None]]:
        [verdict] = audit_answer(document, value, quote, {"name": name, "unit": None, "conditions": []},
                                 STRUCTURAL_RULES, page=2, confidence=0.9)
        return kinds(verdict)

    low = ({"typical": 1.2, "max": 2.0, "unit": "mA"}, "Supply current 3.3V 1.2 2.0 mA")
    high = ({"typical": 1.8, "max": 3.0, "unit": "mA"}, "5.0V 1.8 3.0 mA")
    # The row's own supply cell, or the heading's supply where the row prints none, is the one the name asks for.
    assert ("condition", None) not in named("Supply current at 3.3 V", *low)
    assert ("condition", None) not in named("Supply current at 5 V, no load", *high)
    # Another supply than the name's is another specification.
    assert ("condition", None) in named("Supply current at 3.3 V, no load", *high)
    assert ("condition", None) in named("Supply current at 5 V", *low)
    # A figure the name gives for another quantity of the row ("at 3.3 V output") says nothing of the supply.
    assert ("condition", None) not in named("Supply current at 3.3 V output", *high)
