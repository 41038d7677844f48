"""Enqueueing jobs onto the Celery broker (Redis in production, SQLAlchemy/SQLite embedded).

The API only produces messages; it never imports the worker package. Both sides share
``celery_config()`` so the broker settings cannot drift.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import lru_cache
from typing import Any

from celery import Celery
from sqlalchemy import update

from app.config import get_settings
from app.db import session_scope
from app.dispatch.propagation import job_message_headers
from app.errors import ServiceUnavailable
from app.jobs import sql_broker
from app.tables.jobs import Job
from app.timeutil import utcnow

sql_broker.register()

log = logging.getLogger(__name__)

RUN_JOB_TASK = "dsx.run_job"
# How often an idle embedded worker looks for a message; also the longest a freed worker waits for its next job.
SQL_BROKER_POLLING_INTERVAL_S = 0.1
QUEUE = "dsx"
# How long a message taken by a worker that vanished stays invisible before Redis returns it to the queue; also how
# long the sweeper trusts a wake-up it has sent to be in the broker (app/jobs/sweeper.py).
REDELIVERY_WINDOW_S = 3600


def celery_config() -> dict[str, Any]:
    settings = get_settings()
    return {
        "broker_url": settings.resolved_broker_url,
        "task_default_queue": QUEUE,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": _transport_options(settings.resolved_broker_url),
        "broker_connection_timeout": 5,
        "worker_hijack_root_logger": False,
    }


def _transport_options(broker_url: str) -> dict[str, Any]:
    if broker_url.startswith("redis"):
        # Unacked messages return to the queue after this long if a worker vanished.
        return {"visibility_timeout": REDELIVERY_WINDOW_S}
    if broker_url.split("+", 1)[0] in sql_broker.SCHEMES:
        return {"polling_interval": SQL_BROKER_POLLING_INTERVAL_S}
    return {}


@lru_cache(maxsize=4)
def _producer(broker_url: str) -> Celery:
    app = Celery("dsx-producer")
    app.conf.update(celery_config())
    return app


def producer() -> Celery:
    return _producer(get_settings().resolved_broker_url)


def enqueue(job_id: str) -> None:
    """Send a wake-up naming ``job_id``. The job row says one is outstanding (``woken_at``: set when the job is
    stored, by :func:`wake` or by the sweeper); a send that fails clears that again."""
    try:
        # The submitting request's trace and ids travel with the message, so the worker continues that trace.
        producer().send_task(RUN_JOB_TASK, args=[job_id], queue=QUEUE, retry=True, headers=job_message_headers(),
                             retry_policy={"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5})
    except Exception as exc:  # noqa: BLE001 - any broker failure is the same to the client
        _note_wake_up(job_id, None)
        raise ServiceUnavailable(f"The job queue is unavailable: {exc}", code="broker_unavailable",
                                 retry_after=5) from exc


def wake(job_id: str) -> None:
    """Note a wake-up on the job row, then send it (for a job whose row does not say so yet)."""
    _note_wake_up(job_id, utcnow())
    enqueue(job_id)


def queue_depth() -> int | None:
    """Messages waiting in the job queue (not those workers hold), or None when the broker cannot say."""
    try:
        with producer().connection_for_write() as connection:
            # Not passive: an emptied queue may no longer exist in the broker, and then it holds 0 messages.
            return int(connection.default_channel.queue_declare(queue=QUEUE).message_count)
    except Exception:  # noqa: BLE001 - the broker is down: nothing can be sent either
        log.warning("could not read the job queue's depth", exc_info=True)
        return None


def _note_wake_up(job_id: str, sent_at: datetime | None) -> None:
    with session_scope() as session:
        # Not an activity of the job: updated_at (the sweeper's staleness, the tenant order) stays as it is.
        session.execute(update(Job).where(Job.id == job_id).values(woken_at=sent_at, updated_at=Job.updated_at)
                        .execution_options(synchronize_session=False))


def broker_ready() -> tuple[bool, str]:
    try:
        with producer().connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=3)
        return True, "ok"
    except Exception as exc:  # noqa: BLE001
        return False, str(exc)
