"""A small in-memory datasheet index and a fixed-result tool runner, for agent tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.agent.tools import ToolResult
from app.documents.index import DatasheetIndex, PageInfo

PAGES = ["Electrical characteristics\nSupply voltage VDD 2.7 3.3 5.5 V", "Package outline\nSOT-23"]
ANSWER = {"found": True, "values": [{"min": 2.7, "typical": 3.3, "max": 5.5, "unit": "V"}], "source_page": 1,
          "quote": "Supply voltage VDD 2.7 3.3 5.5 V", "confidence": 0.9}
SEARCH_RESULT = {"query": "supply voltage", "hits": [{"page": 1, "text": "Supply voltage VDD 2.7 3.3 5.5 V"}],
                 "total_hits": 1, "truncated": False}


def make_index(pages: list[str] = PAGES, text_layer: str = "ok") -> DatasheetIndex:
    return DatasheetIndex(
        sha256="0" * 64, path=Path("/nonexistent/datasheet.pdf"), page_count=len(pages), title="Test part",
        part_numbers=["TP1"], pages=[PageInfo(i + 1, 595, 842, body) for i, body in enumerate(pages)], toc=[],
        toc_source="none", toc_quality=0.0, text_layer=text_layer,
    )


class FixedToolRunner:
    """Serves fixed results per tool (the tool-runner seam the evaluation arms also use) and records calls."""

    def __init__(self, results: dict[str, dict[str, Any]] | None = None) -> None:
        self.results = results or {"search_text": SEARCH_RESULT, "build_datasheet": {"title": "Test part",
                                                                                     "page_count": 2, "toc": []}}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def execute(self, name: str, args: dict[str, Any]) -> ToolResult:
        self.calls.append((name, args))
        return ToolResult(name, self.results.get(name, {"text": ""}))
