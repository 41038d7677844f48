"""The five tools as the model sees them: envelopes, errors as results, bounds and cursors, images, CLI."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pymupdf
import pytest
from typer.testing import CliRunner

from app.documents import cache
from app.documents.build import build_index
from app.documents.index import DatasheetIndex
from app.documents.render import render_page_png
from app.documents.tools import DocumentTools, envelope, envelope_json
from tests.support.paths import datasheet
from tests.support.pdfs import text_pdf

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _index(path: Path) -> DatasheetIndex:
    return build_index(path, cache.sha256_file(path), timeout_s=60, max_pages=100)


@pytest.fixture(scope="module")
def lm358(datasheets_dir) -> DocumentTools:
    return DocumentTools(_index(datasheet("microphone_amplifier")))


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> DocumentTools:
    path = tmp_path_factory.mktemp("tools") / "small.pdf"
    body = "\n".join(f"Line {i} of the long page about supply voltage and currents." for i in range(40))
    text_pdf(["Features\nLow power\nSupply voltage 2.7 V to 5.5 V", body, "Ordering information\nPART-1"], path)
    return DocumentTools(_index(path))


def test_envelope_marks_results_as_untrusted_data():
    ok = envelope("search_text", {"hits": []})
    assert ok == {"tool": "search_text", "status": "ok", "untrusted_document_data": True, "result": {"hits": []}}
    failed = envelope("inspect_page", {"error": {"code": "page_out_of_range", "message": "no"}})
    assert failed["status"] == "error" and failed["untrusted_document_data"] is True
    assert json.loads(envelope_json("x", {"text": "5 µA"}))["result"]["text"] == "5 µA"
    assert "µ" in envelope_json("x", {"text": "5 µA"})  # sent as UTF-8, not \\u escapes


def test_build_datasheet_overview(lm358):
    result = lm358.build_datasheet()
    assert result["page_count"] == 22 and result["text_layer"] == "ok"
    assert result["toc_source"] == "bookmarks"
    assert all({"title", "level", "page_start", "page_end"} <= set(e) for e in result["toc"])
    electrical = next(e for e in result["toc"] if e["title"] == "4 Electrical characteristics")
    assert electrical["page_start"] == 6 and electrical["number"] == "4"
    assert 6 in result["table_pages"]
    assert any("extract_table_markdown" in h for h in result["hints"])
    json.dumps(result)  # JSON-serialisable as is


def test_toc_is_bounded(datasheets_dir):
    tools = DocumentTools(_index(datasheet("potentiometer")))
    result = tools.build_datasheet()
    assert len(result["toc"]) <= 80
    assert result["toc_omitted_entries"] > 0
    assert all(e["level"] <= 2 for e in result["toc"])


def test_section_text_by_title_and_by_number(lm358):
    by_title = lm358.get_section_text(section="absolute maximum ratings")
    assert by_title["section"] == "2 Absolute maximum ratings"
    assert (by_title["start_page"], by_title["end_page"]) == (4, 4)
    assert by_title["text"].startswith("--- page 4 ---\n")
    assert "Supply voltage" in by_title["text"]
    by_number = lm358.get_section_text(section="4")
    assert by_number["section"] == "4 Electrical characteristics" and by_number["start_page"] == 6
    assert any("extract_table_markdown" in n for n in by_number["notes"])


def test_unknown_section_suggests_titles(lm358):
    result = lm358.get_section_text(section="Zebra crossing guidelines")
    assert result["error"]["code"] == "no_such_section"
    assert result["error"]["suggestions"] and all("page_start" in s for s in result["error"]["suggestions"])


def test_page_range_text_is_bounded_with_a_cursor(small):
    full = small.get_section_text(start_page=1, end_page=3, max_chars=20000)
    assert not full["truncated"] and full["next_cursor"] is None
    assert [m for m in full["text"].splitlines() if m.startswith("--- page")] == [
        "--- page 1 ---", "--- page 2 ---", "--- page 3 ---"]
    pieces, cursor = [], None
    while True:
        part = small.get_section_text(start_page=1, end_page=3, max_chars=500, cursor=cursor)
        assert len(part["text"]) <= 500
        pieces.append(part["text"])
        cursor = part["next_cursor"]
        if not part["truncated"]:
            break
        assert any("next_cursor" in n for n in part["notes"])
    assert len(pieces) > 2 and "".join(pieces) == full["text"]


@pytest.mark.parametrize("call, code", [
    (lambda t: t.get_section_text(start_page=0), "page_out_of_range"),
    (lambda t: t.get_section_text(start_page=4), "page_out_of_range"),
    (lambda t: t.get_section_text(start_page=3, end_page=2), "invalid_argument"),
    (lambda t: t.get_section_text(), "invalid_argument"),
    (lambda t: t.get_section_text(start_page=1, cursor="bogus"), "invalid_argument"),
    (lambda t: t.search_text(""), "invalid_argument"),
    (lambda t: t.search_text("x", page=9), "page_out_of_range"),
    (lambda t: t.search_text("x", max_hits=0), "invalid_argument"),
    (lambda t: t.extract_table_markdown(page=5), "page_out_of_range"),
    (lambda t: t.extract_table_markdown(page="2"), "invalid_argument"),
    (lambda t: t.extract_table_markdown(page=1, table=3), "no_such_table"),
    (lambda t: t.inspect_page(page=-1), "page_out_of_range"),
    (lambda t: t.inspect_page(page=1, region=[10, 10]), "invalid_argument"),
    (lambda t: t.inspect_page(page=1, region=[900, 900, 950, 950]), "invalid_argument"),
    (lambda t: t.call("delete_everything", {}), "unknown_tool"),
    (lambda t: t.call("search_text", {"query": "x", "limit": 3}), "invalid_argument"),
])
def test_errors_are_results_with_codes(small, call, code):
    result = call(small)
    assert result["error"]["code"] == code, result
    assert result["error"]["message"]
    assert envelope("t", result)["status"] == "error"


def test_unexpected_failure_is_an_internal_error_result(small, monkeypatch):
    from app.documents import tools as tools_module

    def boom(*_args, **_kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(tools_module, "run_query", boom)
    result = small.search_text("supply")
    assert result["error"]["code"] == "internal_error" and "disk on fire" in result["error"]["message"]


def test_call_dispatches_with_json_arguments(small):
    result = small.call("search_text", {"query": "supply voltage", "max_hits": 2})
    assert result["hits"] and len(result["hits"]) <= 2
    assert small.call("build_datasheet")["page_count"] == 3


def test_inspect_page_returns_png_and_blocks(lm358):
    result = lm358.inspect_page(page=6, dpi=50)
    png = base64.b64decode(result["image"]["base64"])
    assert png.startswith(PNG_MAGIC) and result["image"]["mime"] == "image/png"
    assert abs(result["image"]["width"] - result["width"] * 50 / 72) <= 1
    assert any("Electrical characteristics" in b["text"] for b in result["blocks"])
    clipped = lm358.inspect_page(page=6, region=[60, 150, 300, 300], dpi=72)
    assert clipped["image"]["width"] == 240 and clipped["image"]["height"] == 150
    assert all(b["bbox"][3] > 150 and b["bbox"][1] < 300 for b in clipped["blocks"])


def test_render_page_png_highlights_boxes(lm358):
    plain = render_page_png(lm358.index, 6, None, dpi=40)
    marked = render_page_png(lm358.index, 6, [[100, 600, 300, 660]], dpi=40)
    assert plain.startswith(PNG_MAGIC) and marked.startswith(PNG_MAGIC) and plain != marked
    plain_pix, marked_pix = pymupdf.Pixmap(plain), pymupdf.Pixmap(marked)
    x, y = int(200 * 40 / 72), int(630 * 40 / 72)
    assert plain_pix.pixel(x, y) != marked_pix.pixel(x, y)  # the highlight tints the box
    assert plain_pix.pixel(5, 5) == marked_pix.pixel(5, 5)  # and nothing else


def test_no_text_layer_errors_but_inspect_page_works(tmp_path):
    path = tmp_path / "scan.pdf"
    doc = pymupdf.open()
    page = doc.new_page(width=200, height=200)
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 20, 20), False)
    pix.clear_with(90)
    page.insert_image(pymupdf.Rect(10, 10, 190, 190), pixmap=pix)
    doc.save(str(path))
    doc.close()
    tools = DocumentTools(_index(path))
    overview = tools.build_datasheet()
    assert overview["text_layer"] == "none" and any("inspect_page" in h for h in overview["hints"])
    for result in (tools.search_text("voltage"), tools.get_section_text(start_page=1),
                   tools.extract_table_markdown(page=1)):
        assert result["error"]["code"] == "no_text_layer"
    image = tools.inspect_page(page=1)
    assert base64.b64decode(image["image"]["base64"]).startswith(PNG_MAGIC)
    assert image["blocks"] == [] and image["notes"]


def test_cli_prints_the_envelope_the_model_receives(dsx_env, datasheets_dir):
    from app.cli import cli

    runner = CliRunner()
    path = datasheet("speaker_amplifier")
    result = runner.invoke(cli, ["tool", str(path), "search_text", "--args", '{"query": "quiescent current"}'])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["tool"] == "search_text" and payload["status"] == "ok"
    assert payload["untrusted_document_data"] is True
    assert payload["result"]["hits"][0]["page"] == 3
    assert result.stdout.strip() == envelope_json("search_text", payload["result"])

    failed = runner.invoke(cli, ["tool", str(path), "extract_table_markdown", "--args", '{"page": 99}'])
    assert failed.exit_code == 0 and json.loads(failed.stdout)["status"] == "error"
    bad_json = runner.invoke(cli, ["tool", str(path), "search_text", "--args", "{not json"])
    assert bad_json.exit_code == 2
    missing = runner.invoke(cli, ["tool", str(path.with_name("absent.pdf")), "build_datasheet"])
    assert missing.exit_code == 2
