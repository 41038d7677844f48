"""DatasheetIndex (placeholder signature; built out with the navigation tools)."""

from __future__ import annotations

from pathlib import Path


class IndexBuildError(Exception):
    def __init__(self, message: str, code: str = "index_build_failed"):
        super().__init__(message)
        self.code = code


class DatasheetIndex:
    pass


def open_index(path: Path, sha256: str | None = None) -> DatasheetIndex:
    raise IndexBuildError("not built yet", code="not_implemented")
