"""Admission checks for an uploaded PDF: each failure is a typed error with a stable code."""

from __future__ import annotations

import pymupdf

from app.errors import InvalidPdf, PayloadTooLarge

PDF_MAGIC = b"%PDF-"


def validate_pdf(data: bytes, *, max_bytes: int, max_pages: int) -> int:
    """Return the page count of a PDF we can process, or raise a typed error."""
    if not data:
        raise InvalidPdf("The uploaded file is empty.", code="empty_file")
    if len(data) > max_bytes:
        raise PayloadTooLarge(f"The file is larger than the {max_bytes}-byte limit.", code="file_too_large")
    # Some producers put a few bytes of junk before the header; the PDF spec tolerates 1024.
    if PDF_MAGIC not in data[:1024]:
        raise InvalidPdf("The file is not a PDF (no %PDF- header).", code="not_a_pdf")
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # noqa: BLE001 - MuPDF raises several types for broken files
        raise InvalidPdf(f"The PDF could not be opened: {exc}", code="corrupt_pdf") from exc
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
            raise InvalidPdf(f"The PDF's first page could not be read: {exc}", code="corrupt_pdf") from exc
        return pages
    finally:
        doc.close()
