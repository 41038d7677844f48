"""figure_text: a value read from a graph's caption."""

from __future__ import annotations

from typing import Any

import pytest

from app.detectors.figure_text import FIGURE_TEXT_RULES, is_caption
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex
from tests.support.pdfs import placed_pdf
from tests.support.review import audit_answer

pytestmark = pytest.mark.usefixtures("isolated_index_cache")


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> DatasheetIndex:
    table = [(40, 80, "Parameter"), (300, 80, "Typ"), (360, 80, "Unit"),
             (40, 100, "Switching delay"), (300, 100, "37"), (360, 100, "ns")]
    graph = [(40, 300, "Grade -31: switching delay as a function of load current"),
             (200, 420, "Load current (mA)")]
    path = tmp_path_factory.mktemp("pdf") / "figure.pdf"
    placed_pdf([table + graph], path=path)
    return open_index(path)


def verdict(index: DatasheetIndex, value: dict[str, Any], quote: str) -> Any:
    request = {"name": "Switching delay", "unit": "ns", "conditions": []}
    [result] = audit_answer(index, value, quote, request, FIGURE_TEXT_RULES)
    return result


def test_a_value_from_a_graph_caption_is_flagged(document: DatasheetIndex) -> None:
    [finding] = verdict(document, {"typical": -31}, "Grade -31: switching delay as a function of").findings
    assert [p["kind"] for p in finding.evidence["places"]] == ["caption"]


def test_a_pin_named_vs_is_not_a_caption() -> None:
    assert is_caption("Output level vs. load current") and is_caption("Figure 7. Output level")
    assert not is_caption("The Vs pin accepts 9 V to 31 V as the bias supply")


def test_a_table_row_quote_is_clean(document: DatasheetIndex) -> None:
    result = verdict(document, {"typical": 37, "unit": "ns"}, "Switching delay 37 ns")
    assert result.evaluable and not result.findings
