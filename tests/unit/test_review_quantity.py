"""other_quantity: a value read from a row that names another quantity than the one asked for."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.quantity import QUALIFIERS, QUANTITY_RULES, mentions
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

NAME, SYMBOL, COND, MIN, TYP, MAX, UNIT = 40, 150, 200, 330, 380, 430, 480


pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 80, "Parameter"), (SYMBOL, 80, "Symbol"), (MIN, 80, "Min"), (TYP, 80, "Typ"), (MAX, 80, "Max"),
            (UNIT, 80, "Unit"),
            (NAME, 100, "Gate voltage"), (SYMBOL, 100, "VGS"), (MAX, 100, "12"), (UNIT, 100, "V"),
            (NAME, 120, "Gate threshold voltage"), (SYMBOL, 120, "VGS(th)"), (MIN, 120, "0.6"), (MAX, 120, "1.5"),
            (UNIT, 120, "V"),
            (NAME, 140, "Leak current"), (SYMBOL, 140, "ILK"), (MAX, 140, "0.1"), (UNIT, 140, "mA"),
            (NAME, 160, "Leak current cut-off"), (SYMBOL, 160, "ILC"), (MAX, 160, "0.3"), (UNIT, 160, "mA"),
            (NAME, 200, "20 dB Bandwidth of the carrier"), (NAME, 220, "Output power 4 dBm"),
            # A name centred on a three-line cell: its lines stand above and below the value's row.
            (NAME, 252, "Drain cut-off"), (SYMBOL, 260, "IDX"), (COND, 260, "VD = rated"), (MAX, 260, "0.2"),
            (UNIT, 260, "mA"), (NAME, 268, "(gate open)"),
            # The next parameter's name right under a row with a name of its own.
            (NAME, 300, "Drain current"), (MAX, 300, "3"), (UNIT, 300, "A"), (NAME, 309, "Hysteresis band"),
            (NAME, 340, "Gate non-trigger voltage"), (SYMBOL, 340, "VGD"), (MIN, 340, "0.15"), (UNIT, 340, "V"),
            (NAME, 360, "Gate trigger voltage"), (SYMBOL, 360, "VGT"), (MAX, 360, "1.8"), (UNIT, 360, "V")]
    path = tmp_path_factory.mktemp("pdf") / "quantity.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def verdict(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str) -> Any:
    request = {"name": name, "unit": None, "conditions": []}
    [result] = audit_answer(index, value, quote, request, [r for r in QUANTITY_RULES if r.name == "other_quantity"],
                            confidence=0.9)
    return result


def test_a_value_from_a_threshold_row_is_not_the_maximum_gate_voltage(document: DatasheetIndex) -> None:
    quote = "Gate threshold voltage VGS(th) 0.6 1.5 V"
    [finding] = verdict(document, "Maximum gate voltage", {"min": 0.6, "max": 1.5, "unit": "V"}, quote).findings
    assert finding.evidence["rows"][0]["qualifier"] == "threshold"
    # Asked for the threshold, by name or by its symbol, the same row is the right one.
    assert not verdict(document, "Gate threshold voltage", {"min": 0.6, "max": 1.5, "unit": "V"}, quote).findings
    assert not verdict(document, "VGS(th)", {"min": 0.6, "max": 1.5, "unit": "V"}, quote).findings
    assert not verdict(document, "Maximum gate voltage", {"max": 12, "unit": "V"}, "Gate voltage VGS 12 V").findings


def test_spellings_of_a_qualifier_are_one_qualifier(document: DatasheetIndex) -> None:
    quote = "Leak current cut-off ILC 0.3 mA"
    assert verdict(document, "Leak current", {"max": 0.3, "unit": "mA"}, quote).findings
    assert not verdict(document, "Leak current (cutoff)", {"max": 0.3, "unit": "mA"}, quote).findings


def test_a_value_opening_its_row_is_judged_by_the_words_after_it(document: DatasheetIndex) -> None:
    assert verdict(document, "Output power accuracy", {"typical": 20, "unit": "dB"},
                   "20 dB Bandwidth of the carrier").findings
    assert not verdict(document, "Output power", {"max": 4, "unit": "dBm"}, "Output power 4 dBm").findings


def test_a_name_wrapped_around_the_values_row_is_its_label(document: DatasheetIndex) -> None:
    assert verdict(document, "Drain current", {"max": 0.2, "unit": "mA"}, "IDX VD = rated 0.2 mA").findings
    # Under a row with a name of its own, the next line is another parameter's.
    assert not verdict(document, "Drain current", {"max": 3, "unit": "A"}, "Drain current 3 A").findings


def test_a_non_trigger_row_is_not_the_trigger_parameter(document: DatasheetIndex) -> None:
    quote = "Gate non-trigger voltage VGD 0.15 V"
    [finding] = verdict(document, "Gate trigger voltage", {"min": 0.15, "unit": "V"}, quote).findings
    assert finding.evidence["rows"][0]["qualifier"] == "non-trigger"
    assert not verdict(document, "Gate non-trigger voltage", {"min": 0.15, "unit": "V"}, quote).findings
    assert not verdict(document, "Gate trigger voltage", {"max": 1.8, "unit": "V"},
                       "Gate trigger voltage VGT 1.8 V").findings
    # A text layer's minus sign for the hyphen is the same spelling.
    assert mentions("Gate Non\u2212Trigger Voltage", QUALIFIERS["non-trigger"])


@pytest.fixture(scope="module")
def thermal(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 60, "Thermal data"),
            (NAME, 80, "Parameter"), (SYMBOL, 80, "Symbol"), (TYP, 80, "Typ"), (UNIT, 80, "Unit"),
            (NAME, 100, "Junction-to-ambient"), (SYMBOL, 100, "θJA"), (TYP, 100, "180"), (UNIT, 100, "°C/W"),
            (NAME, 120, "Junction-to-case"), (SYMBOL, 120, "θJC"), (TYP, 120, "41"), (UNIT, 120, "°C/W")]
    path = tmp_path_factory.mktemp("pdf") / "thermal.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def path_verdict(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str) -> Any:
    request = {"name": name, "unit": "degC/W", "conditions": []}
    [result] = audit_answer(index, value, quote, request,
                            [r for r in QUANTITY_RULES if r.name == "other_thermal_path"])
    return result


def test_a_value_from_another_thermal_path_is_flagged(thermal: DatasheetIndex) -> None:
    [finding] = path_verdict(thermal, "Junction to case thermal resistance", {"typical": 180, "unit": "degC/W"},
                             "Junction-to-ambient θJA 180 °C/W").findings
    assert finding.evidence["rows"][0]["row_paths"] == ["ambient"]


def test_a_value_from_the_requested_thermal_path_stays_unflagged(thermal: DatasheetIndex) -> None:
    assert not path_verdict(thermal, "Thermal resistance, junction to case", {"typical": 41, "unit": "degC/W"},
                            "Junction-to-case θJC 41 °C/W").findings
    assert not path_verdict(thermal, "Thermal resistance", {"typical": 41, "unit": "degC/W"},
                            "Junction-to-case θJC 41 °C/W").evaluable
