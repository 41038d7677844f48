"""Job leases: at most one worker processes a job at a time, and a crashed worker's job is taken over.

A delivery acquires the lease with one conditional UPDATE (atomic on Postgres and SQLite): free, already
ours, or expired; the job's outstanding wake-up then counts as taken (``Job.woken_at``). The holder renews it
while it runs (app/jobs/heartbeat.py); a duplicate delivery while the lease is held is dropped.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import timedelta
from functools import lru_cache

from sqlalchemy import or_, update
from sqlalchemy.orm import Session

from app.config import get_settings
from app.tables.jobs import Job
from app.timeutil import utcnow


@lru_cache(maxsize=1)
def worker_identity() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def acquire(session: Session, job_id: str, owner: str) -> bool:
    now = utcnow()
    result = session.execute(
        update(Job)
        .where(Job.id == job_id)
        .where(or_(Job.lease_owner.is_(None), Job.lease_owner == owner, Job.lease_expires_at < now))
        # The delivery that takes the job has consumed a wake-up: the job has none outstanding until one is sent.
        .values(lease_owner=owner, lease_expires_at=now + timedelta(seconds=get_settings().job_lease_s),
                woken_at=None)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def renew(session: Session, job_id: str, owner: str) -> bool:
    result = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.lease_owner == owner)
        .values(lease_expires_at=utcnow() + timedelta(seconds=get_settings().job_lease_s))
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1


def release(session: Session, job_id: str, owner: str) -> None:
    session.execute(
        update(Job)
        .where(Job.id == job_id, Job.lease_owner == owner)
        .values(lease_owner=None, lease_expires_at=None)
        .execution_options(synchronize_session=False)
    )
