"""DatasheetIndex: build, ToC (bookmarks and reconstructed), cache behaviour and every kind of bad PDF."""

from __future__ import annotations

import pickle
from pathlib import Path

import pymupdf
import pytest

from app.documents import build as build_module
from app.documents import cache
from app.documents.build import build_index
from app.documents.cache import open_index
from app.documents.index import INDEX_FORMAT_VERSION, IndexBuildError
from tests.support.paths import datasheet
from tests.support.pdfs import encrypted_pdf, text_pdf


def _build(path: Path, timeout_s: float = 60.0, max_pages: int = 2000):
    return build_index(path, cache.sha256_file(path), timeout_s=timeout_s, max_pages=max_pages)


def _headed_pdf(path: Path) -> Path:
    """Three pages with numbered headings in larger bold type above body text, and no bookmarks."""
    doc = pymupdf.open()
    sections = [("1 Features", "1.1 Overview"), ("2 Absolute Maximum Ratings", None),
                ("3 Electrical Characteristics", "3.1 DC Characteristics")]
    for title, sub in sections:
        page = doc.new_page(width=595, height=842)
        page.insert_text((50, 70), title, fontsize=16, fontname="hebo")
        y = 100
        for i in range(6):
            page.insert_text((50, y), f"Body text line {i} describing the device in ordinary words.", fontsize=9)
            y += 14
        if sub:
            page.insert_text((50, y + 20), sub, fontsize=12, fontname="hebo")
            y += 50
            for i in range(4):
                page.insert_text((50, y), f"More body text {i} about supply voltage and current.", fontsize=9)
                y += 14
    doc.save(str(path))
    doc.close()
    return path


@pytest.fixture(autouse=True)
def _fresh_memory():
    cache.clear_memory()
    yield
    cache.clear_memory()


def test_page_text_is_exactly_what_quotes_are_checked_against(datasheets_dir):
    path = datasheet("speaker_amplifier")
    index = _build(path)
    with pymupdf.open(str(path)) as doc:
        for page in index.pages:
            assert page.text == doc[page.number - 1].get_text()
    page3 = index.page(3)
    assert page3.words and all(w.x1 >= w.x0 and w.y1 >= w.y0 for w in page3.words)
    assert any(w.text == "POUT" for w in page3.words)
    located = [ln for ln in page3.lines if ln.offset >= 0]
    assert len(located) >= 0.95 * len(page3.lines)
    for ln in located[:40]:
        assert ln.text.strip() in page3.text[ln.offset: ln.offset + len(ln.text)]


def test_bookmark_toc_with_page_ranges(datasheets_dir):
    index = _build(datasheet("microphone_amplifier"))
    assert index.toc_source == "bookmarks"
    assert index.toc_quality >= 0.5
    by_title = {e.title: e for e in index.toc}
    electrical = by_title["4 Electrical characteristics"]
    assert (electrical.page_start, electrical.number, electrical.level) == (6, "4", 1)
    assert electrical.page_end >= 7  # the characteristics table runs over two pages
    ratings = by_title["2 Absolute maximum ratings"]
    assert ratings.page_start == ratings.page_end == 4
    assert all(1 <= e.page_start <= e.page_end <= index.page_count for e in index.toc)
    assert index.title.startswith("LM158, LM258, LM358")
    assert {"LM158", "LM258", "LM358"} <= set(index.part_numbers)


def test_reconstructed_toc_when_there_are_no_bookmarks(datasheets_dir):
    path = datasheet("speaker_amplifier")
    with pymupdf.open(str(path)) as doc:
        assert doc.get_toc() == []
    index = _build(path)
    assert index.toc_source == "reconstructed"
    pages = {e.title.split(" (")[0]: e.page_start for e in index.toc}
    assert pages["ABSOLUTE MAXIMUM RATINGS"] == 3
    assert pages["ELECTRICAL CHARACTERISTICS"] == 3
    assert pages["PIN CONFIGURATION"] == 2
    assert all(not e.title.startswith(("\x84", "\uf0a7")) for e in index.toc)  # bullet glyphs stripped
    assert "LM386" in index.title and "LM386" in index.part_numbers


def test_reconstruction_uses_numbering_for_levels_and_ranges(tmp_path):
    index = _build(_headed_pdf(tmp_path / "headed.pdf"))
    assert index.toc_source == "reconstructed"
    titles = [(e.title, e.level, e.page_start, e.page_end) for e in index.toc]
    assert ("1 Features", 1, 1, 1) in titles
    assert ("1.1 Overview", 2, 1, 1) in titles
    assert ("2 Absolute Maximum Ratings", 1, 2, 2) in titles
    assert ("3 Electrical Characteristics", 1, 3, 3) in titles
    assert not any(t.startswith("Body text") for t, *_ in titles)


def test_cache_memory_then_disk_and_format_version(dsx_env, tmp_path):
    path = tmp_path / "doc.pdf"
    text_pdf(["Supply voltage VDD 2.7 to 5.5 V", "Operating temperature -40 to 85 C"], path)
    sha = cache.sha256_file(path)
    first = open_index(path, sha)
    assert open_index(path, sha) is first  # memory hit
    stored = cache.disk_path(sha)
    assert stored.is_file() and f".v{INDEX_FORMAT_VERSION}-pymupdf{pymupdf.__version__}." in stored.name
    assert stored.parent.parent == dsx_env.index_cache_dir
    cache.clear_memory()
    again = open_index(path)  # sha computed from the file, index read from disk
    assert again is not first and again.sha256 == sha
    assert [p.text for p in again.pages] == [p.text for p in first.pages]
    assert again.page(1).words == first.page(1).words and again.page(2).lines == first.page(2).lines

    # A cache file of another format version is ignored and replaced by a fresh build.
    stale = pickle.loads(stored.read_bytes())
    stale.format_version = INDEX_FORMAT_VERSION - 1
    stored.write_bytes(pickle.dumps(stale))
    cache.clear_memory()
    rebuilt = open_index(path, sha)
    assert rebuilt.format_version == INDEX_FORMAT_VERSION
    assert pickle.loads(stored.read_bytes()).format_version == INDEX_FORMAT_VERSION

    # A truncated cache file is a miss, not an error.
    stored.write_bytes(stored.read_bytes()[:100])
    cache.clear_memory()
    assert open_index(path, sha).page_count == 2


def test_degraded_build_is_returned_but_never_cached(dsx_env, tmp_path, monkeypatch):
    path = tmp_path / "doc.pdf"
    text_pdf(["page one text for the index", "page two text for the index", "page three text"], path)
    real = build_module._read_page

    def flaky(doc, number):
        if number == 2:
            raise RuntimeError("simulated MuPDF failure")
        return real(doc, number)

    monkeypatch.setattr(build_module, "_read_page", flaky)
    index = open_index(path)
    assert index.degraded and index.text_layer == "partial"
    assert index.page(2).text == "" and "page 2" in index.build_notes[0]
    assert not cache.disk_path(index.sha256).exists()
    monkeypatch.setattr(build_module, "_read_page", real)
    cache.clear_memory()
    healthy = open_index(path)
    assert not healthy.degraded and healthy.page(2).text.startswith("page two")
    assert cache.disk_path(healthy.sha256).exists()


def test_corrupt_pdf(tmp_path):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 50)
    with pytest.raises(IndexBuildError) as err:
        _build(path)
    assert err.value.code in ("corrupt_pdf", "empty_pdf")


def test_not_a_pdf(tmp_path):
    path = tmp_path / "notes.pdf"
    path.write_text("just some text, no PDF header at all\n" * 20)
    with pytest.raises(IndexBuildError) as err:
        _build(path)
    assert err.value.code in ("corrupt_pdf", "empty_pdf")


def test_encrypted_pdf(tmp_path):
    path = tmp_path / "secret.pdf"
    path.write_bytes(encrypted_pdf())
    with pytest.raises(IndexBuildError) as err:
        _build(path)
    assert err.value.code == "encrypted_pdf"


def test_zero_page_pdf(tmp_path):
    path = tmp_path / "empty.pdf"
    body = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
            b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
    path.write_bytes(body)
    with pytest.raises(IndexBuildError) as err:
        _build(path)
    assert err.value.code in ("empty_pdf", "corrupt_pdf")


def test_missing_file(tmp_path):
    with pytest.raises(IndexBuildError) as err:
        open_index(tmp_path / "nope.pdf")
    assert err.value.code == "file_not_found"


def test_too_many_pages(tmp_path):
    path = tmp_path / "long.pdf"
    text_pdf([f"page {i}" for i in range(12)], path)
    with pytest.raises(IndexBuildError) as err:
        _build(path, max_pages=10)
    assert err.value.code == "too_many_pages"


def test_build_budget_stops_a_long_build(tmp_path):
    path = tmp_path / "long.pdf"
    text_pdf([f"page {i} with a little text to extract" for i in range(60)], path)
    with pytest.raises(IndexBuildError) as err:
        _build(path, timeout_s=0.0)
    assert err.value.code == "index_timeout"
    assert "budget" in str(err.value)


def test_no_text_layer_builds_with_status_none(tmp_path):
    path = tmp_path / "scan.pdf"
    doc = pymupdf.open()
    page = doc.new_page(width=300, height=200)
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 40), False)
    pix.clear_with(200)
    page.insert_image(pymupdf.Rect(20, 20, 280, 180), pixmap=pix)
    doc.save(str(path))
    doc.close()
    index = _build(path)
    assert index.text_layer == "none"
    assert index.page(1).image_count == 1
    assert index.toc_source == "none" and index.table_pages == []


def test_running_headers_are_furniture_not_headings(tmp_path):
    path = tmp_path / "headers.pdf"
    pages = []
    for i in range(4):
        topic = ["features", "ratings", "characteristics", "packaging"][i]
        pages.append(f"ACME PART-42 DATASHEET\nAbout the {topic} of the part.\nThe {topic} are listed here.\n"
                     f"More on {topic}.\nPage {i + 1} of 4")
    text_pdf(pages, path)
    index = _build(path)
    first = index.page(1).lines
    assert first[0].text.startswith("ACME") and first[0].furniture
    assert not any(ln.furniture for ln in first[1:4])
    assert first[4].text.startswith("Page 1") and first[4].furniture  # page numbers differ only in digits
    assert not any(e.title.startswith("ACME") for e in index.toc)


def test_a_nul_inside_a_text_layer_word_survives_packing_without_shifting_the_others() -> None:
    from app.documents.index import Line, Word, _pack_lines, _pack_words, _unpack_lines, _unpack_words

    words = [Word(1, 2, 3, 4, "VCC\x00"), Word(5, 6, 7, 8, "5.5", 0, 1), Word(9, 10, 11, 12, "V", 0, 1)]
    lines = [Line(1, 2, 3, 4, "Supply\x00 voltage", 9.0), Line(5, 6, 7, 8, "VCC 5.5 V", 8.0)]

    unpacked_words = _unpack_words(_pack_words(words))
    unpacked_lines = _unpack_lines(_pack_lines(lines))

    assert [w.text for w in unpacked_words] == ["VCC\ufffd", "5.5", "V"]
    assert [(w.x0, w.line) for w in unpacked_words] == [(1, 0), (5, 1), (9, 1)]
    assert [ln.text for ln in unpacked_lines] == ["Supply\ufffd voltage", "VCC 5.5 V"]
    assert [ln.size for ln in unpacked_lines] == [9.0, 8.0]
