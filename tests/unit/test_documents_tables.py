"""Tables from word positions and ruling lines: sub-rows, merged cells, borderless tables, page continuation."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from app.documents import cache
from app.documents.build import build_index
from app.documents.index import DatasheetIndex
from app.documents.tables import page_tables
from app.documents.tools import DocumentTools
from tests.support.paths import datasheet
from tests.support.pdfs import ruled_table, write_text


def _index(path: Path) -> DatasheetIndex:
    return build_index(path, cache.sha256_file(path), timeout_s=60, max_pages=100)


def _rows(markdown: str) -> list[list[str]]:
    lines = markdown.splitlines()
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines if not line.startswith("|---")]


@pytest.fixture(scope="module")
def ruled(tmp_path_factory) -> DatasheetIndex:
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    write_text(page, 50, 60, "Electrical Characteristics", size=12, bold=True)
    cols = [50, 190, 330, 380, 430, 480]
    ruled_table(page, 80, ["Parameter", "Conditions", "Min", "Typ", "Max", "Unit"], [
        [["Supply voltage", "", "2.7", "", "5.5", "V"]],
        [["Output power", "VS = 6 V, RL = 8 Ω", "250", "325", "", "mW"],
         ["", "VS = 9 V, RL = 8 Ω", "500", "700", "", "mW"]],
        [["Quiescent current", "VS = 6 V", "", "4", "8", "mA"]],
    ], cols, 540)
    path = tmp_path_factory.mktemp("tables") / "ruled.pdf"
    doc.save(str(path))
    doc.close()
    return _index(path)


def test_ruled_table_keeps_each_condition_on_its_own_row(ruled):
    tables = page_tables(ruled, 1)
    assert len(tables) == 1
    table = tables[0]
    assert table.method == "ruled" and table.header_rows == 1
    rows = _rows(table.markdown())
    assert rows[0] == ["Parameter", "Conditions", "Min", "Typ", "Max", "Unit"]
    assert ["Supply voltage", "", "2.7", "", "5.5", "V"] in rows
    # The merged parameter cell is repeated, and each value stays with its own condition line.
    assert ["Output power", "VS = 6 V, RL = 8 Ω", "250", "325", "", "mW"] in rows
    assert ["Output power", "VS = 9 V, RL = 8 Ω", "500", "700", "", "mW"] in rows
    assert ["Quiescent current", "VS = 6 V", "", "4", "8", "mA"] in rows
    assert table.title == "Electrical Characteristics"


def test_borderless_table_from_alignment(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    write_text(page, 50, 60, "Motor data", size=12, bold=True)
    cols = [50, 200, 260, 320]
    y = 90
    for x, text in zip(cols, ["Parameter", "Unit", "12V", "24V"], strict=True):
        write_text(page, x, y, text, bold=True)
    for name, unit, a, b in [("Nominal voltage", "V", "12", "24"), ("No load current", "mA", "72", "40"),
                             ("Nominal speed", "rpm", "4900", "4800"), ("Nominal torque", "mNm", "7.1", "8.5"),
                             ("Terminal resistance", "Ω", "4.2", "17")]:
        y += 14
        for x, text in zip(cols, [name, unit, a, b], strict=True):
            write_text(page, x, y, text)
    write_text(page, 50, y + 40, "All values measured at 25 °C ambient temperature unless noted otherwise here.")
    path = tmp_path / "borderless.pdf"
    doc.save(str(path))
    doc.close()
    index = _index(path)
    assert index.table_pages == [1]
    tables = page_tables(index, 1)
    assert len(tables) == 1 and tables[0].method == "aligned"
    rows = _rows(tables[0].markdown())
    assert rows[0] == ["Parameter", "Unit", "12V", "24V"]
    assert ["No load current", "mA", "72", "40"] in rows
    assert ["Terminal resistance", "Ω", "4.2", "17"] in rows
    assert not any("ambient" in cell for row in rows for cell in row)


def test_two_column_prose_is_not_a_table(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    left = "The device is a low power amplifier intended for battery operated equipment and toys."
    right = "Its gain is internally set to twenty but can be raised by adding parts between two pins."
    for i in range(12):
        write_text(page, 40, 80 + 12 * i, left[: 40 + i])
        write_text(page, 310, 80 + 12 * i, right[: 40 + i])
    path = tmp_path / "prose.pdf"
    doc.save(str(path))
    doc.close()
    index = _index(path)
    assert index.table_pages == []
    assert page_tables(index, 1) == []


def test_table_continued_across_pages(tmp_path):
    doc = pymupdf.open()
    cols = [50, 220, 330, 380, 430]
    header = ["Parameter", "Symbol", "Min", "Max", "Unit"]
    p1 = doc.new_page(width=595, height=842)
    write_text(p1, 50, 60, "Absolute Maximum Ratings", size=12, bold=True)
    rows1 = [[[f"Rating number {i}", f"R{i}", str(i), str(10 * i), "V"]] for i in range(1, 23)]
    bottom = ruled_table(p1, 80, header, rows1, cols, 520, row_h=48)
    assert bottom > 700  # the table runs to the foot of page 1
    write_text(p1, 50, 810, "Page 1")
    p2 = doc.new_page(width=595, height=842)
    rows2 = [[[f"Rating number {i}", f"R{i}", str(i), str(10 * i), "V"]] for i in range(23, 28)]
    end = ruled_table(p2, 50, header, rows2, cols, 520, row_h=48)
    write_text(p2, 50, end + 40, "Stresses beyond these ratings may cause permanent damage to the device.")
    write_text(p2, 50, 810, "Page 2")
    path = tmp_path / "continued.pdf"
    doc.save(str(path))
    doc.close()

    tools = DocumentTools(_index(path))
    first = tools.extract_table_markdown(1)["tables"]
    second = tools.extract_table_markdown(2)["tables"]
    assert len(first) == 1 and len(second) == 1
    assert first[0]["continues_on_next_page"] is True and first[0]["continued_from_previous_page"] is False
    assert second[0]["continued_from_previous_page"] is True and second[0]["continues_on_next_page"] is False
    assert first[0]["n_rows"] == 23 and second[0]["n_rows"] == 6  # header + rows on each page
    notes = tools.get_section_text(start_page=1)["notes"]
    assert any("continues on page 2" in n for n in notes)
    assert any("continues on page 2" in n for n in tools.extract_table_markdown(1)["notes"])


def test_real_interleaved_rows_are_realigned(datasheets_dir):
    """The text layer of this table lists both output-power conditions before their values."""
    path = datasheet("speaker_amplifier")
    with pymupdf.open(str(path)) as doc:
        raw = " ".join(doc[2].get_text().split())
    assert "Vss=6V, RL=8Ω, THD=10% Vss=9V, RL=8Ω, THD=10% 250 500 325 700" in raw
    tables = page_tables(_index(path), 3)
    rows = [r for t in tables for r in _rows(t.markdown())]
    assert ["Output Power", "POUT", "Vss=6V, RL=8Ω, THD=10%", "250", "325", "", "mW"] in rows
    assert ["Output Power", "POUT", "Vss=9V, RL=8Ω, THD=10%", "500", "700", "", "mW"] in rows
    assert ["Quiescent Current", "IQ", "Vss=6V, VIN=0", "", "4", "8", "mA"] in rows


def test_real_sub_rows_share_symbol_and_unit(datasheets_dir):
    tables = page_tables(_index(datasheet("microphone_amplifier")), 5)
    rows = [r for t in tables for r in _rows(t.markdown())]
    assert ["Toper", "LM358", "0 to +70", "°C"] in rows
    assert ["VCC", "Supply voltage", "3 to 30", "V"] in rows


def test_rotated_page_with_a_skewed_rectangle_still_gives_its_table(tmp_path):
    """A rotated page's drawings are turned into text space; a skewed rectangle comes as one quad, not points."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    shape = page.new_shape()
    shape.draw_quad(pymupdf.Quad((400, 600), (500, 610), (390, 700), (490, 710)))
    shape.finish(color=(0, 0, 0))
    shape.commit()
    cols = [50, 200, 260, 320]
    y = 90
    for x, text in zip(cols, ["Parameter", "Unit", "12V", "24V"], strict=True):
        write_text(page, x, y, text, bold=True)
    for name, unit, a, b in [("Nominal voltage", "V", "12", "24"), ("No load current", "mA", "72", "40"),
                             ("Nominal speed", "rpm", "4900", "4800")]:
        y += 14
        for x, text in zip(cols, [name, unit, a, b], strict=True):
            write_text(page, x, y, text)
    page.set_rotation(90)
    path = tmp_path / "rotated.pdf"
    doc.save(str(path))
    doc.close()
    rows = [row for table in page_tables(_index(path), 1) for row in _rows(table.markdown())]
    assert ["No load current", "mA", "72", "40"] in rows
