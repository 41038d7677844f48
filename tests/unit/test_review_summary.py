"""partial_summary: a value read from a summary line while the parameter's table row states more."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.grounding import ground_values
from app.detectors.record import Submission
from app.detectors.rules import Context, evaluate
from app.detectors.summary import SUMMARY_RULES
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf

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


def verdict(index: DatasheetIndex, value: dict[str, Any], quote: str, page: int) -> Any:
    submission = Submission(found=True, values=[value], quote=quote, pages=[page])
    ctx = Context(record=None, submission=submission, document=index,
                  groundings=ground_values(index, submission.values, quote, [page]),
                  request={"name": "Maximum peak output power", "unit": "dBm", "conditions": []})
    [result] = evaluate(ctx, SUMMARY_RULES)
    return result


def test_a_summary_reading_short_of_the_table_row_is_flagged(document: DatasheetIndex) -> None:
    [finding] = verdict(document, {"max": 0, "unit": "dBm"}, "Peak output power 0 dBm", 1).findings
    assert finding.evidence["rows"][0]["page"] == 2 and finding.evidence["rows"][0]["field"] == "max"


def test_readings_that_agree_with_the_table_row_are_clean(document: DatasheetIndex) -> None:
    full = {"typical": 0, "max": 4, "unit": "dBm"}
    assert not verdict(document, full, "Peak output power 0 dBm", 1).findings
    assert not verdict(document, {"typical": 0, "max": 4, "unit": "dBm"}, "Peak output power 0 +4 dBm", 2).findings
