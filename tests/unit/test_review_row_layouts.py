"""Row layouts the review must read as a reader does: a merged conditions cell shared by a block of parameters, a
table under the rows of another, a variant named on the wrapped line of its condition cell."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.audit import ALL_RULES
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

SYM, NAME, MIN, TYP, MAX, UNIT, COND = 40, 95, 300, 330, 360, 385, 405

pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def switching(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    """A static table whose last row sets VGE = 0V, then a switching table whose conditions cell is merged over
    each block of rows (its lines spread over the rows), the unit cell too."""
    page = [(SYM, 60, "IGX"), (NAME, 60, "Gate to emitter leakage current"), (MIN, 60, "—"), (TYP, 60, "—"),
            (MAX, 60, "±100"), (UNIT, 60, "nA"), (COND, 60, "VGE = ±20V, VCE = 0V"),
            (SYM, 72, "VFX"), (NAME, 72, "Forward voltage drop"), (MIN, 72, "—"), (TYP, 72, "1.3"),
            (MAX, 72, "1.7"), (UNIT, 72, "V"), (COND, 72, "IF = 25A, VGE = 0V"),
            (NAME, 92, "Switching characteristics @ TJ = 25°C (unless otherwise specified)"),
            (NAME, 108, "Parameter"), (MIN, 108, "Min."), (TYP, 108, "Typ."), (MAX, 108, "Max."),
            (UNIT, 108, "Units"), (COND + 30, 108, "Conditions"),
            (SYM, 124, "ton"), (NAME, 124, "Turn-on delay time"), (MIN, 124, "—"), (TYP, 124, "31"),
            (MAX, 124, "47"), (COND, 124, "IC = 30A, VCC = 400V"),
            (SYM, 136, "tr"), (NAME, 136, "Rise time"), (MIN, 136, "—"), (TYP, 136, "24"), (MAX, 136, "38"),
            (UNIT, 136, "ns"), (COND, 136, "VGE = +15V, RG = 3.3Ω"),
            (SYM, 148, "toff"), (NAME, 148, "Turn-off delay time"), (MIN, 148, "—"), (TYP, 148, "150"),
            (MAX, 148, "175"), (COND, 148, "TJ = 125°C")]
    path = tmp_path_factory.mktemp("pdf") / "switching.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(SYM, 60, "Symbol"), (NAME, 60, "Parameter"), (NAME + 90, 60, "Conditions"), (TYP, 60, "Typ"),
            (MAX, 60, "Max"), (UNIT, 60, "Units"),
            (SYM, 80, "IQ"), (NAME, 80, "Quiet current"), (NAME + 90, 80, "QR1117-1.8"), (TYP, 80, "4"),
            (MAX, 80, "9"), (UNIT, 80, "mA"),
            (NAME + 90, 91, "VIN ≤15V"),
            (NAME + 90, 104, "QR1117-2.5"), (TYP, 104, "4"), (MAX, 104, "9"), (UNIT, 104, "mA"),
            (NAME + 90, 115, "VIN ≤15V"),
            (NAME + 90, 128, "QR1117-3.3"),
            (NAME + 90, 139, "VIN ≤15V"), (TYP, 139, "4"), (MAX, 139, "9"), (UNIT, 139, "mA")]
    path = tmp_path_factory.mktemp("pdf") / "variants.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def flags(index: DatasheetIndex, name: str, value: dict[str, Any], quote: str, conditions: list[str]) -> set[str]:
    request = {"name": name, "unit": value["unit"], "conditions": conditions}
    return {v.rule for v in audit_answer(index, value, quote, request, ALL_RULES, confidence=0.9) if v.findings}


def test_a_row_under_a_merged_conditions_cell_is_read_as_its_block(switching: DatasheetIndex) -> None:
    conditions = ["IC = 30A, VCC = 400V", "VGE = +15V, RG = 3.3Ω", "TJ = 125°C"]
    right = flags(switching, "Turn-off delay at 125 C", {"typical": 150, "max": 175, "unit": "ns"},
                  "Turn-off delay time — 150 175", conditions)
    assert not right & {"field_mismatch", "condition_elsewhere"}
    # Another condition still contradicts the row.
    wrong = flags(switching, "Turn-off delay at 125 C", {"typical": 150, "max": 175, "unit": "ns"},
                  "Turn-off delay time — 150 175", ["TJ = 25°C"])
    assert "field_mismatch" in wrong


def test_a_variant_named_on_its_condition_cells_wrapped_line_is_the_requested_one(variants: DatasheetIndex) -> None:
    right = flags(variants, "Quiet current, QR1117-3.3", {"typical": 4, "max": 9, "unit": "mA"},
                  "Quiet current QR1117-1.8 4 9 mA", ["QR1117-3.3"])
    assert "other_variant" not in right
