"""plus_minus_limit: a printed ±X reported as a lone typical X."""

from __future__ import annotations

import pytest

from app.detectors.plus_minus import PLUS_MINUS_RULES, misread
from app.documents.cache import open_index
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer


def test_a_symmetric_limit_read_as_a_typical_is_a_misreading() -> None:
    assert misread({"typical": 1, "unit": "hPa"}, "Absolute accuracy: ± 1 hPa (or ±8 m)") == {"printed": "±1"}
    assert misread({"typical": 6, "unit": "Pa"}, "Relative accuracy Ap_rel +/-6 Pa") == {"printed": "±6"}


def test_faithful_readings_and_other_printings_are_left_alone() -> None:
    # Read as min and max, the limit is stated.
    assert misread({"min": -1, "max": 1, "unit": "hPa"}, "Absolute accuracy: ± 1 hPa") is None
    # A nominal with its tolerance: the nominal is a typical value of its own.
    assert misread({"typical": 38.5, "unit": "%"}, "Transmission 38.5 +/- 2 (400-750nm)") is None
    # The number is printed without the sign too: which printing was read is not known.
    assert misread({"typical": 6, "unit": "mV"}, "Offset ±6 mV; trimmed 6 mV") is None
    assert misread({"typical": 2, "unit": "mV"}, "Offset ±6 mV") is None


pytestmark = pytest.mark.usefixtures("isolated_index_cache")


def test_the_rule_judges_the_located_text(tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("pdf") / "accuracy.pdf"
    placed_pdf([[(40, 80, "Key figures"), (40, 100, "Absolute accuracy: +/-1 hPa over the full range")]], path=path)
    index = open_index(path)
    quote = "Absolute accuracy: +/-1 hPa"
    for value, flagged in (({"typical": 1, "unit": "hPa"}, True), ({"min": -1, "max": 1, "unit": "hPa"}, False)):
        request = {"name": "Absolute accuracy", "unit": "hPa", "conditions": []}
        [verdict] = audit_answer(index, value, quote, request, PLUS_MINUS_RULES)
        assert verdict.evaluable and bool(verdict.findings) is flagged
