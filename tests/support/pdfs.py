"""Small synthetic PDFs built by the tests themselves."""

from __future__ import annotations

from pathlib import Path

import pymupdf


def text_pdf(pages: list[str], path: Path | None = None, fontsize: float = 10) -> bytes:
    """A PDF with one page per string (lines split on newlines), returned as bytes (and written to path)."""
    doc = pymupdf.open()
    for body in pages:
        page = doc.new_page(width=595, height=842)
        y = 60.0
        for line in body.splitlines():
            page.insert_text((50, y), line, fontsize=fontsize)
            y += fontsize * 1.5
    data = doc.tobytes()
    doc.close()
    if path is not None:
        path.write_bytes(data)
    return data


def encrypted_pdf() -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((50, 60), "secret")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="u", owner_pw="o")
    doc.close()
    return data


def placed_pdf(pages: list[list[tuple[float, float, str]]], path: Path | None = None, fontsize: float = 9) -> bytes:
    """A PDF whose pages hold words placed at (x, y) baselines: table layouts with columns and merged cells."""
    doc = pymupdf.open()
    for placements in pages:
        page = doc.new_page(width=595, height=842)
        for x, y, text in placements:
            page.insert_text((x, y), text, fontsize=fontsize)
    data = doc.tobytes()
    doc.close()
    if path is not None:
        path.write_bytes(data)
    return data
