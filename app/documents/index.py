"""DatasheetIndex: one PDF read once (text, word boxes, lines, ToC, table regions), cached by sha256.

The index is what the navigation tools, the review grounding pass and the dashboard read. It is built once per
distinct PDF (``app.documents.build``), kept in an in-memory LRU and on disk (``app.documents.cache``), and never
cached when the build was degraded: a partial index served from cache would silently hide pages forever.

Word and line lists are packed into flat arrays when pickled and unpacked on first access, so a warm open from
disk costs a few milliseconds even for long documents; tables are extracted lazily per page and memoised on the
index object (``app.documents.tables``).
"""

from __future__ import annotations

import pickle
import threading
import zlib
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Bumped whenever the shape or the meaning of cached indexes changes; old cache files are then ignored.
INDEX_FORMAT_VERSION = 7


class IndexBuildError(Exception):
    """A PDF that cannot be indexed. ``code``: corrupt_pdf | encrypted_pdf | empty_pdf | too_many_pages |
    index_timeout | file_not_found."""

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
class Line:
    """One text line as PyMuPDF reports it, with layout facts the tools need.

    ``row`` groups lines that share a visual row on the page (table cells of one row, or two text columns);
    ``region`` is the index of the detected table region holding the line (-1 outside tables); ``offset`` is the
    character offset of the line in ``PageInfo.text`` (-1 when it could not be located); ``furniture`` marks
    running headers/footers repeated across pages.
    """

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float = 0.0
    bold: bool = False
    block: int = 0
    line: int = 0
    row: int = -1
    region: int = -1
    offset: int = -1
    furniture: bool = False
    color: int = 0  # sRGB of the line's dominant text run: headings are often set in colour

    @property
    def bbox(self) -> list[float]:
        return [round(self.x0, 1), round(self.y0, 1), round(self.x1, 1), round(self.y1, 1)]


@dataclass
class TocEntry:
    title: str
    level: int
    page_start: int  # 1-based
    page_end: int  # 1-based, inclusive
    number: str | None = None  # section numbering such as "7.2" when printed
    y: float | None = None  # top of the heading on page_start, when known


_PACKED = ("words", "lines")
_LAZY = ("text", "table_regions", "words", "lines")
_EAGER = ("number", "width", "height", "image_count")


@dataclass
class PageInfo:
    number: int  # 1-based
    width: float
    height: float
    text: str
    words: list[Word] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    table_regions: list[list[float]] = field(default_factory=list)  # candidate table bboxes from the text layout
    image_count: int = 0

    @property
    def has_text(self) -> bool:
        return len(self.text.strip()) >= 20

    # -- compact, lazy pickling --------------------------------------------------------------------------------
    # On disk a page is its number and size plus one opaque blob (text, table regions, words and lines packed into
    # flat arrays). Nothing inside the blob is decoded until a tool touches the page, so opening the index of a
    # long document costs about the same as opening a short one.
    def __getstate__(self) -> dict[str, Any]:
        state = {k: self.__dict__[k] for k in _EAGER if k in self.__dict__}
        blob = self.__dict__.get("_blob")
        if blob is not None and not any(k in self.__dict__ for k in _LAZY):
            state["_blob"] = blob  # never decoded: pass it through untouched
            return state
        packed = dict(self.__dict__.get("_packed") or {})
        for name, pack in (("words", _pack_words), ("lines", _pack_lines)):
            if name in self.__dict__ or name not in packed:
                packed[name] = pack(getattr(self, name))
        raw = pickle.dumps((self.text, self.table_regions, packed), protocol=pickle.HIGHEST_PROTOCOL)
        state["_blob"] = zlib.compress(raw, 1)  # text compresses ~4x at a fraction of a millisecond per page
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for fields still inside the blob or packed.
        d = self.__dict__
        if name in _LAZY and "_blob" in d:
            if "text" not in d:
                text, regions, packed = pickle.loads(zlib.decompress(d["_blob"]))
                d["text"], d["table_regions"], d["_packed"] = text, regions, packed
            if name in _PACKED and name not in d:
                raw = d["_packed"][name]
                d[name] = _unpack_words(raw) if name == "words" else _unpack_lines(raw)
            return d[name]
        raise AttributeError(name)


# Texts are packed NUL-separated, so a NUL a text layer carries inside a word would split it in two and shift every
# later word; it stands for nothing printed, and the replacement character keeps the text's length (and offsets).
def _packable(text: str) -> str:
    return text.replace("\x00", "\ufffd")


def _pack_words(words: list[Word]) -> tuple[bytes, str, bytes]:
    coords = array("f")
    ints = array("i")
    for w in words:
        coords.extend((w.x0, w.y0, w.x1, w.y1))
        ints.extend((w.block, w.line))
    return coords.tobytes(), "\x00".join(_packable(w.text) for w in words), ints.tobytes()


def _unpack_words(packed: tuple[bytes, str, bytes]) -> list[Word]:
    raw, texts, raw_ints = packed
    if not raw:
        return []
    coords = array("f")
    coords.frombytes(raw)
    ints = array("i")
    ints.frombytes(raw_ints)
    parts = texts.split("\x00")
    return [Word(round(coords[4 * i], 2), round(coords[4 * i + 1], 2), round(coords[4 * i + 2], 2),
                 round(coords[4 * i + 3], 2), parts[i], ints[2 * i], ints[2 * i + 1]) for i in range(len(parts))]


def _pack_lines(lines: list[Line]) -> tuple[bytes, str, bytes]:
    coords = array("f")
    ints = array("i")
    for ln in lines:
        coords.extend((ln.x0, ln.y0, ln.x1, ln.y1, ln.size))
        ints.extend((int(ln.bold), ln.block, ln.line, ln.row, ln.region, ln.offset, int(ln.furniture), ln.color))
    return coords.tobytes(), "\x00".join(_packable(ln.text) for ln in lines), ints.tobytes()


def _unpack_lines(packed: tuple[bytes, str, bytes]) -> list[Line]:
    raw, texts, raw_ints = packed
    if not raw:
        return []
    coords = array("f")
    coords.frombytes(raw)
    ints = array("i")
    ints.frombytes(raw_ints)
    parts = texts.split("\x00")
    out = []
    for i, text in enumerate(parts):
        c = coords[5 * i: 5 * i + 5]
        n = ints[8 * i: 8 * i + 8]
        out.append(Line(round(c[0], 2), round(c[1], 2), round(c[2], 2), round(c[3], 2), text, round(c[4], 2),
                        bool(n[0]), n[1], n[2], n[3], n[4], n[5], bool(n[6]), n[7]))
    return out


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
    # A degraded index (a page failed to parse) is usable but never cached; ``build_notes`` say what went wrong.
    degraded: bool = False
    build_notes: list[str] = field(default_factory=list)
    build_seconds: float = 0.0
    format_version: int = INDEX_FORMAT_VERSION
    metadata: dict[str, str] = field(default_factory=dict)
    # Prebuilt ranked-search structures (``app.documents.search.SearchIndex``), persisted with the index.
    search_data: Any = field(default=None, repr=False, compare=False)

    def page(self, number: int) -> PageInfo:
        """1-based page access."""
        return self.pages[number - 1]

    # -- derived, memoised state (never pickled) -------------------------------------------------------------
    def __post_init__(self) -> None:
        self._init_runtime()

    def _init_runtime(self) -> None:
        self._lock = threading.RLock()
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, factory: Any) -> Any:
        """Compute ``factory()`` once per index object (search structures, per-page tables)."""
        value = self._memo.get(key)
        if value is None:
            with self._lock:
                value = self._memo.get(key)
                if value is None:
                    value = factory()
                    self._memo[key] = value
        return value

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_lock", "_memo")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_runtime()
