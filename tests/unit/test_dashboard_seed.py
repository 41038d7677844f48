"""Checks that the seeded flagged run (``tests.support.dashboard_seed``) is what the dashboard tests need.

The run is built on a real shared datasheet: the quote is a line of its text layer and the grounding
boxes are that line's box, the way the grounding pass stores them. Seeding does not depend on the
engines or the detectors, so the dashboard can be tested on its own; one end-to-end test also goes
through the real pipeline.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pymupdf
import pytest
from fastapi.testclient import TestClient

from app.timeutil import utcnow
from tests.support.dashboard_seed import DATASHEET, quotable_line, seed_flagged_run
from tests.support.paths import datasheet


@pytest.fixture
def client(dsx_env, datasheets_dir) -> TestClient:  # noqa: ANN001
    from app.main import create_app

    return TestClient(create_app())


def test_seeded_run_is_an_open_queue_item_with_its_flag(client: TestClient) -> None:
    run = seed_flagged_run()
    queue = client.get("/v1/review/queue").json()
    assert [i["extraction_id"] for i in queue["items"]] == [run.extraction_id]
    item = queue["items"][0]
    assert item["flags"][0]["rule"] == run.flag_rule
    assert item["flags"][0]["evidence"]["span_ids"] == [run.spans["tool"], run.spans["submit"]]
    assert queue["counts_by_rule"] == {run.flag_rule: 1}


def test_seeded_quote_and_box_come_from_the_page_text(datasheets_dir: Path) -> None:  # noqa: ARG001
    line = quotable_line(datasheet(DATASHEET))
    with pymupdf.open(datasheet(DATASHEET)) as document:
        page = document[line.page - 1]
        clipped = " ".join(page.get_text("text", clip=pymupdf.Rect(line.box)).split())
        assert line.text in clipped
        assert f"{line.number:g}" in line.text or str(line.number) in line.text


def test_seeded_runs_order_by_creation_time(client: TestClient) -> None:
    older = seed_flagged_run(created_at=utcnow() - timedelta(days=3))
    newer = seed_flagged_run(parameter="Quiescent current")
    ids = [i["extraction_id"] for i in client.get("/v1/review/queue").json()["items"]]
    assert ids == [older.extraction_id, newer.extraction_id]
