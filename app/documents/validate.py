"""Admission checks for an uploaded PDF: each failure is a typed error with a stable code.

``check_envelope`` is cheap and runs wherever the upload is; ``inspect_pdf`` parses the file with MuPDF and is what
``app.jobs.admission`` runs in a limited child process.
"""

from __future__ import annotations

import pymupdf

from app.documents.sandbox import _OUT_OF_MEMORY
from app.errors import InvalidPdf, PayloadTooLarge

PDF_MAGIC = b"%PDF-"


def check_envelope(data: bytes, *, max_bytes: int) -> None:
    """The checks that need no parser: something was sent, it is not too large, and it says it is a PDF."""
    if not data:
        raise InvalidPdf("The uploaded file is empty.", code="empty_file")
    if len(data) > max_bytes:
        raise PayloadTooLarge(f"The file is larger than the {max_bytes}-byte limit.", code="file_too_large")
    # Some producers put a few bytes of junk before the header; the PDF spec tolerates 1024.
    if PDF_MAGIC not in data[:1024]:
        raise InvalidPdf("The file is not a PDF (no %PDF- header).", code="not_a_pdf")


def inspect_pdf(data: bytes, max_pages: int) -> int:
    """Open the PDF with MuPDF and read its first page; return the page count or raise a typed error."""
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types for broken files
        raise _unreadable("The PDF could not be opened", exc) from exc
    try:
        if doc.needs_pass or doc.is_encrypted:
            raise InvalidPdf("The PDF is encrypted or password-protected.", code="encrypted_pdf")
        pages = doc.page_count
        if pages == 0:
            raise InvalidPdf("The PDF has no pages.", code="corrupt_pdf")
        if pages > max_pages:
            raise InvalidPdf(f"The PDF has {pages} pages; the limit is {max_pages}.", code="too_many_pages")
        try:
            doc.load_page(0).get_text("text")
        except Exception as exc:  # noqa: BLE001
            raise _unreadable("The PDF's first page could not be read", exc) from exc
        return pages
    finally:
        doc.close()


def _unreadable(what: str, exc: Exception) -> InvalidPdf:
    """A parser failure: the file is damaged, unless the parser merely ran out of memory (Python's MemoryError or
    MuPDF's own "malloc (...) failed"), which says the file is too demanding, not that it is broken."""
    if isinstance(exc, MemoryError) or _OUT_OF_MEMORY.search(f"{type(exc).__name__}: {exc}"):
        return InvalidPdf(f"{what}: it needs more memory than an upload check may use.", code="pdf_too_complex")
    return InvalidPdf(f"{what}: {exc}", code="corrupt_pdf")
