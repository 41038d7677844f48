"""The row a grounded value was read from when its number is printed on several rows of the located text: the
row that fits the request, not the first one the text layer prints."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.audit import ALL_RULES
from app.detectors.grounding import ground_values
from app.detectors.value_rows import located_cells, value_cell
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

NAME, SYMBOL, COND, MIN, TYP, MAX, UNIT = 40, 140, 190, 330, 380, 430, 480

pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    header = [(NAME, 80, "Parameter"), (SYMBOL, 80, "Symbol"), (COND, 80, "Conditions"), (MIN, 80, "Min"),
              (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit")]
    # Two sub-rows print the same figure in different columns; the text layer prints the lower one first.
    saturation = [(COND, 112, "IO = 9A"), (TYP, 112, "0.65"), (UNIT, 112, "V"),
                  (NAME, 100, "Saturation voltage"), (SYMBOL, 100, "VSAT"), (COND, 100, "IO = 3A"), (MAX, 100, "0.65"),
                  (UNIT, 100, "V")]
    # A supply current whose sub-row below prints the same number inside a condition (VX = VY - 60 mV), in
    # the text layer's order first; the current's own row prints Typ 60 and its max sub-row 92.
    supply = [(COND, 152, "VX = VY - 60 mV"), (MAX, 152, "92"),
              (NAME, 140, "Supply current"), (SYMBOL, 140, "IVS"), (COND, 140, "TJ = 25C"), (TYP, 140, "60"),
              (UNIT, 140, "uA"),
              (NAME, 180, "Leak current"), (SYMBOL, 180, "ILK"), (COND, 180, "VR = 5 V"), (TYP, 180, "1.5"),
              (MAX, 180, "10"), (UNIT, 180, "uA")]
    # Min / Typ / Max sub-rows of one pulse width: the limit columns are temperature ranges, the Typ column is
    # shared.
    pulse_header = [(NAME, 240, "Parameter"), (COND, 240, "Conditions"), (TYP, 240, "Typ"), (455, 240, "25C"),
                    (UNIT + 40, 240, "Units")]
    pulse = [(NAME, 260, "Pulse width"), (COND, 260, "Min"), (TYP, 260, "1"), (455, 260, "0.9"),
             (UNIT + 40, 260, "ms"),
             (COND, 272, "Max"), (TYP, 272, "1"), (455, 272, "1.1"), (UNIT + 40, 272, "ms")]
    path = tmp_path_factory.mktemp("pdf") / "value-rows.pdf"
    placed_pdf([[*header, *saturation, *supply, *pulse_header, *pulse]], path=path)
    return open_index(path)


def audit(index: DatasheetIndex, value: dict[str, Any], quote: str, request: dict[str, Any]) -> dict[str, Any]:
    return {v.rule: v for v in audit_answer(index, value, quote, request, ALL_RULES, confidence=0.9)}


SATURATION_QUOTE = "IO = 9A 0.65 V Saturation voltage VSAT IO = 3A 0.65 V"


def test_every_row_printing_the_value_is_a_candidate_and_the_requested_condition_picks_one(
        document: DatasheetIndex) -> None:
    [grounding] = ground_values(document, [{"max": 0.65, "unit": "V"}], SATURATION_QUOTE, [1])
    cells = located_cells(document, grounding)
    assert [c.row.text.split()[0] for c in cells] == ["IO", "Saturation"]  # the text layer's order
    request = {"name": "Saturation voltage", "conditions": ["IO = 3A"]}
    picked = value_cell(document, grounding, request, {"max": 0.65, "unit": "V"})
    assert picked is not None and "IO = 3A" in picked.row.text
    # Without a request the first location is kept, as before.
    first = value_cell(document, grounding)
    assert first is not None and "IO = 9A" in first.row.text


def test_a_limit_read_on_the_row_the_request_names_is_clean(document: DatasheetIndex) -> None:
    verdicts = audit(document, {"max": 0.65, "unit": "V"}, SATURATION_QUOTE,
                     {"name": "Saturation voltage", "unit": "V", "conditions": ["IO = 3A"]})
    assert verdicts["field_mismatch"].evaluable and not verdicts["field_mismatch"].findings
    # The condition may come in the name alone (a terse request).
    terse = audit(document, {"max": 0.65, "unit": "V"}, SATURATION_QUOTE, {"name": "Saturation voltage at IO = 3A"})
    assert not terse["field_mismatch"].findings


def test_the_other_sub_rows_column_still_contradicts_a_wrong_field(document: DatasheetIndex) -> None:
    verdicts = audit(document, {"typical": 0.65, "unit": "V"}, SATURATION_QUOTE,
                     {"name": "Saturation voltage", "unit": "V", "conditions": ["IO = 3A"]})
    [finding] = verdicts["field_mismatch"].findings
    assert {(m["kind"], m.get("column")) for m in finding.evidence["mismatches"]} >= {("wrong_column", "max")}
    assert "IO = 3A" in finding.evidence["rows"][0]["row_text"]


def test_a_number_inside_a_condition_is_not_the_value(document: DatasheetIndex) -> None:
    quote = "VX = VY - 60 mV 92 Supply current IVS TJ = 25C 60 uA"
    value, request = {"typical": 60, "unit": "uA"}, {"name": "Supply current", "unit": "uA"}
    [grounding] = ground_values(document, [value], quote, [1])
    assert [c.row.text.split()[0] for c in located_cells(document, grounding)] == ["VX", "Supply"]
    picked = value_cell(document, grounding, request, value)
    assert picked is not None and picked.row.text.startswith("Supply") and picked.word.x0 >= TYP - 1
    verdicts = audit(document, value, quote, request)
    assert verdicts["field_mismatch"].evaluable and not verdicts["field_mismatch"].findings


def test_a_partial_reading_of_a_row_is_still_flagged(document: DatasheetIndex) -> None:
    verdicts = audit(document, {"max": 10, "unit": "uA"}, "Leak current ILK VR = 5 V 1.5 10 uA",
                     {"name": "Leak current", "unit": "uA"})
    [finding] = verdicts["field_mismatch"].findings
    assert [(m["kind"], m["field"]) for m in finding.evidence["mismatches"]] == [("omitted_field", "typical")]


def test_each_limit_is_read_on_the_sub_row_that_prints_it(document: DatasheetIndex) -> None:
    quote = "Pulse width Min 1 0.9 ms Max 1 1.1 ms"
    request = {"name": "Pulse width", "unit": "ms"}
    verdicts = audit(document, {"min": 0.9, "typical": 1, "max": 1.1, "unit": "ms"}, quote, request)
    assert verdicts["field_mismatch"].evaluable and not verdicts["field_mismatch"].findings
    # A sub-row's limit reported as another field is still that sub-row's.
    wrong = audit(document, {"typical": 0.9, "unit": "ms"}, quote, request)["field_mismatch"]
    assert [(m["kind"], m["row"]) for m in wrong.findings[0].evidence["mismatches"]] == [("row_role", "min")]
