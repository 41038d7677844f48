"""The five document navigation tools over a DatasheetIndex. JSON in, JSON out.

Interface (implementation pending). Every method returns a JSON-serialisable dict. Errors are returned,
never raised: ``{"error": {"code": "...", "message": "..."}}`` with codes such as page_out_of_range,
no_such_section, no_text_layer, invalid_argument. Large outputs are bounded and say so:
``"truncated": true`` plus ``"next_cursor"`` where a continuation exists.
"""

from __future__ import annotations

from typing import Any

from app.documents.index import DatasheetIndex


class DocumentTools:
    def __init__(self, index: DatasheetIndex):
        self.index = index

    def build_datasheet(self) -> dict[str, Any]:
        """Overview: title, part_numbers, page_count, toc [{title, level, page_start, page_end}],
        toc_source, table_pages, text_layer, hints."""
        raise NotImplementedError

    def get_section_text(self, section: str | None = None, start_page: int | None = None,
                         end_page: int | None = None, max_chars: int = 8000,
                         cursor: str | None = None) -> dict[str, Any]:
        """{"section", "start_page", "end_page", "text" (with "--- page N ---" markers), "truncated",
        "next_cursor", "notes": [...]}."""
        raise NotImplementedError

    def search_text(self, query: str | list[str], max_hits: int = 10, page: int | None = None) -> dict[str, Any]:
        """Ranked hits: {"query", "hits": [{"page", "text" (the matching line), "snippet" (line with
        context), "section", "bbox": [x0, y0, x1, y1], "score"}], "total_hits", "truncated"}."""
        raise NotImplementedError

    def extract_table_markdown(self, page: int, table: int | None = None) -> dict[str, Any]:
        """{"page", "tables": [{"index", "bbox", "markdown", "n_rows", "n_cols", "header_rows",
        "continues_on_next_page", "continued_from_previous_page"}], "notes"}."""
        raise NotImplementedError

    def inspect_page(self, page: int, region: list[float] | None = None, dpi: int = 72) -> dict[str, Any]:
        """{"page", "width", "height", "blocks": [{"bbox", "text"}], "image": {"mime": "image/png",
        "base64": ...}}."""
        raise NotImplementedError
