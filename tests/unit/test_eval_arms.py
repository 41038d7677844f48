"""Fault arms: what each one offers the model, what its tool runners return, and the blank document."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from app.agent.tools import ToolResult
from app.dispatch import semconv as sc
from app.documents.index import DatasheetIndex, PageInfo
from app.errors import InvalidInput
from evaluation.arms import (
    AGENTIC,
    ARMS,
    SINGLE_PASS,
    NullToolRunner,
    blank_index,
    emptied,
    get_arm,
    planted_in_cell,
    setup,
)
from tests.support.pdfs import text_pdf


def make_index(tmp_path: Path, name: str, pages: list[str]) -> DatasheetIndex:
    path = tmp_path / f"{name}.pdf"
    text_pdf(pages, path)
    infos = [PageInfo(number=i, width=595, height=842, text=text) for i, text in enumerate(pages, start=1)]
    return DatasheetIndex(sha256=name * 8, path=path, page_count=len(pages), title=name, part_numbers=["X1"],
                          pages=infos, toc=[], toc_source="none", toc_quality=0.0, text_layer="ok")


@pytest.fixture
def indexes(tmp_path: Path) -> tuple[DatasheetIndex, DatasheetIndex]:
    return (make_index(tmp_path, "intended", ["Supply voltage 2.7 to 5.5 V", "Operating temperature -40 to 85 C"]),
            make_index(tmp_path, "decoy", ["Supply voltage 9 to 36 V"]))


def offered(arm: str, engine: str, indexes: tuple[DatasheetIndex, DatasheetIndex], scratch: Path) -> set[str] | None:
    phases = setup(get_arm(arm), engine, indexes[0], indexes[1], scratch).phases
    return None if phases is None else {t.name for p in phases for t in p.offered}


def test_each_arm_offers_what_it_plants(indexes: tuple[DatasheetIndex, DatasheetIndex], tmp_path: Path) -> None:
    everything = set(sc.NAVIGATION_TOOLS | {sc.SUBMIT_TOOL})
    assert offered("clean", AGENTIC, indexes, tmp_path) is None  # production phases
    assert offered("no-navigation", AGENTIC, indexes, tmp_path) == {sc.SUBMIT_TOOL}
    assert offered("closed-book", AGENTIC, indexes, tmp_path) == {sc.SUBMIT_TOOL}
    assert offered("no-crosscheck", AGENTIC, indexes, tmp_path) == everything - sc.CROSS_CHECK_TOOLS
    null = setup(get_arm("null-tool"), AGENTIC, indexes[0], indexes[1], tmp_path)
    assert null.phases is None and isinstance(null.tool_runner.inner, NullToolRunner)
    wrong = setup(get_arm("wrong-content"), AGENTIC, indexes[0], indexes[1], tmp_path)
    assert wrong.engine_index is indexes[0] and wrong.tool_runner.inner.index is indexes[1]
    # Single-pass: the decoy or a blank document goes in the prompt instead.
    assert setup(get_arm("wrong-content"), SINGLE_PASS, indexes[0], indexes[1], tmp_path).engine_index is indexes[1]
    closed = setup(get_arm("closed-book"), SINGLE_PASS, indexes[0], indexes[1], tmp_path)
    assert closed.engine_index.page_count == 2 and not any(p.text for p in closed.engine_index.pages)


def test_arms_refuse_engines_they_do_not_apply_to_and_missing_decoys(indexes, tmp_path: Path) -> None:  # noqa: ANN001
    for name in ("no-navigation", "no-crosscheck", "null-tool"):
        assert ARMS[name].engines == (AGENTIC,)
        with pytest.raises(InvalidInput, match="does not apply"):
            setup(ARMS[name], SINGLE_PASS, indexes[0], indexes[1], tmp_path)
    with pytest.raises(InvalidInput, match="decoy"):
        setup(ARMS["wrong-content"], AGENTIC, indexes[0], None, tmp_path)
    with pytest.raises(InvalidInput, match="Unknown arm"):
        get_arm("no-such-arm")


def test_the_blank_document_keeps_pages_and_says_nothing(indexes, tmp_path: Path) -> None:  # noqa: ANN001
    blank = blank_index(indexes[0], tmp_path / "scratch")
    assert blank.path != indexes[0].path and blank.sha256 != indexes[0].sha256
    assert (blank.page_count, blank.title, blank.part_numbers, blank.text_layer) == (2, "", [], "none")
    with pymupdf.open(blank.path) as document:
        assert document.page_count == 2
        assert all(not page.get_text().strip() for page in document)
        assert (document[0].rect.width, document[0].rect.height) == (595, 842)


def test_emptied_results_keep_their_keys_and_lose_their_content() -> None:
    result = {"query": "supply", "hits": [{"page": 2, "text": "2.7 V"}], "total_hits": 1, "truncated": True,
              "image": {"mime": "image/png", "base64": "AAAA"}, "text": "Supply voltage", "score": 0.5}
    assert emptied(result) == {"query": "", "hits": [], "total_hits": 0, "truncated": False, "image": {}, "text": "",
                               "score": 0.0}
    overview = {"title": "LM386", "part_numbers": ["LM386"], "page_count": 7, "toc": [{"title": "Features"}]}
    for name, output in (("search_text", result), ("build_datasheet", overview), ("inspect_page", result)):
        assert ToolResult(name, output).outcome == "ok"
        assert ToolResult(name, emptied(output)).outcome == "empty", name


def test_a_decoy_identical_to_the_intended_datasheet_plants_nothing() -> None:
    cell = {"arm": "wrong-content", "engine": "agentic", "document_sha256": "a" * 64, "decoy_sha256": "a" * 64,
            "trace": []}
    assert planted_in_cell(cell) == {"ok": False, "detail": "the decoy is the intended datasheet"}
    assert not planted_in_cell({**cell, "arm": "no-such-arm"})["ok"]
    # Without a record nothing can be verified, except for the clean arm, where nothing was planted.
    assert not planted_in_cell({**cell, "decoy_sha256": "b" * 64})["ok"]
    assert planted_in_cell({**cell, "arm": "clean"})["ok"]
