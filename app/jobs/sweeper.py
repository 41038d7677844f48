"""Re-enqueue jobs that no worker is moving and that have no wake-up outstanding: queued jobs whose message was
lost (broker down at submit time, a failed send) and running jobs whose worker died (expired lease). The job row
is the source of truth; the broker message is only a wake-up call, so sending one twice is harmless, but every
extra one inflates the queue depth the worker autoscaling reads.

A job waiting behind a long backlog is not lost: its wake-up is in the broker (``Job.woken_at`` is set when one
is sent and cleared when a delivery takes the job, app/jobs/leases.py). So a waiting job is re-sent only when it
has none outstanding, or when the last one is older than the broker's redelivery window. A broker that lost its
messages (restarted empty) shows as a queue holding fewer messages than jobs wait with a wake-up outstanding: that
many are sent again. So the queue holds about one wake-up per waiting job, whatever the backlog.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update

from app.config import get_settings
from app.db import session_scope
from app.jobs.queue import REDELIVERY_WINDOW_S, enqueue, queue_depth
from app.tables.jobs import Job, JobStatus
from app.timeutil import utcnow

log = logging.getLogger(__name__)

SWEEP_LIMIT = 500  # jobs one pass looks at; the next pass takes the rest


def _waiting(now: datetime):  # noqa: ANN202 - a SQL condition
    """Queued, or running with no live lease (its worker died)."""
    return or_(Job.status == JobStatus.queued.value,
               and_(Job.status == JobStatus.running.value,
                    or_(Job.lease_expires_at.is_(None), Job.lease_expires_at < now)))


def sweep() -> list[str]:
    """One pass; returns the ids re-enqueued."""
    now = utcnow()
    stale_before = now - timedelta(seconds=get_settings().requeue_after_s)
    trusted_since = now - timedelta(seconds=REDELIVERY_WINDOW_S)
    unannounced = or_(Job.woken_at.is_(None), Job.woken_at < trusted_since)
    with session_scope() as session:
        candidates = [(job_id, unannounced) for job_id in session.scalars(
            select(Job.id).where(Job.updated_at < stale_before, unannounced, _waiting(now)).limit(SWEEP_LIMIT))]
    requeued = _send(candidates, now, stale_before) + _send(_lost_wake_ups(now, stale_before, trusted_since), now,
                                                            stale_before)
    if requeued:
        log.info("re-enqueued %d stalled job(s): %s", len(requeued), ", ".join(requeued))
    return requeued


def _lost_wake_ups(now: datetime, stale_before: datetime, trusted_since: datetime) -> list[tuple[str, Any]]:
    """Jobs whose wake-up the broker no longer holds although it was sent (a broker restarted empty): when the
    queue holds fewer messages than jobs wait with a wake-up outstanding, that many of the longest-waiting ones.
    Messages are not tied to jobs (any wake-up runs the fairest waiting job), so the count is what matters."""
    depth = queue_depth()
    if depth is None:
        return []
    with session_scope() as session:
        announced = and_(_waiting(now), Job.woken_at.is_not(None), Job.woken_at >= trusted_since)
        missing = (session.scalar(select(func.count()).select_from(Job).where(announced)) or 0) - depth
        if missing <= 0:
            return []
        # Only wake-ups older than requeue_after_s: one sent a moment ago may not have reached the queue yet.
        rows = session.execute(select(Job.id, Job.woken_at).where(announced, Job.updated_at < stale_before,
                                                                  Job.woken_at < stale_before)
                               .order_by(Job.woken_at, Job.id).limit(min(missing, SWEEP_LIMIT))).all()
    return [(job_id, Job.woken_at == seen) for job_id, seen in rows]


def _send(candidates: list[tuple[str, Any]], now: datetime, stale_before: datetime) -> list[str]:
    """Send a wake-up for each (job id, condition still true of its row) that this sweeper wins."""
    sent: list[str] = []
    for job_id, still in candidates:
        with session_scope() as session:
            # Claim the re-enqueue so concurrent sweepers in other workers do not all send one.
            claimed = session.execute(
                update(Job).where(Job.id == job_id, Job.updated_at < stale_before, still)
                .values(updated_at=now, woken_at=now)
                .execution_options(synchronize_session=False)
            ).rowcount
        if claimed:
            try:
                enqueue(job_id)
                sent.append(job_id)
            except Exception:  # noqa: BLE001 - the broker may still be down; the next pass retries
                log.warning("could not re-enqueue job %s; will retry", job_id, exc_info=True)
    return sent


def start_background_sweeper(stop: threading.Event) -> threading.Thread:
    interval = get_settings().sweep_interval_s

    def loop() -> None:
        while not stop.wait(interval):
            try:
                sweep()
            except Exception:  # noqa: BLE001 - a database blip must not kill the sweeper
                log.warning("sweep failed", exc_info=True)

    thread = threading.Thread(target=loop, name="dsx-sweeper", daemon=True)
    thread.start()
    return thread
