"""Broken and hostile PDFs end in typed errors or flags: at upload, and in the worker, where the index is built
in a child process under time and memory limits (the test process plays the worker and must survive)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import reset_settings
from app.documents import hazards
from app.documents.index import IndexBuildError
from app.documents.sandbox import _collect, open_index_limited
from tests.support import hostile_pdfs as hostile
from tests.support import jobs
from tests.support.pdfs import encrypted_pdf, text_pdf
from tests.support.scripted_llm import ScriptedLLM, scripted_llm, submit, tool_call  # noqa: F401

ANSWER = {"found": True, "values": [hostile.REAL_SUPPLY], "source_page": 1, "quote": hostile.REAL_QUOTE,
          "confidence": 0.9}


@pytest.fixture
def scripted(dsx_env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, scripted_llm: ScriptedLLM):  # noqa: ANN001, ANN201, F811
    jobs.use_scripted_model(monkeypatch, scripted_llm, tmp_path)
    return scripted_llm


def setenv(monkeypatch: pytest.MonkeyPatch, **values: object) -> None:
    for key, value in values.items():
        monkeypatch.setenv(f"DSX_{key.upper()}", str(value))
    reset_settings()


@pytest.mark.parametrize(("data", "code"), [pytest.param(data, code, id=name)
                                            for name, data, code in hostile.unreadable_uploads()])
def test_uploads_that_cannot_be_read_are_refused_with_a_typed_code(
        dsx_env, monkeypatch: pytest.MonkeyPatch, data: bytes, code: str) -> None:  # noqa: ANN001
    from app.main import create_app

    setenv(monkeypatch, max_pages=5)
    response = TestClient(create_app()).post(
        "/v1/jobs", files={"file": ("x.pdf", data, "application/pdf")}, data={"parameters": '["Supply voltage"]'})
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code


@pytest.mark.parametrize(("data", "code"), [
    (hostile.corrupt_pdf(), "corrupt_pdf"),
    (hostile.zero_page_pdf(), "empty_pdf"),
    (encrypted_pdf(), "encrypted_pdf"),
    (hostile.many_pages_pdf(8), "too_many_pages"),
], ids=["garbage", "zero-pages", "encrypted", "too-many-pages"])
def test_a_stored_pdf_that_cannot_be_indexed_fails_the_job_with_its_code(
        scripted: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, data: bytes, code: str) -> None:
    job_id = jobs.create(text_pdf([f"Supply voltage VDD 2.7 5.5 V ({code})"]), ["Supply voltage"])
    jobs.replace_blob(job_id, data)
    setenv(monkeypatch, max_pages=5)
    job = jobs.run(job_id)
    assert job["status"] == "failed" and job["failure_code"] == code, job
    assert scripted.requests == []  # no model call was paid for a document nobody could read


def test_a_build_over_its_memory_allowance_fails_typed_and_an_ordinary_one_fits(
        dsx_env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # noqa: ANN001
    setenv(monkeypatch, index_build_memory_mb=64)
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(hostile.text_bomb_pdf())  # ~10 kB that unpack into 80,000 lines of text
    with pytest.raises(IndexBuildError) as raised:
        open_index_limited(bomb)
    assert raised.value.code == "index_memory_exceeded"
    ordinary = tmp_path / "ordinary.pdf"
    ordinary.write_bytes(text_pdf([hostile.TABLE_PAGE]))
    index = open_index_limited(ordinary)
    assert index.page_count == 1 and "Supply voltage" in index.page(1).text


def test_a_child_that_does_not_finish_is_killed_at_the_wall_clock_limit(
        dsx_env, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # noqa: ANN001
    setenv(monkeypatch, index_build_kill_after_s=0.01)  # no interpreter starts, let alone indexes, in 10 ms
    pdf = tmp_path / "slow.pdf"
    pdf.write_bytes(text_pdf([hostile.TABLE_PAGE]))
    with pytest.raises(IndexBuildError) as raised:
        open_index_limited(pdf)
    # index_timeout is raised only when the limit killed the child, never when the build finished on its own.
    assert raised.value.code == "index_timeout" and "stopped after" in str(raised.value)


def test_the_build_budget_stops_the_child_between_pages(dsx_env, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
                                                        tmp_path: Path) -> None:
    setenv(monkeypatch, index_build_timeout_s=0.000001)
    pdf = tmp_path / "budget.pdf"
    pdf.write_bytes(hostile.many_pages_pdf(3))
    with pytest.raises(IndexBuildError) as raised:
        open_index_limited(pdf)
    assert raised.value.code == "index_timeout" and "budget" in str(raised.value)


def test_a_child_dying_on_a_signal_is_a_crash_not_an_answer(dsx_env, tmp_path: Path) -> None:  # noqa: ANN001
    with pytest.raises(IndexBuildError) as raised:
        _collect(-signal.SIGSEGV, tmp_path, tmp_path / "x.pdf", "0" * 64)
    assert raised.value.code == "index_build_crashed" and "SIGSEGV" in str(raised.value)


def test_a_good_build_is_cached_so_the_next_open_starts_no_child(dsx_env, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
                                                                 tmp_path: Path) -> None:
    pdf = tmp_path / "cached.pdf"
    pdf.write_bytes(text_pdf([hostile.TABLE_PAGE]))
    first = open_index_limited(pdf)
    # A child could not even start now; the cached index must still open.
    setenv(monkeypatch, index_build_kill_after_s=0.001)
    second = open_index_limited(pdf)
    assert second.sha256 == first.sha256 and second.page(1).text == first.page(1).text


@pytest.mark.parametrize("where", ["open_action", "name_tree", "annotation"])
def test_javascript_is_found_wherever_the_pdf_hides_it(tmp_path: Path, where: str) -> None:
    pdf = tmp_path / f"{where}.pdf"
    pdf.write_bytes(hostile.javascript_pdf(where))
    scan = hazards.scan_javascript(pdf)
    assert scan.found and scan.complete
    clean = tmp_path / "clean.pdf"
    clean.write_bytes(text_pdf([hostile.TABLE_PAGE]))
    assert not hazards.scan_javascript(clean).found
    if where == "annotation":
        assert any(loc["where"] == "annotation on page 1" for loc in scan.locations), scan.locations


def test_a_javascript_pdf_is_processed_and_flagged_for_information(scripted: ScriptedLLM) -> None:
    scripted.script(tool_call("search_text", {"query": "supply voltage"}), submit(ANSWER))
    job_id = jobs.create(hostile.javascript_pdf("open_action"), [{"name": "Supply voltage", "unit": "V"}])
    job = jobs.run(job_id)
    (answer,) = job["results"]
    flags = jobs.flags(answer)
    assert answer["found"] and answer["values"][0]["max"] == 5.5
    assert flags["pdf_has_javascript"]["severity"] == "info"
    assert flags["pdf_has_javascript"]["evidence"]["locations"]
    assert job["status"] == "done", flags  # information only: the script cannot have shaped the answer


def test_a_scan_without_text_is_flagged_for_review(scripted: ScriptedLLM) -> None:
    scripted.script(tool_call("search_text", {"query": "supply voltage"}),
                    submit({"found": False, "reason": "no text in the datasheet"}))
    job_id = jobs.create(hostile.image_only_pdf(), ["Supply voltage"])
    job = jobs.run(job_id)
    flags = jobs.flags(job["results"][0])
    assert flags["no_text_layer"]["severity"] == "warning"
    assert job["status"] == "needs_review"
    search = [json.loads(m["content"]) for m in scripted.requests[-1].messages if m["role"] == "tool"]
    assert search and search[0]["status"] == "error"  # the tool said so to the model, too


def _building(pdf: Path) -> list[int]:
    """Pids of index-build children working on ``pdf``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"app.documents.sandbox" in argv and str(pdf).encode() in argv:
            pids.append(int(entry.name))
    return pids


def test_a_build_does_not_outlive_a_worker_killed_under_it(dsx_env, tmp_path: Path) -> None:  # noqa: ANN001
    import subprocess
    import sys

    from app.config import environment_for_children
    from tests.support.processes import wait_until

    pdf = tmp_path / "long.pdf"
    pdf.write_bytes(hostile.text_bomb_pdf(pages=6))  # half a minute of building, at least
    worker = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pathlib import Path; from app.documents.sandbox import "
                               "open_index_limited; open_index_limited(Path(sys.argv[1]))", str(pdf)],
        env=environment_for_children(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _building(pdf), timeout_s=60, interval_s=0.1, what="the build child to start")
        time.sleep(2.0)  # let it get past its start-up into the build
        assert worker.poll() is None, "the build finished before the worker could be killed"
    finally:
        worker.kill()
        worker.wait(timeout=10)
    wait_until(lambda: not _building(pdf), timeout_s=8, interval_s=0.2, what="the orphaned build to end")


def test_scratch_left_by_a_killed_worker_is_cleared_by_a_later_build(dsx_env, tmp_path: Path) -> None:  # noqa: ANN001
    import os

    from app.documents.sandbox import SCRATCH_PREFIX

    scratch = dsx_env.data_dir / "tmp"
    stale, fresh = scratch / f"{SCRATCH_PREFIX}stale", scratch / f"{SCRATCH_PREFIX}fresh"
    for directory in (stale, fresh):
        directory.mkdir(parents=True)
        (directory / "stderr.txt").write_text("")
    day_ago = time.time() - 86400
    os.utime(stale, (day_ago, day_ago))
    pdf = tmp_path / "scratch.pdf"
    pdf.write_bytes(text_pdf([hostile.TABLE_PAGE]))
    open_index_limited(pdf)
    assert not stale.exists() and fresh.exists()  # a build running elsewhere right now keeps its directory
    assert sorted(p.name for p in scratch.iterdir()) == [fresh.name]  # and this build cleaned up after itself
