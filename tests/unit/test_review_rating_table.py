"""other_rating_table: an absolute maximum rating answered from an operating-conditions table."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.rating_table import RATING_TABLE_RULES
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

NAME, SYMBOL, MIN, TYP, MAX, UNIT = 40, 170, 330, 380, 430, 480


pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    header = [(NAME, 0, "Parameter"), (SYMBOL, 0, "Symbol"), (MIN, 0, "Min"), (TYP, 0, "Typ"), (MAX, 0, "Max"),
              (UNIT, 0, "Unit")]
    page = [(NAME, 60, "Absolute maximum ratings"), *[(x, 80, t) for x, _, t in header],
            (NAME, 100, "Port voltage"), (SYMBOL, 100, "VP"), (MIN, 100, "-0.3"), (MAX, 100, "6"), (UNIT, 100, "V"),
            (NAME, 160, "Recommended operating conditions"), *[(x, 180, t) for x, _, t in header],
            (NAME, 200, "Port voltage"), (SYMBOL, 200, "VP"), (MIN, 200, "4.65"), (TYP, 200, "5"),
            (MAX, 200, "5.5"), (UNIT, 200, "V")]
    path = tmp_path_factory.mktemp("pdf") / "ratings.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def verdict(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str) -> Any:
    request = {"name": name, "unit": "V", "conditions": []}
    rules = [r for r in RATING_TABLE_RULES if r.name == "other_rating_table"]
    [result] = audit_answer(index, value, quote, request, rules)
    return result


def test_an_absolute_maximum_read_from_the_operating_table_is_flagged(document: DatasheetIndex) -> None:
    operating = {"min": 4.65, "typical": 5, "max": 5.5, "unit": "V"}
    [finding] = verdict(document, "Absolute maximum port voltage", operating, "Port voltage VP 4.65 5 5.5 V").findings
    assert finding.evidence["rows"][0]["table_title"] == "Recommended operating conditions"
    assert not verdict(document, "Absolute maximum port voltage", {"min": -0.3, "max": 6, "unit": "V"},
                       "Port voltage VP -0.3 6 V").findings


def test_other_requests_are_not_judged(document: DatasheetIndex) -> None:
    assert not verdict(document, "Port voltage", {"min": 4.65, "typical": 5, "max": 5.5, "unit": "V"},
                       "Port voltage VP 4.65 5 5.5 V").evaluable


@pytest.fixture(scope="module")
def ratings_list(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 60, "Absolute Maximum Ratings (Note 1)"),
            (NAME, 80, "Input voltage"), (MAX, 80, "20V"),
            (NAME, 95, "ESD rating (Note 2)"), (MAX, 95, "4500V"),
            (NAME, 110, "Thermal resistance, junction to ambient"), (MAX, 110, "55°C/W"),
            (NAME, 130, "DC Characteristics"),
            (NAME, 150, "Parameter"), (MIN, 150, "Min"), (TYP, 150, "Typ"), (MAX, 150, "Max"), (UNIT, 150, "Unit"),
            (NAME, 170, "Reset threshold"), (MIN, 170, "2.2"), (TYP, 170, "2.5"), (MAX, 170, "2.8"),
            (UNIT, 170, "V"),
            (NAME, 190, "Clamp voltage"), (TYP, 190, "7"), (UNIT, 190, "V")]
    path = tmp_path_factory.mktemp("pdf") / "ratings_list.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def typical_verdict(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str) -> Any:
    request = {"name": name, "unit": "V", "conditions": []}
    [result] = audit_answer(index, value, quote, request,
                            [r for r in RATING_TABLE_RULES if r.name == "rating_as_typical"])
    return result


def test_a_rating_reported_as_typical_is_flagged(ratings_list: DatasheetIndex) -> None:
    [finding] = typical_verdict(ratings_list, "ESD rating", {"typical": 4500, "unit": "V"}, "4500V").findings
    assert finding.evidence["rows"][0]["section_title"].startswith("Absolute Maximum Ratings")
    assert not typical_verdict(ratings_list, "ESD rating", {"max": 4500, "unit": "V"}, "4500V").findings


def test_typical_figures_of_a_later_section_stay_unflagged(ratings_list: DatasheetIndex) -> None:
    assert not typical_verdict(ratings_list, "Reset threshold", {"min": 2.2, "typical": 2.5, "max": 2.8, "unit": "V"},
                               "Reset threshold 2.2 2.5 2.8 V").findings
    assert not typical_verdict(ratings_list, "Clamp voltage", {"typical": 7, "unit": "V"}, "Clamp voltage 7 V").findings


def test_a_thermal_resistance_beside_the_ratings_stays_unflagged(ratings_list: DatasheetIndex) -> None:
    request = {"name": "Thermal resistance", "unit": "degC/W", "conditions": []}
    [result] = audit_answer(ratings_list, {"typical": 55, "unit": "degC/W"}, "55°C/W", request,
                            [r for r in RATING_TABLE_RULES if r.name == "rating_as_typical"])
    assert not result.findings


@pytest.fixture(scope="module")
def bare_maximum(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 60, "MAXIMUM RATINGS"), (NAME, 80, "Rating"), (SYMBOL, 80, "Symbol"), (TYP, 80, "Value"),
            (UNIT, 80, "Unit"),
            (NAME, 100, "Drain to source voltage"), (SYMBOL, 100, "VDX"), (TYP, 100, "30"), (UNIT, 100, "V"),
            (NAME, 160, "RECOMMENDED OPERATING CONDITIONS"),
            (NAME, 180, "Condition"), (SYMBOL, 180, "Symbol"), (MIN, 180, "Min"), (MAX, 180, "Max"),
            (UNIT, 180, "Unit"),
            (NAME, 200, "Drain to source voltage"), (SYMBOL, 200, "VDX"), (MIN, 200, "2.5"), (MAX, 200, "28"),
            (UNIT, 200, "V"),
            (NAME, 212, "Drain current"), (SYMBOL, 212, "ID"), (MIN, 212, "1"), (MAX, 212, "100"),
            (UNIT, 212, "mA")]
    path = tmp_path_factory.mktemp("pdf") / "bare_maximum.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def test_a_bare_maximum_read_from_the_operating_table_while_the_ratings_print_it_is_flagged(
        bare_maximum: DatasheetIndex) -> None:
    [finding] = verdict(bare_maximum, "Maximum drain to source voltage", {"max": 28, "unit": "V"},
                        "Drain to source voltage VDX 2.5 28 V").findings
    assert finding.evidence["rows"][0]["rating_row"].startswith("Drain to source voltage")
    assert not verdict(bare_maximum, "Maximum drain to source voltage", {"max": 30, "unit": "V"},
                       "Drain to source voltage VDX 30 V").findings


def test_a_bare_maximum_the_ratings_do_not_print_stays_unflagged(bare_maximum: DatasheetIndex) -> None:
    request = {"name": "Maximum drain current", "unit": "mA", "conditions": []}
    [result] = audit_answer(bare_maximum, {"max": 100, "unit": "mA"}, "Drain current ID 1 100 mA", request,
                            [r for r in RATING_TABLE_RULES if r.name == "other_rating_table"])
    assert not result.findings
    assert not verdict(bare_maximum, "Maximum operating drain to source voltage", {"max": 28, "unit": "V"},
                       "Drain to source voltage VDX 2.5 28 V").evaluable


@pytest.fixture(scope="module")
def value_column(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 60, "Thermal characteristics"),
            (NAME, 80, "Parameter"), (SYMBOL, 80, "Symbol"), (TYP, 80, "Value"), (UNIT, 80, "Unit"),
            (NAME, 100, "Die temperature"), (SYMBOL, 100, "TD"), (TYP, 100, "140"), (UNIT, 100, "°C"),
            (NAME, 160, "Electrical characteristics"),
            (NAME, 180, "Parameter"), (MIN, 180, "Min"), (TYP, 180, "Typ"), (MAX, 180, "Max"), (UNIT, 180, "Unit"),
            (NAME, 200, "Peak gain"), (TYP, 200, "17"), (UNIT, 200, "dB")]
    path = tmp_path_factory.mktemp("pdf") / "value_column.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def maximum_verdict(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str) -> Any:
    request = {"name": name, "unit": value["unit"], "conditions": []}
    [result] = audit_answer(index, value, quote, request,
                            [r for r in RATING_TABLE_RULES if r.name == "maximum_as_typical"])
    return result


def test_a_maximum_reported_as_typical_from_a_value_column_is_flagged(value_column: DatasheetIndex) -> None:
    [finding] = maximum_verdict(value_column, "Maximum die temperature", {"typical": 140, "unit": "degC"},
                                "Die temperature TD 140 °C").findings
    assert finding.evidence["rows"][0]["row_text"].startswith("Die temperature")
    assert not maximum_verdict(value_column, "Maximum die temperature", {"max": 140, "unit": "degC"},
                               "Die temperature TD 140 °C").findings


def test_a_typical_under_a_typ_column_or_asked_without_a_maximum_stays_unflagged(
        value_column: DatasheetIndex) -> None:
    assert not maximum_verdict(value_column, "Maximum peak gain", {"typical": 17, "unit": "dB"},
                               "Peak gain 17 dB").findings
    assert not maximum_verdict(value_column, "Die temperature", {"typical": 140, "unit": "degC"},
                               "Die temperature TD 140 °C").evaluable
