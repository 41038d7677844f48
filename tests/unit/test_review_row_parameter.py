"""other_parameter_row: a value read from a row naming another parameter while another row names the requested one."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.row_parameter import ROW_PARAMETER_RULES, name_words
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

NAME, SYMBOL, COND, MIN, TYP, MAX, UNIT = 40, 170, 220, 330, 380, 430, 480

pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 60, "Dynamic characteristics"),
            (NAME, 80, "Parameter"), (SYMBOL, 80, "Symbol"), (COND, 80, "Conditions"), (MIN, 80, "Min"),
            (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
            (NAME, 100, "Total Load Charge"), (SYMBOL, 100, "QL"), (MIN, 100, "-"), (TYP, 100, "-"),
            (MAX, 100, "180"), (UNIT, 100, "nC"),
            (NAME, 120, "Load-Drain Charge"), (SYMBOL, 120, "QLD"), (COND, 120, "VL = 5 V"), (MIN, 120, "-"),
            (TYP, 120, "-"), (MAX, 120, "31"), (UNIT, 120, "nC"),
            (NAME, 140, "Working voltage"), (SYMBOL, 140, "VW"), (UNIT, 140, "V"),
            (COND, 134, "XY100A"), (MIN, 134, "2.3"), (MAX, 134, "5.2"),
            (COND, 146, "XY200A"), (MIN, 146, "2.4"), (MAX, 146, "5.2"),
            (NAME, 200, "Lowest working voltage"), (SYMBOL, 200, "VWL"), (UNIT, 200, "V"),
            (COND, 194, "XY100A"), (MAX, 194, "1.1"),
            (COND, 206, "XY200A"), (MAX, 206, "1.2"),
            (NAME, 240, "Drop voltage"), (SYMBOL, 240, "VD"), (COND, 240, "IL = 100mA"), (TYP, 240, "1.10"),
            (MAX, 240, "1.20"), (UNIT, 240, "V"),
            (COND, 252, "IL = 800mA"), (TYP, 252, "1.20"), (MAX, 252, "1.30"), (UNIT, 252, "V"),
            (NAME, 264, "Load limit"), (SYMBOL, 264, "IL"), (TYP, 264, "900"), (UNIT, 264, "mA"),
            (NAME, 284, "Lowest drop voltage"), (SYMBOL, 284, "VDL"), (TYP, 284, "0.9"), (UNIT, 284, "V"),
            (NAME, 310, "Specified heat range"), (SYMBOL, 310, "TA"), (MIN, 310, "-20"), (MAX, 310, "+95"),
            (UNIT, 310, "°C"),
            (NAME, 322, "Working heat range"), (SYMBOL, 322, "TA"), (MIN, 322, "-20"), (MAX, 322, "+95"),
            (UNIT, 322, "°C"),
            # A name cell wider than its column, running on past the Conditions column's edge.
            (NAME + 80, 350, "Maximum available output power"), (TYP, 350, "0"), (MAX, 350, "4"),
            (UNIT, 350, "dBm"),
            (NAME, 370, "Available output power"), (SYMBOL, 370, "PAV"), (MAX, 370, "2"), (UNIT, 370, "dBm")]
    path = tmp_path_factory.mktemp("pdf") / "rows.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def verdict(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str,
            conditions: list[str] | None = None) -> Any:
    request = {"name": name, "unit": value["unit"], "conditions": conditions or []}
    [result] = audit_answer(index, value, quote, request, ROW_PARAMETER_RULES)
    return result


def test_a_neighbouring_parameters_row_is_flagged(document: DatasheetIndex) -> None:
    [finding] = verdict(document, "Total load charge", {"max": 31, "unit": "nC"},
                        "Load-Drain Charge QLD VL = 5 V - - 31").findings
    assert finding.evidence["rows"][0]["named_row"].startswith("Total Load Charge")
    assert not verdict(document, "Total load charge", {"max": 180, "unit": "nC"},
                       "Total Load Charge QL - - 180").findings


def test_a_sub_row_reads_its_blocks_name(document: DatasheetIndex) -> None:
    wrong = verdict(document, "Working supply voltage, XY100A", {"max": 1.1, "unit": "V"}, "XY100A 1.1", ["XY100A"])
    assert wrong.findings and "Lowest" not in wrong.findings[0].evidence["rows"][0]["named_row"]
    assert not verdict(document, "Working supply voltage, XY100A", {"min": 2.3, "max": 5.2, "unit": "V"},
                       "XY100A 2.3 5.2", ["XY100A"]).findings


def test_a_row_named_as_requested_is_not_judged_against_others(document: DatasheetIndex) -> None:
    assert not verdict(document, "Lowest working voltage, XY100A", {"max": 1.1, "unit": "V"}, "XY100A 1.1",
                       ["XY100A"]).findings


def test_name_words_leave_symbols_and_clipped_duplicates_out() -> None:
    assert name_words("VCEO collector-emitter voltages Qgs VSENSE") == name_words("collector emitter voltage")
    assert name_words("Operating voltage oltage") == name_words("operating voltage")
    assert name_words("charger") == name_words("charge")


def test_a_sub_row_under_the_requested_name_stays_unflagged(document: DatasheetIndex) -> None:
    # The nearest named row is the next parameter's, below; the block's own name stands above.
    assert not verdict(document, "Drop voltage at 800 mA", {"typical": 1.2, "max": 1.3, "unit": "V"},
                       "IL = 800mA 1.20 1.30 V").findings


def test_the_same_figures_on_the_better_named_row_stay_unflagged(document: DatasheetIndex) -> None:
    assert not verdict(document, "Working heat range", {"min": -20, "max": 95, "unit": "degC"},
                       "TA -20 +95 °C").findings


def test_a_name_running_past_the_conditions_columns_edge_is_read_whole(document: DatasheetIndex) -> None:
    assert not verdict(document, "Maximum available output power", {"typical": 0, "max": 4, "unit": "dBm"},
                       "Maximum available output power 0 4").findings


@pytest.fixture(scope="module")
def wrapped_conditions(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    """A name cell whose bracketed conditions wrap onto the value's line, the value column far to the right."""
    page = [(NAME, 80, "Characteristic"), (SYMBOL + 40, 80, "Symbol"), (MIN, 80, "Min"), (TYP, 80, "Typ"),
            (MAX, 80, "Max"), (UNIT, 80, "Unit"),
            (NAME, 100, "Peak Standing Leakage Current"), (SYMBOL + 40, 100, "ISL"),
            (NAME, 110, "(VK = Rated VKM; Pin Open) TJ = 25°C"), (MIN, 110, "-"), (TYP, 110, "-"),
            (MAX, 110, "12"), (UNIT, 110, "µA"),
            (NAME, 170, "Peak Sense Current"), (SYMBOL + 40, 170, "ISP"), (MAX, 170, "1.5"), (UNIT, 170, "A")]
    path = tmp_path_factory.mktemp("pdf") / "wrapped.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def test_a_bracketed_condition_line_reads_the_name_above_it(wrapped_conditions: DatasheetIndex) -> None:
    quote = "(VK = Rated VKM; Pin Open) TJ = 25°C - - 12"
    [finding] = verdict(wrapped_conditions, "Peak sense current", {"max": 12, "unit": "uA"}, quote).findings
    assert finding.evidence["rows"][0]["named_row"].startswith("Peak Sense Current")
    assert not verdict(wrapped_conditions, "Peak standing leakage current", {"max": 12, "unit": "uA"},
                       quote).findings
    assert not verdict(wrapped_conditions, "Peak sense current", {"max": 1.5, "unit": "A"},
                       "Peak Sense Current ISP 1.5 A").findings


@pytest.fixture(scope="module")
def name_begun_above(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    """A symbol column left of the names: a name begun beside its symbol goes on under it, on a line of its own
    figures."""
    page = [(NAME, 80, "Symbol"), (NAME + 50, 80, "Parameter"), (COND, 80, "Conditions"), (TYP, 80, "Typ"),
            (MAX, 80, "Max"), (UNIT, 80, "Unit"),
            (NAME, 100, "tKP"), (NAME + 50, 100, "Minimum Pulse Width"), (TYP, 100, "14"), (MAX, 100, "26"),
            (UNIT, 100, "ns"),
            (NAME, 120, "tKE"), (NAME + 50, 120, "Minimum Echo"), (COND, 120, "RX = 2 k"), (TYP, 120, "300"),
            (UNIT, 120, "ns"),
            (NAME + 50, 130, "Pulse Width"), (COND, 130, "RX = 6 k"), (TYP, 130, "450"), (UNIT, 130, "ns")]
    path = tmp_path_factory.mktemp("pdf") / "begun_above.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def test_a_name_begun_on_the_line_above_is_read_whole(name_begun_above: DatasheetIndex) -> None:
    quote = "Pulse Width RX = 6 k 450 ns"
    [finding] = verdict(name_begun_above, "Minimum trigger pulse width", {"typical": 450, "unit": "ns"},
                        quote).findings
    assert finding.evidence["rows"][0]["named_row"].startswith("tKP Minimum Pulse Width")
    assert not verdict(name_begun_above, "Minimum echo pulse width", {"typical": 450, "unit": "ns"},
                       quote).findings
    assert not verdict(name_begun_above, "Minimum trigger pulse width", {"typical": 14, "max": 26, "unit": "ns"},
                       "tKP Minimum Pulse Width 14 26 ns").findings
