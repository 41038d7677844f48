"""Time limits of a job delivery on a worker, derived from the budgets, and a graceful stop on deploys.

The agent budgets (``parameter_timeout_s`` per parameter, the index build's kill deadline) bound a healthy job;
the time limits are the backstop for a call that ignores its own timeout (PyMuPDF in a tool outside the index
sandbox, a hung socket): past the soft limit the job fails as ``time_limit_exceeded`` and frees its worker, past
the hard limit the pool process is replaced.

The limits of a delivery come from the job it runs: the index build plus ``parameter_timeout_s`` for each
parameter still unanswered, armed once the job is claimed (app/jobs/deadline.py). A one-parameter job stuck in
a hung call is thus stopped after minutes, not after the ~17 h a job of ``max_parameters`` could take. Celery's
task limits stay at that worst case, the ceiling where no per-job deadline can be armed.

On SIGTERM (a deploy, a scale-down) the worker stops taking messages and gives running jobs
``worker_soft_shutdown_s`` to finish their parameters before the cold shutdown returns unacknowledged messages
to the broker; a job cut off there is redelivered and skips the parameters it already answered.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from sqlalchemy import func, select

from app.config import Settings, get_settings
from app.db import session_scope
from app.jobs import deadline, leases
from app.jobs.service import get_job, transition
from app.tables.jobs import JobParameter, JobStatus

log = logging.getLogger(__name__)

# Room for the work around the budgets: database writes, review, grounding, telemetry flushes.
OVERHEAD_S = 60.0
HARD_AFTER_SOFT_S = 30.0
# How long a new pool process may take to start, its warm-up included (Celery's default, 4 s, is less than the
# warm-up takes on a busy host).
WARM_UP_ALLOWANCE_S = 120.0


def soft_time_limit_s(settings: Settings, parameters: int | None = None) -> float:
    """Seconds a delivery running ``parameters`` parameters may take (default: a job of ``max_parameters``)."""
    index_build = settings.index_build_kill_after_s or settings.index_build_timeout_s + 30.0
    count = settings.max_parameters if parameters is None else parameters
    return index_build + count * settings.parameter_timeout_s + OVERHEAD_S


def job_time_limits(job_id: str, settings: Settings | None = None) -> tuple[float, float]:
    """(soft, hard) seconds for a delivery of ``job_id``, from its parameters not answered yet."""
    settings = settings or get_settings()
    with session_scope() as session:
        remaining = session.scalar(select(func.count()).select_from(JobParameter)
                                   .where(JobParameter.job_id == job_id, JobParameter.status != "done")) or 0
    soft = soft_time_limit_s(settings, remaining)
    return soft, soft + HARD_AFTER_SOFT_S


def worker_config(settings: Settings | None = None) -> dict[str, Any]:
    """Celery worker settings: the worst-case ceiling of the limits above, and the graceful stop."""
    settings = settings or get_settings()
    soft = soft_time_limit_s(settings)
    return {
        "task_soft_time_limit": soft,
        "task_time_limit": soft + HARD_AFTER_SOFT_S,
        "worker_soft_shutdown_timeout": settings.worker_soft_shutdown_s,
        # Also wait when idle-but-holding a prefetched message, so it is returned rather than lost mid-fetch.
        "worker_enable_soft_shutdown_on_idle": True,
        # A pool process warms up before it reports up (workers/warmup.py); the pool kills one silent for longer.
        "worker_proc_alive_timeout": WARM_UP_ALLOWANCE_S,
    }


def run_within_limits(job_id: str, owner: str, run: Callable[[], str]) -> str:
    """``run()`` within ``job_id``'s own time limits; a job past the soft limit fails with a clear code instead of
    being redelivered to hang again."""
    soft, hard = job_time_limits(job_id)
    try:
        with deadline.armed(soft, hard):
            return run()
    except SoftTimeLimitExceeded:
        log.error("job %s exceeded the task time limit; failing it", job_id)
        with session_scope() as session:
            job = get_job(session, job_id)
            if not JobStatus(job.status).is_terminal:
                transition(job, JobStatus.failed, failure_code="time_limit_exceeded",
                           detail="The job ran past its time limit (from its parameters and the agent budgets).")
            leases.release(session, job_id, owner)
            return job.status
