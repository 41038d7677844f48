"""partial_summary: a value read from a summary line while the parameter's table row states more."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.summary import SUMMARY_RULES
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

NAME, MIN, TYP, MAX, UNIT = 40, 330, 380, 430, 480


pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    features = [(NAME, 60, "Features"), (NAME, 80, "Peak output power 0 dBm"), (NAME, 92, "Low idle draw")]
    table = [(NAME, 80, "Parameter"), (MIN, 80, "Min"), (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
             (NAME, 100, "Peak output power"), (TYP, 100, "0"), (MAX, 100, "+4"), (UNIT, 100, "dBm")]
    path = tmp_path_factory.mktemp("pdf") / "summary.pdf"
    placed_pdf([features, table], path=path)
    return open_index(path)


def verdict(index: DatasheetIndex, value: dict[str, Any], quote: str, page: int,
            name: str = "Maximum peak output power") -> Any:
    request = {"name": name, "unit": value.get("unit"), "conditions": []}
    [result] = audit_answer(index, value, quote, request, SUMMARY_RULES, page=page)
    return result


def test_a_summary_reading_short_of_the_table_row_is_flagged(document: DatasheetIndex) -> None:
    [finding] = verdict(document, {"max": 0, "unit": "dBm"}, "Peak output power 0 dBm", 1).findings
    assert finding.evidence["rows"][0]["page"] == 2 and finding.evidence["rows"][0]["field"] == "max"


def test_readings_that_agree_with_the_table_row_are_clean(document: DatasheetIndex) -> None:
    full = {"typical": 0, "max": 4, "unit": "dBm"}
    assert not verdict(document, full, "Peak output power 0 dBm", 1).findings
    assert not verdict(document, {"typical": 0, "max": 4, "unit": "dBm"}, "Peak output power 0 +4 dBm", 2).findings


@pytest.fixture(scope="module")
def ratings(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    prose = [(NAME, 60, "Driving the load from a rail above 13 V heats the output stage; keep the rail low and "
                         "mind the thermal pad under the package."),
             (NAME, 90, "Common bias voltage on VDX ............ 31 V"),
             (NAME, 120, "Bias accuracy of the sensing element is within 3 hPa across the whole range"),
             (NAME, 150, "In normal mode the wake delay is about 18.9 ms after each trigger of the sensing element")]
    table = [(NAME, 80, "Symbol"), (140, 80, "Parameter"), (380, 80, "Value"), (UNIT, 80, "Unit"),
             (NAME, 100, "Vdx"), (140, 100, "Common bias voltage"), (380, 100, "27"), (UNIT, 100, "V"),
             (NAME, 112, "Tj"), (140, 112, "Junction temperature"), (380, 112, "140"), (UNIT, 112, "C"),
             # A ± figure with its unit, then a condition range in another unit.
             (NAME, 124, "Bz"), (140, 124, "Bias accuracy"), (330, 124, "+/-300"), (380, 124, "Pa"),
             (420, 124, "Pz=500 - 1100hPa;"),
             # One parameter on three sub-rows, its name and unit on the first only.
             (NAME, 150, "Tw"), (140, 150, "Wake delay"), (330, 150, "4.4"), (380, 150, "ms"), (420, 150, "Fast"),
             (330, 164, "18.9"), (420, 164, "Normal"), (330, 178, "71"), (420, 178, "Fine")]
    path = tmp_path_factory.mktemp("pdf") / "ratings.pdf"
    placed_pdf([prose, table], path=path)
    return open_index(path)


def rated(index: DatasheetIndex, value: dict[str, Any], quote: str, page: int,
          name: str = "Common bias voltage (absolute maximum)") -> Any:
    return verdict(index, value, quote, page, name)


def test_a_prose_figure_the_table_row_states_otherwise_is_flagged(ratings: DatasheetIndex) -> None:
    [finding] = rated(ratings, {"min": 13, "unit": "V"}, "from a rail above 13 V heats the output stage", 1).findings
    assert finding.evidence["rows"][0]["page"] == 2 and finding.evidence["rows"][0]["figures"] == ["27 V"]


def test_a_prose_figure_the_table_row_prints_is_clean(ratings: DatasheetIndex) -> None:
    assert not rated(ratings, {"max": 27, "unit": "V"}, "Vdx Common bias voltage 27 V", 2).findings


def test_a_dot_leader_ratings_line_is_a_table_row_not_prose(ratings: DatasheetIndex) -> None:
    assert not rated(ratings, {"max": 31, "unit": "V"}, "Common bias voltage on VDX ............ 31 V", 1).findings


def test_a_prose_figure_the_table_prints_in_another_unit_is_clean(ratings: DatasheetIndex) -> None:
    assert not rated(ratings, {"min": -3, "max": 3, "unit": "hPa"}, "Bias accuracy of the sensing element is "
                     "within 3 hPa", 1).findings


def test_a_plus_minus_cell_read_as_min_and_max_is_read_in_full(tmp_path: Any) -> None:
    table = [(NAME, 80, "Parameter"), (MIN, 80, "Min"), (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
             (NAME, 100, "Drift accuracy"), (TYP, 100, "+/-0.7"), (UNIT, 100, "C")]
    path = tmp_path / "plus_minus.pdf"
    placed_pdf([[(NAME, 60, "Drift accuracy: +/- 0.7 C over the range")], table], path=path)
    index = open_index(path)
    assert not verdict(index, {"min": -0.7, "typical": 0, "max": 0.7, "unit": "C"}, "Drift accuracy: +/- 0.7 C",
                       1, name="Drift accuracy").findings


def test_a_prose_figure_one_of_the_parameters_sub_rows_prints_is_clean(ratings: DatasheetIndex) -> None:
    assert not rated(ratings, {"typical": 18.9, "unit": "ms"}, "the wake delay is about 18.9 ms", 1,
                     name="Wake delay (normal mode)").findings


@pytest.fixture(scope="module")
def qualified(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    prose = [(NAME, 60, "The regulator holds its output voltage at 5 V across the full range of load and line "
                        "changes that the application may see."),
             (NAME, 80, "Its output voltage drift stays near 3 mV over the life of the part in normal use and more.")]
    table = [(NAME, 80, "Parameter"), (MIN, 80, "Min"), (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
             (NAME, 100, "Output voltage drift"), (TYP, 100, "0.5"), (MAX, 100, "2"), (UNIT, 100, "mV"),
             (NAME, 120, "Output voltage threshold"), (MIN, 120, "4.6"), (TYP, 120, "4.65"), (UNIT, 120, "V")]
    path = tmp_path_factory.mktemp("pdf") / "qualified.pdf"
    placed_pdf([prose, table], path=path)
    return open_index(path)


def test_a_row_naming_another_quantity_of_the_parameter_is_not_its_table_row(qualified: DatasheetIndex) -> None:
    # "Output voltage drift" and "Output voltage threshold" hold every word of "Output voltage", but are other
    # quantities: the sentence's 5 V is not contradicted by them.
    result = verdict(qualified, {"typical": 5, "unit": "V"}, "holds its output voltage at 5 V", 1,
                     name="Output voltage")
    assert result.evaluable and not result.findings
    # Asked for the drift itself, the drift row is the parameter's row again: a sentence's other figure is flagged.
    [finding] = verdict(qualified, {"typical": 3, "unit": "mV"}, "output voltage drift stays near 3 mV", 1,
                        name="Output voltage drift").findings
    assert finding.evidence["rows"][0]["row_text"].startswith("Output voltage drift")


@pytest.fixture(scope="module")
def grouped(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    features = [(NAME, 60, "Features"), (NAME, 80, "Idle draw of 1.5 µA"), (NAME, 92, "Small package")]
    table = [(NAME, 80, "Parameter"), (MIN, 80, "Min"), (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
             (NAME, 100, "Draw"),
             (NAME + 10, 112, "Awake Mode"), (TYP, 112, "1.4"), (MAX, 112, "2.0"), (UNIT, 112, "mA"),
             (NAME + 10, 124, "Idle Mode"), (TYP, 124, "0.3"), (MAX, 124, "1.5"), (UNIT, 124, "µA"),
             (NAME, 144, "Leak current"),
             (NAME + 10, 156, "QX410A, QX420A"), (TYP, 156, "3"), (MAX, 156, "12"), (UNIT, 156, "nA"),
             (NAME + 10, 168, "QX410, QX420"), (TYP, 168, "4"), (MAX, 168, "40"), (UNIT, 168, "nA")]
    features += [(NAME, 104, "Low leak current: 3 nA")]
    path = tmp_path_factory.mktemp("pdf") / "grouped.pdf"
    placed_pdf([features, table], path=path)
    return open_index(path)


def test_a_row_indented_under_its_group_name_states_the_parameter(grouped: DatasheetIndex) -> None:
    [finding] = verdict(grouped, {"typical": 1.5, "unit": "uA"}, "Idle draw of 1.5 µA", 1, name="Idle draw").findings
    assert finding.evidence["rows"][0]["row_text"].startswith("Idle Mode")
    assert not verdict(grouped, {"typical": 0.3, "max": 1.5, "unit": "uA"}, "Idle draw of 1.5 µA", 1,
                       name="Idle draw").findings


def test_a_variants_sub_row_is_not_read_with_its_group_name(grouped: DatasheetIndex) -> None:
    assert not verdict(grouped, {"typical": 3, "unit": "nA"}, "Low leak current: 3 nA", 1,
                       name="Leak current").findings
