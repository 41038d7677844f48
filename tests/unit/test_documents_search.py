"""Ranked search: unit and symbol glyphs, ligatures, hyphenation, table rows before prose, sections."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from app.documents import cache
from app.documents.build import build_index
from app.documents.text import fold, is_value, tokens
from app.documents.tools import DocumentTools
from tests.support.paths import datasheet

FONTS = {False: pymupdf.Font("helv"), True: pymupdf.Font("hebo")}
FALLBACK = pymupdf.Font("cjk")  # has ℃, which Helvetica lacks


def _write(page: pymupdf.Page, xy: tuple[float, float], text: str, size: float = 9, bold: bool = False) -> None:
    """Text written with embedded fonts, so every glyph (µ, Ω, ℃, ﬁ, dashes) keeps its code point in the PDF."""
    font = FONTS[bold]
    if not all(font.has_glyph(ord(ch)) for ch in text):
        font = FALLBACK
    writer = pymupdf.TextWriter(page.rect)
    writer.append(xy, text, font=font, fontsize=size)
    writer.write_text(page)


def _glyph_pdf(path: Path) -> Path:
    """Two pages: prose mentioning parameters on page 1, a characteristics table on page 2 printing the values
    with the glyphs datasheets use (micro sign, ohm sign, degree Celsius sign, ligatures, en dashes)."""
    doc = pymupdf.open()
    p1 = doc.new_page(width=595, height=842)
    _write(p1, (50, 60), "1 Description", size=14, bold=True)
    lines = [
        "The device draws a small supply current in standby and its wiper resistance is low.",
        "Temperature co-",
        "efficient data and the resistance options are listed in the tables that follow.",
        "The Temperature Coeﬁ cient is specified over the full range.",
    ]
    y = 90
    for text in lines:
        _write(p1, (50, y), text)
        y += 13
    p2 = doc.new_page(width=595, height=842)
    _write(p2, (50, 60), "2 Electrical Characteristics", size=14, bold=True)
    header = ["Parameter", "Symbol", "Min", "Typ", "Max", "Unit"]
    cols = [50, 200, 260, 310, 360, 410]
    rows = [
        ["Supply current", "IDD", "—", "2.5", "5", "\u00b5A"],
        ["Wiper resistance", "RW", "—", "75", "160", "\u2126"],
        ["Resistance, 10 k\u2126 option", "RAB", "8.0", "10", "12.0", "k\u2126"],
        ["Operating temperature", "TA", "\u201340", "—", "+125", "\u2103"],
        ["Tempco", "TC", "—", "\u00b150", "—", "ppm/°C"],
    ]
    y = 100
    for x, text in zip(cols, header, strict=True):
        _write(p2, (x, y), text, bold=True)
    for row in rows:
        y += 16
        for x, text in zip(cols, row, strict=True):
            _write(p2, (x, y), text)
    doc.set_toc([[1, "1 Description", 1], [1, "2 Electrical Characteristics", 2]])
    doc.save(str(path))
    doc.close()
    return path


@pytest.fixture(scope="module")
def glyph_tools(tmp_path_factory) -> DocumentTools:
    path = _glyph_pdf(tmp_path_factory.mktemp("search") / "glyphs.pdf")
    return DocumentTools(build_index(path, cache.sha256_file(path), timeout_s=60, max_pages=100))


def test_normalisation_folds_symbols_units_and_numbers():
    assert tokens("2.5 µA") == tokens("2.5 μA") == tokens("2.5uA") == ["2.5", "ua"]
    assert tokens("10 kΩ") == tokens("10 kΩ") == tokens("10 kohm") == ["10", "kohm"]
    assert tokens("-40 ℃") == tokens("-40 °C") == tokens("-40 degC") == ["40", "degc"]
    assert tokens("5.0V") == tokens("5 V") == ["5", "v"]
    assert tokens("VMax=5,25V") == ["vmax", "5.25", "v"]  # a decimal comma
    assert tokens("10,000 rpm") == ["10000", "rpm"]  # a thousands separator
    assert tokens("Coefﬁ cient") == tokens("Coefficient") == ["coefficient"]
    assert tokens("Supply voltages of the part") == ["supply", "voltage", "part"]
    assert fold("–40 … +125") == "-40 ... +125"


@pytest.mark.parametrize("text, expected", [
    ("2.7", True), ("—", True), ("-40", True), ("+125 °C", True), ("0.7 to 1.2", True), ("12.5V", True),
    ("±50", True), (".020", True), ("(256)", True), ("nA", False), ("Supply Voltage", False), ("VDD +", False),
])
def test_value_cells(text, expected):
    assert is_value(text) is expected


@pytest.mark.parametrize("query, row_start", [
    ("supply current uA", "Supply current"),
    ("µA", "Supply current"),
    ("wiper resistance ohm", "Wiper resistance"),
    ("resistance 10 kohm option", "Resistance, 10 k"),
    ("operating temperature degC", "Operating temperature"),
    ("tempco ppm/degC", "Tempco"),
])
def test_unit_glyph_queries_find_the_table_row(glyph_tools, query, row_start):
    result = glyph_tools.search_text(query, max_hits=5)
    top = result["hits"][0]
    assert top["page"] == 2, result["hits"]
    assert top["snippet"].startswith(row_start), top
    assert top["in_table"] is True
    assert top["section"] == "2 Electrical Characteristics"
    x0, y0, x1, y1 = top["bbox"]
    assert 0 <= x0 < x1 <= 595 and 0 <= y0 < y1 <= 842


def test_snippet_shows_the_row_values(glyph_tools):
    hit = glyph_tools.search_text("wiper resistance", max_hits=1)["hits"][0]
    assert hit["text"] == "Wiper resistance"
    row, following = hit["snippet"].split("\n")
    assert row == "Wiper resistance RW — 75 160 \u2126"
    assert following.startswith("Resistance, 10 k\u2126 option RAB 8.0 10 12.0")
    page_text = " ".join(glyph_tools.index.page(2).text.split())
    assert row in page_text  # a row quotes back verbatim against the text layer


def test_ligature_split_and_hyphenated_words_are_found(glyph_tools):
    hits = glyph_tools.search_text("temperature coefficient", max_hits=5)["hits"]
    texts = [h["text"] for h in hits if h["page"] == 1]
    assert any("Coeﬁ cient" in t for t in texts)  # the hit text is the page's own text, unrepaired
    assert any(t == "Temperature co-" for t in texts)  # "co-" + "efficient" across the line break


def test_table_rows_outrank_prose(glyph_tools):
    hits = glyph_tools.search_text("wiper resistance", max_hits=5)["hits"]
    assert hits[0]["page"] == 2
    assert any(h["page"] == 1 for h in hits[1:])
    assert hits[0]["score"] > max(h["score"] for h in hits if h["page"] == 1)


def test_query_list_is_a_ranked_union(glyph_tools):
    result = glyph_tools.search_text(["IDD", "tempco"], max_hits=10)
    texts = {h["text"] for h in result["hits"]}
    assert {"IDD", "Tempco"} <= texts or {"Supply current", "Tempco"} <= texts
    assert all(h["matched_queries"] for h in result["hits"])


def test_page_filter_and_no_match(glyph_tools):
    only_page1 = glyph_tools.search_text("resistance", page=1)["hits"]
    assert only_page1 and {h["page"] for h in only_page1} == {1}
    none = glyph_tools.search_text("zzzz quux")
    assert none["hits"] == [] and none["total_hits"] == 0 and none["notes"]


def test_hits_are_bounded_and_say_so(glyph_tools):
    result = glyph_tools.search_text("the", max_hits=1)  # a stopword-only query matches nothing
    assert result["hits"] == []
    result = glyph_tools.search_text("resistance", max_hits=1)
    assert len(result["hits"]) == 1 and result["total_hits"] > 1 and result["truncated"] is True


def test_real_datasheet_parameter_lands_on_its_table_page(datasheets_dir):
    path = datasheet("speaker_amplifier")
    tools = DocumentTools(build_index(path, cache.sha256_file(path), timeout_s=60, max_pages=100))
    hits = tools.search_text("quiescent current", max_hits=3)["hits"]
    assert hits[0]["page"] == 3
    assert "Quiescent Current" in hits[0]["snippet"] and "mA" in hits[0]["snippet"]


def test_an_altered_index_never_searches_stale_postings(glyph_tools):
    from dataclasses import replace

    original = glyph_tools.index
    first_page_only = replace(original, sha256="f" * 64, pages=original.pages[:1], page_count=1, table_pages=[])
    hits = DocumentTools(first_page_only).search_text("wiper resistance")["hits"]
    assert hits and {h["page"] for h in hits} == {1}
