"""What a worker does with an exception that escaped a job: record its cause, and decide whether another
delivery could end differently.

A deterministic data error — the database refusing a value (``DataError``), a constraint the data breaks
(``IntegrityError``), stored data that no longer validates (``ValidationError``), text that cannot be encoded —
fails the same way on every delivery, so the job fails on the first one with ``invalid_job_data``. Anything else
(a database restart, a lost connection, a bug that may be transient) is left for redelivery, with the cause kept in
``failure_detail`` so that a job that finally fails as ``poison_job`` says what kept failing.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError
from sqlalchemy.exc import DataError, IntegrityError

from app.db import session_scope
from app.jobs import leases
from app.jobs.service import transition
from app.tables.jobs import Job, JobStatus

log = logging.getLogger(__name__)

INVALID_JOB_DATA = "invalid_job_data"
DETERMINISTIC_DATA_ERRORS: tuple[type[BaseException], ...] = (
    DataError, IntegrityError, ValidationError, UnicodeEncodeError,
)
MAX_CAUSE_CHARS = 500


def is_deterministic(exc: BaseException) -> bool:
    return isinstance(exc, DETERMINISTIC_DATA_ERRORS)


def describe(exc: BaseException) -> str:
    """``Type: message``, first line only (SQLAlchemy appends the statement and its parameters), bounded."""
    lines = str(exc).strip().splitlines()
    message = lines[0] if lines else ""
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= MAX_CAUSE_CHARS else text[: MAX_CAUSE_CHARS - 1] + "…"


def record(job_id: str, owner: str, exc: Exception) -> str:
    """Store ``exc`` as the job's latest failure cause. A deterministic data error fails the job (returns its
    status); any other error is re-raised after its cause is stored and the lease released, so the sweeper
    re-delivers the job without waiting for the lease to expire."""
    cause = describe(exc)
    with session_scope() as session:
        job = session.get(Job, job_id)
        if job is None or JobStatus(job.status).is_terminal:
            raise exc
        delivery = job.deliveries
        if is_deterministic(exc):
            log.error("job %s failed on delivery %d with a data error that no retry can fix: %s",
                      job_id, delivery, cause, exc_info=exc)
            transition(job, JobStatus.failed, failure_code=INVALID_JOB_DATA,
                       detail=f"{cause} (delivery {delivery}; not retried: the same data fails the same way)")
            leases.release(session, job_id, owner)
            return job.status
        # No traceback here: the exception is re-raised, and whoever runs the job (Celery) logs it with one.
        log.error("job %s: delivery %d failed, it will be delivered again: %s", job_id, delivery, cause)
        job.failure_detail = f"delivery {delivery}: {cause}"
        leases.release(session, job_id, owner)
    raise exc


def fail_as_poison(job: Job) -> None:
    """Fail a job delivered more often than allowed, saying how often and the last recorded cause (a worker
    that was killed records none)."""
    detail = f"Delivered {job.deliveries} times without finishing."
    if job.failure_detail:
        detail += f" Last recorded error: {job.failure_detail}."
    log.error("job %s failed as poison_job: %s", job.id, detail)
    transition(job, JobStatus.failed, failure_code="poison_job", detail=detail)
