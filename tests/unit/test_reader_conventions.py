"""Every convention in the reader's table of conventions, drawn as a PDF and read through the real index, table
tool and reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.agent.offline.conventions import CONVENTIONS, Convention
from tests.support.synthetic_datasheets import ask_reader, draw_page, index_of


def _answer(convention: Convention, tmp_path: Path) -> dict:
    pdf = draw_page(tmp_path / "page.pdf", convention.page.prose, convention.page.tables, convention.page.titles)
    return ask_reader(index_of(pdf), convention.request, convention.unit, convention.conditions)


@pytest.mark.parametrize("convention", CONVENTIONS, ids=[c.name for c in CONVENTIONS])
def test_the_reader_reads_the_convention(convention: Convention, tmp_path: Path) -> None:
    answer = _answer(convention, tmp_path)
    if convention.expected is None:
        assert answer["found"] is False, answer
        assert convention.decline_mentions in answer["reason"]
        return
    assert answer["found"] is True, answer["reason"]
    value = answer["values"][0]
    wanted = convention.expected
    assert (value["min"], value["typical"], value["max"]) == (wanted.min, wanted.typical, wanted.max), answer
    assert value["unit"] == wanted.unit


def test_every_convention_has_an_outcome_and_an_example() -> None:
    for convention in CONVENTIONS:
        assert convention.page.prose or convention.page.tables, convention.name
        assert (convention.expected is None) == bool(convention.decline_mentions), convention.name
