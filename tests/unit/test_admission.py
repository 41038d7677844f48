"""Upload admission in limited child processes: typed refusals for what the parser cannot survive, and a pool
that recovers from a stuck or dead child so the next upload is admitted."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import reset_settings
from app.documents.validate import inspect_pdf
from app.errors import DsxError, InvalidPdf
from app.jobs import admission
from app.jobs.admission import AdmissionPool, admit_pdf
from tests.support import hostile_pdfs as hostile
from tests.support.jobs_api import post, stored_blobs, stored_rows
from tests.support.pdfs import encrypted_pdf, text_pdf

VALID = text_pdf(["Supply voltage VDD 2.7 5.5 V", "Page two", "Page three"])
SLEEP_MARK = re.compile(rb"%dsx-test:sleep (\S+)")
DIE_MARK = b"%dsx-test:die"
# "%dsx-test:hold DIR": the first check writes DIR/started, then holds until DIR/release exists (or the pool
# kills its child); its retry runs straight through.
HOLD_MARK = re.compile(rb"%dsx-test:hold (\S+)")
HOLD_LIMIT_S = 60.0
# ~24 kB whose first page unpacks into 200,000 lines of text: about 175 MB and a second to read.
BOMB_LINES = 200_000
HANG_S = 120.0  # how long a hung check would take: a timeout must end it far sooner


# Inspections that run in the child (picklable by reference, so module-level), triggered by marks in the bytes.

def _inspect_or_hang(data: bytes, max_pages: int) -> int:
    """Hang, after writing this child's pid to the file the mark names."""
    mark = SLEEP_MARK.search(data)
    if mark:
        Path(mark.group(1).decode()).write_text(str(os.getpid()))
        time.sleep(HANG_S)
    return inspect_pdf(data, max_pages)


def _inspect_or_die(data: bytes, max_pages: int) -> int:
    """Die as MuPDF crashing would; or hold the check until released, so one is in flight while another child
    dies."""
    if DIE_MARK in data:
        os.kill(os.getpid(), signal.SIGKILL)
    hold = HOLD_MARK.search(data)
    if hold and not (Path(hold.group(1).decode()) / "started").exists():  # a retry is not held again
        folder = Path(hold.group(1).decode())
        (folder / "started").write_text(str(os.getpid()))
        deadline = time.monotonic() + HOLD_LIMIT_S
        while not (folder / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    return inspect_pdf(data, max_pages)


@pytest.fixture
def hanging_pool() -> Iterator[AdmissionPool]:
    pool = AdmissionPool(workers=1, memory_mb=768, inspect=_inspect_or_hang)
    yield pool
    pool.close()


@pytest.fixture
def dying_pool() -> Iterator[AdmissionPool]:
    pool = AdmissionPool(workers=2, memory_mb=768, inspect=_inspect_or_die)
    yield pool
    pool.close()


@pytest.fixture
def shared(dsx_env) -> Iterator[None]:  # noqa: ANN001
    """A fresh shared pool for this test's settings, stopped afterwards."""
    admission.shutdown()
    yield
    admission.shutdown()


def setenv(monkeypatch: pytest.MonkeyPatch, **values: object) -> None:
    for key, value in values.items():
        monkeypatch.setenv(f"DSX_{key.upper()}", str(value))
    reset_settings()


def refusal(data: bytes, max_pages: int = 5, max_bytes: int = 10_000_000) -> DsxError:
    with pytest.raises(DsxError) as raised:
        admit_pdf(data, max_bytes=max_bytes, max_pages=max_pages)
    return raised.value


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z"
    except (OSError, IndexError):
        return True


def test_a_valid_pdf_is_admitted_in_a_child_with_its_page_count(shared: None) -> None:
    assert admit_pdf(VALID, max_bytes=10_000_000, max_pages=5) == 3
    assert admission.shared_pool().check(hostile.many_pages_pdf(4), 5, timeout_s=10) == 4


@pytest.mark.parametrize(("data", "code"), [
    *(pytest.param(data, code, id=name) for name, data, code in hostile.unreadable_uploads()),
    pytest.param(b"", "empty_file", id="empty"),
    pytest.param(b"%PDF-1.7\n" + b"x" * 2000, "file_too_large", id="too-large"),
])
def test_the_existing_codes_come_back_from_the_child_unchanged(shared: None, data: bytes, code: str) -> None:
    error = refusal(data, max_bytes=1000 if code == "file_too_large" else 10_000_000)
    assert error.code == code, error.detail


def test_the_cheap_checks_never_reach_a_child(dying_pool: AdmissionPool, shared: None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "_shared", dying_pool)  # every child it reaches dies
    assert refusal(b"").code == "empty_file"
    assert refusal(b"MZ" + DIE_MARK).code == "not_a_pdf"
    assert refusal(b"%PDF-1.7 " + DIE_MARK, max_bytes=10).code == "file_too_large"


def test_a_check_over_its_memory_allowance_is_too_complex_and_the_next_fits(
        shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = hostile.text_bomb_pdf(pages=1, lines_per_page=BOMB_LINES)
    setenv(monkeypatch, admission_memory_mb=64)
    error = refusal(bomb)
    assert (error.code, error.status) == ("pdf_too_complex", 422) and "64 MB" in error.detail
    assert admit_pdf(VALID, max_bytes=10_000_000, max_pages=5) == 3
    setenv(monkeypatch, admission_memory_mb=768)  # the same file is well-formed: only the cap refused it
    assert admit_pdf(bomb, max_bytes=10_000_000, max_pages=5) == 1


def test_without_the_sandbox_the_check_runs_in_process_under_no_cap(
        shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    setenv(monkeypatch, admission_sandbox="false", admission_memory_mb=64)
    assert admit_pdf(hostile.text_bomb_pdf(pages=1, lines_per_page=BOMB_LINES), max_bytes=10_000_000,
                     max_pages=5) == 1
    assert refusal(encrypted_pdf()).code == "encrypted_pdf"
    assert admission._shared is None  # no child was started


def test_a_hung_check_times_out_its_child_is_killed_and_the_next_is_admitted(
        hanging_pool: AdmissionPool, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    assert hanging_pool.check(VALID, 5, timeout_s=60) == 3  # the child is up: the timeout measures the check only
    started = time.monotonic()
    with pytest.raises(InvalidPdf) as raised:
        hanging_pool.check(VALID + b"\n%dsx-test:sleep " + str(pid_file).encode() + b"\n", 5, timeout_s=2)
    assert raised.value.code == "pdf_check_timeout" and "2s" in raised.value.detail
    assert time.monotonic() - started < HANG_S / 4  # relative to the hang, not a latency figure
    assert _gone(int(pid_file.read_text()))
    assert hanging_pool.check(VALID, 5, timeout_s=5) == 3


def test_a_child_killed_mid_check_is_a_crash_and_the_next_is_admitted(dying_pool: AdmissionPool) -> None:
    with pytest.raises(InvalidPdf) as raised:
        dying_pool.check(VALID + DIE_MARK, 5, timeout_s=5)
    assert raised.value.code == "pdf_check_crashed"
    assert dying_pool.check(VALID, 5, timeout_s=5) == 3


def test_a_check_in_flight_when_another_child_dies_is_retried_not_refused(
        dying_pool: AdmissionPool, tmp_path: Path) -> None:
    from tests.support.processes import wait_until

    results: dict[str, object] = {}
    held = VALID + b"\n%dsx-test:hold " + str(tmp_path).encode() + b"\n"

    def innocent() -> None:
        try:
            results["pages"] = dying_pool.check(held, 5, timeout_s=HOLD_LIMIT_S)
        except InvalidPdf as exc:
            results["pages"] = exc.code

    thread = threading.Thread(target=innocent)
    thread.start()
    wait_until(lambda: (tmp_path / "started").exists(), timeout_s=30, interval_s=0.05,
               what="the innocent check to be in its child")
    try:
        with pytest.raises(InvalidPdf) as raised:
            dying_pool.check(VALID + DIE_MARK, 5, timeout_s=10)
    finally:
        (tmp_path / "release").write_text("")  # a retried check finds it at once
    thread.join(timeout=HOLD_LIMIT_S)
    assert raised.value.code == "pdf_check_crashed"
    assert results["pages"] == 3


@pytest.mark.parametrize("failure", ["memory", "crash"])
def test_an_upload_refused_by_its_check_stores_nothing(shared: None, dsx_env, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
                                                        dying_pool: AdmissionPool, failure: str) -> None:
    from app.main import create_app

    if failure == "memory":
        setenv(monkeypatch, admission_memory_mb=64)
        data, code = hostile.text_bomb_pdf(pages=1, lines_per_page=BOMB_LINES), "pdf_too_complex"
    else:
        setenv(monkeypatch, admission_workers=dying_pool.workers, admission_memory_mb=dying_pool.memory_mb)
        monkeypatch.setattr(admission, "_shared", dying_pool)
        data, code = VALID + DIE_MARK, "pdf_check_crashed"
    client = TestClient(create_app())
    response = post(client, data)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code
    assert stored_rows() == (0, 0, 0)
    assert stored_blobs() == []
    assert post(client, VALID).status_code == 202  # and the pool still admits the next upload
    assert stored_rows() == (1, 1, 1)


def test_the_app_starts_the_pool_with_the_server_and_stops_it_on_shutdown(shared: None) -> None:
    from app.main import create_app

    with TestClient(create_app()) as client:
        pool = admission._shared
        assert pool is not None
        assert post(client, VALID).status_code == 202
        assert admission._shared is pool  # the upload used the pool started at startup
    assert admission._shared is None
    with pytest.raises(RuntimeError):
        pool.check(VALID, 5, timeout_s=5)


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(") ", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


_KILLED_API = """
import sys, threading
from app.jobs.admission import AdmissionPool
from tests.unit.test_admission import VALID, _inspect_or_hang

pool = AdmissionPool(workers=2, memory_mb=768, inspect=_inspect_or_hang)
pool.start()
mark = VALID + b"\\n%dsx-test:sleep " + sys.argv[1].encode() + b"\\n"
threading.Thread(target=pool.check, args=(mark, 5), kwargs={"timeout_s": 600}, daemon=True).start()
threading.Event().wait()
"""


def test_children_do_not_outlive_an_api_process_killed_under_them(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.support.paths import REPO_ROOT
    from tests.support.processes import wait_until

    pid_file = tmp_path / "pid"
    api = subprocess.Popen([sys.executable, "-c", _KILLED_API, str(pid_file)], cwd=REPO_ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: set[int] = set()
    try:
        wait_until(lambda: pid_file.is_file() and pid_file.read_text(), timeout_s=60, interval_s=0.1,
                   what="a check to hang in its child")
        children = _descendants(api.pid)
        assert int(pid_file.read_text()) in children
    finally:
        api.kill()
        api.wait(timeout=10)
    try:
        wait_until(lambda: all(_gone(pid) for pid in children), timeout_s=10, interval_s=0.1,
                   what="the forkserver and its children to end")
    finally:
        for pid in children:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_datasheet_already_admitted_skips_the_check_unless_limits_tightened(
        shared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from app.db import session_scope
    from app.jobs import service

    checks: list[int] = []
    real_admit = service.admit_pdf

    def counting_admit(data: bytes, **limits: int) -> int:
        checks.append(len(data))
        return real_admit(data, **limits)

    monkeypatch.setattr(service, "admit_pdf", counting_admit)
    pdf = text_pdf(["Gain 20 dB", "page two", "page three"])

    def submit() -> None:
        with session_scope() as session:
            service.create_job(session, data=pdf, filename="x.pdf", parameters=json.dumps(["Gain"]))

    submit()
    submit()
    assert len(checks) == 1  # the second upload of the same bytes reused the first verdict

    setenv(monkeypatch, max_pages=2)
    with pytest.raises(DsxError) as refused:
        submit()
    assert refused.value.code == "too_many_pages" and len(checks) == 2
