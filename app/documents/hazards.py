"""Active content in a PDF: where it carries JavaScript.

dsx never executes PDF JavaScript (MuPDF's text extraction and rendering do not run it), but a datasheet that
carries scripts did not come straight from a vendor's documentation system: reviewers should know, and the
file should not be passed on to people who open it in a desktop reader. So the scan only reports.

Where scripts live (ISO 32000-1, 12.6.4.16): JavaScript actions (``/S /JavaScript`` with a ``/JS`` string or
stream) reached from the catalogue's ``/OpenAction`` or ``/AA``, a page's ``/AA``, an annotation's or form
field's ``/A``/``/AA``, and the document-level ``/JavaScript`` name tree. Inline action dictionaries are not
objects of their own, so every object's source is searched for the ``/JS`` and ``/JavaScript`` names rather
than walking a fixed set of paths. Object streams are expanded by MuPDF, so compressed files hide nothing.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf

from app.documents.index import DatasheetIndex

MEMO_KEY = "pdf_javascript"
MAX_OBJECTS = 500_000
SCAN_BUDGET_S = 10.0
MAX_LOCATIONS = 20

_JS_NAME = re.compile(r"/(?:JS|JavaScript)(?![A-Za-z0-9#_.-])")
_PAGE_REF = re.compile(r"/P\s*(\d+)\s+0\s+R")


@dataclass
class JavaScriptScan:
    """Objects carrying JavaScript (``object``: xref, ``where``: what the object is), and whether every object
    was looked at (``complete`` false when the scan hit its object or time budget, or could not open the file)."""

    locations: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = True
    objects_scanned: int = 0
    error: str | None = None

    @property
    def found(self) -> bool:
        return bool(self.locations)

    def to_dict(self) -> dict[str, Any]:
        return {"locations": self.locations, "complete": self.complete, "objects_scanned": self.objects_scanned,
                "error": self.error}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JavaScriptScan:
        return cls(locations=list(data.get("locations") or []), complete=bool(data.get("complete", True)),
                   objects_scanned=int(data.get("objects_scanned") or 0), error=data.get("error"))


def scan_javascript(path: Path, *, budget_s: float = SCAN_BUDGET_S, max_objects: int = MAX_OBJECTS) -> JavaScriptScan:
    """Look through every object of the PDF at ``path`` for JavaScript, within a time and object budget."""
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types for broken files
        return JavaScriptScan(complete=False, error=f"{type(exc).__name__}: {exc}"[:300])
    try:
        if doc.needs_pass:
            return JavaScriptScan(complete=False, error="encrypted")
        return _scan(doc, budget_s, max_objects)
    finally:
        doc.close()


def _scan(doc: pymupdf.Document, budget_s: float, max_objects: int) -> JavaScriptScan:
    deadline = time.monotonic() + budget_s
    catalogue = doc.pdf_catalog()
    pages = _page_numbers(doc)
    scan = JavaScriptScan()
    total = doc.xref_length()
    for xref in range(1, total):
        if scan.objects_scanned >= max_objects or time.monotonic() > deadline:
            scan.complete = False
            break
        scan.objects_scanned += 1
        try:
            source = doc.xref_object(xref, compressed=True)
        except Exception:  # noqa: BLE001 - one unreadable object must not end the scan
            continue
        if _JS_NAME.search(source) and len(scan.locations) < MAX_LOCATIONS:
            scan.locations.append({"object": xref, "where": _where(xref, source, catalogue, pages)})
    return scan


def _page_numbers(doc: pymupdf.Document) -> dict[int, int]:
    numbers: dict[int, int] = {}
    for i in range(min(doc.page_count, MAX_OBJECTS)):
        try:
            numbers[doc.page_xref(i)] = i + 1
        except Exception:  # noqa: BLE001
            continue
    return numbers


def _where(xref: int, source: str, catalogue: int, pages: dict[int, int]) -> str:
    compact = source.replace(" ", "")
    if xref == catalogue:
        return "document catalogue (open or document actions)"
    if xref in pages:
        return f"page {pages[xref]} (page actions)"
    if "/Subtype/Widget" in compact or "/FT/" in compact:
        kind = "form field"
    elif "/Type/Annot" in compact or "/Subtype/" in compact:
        kind = "annotation"
    elif "/Names" in compact or "/JavaScript[" in compact:
        return "document-level script (JavaScript name tree)"
    else:
        return "JavaScript action"
    match = _PAGE_REF.search(source)
    page = pages.get(int(match.group(1))) if match else None
    return f"{kind} on page {page}" if page else kind


def seed(index: DatasheetIndex, scan: JavaScriptScan) -> None:
    """Attach a scan made elsewhere (in the indexing child) to ``index``, so ``javascript_of`` need not rescan."""
    index.memo(MEMO_KEY, lambda: scan)


def javascript_of(index: DatasheetIndex) -> JavaScriptScan:
    """The JavaScript scan of the index's PDF: the one the indexing child made, or one made now (once per
    index object) when the index came from the cache."""
    return index.memo(MEMO_KEY, lambda: scan_javascript(index.path))
