"""DatasheetIndex: one PDF read once (text, word boxes, ToC, tables), cached by sha256.

Interface (implementation pending): other packages rely on these names and shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


class IndexBuildError(Exception):
    """A PDF that cannot be indexed. ``code``: corrupt_pdf | encrypted_pdf | empty_pdf | too_many_pages |
    index_timeout."""

    def __init__(self, message: str, code: str = "index_build_failed"):
        super().__init__(message)
        self.code = code


@dataclass
class Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    block: int = 0
    line: int = 0


@dataclass
class TocEntry:
    title: str
    level: int
    page_start: int  # 1-based
    page_end: int  # 1-based, inclusive
    number: str | None = None  # section numbering such as "7.2" when printed


@dataclass
class PageInfo:
    number: int  # 1-based
    width: float
    height: float
    text: str
    words: list[Word] = field(default_factory=list)


@dataclass
class DatasheetIndex:
    sha256: str
    path: Path
    page_count: int
    title: str
    part_numbers: list[str]
    pages: list[PageInfo]
    toc: list[TocEntry]
    toc_source: str  # bookmarks | reconstructed | none
    toc_quality: float  # 0..1
    text_layer: str  # ok | partial | none
    table_pages: list[int] = field(default_factory=list)

    def page(self, number: int) -> PageInfo:
        """1-based page access."""
        return self.pages[number - 1]


def open_index(path: Path, sha256: str | None = None) -> DatasheetIndex:
    """Open the index of the PDF at ``path`` from cache (memory, then disk) or build it."""
    raise IndexBuildError("index builder not available", code="not_implemented")
