"""disagrees_with_reader: a second opinion that contradicts its own row is no evidence against the answer."""

from __future__ import annotations

import pytest

from app.detectors.audit import audit
from app.detectors.record import Submission
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf

NAME, MIN, TYP, MAX, UNIT = 40, 330, 380, 430, 480
QUOTE = "Reset period 160 200 260 ms"
ANSWER = Submission(found=True, values=[{"min": 160, "typical": 200, "max": 260, "unit": "ms"}], quote=QUOTE,
                    pages=[1])
REQUEST = {"name": "Reset period", "unit": "ms", "conditions": []}


pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    page = [(NAME, 80, "Parameter"), (MIN, 80, "Min"), (TYP, 80, "Typ"), (MAX, 80, "Max"), (UNIT, 80, "Unit"),
            (NAME, 100, "Reset period"), (MIN, 100, "160"), (TYP, 100, "200"), (MAX, 100, "260"), (UNIT, 100, "ms"),
            (NAME, 120, "Watchdog period"), (MIN, 120, "0.96"), (TYP, 120, "1.6"), (MAX, 120, "2.56"),
            (UNIT, 120, "s")]
    path = tmp_path_factory.mktemp("pdf") / "periods.pdf"
    placed_pdf([page], path=path)
    return open_index(path)


def rules(document: DatasheetIndex, cross: Submission) -> set[str]:
    result = audit(None, submission=ANSWER, index=document, request=REQUEST, cross_check=cross)
    return {f.rule for f in result.findings}


def test_a_second_opinion_at_fault_with_its_own_row_does_not_flag_the_answer(document: DatasheetIndex) -> None:
    # The reader reported the Min cell as typical and left the other limits out: its row says otherwise.
    faulty = Submission(found=True, values=[{"typical": 160, "unit": "ms"}], quote=QUOTE, pages=[1])
    assert "disagrees_with_reader" not in rules(document, faulty)
    verdict = next(v for v in audit(None, submission=ANSWER, index=document, request=REQUEST,
                                    cross_check=faulty).verdicts if v.rule == "disagrees_with_reader")
    assert not verdict.evaluable and "field_mismatch" in (verdict.reason or "")


def test_a_sound_second_opinion_that_disagrees_still_flags(document: DatasheetIndex) -> None:
    other = Submission(found=True, values=[{"min": 0.96, "typical": 1.6, "max": 2.56, "unit": "s"}],
                       quote="Watchdog period 0.96 1.6 2.56 s", pages=[1])
    assert "disagrees_with_reader" in rules(document, other)
