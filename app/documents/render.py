"""Page images: PNGs for vision models (``inspect_page``) and for the review dashboard (highlight boxes).

Rendering re-opens the PDF each time: PyMuPDF documents are not thread-safe, and drawing highlights must
never touch a shared document. Coordinates are the text layer's (the same space as ``Word``/``Line`` boxes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pymupdf

from app.documents.index import DatasheetIndex

MAX_PIXELS = 4_000_000  # ~2000 x 2000: larger images cost vision tokens and memory for little gain
HIGHLIGHT_STROKE = (0.95, 0.45, 0.0)
HIGHLIGHT_FILL = (1.0, 0.85, 0.0)


def render_page_png(index: DatasheetIndex, page: int, boxes: list[list[float]] | None = None, dpi: int = 110) -> bytes:
    """The whole page as PNG, with each box in ``boxes`` ([x0, y0, x1, y1] in page points) highlighted."""
    png, _w, _h = render_png(index.path, page, region=None, dpi=dpi, boxes=boxes)
    return png


def render_png(path: Path | str, page: int, region: list[float] | None = None, dpi: int = 72,
               boxes: list[list[float]] | None = None) -> tuple[bytes, int, int]:
    """PNG of ``page`` (1-based) of the PDF at ``path``, optionally clipped to ``region``; returns
    (bytes, width px, height px). The resolution is lowered when the image would exceed ``MAX_PIXELS``.

    Boxes are word boxes as the index stores them, which PyMuPDF gives in the page's unrotated space, the
    same space drawing uses: on a rotated page the highlight lands where the text is shown."""
    doc = pymupdf.open(str(path))
    try:
        pg = doc.load_page(page - 1)
        for box in boxes or []:
            rect = pymupdf.Rect(box)
            if rect.is_empty:
                continue
            pg.draw_rect(rect, color=HIGHLIGHT_STROKE, fill=HIGHLIGHT_FILL, fill_opacity=0.35, width=1.2,
                         overlay=True)
        clip = pymupdf.Rect(region) if region else pg.rect
        scale = dpi / 72.0
        pixels = clip.width * scale * clip.height * scale
        if pixels > MAX_PIXELS:
            scale *= (MAX_PIXELS / pixels) ** 0.5
        pix = pg.get_pixmap(matrix=pymupdf.Matrix(scale, scale), clip=clip, alpha=False)
        return pix.tobytes("png"), pix.width, pix.height
    finally:
        doc.close()


@dataclass(frozen=True)
class PageGeometry:
    """The size of one page as shown (rotation applied), and where a box sits on it."""

    width: float
    height: float
    focus: float | None  # top of the box as a fraction of the shown page's height; None without a box


def page_count(path: Path | str) -> int:
    with pymupdf.open(str(path)) as document:
        return document.page_count


def page_geometry(path: Path | str, page: int, box: list[float] | None = None) -> PageGeometry:
    """Geometry of ``page`` (1-based) as shown. ``box`` is in the unrotated space the index stores boxes in."""
    with pymupdf.open(str(path)) as document:
        shown = document[page - 1]
        width, height = shown.rect.width, shown.rect.height
        focus = (pymupdf.Rect(box) * shown.rotation_matrix).y0 / height if box and height else None
    return PageGeometry(width, height, focus)
