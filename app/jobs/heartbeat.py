"""Lease heartbeat: while a worker runs a job, a thread renews the job's lease, so a live job is never taken over
however long one LLM call, one parameter or the index build takes; a dead worker stops renewing and its job is
picked up once the lease expires.

Renewing only between parameters (as before) let one slow parameter outlive the lease: the sweeper re-enqueued a
live job, a second worker took it over and repeated paid LLM calls. The heartbeat renews every third of the
lease, so two renewals may fail (a database blip) before the lease lapses.

A renewal of a lease this worker does not hold changes nothing (``leases.renew`` is conditional on the owner):
before the job's lease is acquired, after it is released, or once another worker took it over.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import select

from app.config import get_settings
from app.db import session_scope
from app.jobs import leases
from app.tables.jobs import Job

log = logging.getLogger(__name__)


def interval_s() -> float:
    return get_settings().job_lease_s / 3


@contextmanager
def renewing(job_id: str, owner: str) -> Iterator[threading.Event]:
    """Renew ``job_id``'s lease held by ``owner`` in a background thread until the block exits.
    Yields an event that is set once a renewal found the lease held by another worker."""
    stop = threading.Event()
    lost = threading.Event()

    def beat() -> None:
        while not stop.wait(interval_s()):
            try:
                with session_scope() as session:
                    if leases.renew(session, job_id, owner):
                        continue
                    holder = session.scalar(select(Job.lease_owner).where(Job.id == job_id))
            except Exception:  # noqa: BLE001 - a database blip: the next beat retries before the lease lapses
                log.warning("could not renew the lease of job %s", job_id, exc_info=True)
                continue
            if holder is not None and holder != owner and not lost.is_set():
                lost.set()
                log.warning("job %s: lease taken over by %s while %s still runs it", job_id, holder, owner)

    thread = threading.Thread(target=beat, name=f"dsx-lease-{job_id[:8]}", daemon=True)
    thread.start()
    try:
        yield lost
    finally:
        stop.set()
        thread.join(timeout=10)
