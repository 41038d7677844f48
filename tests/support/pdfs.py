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


HELV, HEBO = pymupdf.Font("helv"), pymupdf.Font("hebo")  # through a TextWriter they print "Ω", "±" as themselves


def write_text(page: pymupdf.Page, x: float, y: float, text: str, size: float = 9, bold: bool = False) -> None:
    writer = pymupdf.TextWriter(page.rect)
    writer.append((x, y), text, font=HEBO if bold else HELV, fontsize=size)
    writer.write_text(page)


def ruled_table(page: pymupdf.Page, top: float, header: list[str], body: list[list[list[str]]],
                cols: list[float], right: float, row_h: float = 24) -> float:
    """Draw a grid: each body band holds one or more sub-lines (several conditions, each with its values);
    a band's first-column text sits on its first sub-line only, as a merged cell would. Returns the bottom."""
    y = top
    page.draw_line((cols[0], y), (right, y))
    for x, text in zip(cols, header, strict=True):
        write_text(page, x + 3, y + 12, text, bold=True)
    y += 18
    page.draw_line((cols[0], y), (right, y))
    for band in body:
        height = row_h * len(band) / 2 + 6
        for k, sub in enumerate(band):
            baseline = y + 11 + k * (height - 8) / max(1, len(band))
            for x, text in zip(cols, sub, strict=True):
                if text:
                    write_text(page, x + 3, baseline, text)
        y += height
        page.draw_line((cols[0], y), (right, y))
    for x in cols + [right]:
        page.draw_line((x, top), (x, y))
    return y
