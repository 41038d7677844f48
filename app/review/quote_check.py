"""A reviewer's quote re-found in the datasheet before a correction becomes a gold claim: the same grounding the
detectors apply to a model's answer, so a typo or a quote from another document is flagged, not trusted."""

from __future__ import annotations

from typing import Any

from app.detectors.grounding import ground_value
from app.documents import store
from app.documents.cache import open_index
from app.documents.index import DatasheetIndex, IndexBuildError


class QuoteChecker:
    """Grounds quotes against stored datasheets, opening each document's index once."""

    def __init__(self) -> None:
        self._indexes: dict[str, DatasheetIndex | None] = {}

    def check(self, sha256: str, value: dict[str, Any], quote: str, page: int | None) -> dict[str, Any]:
        """``{"outcome": grounded | grounded_other_page | value_not_in_quote | quote_not_found |
        document_unavailable, "page": where it was found}``."""
        index = self._index(sha256)
        if index is None:
            return {"outcome": "document_unavailable", "page": None}
        result = ground_value(index, 0, value, quote, [page] if page else [])
        return {"outcome": str(result.outcome), "page": result.page}

    def _index(self, sha256: str) -> DatasheetIndex | None:
        if sha256 not in self._indexes:
            path = store.blob_path(sha256)
            try:
                self._indexes[sha256] = open_index(path, sha256=sha256) if path.exists() else None
            except IndexBuildError:
                self._indexes[sha256] = None
        return self._indexes[sha256]
