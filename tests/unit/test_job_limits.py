"""Worker time limits come from the agent budgets and the parameters the job has left; a job past the soft limit
fails with a clear code, and a process past the hard limit is ended."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import select

from app.config import Settings, reset_settings
from app.db import session_scope
from app.jobs import deadline, leases, limits, service
from app.tables.jobs import JobParameter
from tests.support.paths import REPO_ROOT
from tests.support.pdfs import text_pdf


def test_limits_cover_the_budgets_of_a_full_job() -> None:
    settings = Settings(parameter_timeout_s=50, max_parameters=4, index_build_timeout_s=20,
                        index_build_kill_after_s=None, worker_soft_shutdown_s=90)
    config = limits.worker_config(settings)
    assert config["task_soft_time_limit"] >= 20 + 30 + 4 * 50
    assert config["task_time_limit"] > config["task_soft_time_limit"]
    assert config["worker_soft_shutdown_timeout"] == 90
    longer = limits.worker_config(settings.model_copy(update={"parameter_timeout_s": 100}))
    assert longer["task_soft_time_limit"] - config["task_soft_time_limit"] == 4 * 50


def test_a_job_past_the_soft_limit_fails_and_frees_its_lease(dsx_env) -> None:  # noqa: ANN001
    with session_scope() as session:
        job, _ = service.create_job(session, data=text_pdf(["Supply voltage 5 V"]), filename="x.pdf",
                                    parameters=json.dumps(["Supply voltage"]))
        job_id = job.id
        assert leases.acquire(session, job_id, "worker-a")

    def stuck() -> str:
        raise SoftTimeLimitExceeded()

    assert limits.run_within_limits(job_id, "worker-a", stuck) == "failed"
    with session_scope() as session:
        job = service.get_job(session, job_id)
        assert (job.failure_code, job.lease_owner) == ("time_limit_exceeded", None)
    assert limits.run_within_limits(job_id, "worker-a", lambda: "done") == "done"


def _job_with(parameters: list[str]) -> str:
    with session_scope() as session:
        job, _ = service.create_job(session, data=text_pdf(["Supply voltage 5 V"]), filename="x.pdf",
                                    parameters=json.dumps(parameters))
        return job.id


def test_a_deliverys_limits_follow_the_parameters_its_job_has_left(dsx_env) -> None:  # noqa: ANN001
    settings = dsx_env.model_copy(update={"parameter_timeout_s": 50, "index_build_kill_after_s": 20})
    job_id = _job_with(["Supply voltage", "Output current", "Quiescent current"])
    soft, hard = limits.job_time_limits(job_id, settings)
    assert soft == 20 + 3 * 50 + limits.OVERHEAD_S and hard > soft
    with session_scope() as session:
        first = session.scalars(select(JobParameter).where(JobParameter.job_id == job_id)).first()
        first.status = "done"
    resumed, _ = limits.job_time_limits(job_id, settings)
    assert soft - resumed == 50  # a resumed job is not given time for what it already answered
    assert limits.worker_config(settings)["task_soft_time_limit"] > 10 * soft  # the worst case is only the ceiling


def test_a_job_stuck_past_its_own_limit_fails_without_waiting_for_the_worst_case(
        dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("DSX_PARAMETER_TIMEOUT_S", "0.2")
    monkeypatch.setenv("DSX_INDEX_BUILD_KILL_AFTER_S", "0.3")
    monkeypatch.setattr(limits, "OVERHEAD_S", 0.0)
    reset_settings()
    job_id = _job_with(["Supply voltage"])
    with session_scope() as session:
        assert leases.acquire(session, job_id, "worker-a")
    started = time.monotonic()
    assert limits.run_within_limits(job_id, "worker-a", lambda: time.sleep(30) or "done") == "failed"
    assert time.monotonic() - started < 10
    with session_scope() as session:
        assert service.get_job(session, job_id).failure_code == "time_limit_exceeded"


def test_past_the_hard_limit_a_process_that_never_lets_the_soft_limit_in_is_ended() -> None:
    # SIGALRM blocked: like a call stuck in C code, the soft limit's handler never runs.
    program = ("import signal, time\n"
               "from app.jobs import deadline\n"
               "with deadline.armed(0.2, 1.0) as armed:\n"
               "    assert armed\n"
               "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
               "    time.sleep(60)\n")
    started = time.monotonic()
    ended = subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT, capture_output=True, text=True,
                           timeout=60)
    assert ended.returncode != 0 and time.monotonic() - started < 30
    assert "Timeout" in ended.stderr and 'File "<string>", line 6' in ended.stderr  # the stuck stack is dumped


def test_a_deadline_is_armed_only_where_signals_reach_the_job() -> None:
    seen: list[bool] = []

    def in_thread() -> None:
        with deadline.armed(5, 10) as armed:
            seen.append(armed)
            time.sleep(0.1)

    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join()
    assert seen == [False]  # the threads pool: Celery's ceiling stays the backstop
