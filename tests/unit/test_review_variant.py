"""other_variant: a value read from the sub-row of a sibling variant of the one requested."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.variant import VARIANT_RULES, part_names, siblings
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

NAME, GRADE, TYP, MAX, UNIT = 40, 130, 380, 430, 480


pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 80, "Parameter"), (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
            (NAME, 100, "Bias current"),
            (GRADE, 112, "QX410A, QX420A"), (TYP, 112, "20"), (MAX, 112, "50"), (UNIT, 112, "nA"),
            (GRADE, 124, "QX410, QX420"), (TYP, 124, "20"), (MAX, 124, "150"), (UNIT, 124, "nA"),
            (NAME, 150, "Leak current"), (TYP, 150, "3"), (MAX, 150, "9"), (UNIT, 150, "nA")]
    path = tmp_path_factory.mktemp("pdf") / "variants.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def verdict(index: DatasheetIndex, value: dict[str, Any], quote: str, conditions: list[str]) -> Any:
    request = {"name": "Bias current", "unit": "nA", "conditions": conditions}
    [result] = audit_answer(index, value, quote, request, [r for r in VARIANT_RULES if r.name == "other_variant"])
    return result


def test_part_names_and_their_families() -> None:
    assert part_names("QX410A, QX420A at pin1, DIP8") == {"QX410A", "QX420A"}
    assert siblings("QX410A", "QX410") and siblings("TL431C", "TL431I") and not siblings("QX410", "ZK410")


def test_the_sub_row_of_a_sibling_variant_is_flagged(document: DatasheetIndex) -> None:
    [finding] = verdict(document, {"typical": 20, "max": 50, "unit": "nA"}, "QX410A, QX420A 20 50 nA",
                        ["QX410"]).findings
    assert finding.evidence["rows"][0]["row_names"] == ["QX410A"]


def test_the_requested_variants_sub_row_is_clean(document: DatasheetIndex) -> None:
    assert not verdict(document, {"typical": 20, "max": 150, "unit": "nA"}, "QX410, QX420 20 150 nA",
                       ["QX410"]).findings
    # A bare number is located on its first printing; the requested variant's row prints it too.
    assert not verdict(document, {"typical": 20, "unit": "nA"}, "20", ["QX410"]).findings


def test_rows_and_requests_naming_no_variant_say_nothing(document: DatasheetIndex) -> None:
    assert not verdict(document, {"typical": 3, "max": 9, "unit": "nA"}, "Leak current 3 9 nA", ["QX410"]).findings
    assert not verdict(document, {"typical": 20, "max": 50, "unit": "nA"}, "QX410A, QX420A 20 50 nA",
                       ["TA = 25 C"]).evaluable


@pytest.fixture(scope="module")
def per_variant_tables(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    def table(top: float, variant: str, typ: str, max_: str) -> list[tuple[float, float, str]]:
        return [(NAME, top, variant), (NAME, top + 14, "Unless otherwise specified, VIN = 9 V"),
                (NAME, top + 32, "Parameter"), (TYP, top + 32, "Typ"), (MAX, top + 32, "Max"),
                (UNIT, top + 32, "Unit"),
                (NAME, top + 50, "Ripple rejection"), (TYP, top + 50, typ), (MAX, top + 50, max_),
                (UNIT, top + 50, "dB")]
    path = tmp_path_factory.mktemp("pdf") / "tables.pdf"
    placed_pdf([[*table(60, "QX78L05", "62", "70"), *table(200, "QX78L15", "51", "58")]], path=path)
    return open_index(path)


def test_a_row_naming_no_variant_is_read_under_its_tables_heading(per_variant_tables: DatasheetIndex) -> None:
    assert verdict(per_variant_tables, {"typical": 51, "max": 58, "unit": "dB"}, "Ripple rejection 51 58 dB",
                   ["QX78L05"]).findings
    assert not verdict(per_variant_tables, {"typical": 62, "max": 70, "unit": "dB"}, "Ripple rejection 62 70 dB",
                       ["QX78L05"]).findings


@pytest.fixture(scope="module")
def grade_columns(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 60, "Absolute maximum ratings"),
            (NAME, 80, "Symbol"), (GRADE, 80, "Parameter"), (TYP, 80, "Value"), (UNIT + 40, 80, "Unit"),
            (330, 100, "QX531"), (380, 100, "QX532"), (430, 100, "QX533"),
            (NAME, 120, "VRB"), (GRADE - 40, 120, "Reverse voltage"), (335, 120, "40"), (385, 120, "55"),
            (435, 120, "70"), (UNIT + 40, 120, "V"),
            (NAME, 140, "IF"), (GRADE - 40, 140, "Forward current"), (385, 140, "8"), (UNIT + 40, 140, "A")]
    path = tmp_path_factory.mktemp("pdf") / "grades.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def columns_verdict(index: DatasheetIndex, value: dict[str, Any], quote: str) -> Any:
    request = {"name": "Reverse voltage, QX532", "unit": "V", "conditions": ["QX532"]}
    [result] = audit_answer(index, value, quote, request, [r for r in VARIANT_RULES if r.name == "variant_columns"])
    return result


def test_figures_under_part_name_columns_read_as_limits_are_flagged(grade_columns: DatasheetIndex) -> None:
    [finding] = columns_verdict(grade_columns, {"min": 40, "typical": 55, "max": 70, "unit": "V"},
                                "Reverse voltage 40 55 70 V").findings
    assert set(finding.evidence["rows"][0]["columns"].values()) == {"QX531", "QX532", "QX533"}


def test_one_figure_under_its_variants_column_stays_unflagged(grade_columns: DatasheetIndex) -> None:
    assert not columns_verdict(grade_columns, {"max": 55, "unit": "V"}, "Reverse voltage 40 55 70 V").findings
