"""condition_elsewhere: a value read from a row that does not name the requested condition, while another row
states a figure under it."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.conditions import CONDITION_RULES
from app.detectors.grounding import ground_values
from app.detectors.record import Submission
from app.detectors.rules import Context, evaluate
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

NAME, SYMBOL, COND, MIN, TYP, MAX, UNIT = 40, 150, 200, 330, 380, 430, 480

pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    ratings = [(NAME, 60, "Absolute ratings"), (NAME, 80, "Parameter"), (380, 80, "Value"), (UNIT, 80, "Unit"),
               (NAME, 100, "Continuous sink current"), (380, 100, "35"), (UNIT, 100, "mA"),
               # The next rating names the condition's symbol: another row, not a wrapped cell of this one.
               (NAME, 111, "Probe voltage, VPROBE"), (380, 111, "-0.3 to +0.3"), (UNIT, 111, "V")]
    table = [(NAME, 140, "Parameter"), (SYMBOL, 140, "Symbol"), (COND, 140, "Conditions"), (MIN, 140, "Min"),
             (TYP, 140, "Typ"), (MAX, 140, "Max"), (UNIT, 140, "Unit"),
             # Two sub-rows sharing one unit cell, printed between them.
             (NAME, 160, "Sink current"), (SYMBOL, 160, "ISK"), (COND, 160, "VPROBE = 20mV"), (MIN, 160, "170"),
             (TYP, 160, "200"), (MAX, 160, "230"), (UNIT, 170, "uA"),
             (COND, 180, "VPROBE = 60mV"), (MIN, 180, "550"), (TYP, 180, "600"), (MAX, 180, "650"),
             # A condition cell wrapping over two lines, its value on the second.
             (NAME, 200, "Sink ripple"), (COND, 200, "VPROBE = 20mV,"), (NAME, 210, "(relative)"),
             (COND, 210, "fS = 2 kHz"), (TYP, 210, "0.7"), (UNIT, 210, "%"),
             (NAME, 230, "Sink noise"), (COND, 230, "VPROBE = 20mV"), (TYP, 230, "1.9"), (UNIT, 230, "%")]
    path = tmp_path_factory.mktemp("pdf") / "conditions.pdf"
    placed_pdf([[*ratings, *table]], path=path)
    return open_index(path)


def verdict(index: DatasheetIndex, value: dict[str, Any], quote: str, conditions: list[str],
            name: str = "Sink current at 20 mV probe voltage") -> Any:
    request = {"name": name, "unit": "uA", "conditions": conditions}
    [result] = audit_answer(index, value, quote, request, CONDITION_RULES)
    return result


def test_a_rating_read_for_a_condition_another_row_states_is_flagged(document: DatasheetIndex) -> None:
    [finding] = verdict(document, {"max": 35, "unit": "mA"}, "Continuous sink current 35 mA",
                        ["VPROBE = 20 mV"]).findings
    [row] = finding.evidence["rows"]
    assert "VPROBE = 20mV" in row["condition_row"] and row["row_text"].startswith("Continuous")


def test_the_row_naming_the_condition_is_clean(document: DatasheetIndex) -> None:
    result = verdict(document, {"min": 170, "typical": 200, "max": 230, "unit": "uA"},
                     "Sink current ISK VPROBE = 20mV 170 200 230", ["VPROBE = 20 mV"])
    assert result.evaluable and not result.findings


def test_a_condition_no_row_states_and_a_temperature_are_not_judged(document: DatasheetIndex) -> None:
    assert not verdict(document, {"max": 35, "unit": "mA"}, "Continuous sink current 35 mA",
                       ["VPROBE = 90 mV"]).findings
    # (A name giving the probe voltage would be a setting of its own: see the terse requests below.)
    assert not verdict(document, {"max": 35, "unit": "mA"}, "Continuous sink current 35 mA",
                       ["TA = 25 °C"], name="Sink current").evaluable


def test_a_condition_on_the_wrapped_line_of_the_rows_cell_is_its_own(document: DatasheetIndex) -> None:
    assert not verdict(document, {"typical": 0.7, "unit": "%"}, "fS = 2 kHz 0.7 %", ["VPROBE = 20 mV"]).findings


@pytest.fixture(scope="module")
def two_parameters(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    header = [(NAME, 60, "Parameter"), (SYMBOL, 60, "Symbol"), (COND, 60, "Conditions"), (TYP, 60, "Typ"),
              (UNIT, 60, "Unit")]
    # The condition is stated only for another parameter on the first page.
    first = [*header, (NAME, 80, "Quiescent drain"), (SYMBOL, 80, "IQ"), (TYP, 80, "5"), (UNIT, 80, "uA"),
             (NAME, 100, "Settling error"), (SYMBOL, 100, "ISE"), (COND, 100, "VPROBE = 20mV"), (TYP, 100, "2"),
             (UNIT, 100, "uA")]
    # The requested parameter's name is printed once, on the sub-row below the one stating the condition.
    second = [*header, (COND, 80, "VPROBE = 20mV"), (TYP, 80, "3"), (UNIT, 80, "uA"),
              (NAME, 92, "Offset current"), (SYMBOL, 92, "IOS"), (COND, 92, "VPROBE = 0mV"), (TYP, 92, "1"),
              (UNIT, 92, "uA"),
              (NAME, 140, "Offset current, continuous"), (TYP, 140, "9"), (UNIT, 140, "uA")]
    path = tmp_path_factory.mktemp("pdf") / "two-parameters.pdf"
    placed_pdf([first, second], path=path)
    return open_index(path)


def judged(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str, page: int) -> Any:
    submission = Submission(found=True, values=[value], quote=quote, pages=[page])
    ctx = Context(record=None, submission=submission, document=index,
                  groundings=ground_values(index, submission.values, quote, [page]),
                  request={"name": name, "unit": "uA", "conditions": ["VPROBE = 20 mV"]})
    [result] = evaluate(ctx, CONDITION_RULES)
    return result


def test_a_condition_stated_only_for_another_parameter_says_nothing(two_parameters: DatasheetIndex) -> None:
    result = judged(two_parameters, "Quiescent drain at 20 mV probe voltage", {"typical": 5, "unit": "uA"},
                    "Quiescent drain IQ 5 uA", 1)
    assert result.evaluable and not result.findings


def test_a_condition_stated_in_the_parameters_block_of_sub_rows_still_counts(two_parameters: DatasheetIndex) -> None:
    [finding] = judged(two_parameters, "Offset current at 20 mV probe voltage", {"typical": 9, "unit": "uA"},
                       "Offset current, continuous 9 uA", 2).findings
    assert finding.evidence["rows"][0]["condition_row"].startswith("VPROBE = 20mV")


@pytest.fixture(scope="module")
def headroom(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    """An operating range of a current, and the parameter's limit stated at one headroom voltage on a sub-row
    under its name, the unit printed once on the name's line."""
    header = [(NAME, 60, "Parameter"), (SYMBOL, 60, "Symbol"), (MIN, 60, "Min"), (TYP, 60, "Typ"), (MAX, 60, "Max"),
              (UNIT, 60, "Unit")]
    operating = [*header, (NAME, 80, "Pump current"), (SYMBOL, 80, "IP"), (MIN, 80, "0.02"), (MAX, 80, "2.5"),
                 (UNIT, 80, "A"),
                 (NAME, 110, "Pulsed pump current"), (SYMBOL, 110, "IPP"), (MAX, 110, "0.25"), (UNIT, 110, "A")]
    limits = [(NAME, 160, "Parameter"), (COND, 160, "Test conditions"), (MIN, 160, "Min"), (TYP, 160, "Typ"),
              (MAX, 160, "Max"), (UNIT, 160, "Unit"),
              (NAME, 180, "Peak pump current"), (UNIT, 180, "A"),
              (COND, 186, "VH <30 V, TJ = 25°C"), (MIN, 186, "0.25"), (TYP, 186, "0.6")]
    path = tmp_path_factory.mktemp("pdf") / "headroom.pdf"
    placed_pdf([[*operating, *limits]], path=path)
    return open_index(path)


def tersely(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str) -> Any:
    [result] = audit_answer(index, value, quote, {"name": name, "unit": None, "conditions": []}, CONDITION_RULES)
    return result


def test_a_setting_in_the_name_stated_on_another_row_is_flagged(headroom: DatasheetIndex) -> None:
    [finding] = tersely(headroom, "Peak pump current at 30 V headroom", {"min": 0.02, "max": 2.5, "unit": "A"},
                        "Pump current IP 0.02 2.5 A").findings
    [row] = finding.evidence["rows"]
    assert row["requested"] == "30 V" and row["condition_row"].startswith("VH <30 V")


def test_the_row_printing_the_names_setting_is_clean(headroom: DatasheetIndex) -> None:
    result = tersely(headroom, "Peak pump current at 30 V headroom", {"min": 0.25, "typical": 0.6, "unit": "A"},
                     "VH <30 V, TJ = 25°C 0.25 0.6")
    assert result.evaluable and not result.findings
    # A setting no row states, or a temperature, says nothing.
    assert not tersely(headroom, "Peak pump current at 12 V headroom", {"min": 0.02, "max": 2.5, "unit": "A"},
                       "Pump current IP 0.02 2.5 A").findings
    assert not tersely(headroom, "Peak pump current at 25 °C", {"min": 0.02, "max": 2.5, "unit": "A"},
                       "Pump current IP 0.02 2.5 A").evaluable


def test_a_row_stating_the_names_setting_and_printing_the_figure_leaves_it_unflagged(
        headroom: DatasheetIndex) -> None:
    # The figure stands on both rows: the value may come from the one stating the setting.
    result = tersely(headroom, "Peak pump current at 30 V headroom", {"max": 0.25, "unit": "A"},
                     "Pulsed pump current IPP 0.25 A")
    assert result.evaluable and not result.findings
