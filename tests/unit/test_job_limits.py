"""Worker time limits come from the agent budgets, and a job past the soft limit fails with a clear code."""

from __future__ import annotations

import json

from celery.exceptions import SoftTimeLimitExceeded

from app.config import Settings
from app.db import session_scope
from app.jobs import leases, limits, service
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
