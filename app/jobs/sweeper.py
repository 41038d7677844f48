"""Re-enqueue jobs that no worker is moving and that have no wake-up outstanding: queued jobs whose message was
lost (broker down at submit time, a failed send) and running jobs whose worker died (expired lease). The job row
is the source of truth; the broker message is only a wake-up call, so sending one twice is harmless, but every
extra one inflates the queue depth the worker autoscaling reads.

A job waiting behind a long backlog is not lost: its wake-up is in the broker (``Job.woken_at`` is set when one
is sent and cleared when a delivery takes the job, app/jobs/leases.py). So a waiting job is re-sent only when it
has none outstanding, or when the last one is older than the broker's redelivery window (a broker that lost its
data): at most one wake-up per job in the queue, whatever the backlog.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

from sqlalchemy import and_, or_, select, update

from app.config import get_settings
from app.db import session_scope
from app.jobs.queue import REDELIVERY_WINDOW_S, enqueue
from app.tables.jobs import Job, JobStatus
from app.timeutil import utcnow

log = logging.getLogger(__name__)


def sweep() -> list[str]:
    """One pass; returns the ids re-enqueued."""
    settings = get_settings()
    now = utcnow()
    stale_before = now - timedelta(seconds=settings.requeue_after_s)
    unannounced = or_(Job.woken_at.is_(None), Job.woken_at < now - timedelta(seconds=REDELIVERY_WINDOW_S))
    requeued: list[str] = []
    with session_scope() as session:
        candidates = list(session.scalars(
            select(Job.id).where(
                Job.updated_at < stale_before,
                unannounced,
                or_(
                    Job.status == JobStatus.queued.value,
                    and_(Job.status == JobStatus.running.value,
                         or_(Job.lease_expires_at.is_(None), Job.lease_expires_at < now)),
                ),
            ).limit(500)
        ))
    for job_id in candidates:
        with session_scope() as session:
            # Claim the re-enqueue so concurrent sweepers in other workers do not all send one.
            claimed = session.execute(
                update(Job).where(Job.id == job_id, Job.updated_at < stale_before, unannounced)
                .values(updated_at=now, woken_at=now)
                .execution_options(synchronize_session=False)
            ).rowcount
        if claimed:
            try:
                enqueue(job_id)
                requeued.append(job_id)
            except Exception:  # noqa: BLE001 - the broker may still be down; the next pass retries
                log.warning("could not re-enqueue job %s; will retry", job_id, exc_info=True)
    if requeued:
        log.info("re-enqueued %d stalled job(s): %s", len(requeued), ", ".join(requeued))
    return requeued


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
