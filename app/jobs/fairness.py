"""Fair dispatch between tenants: a tenant with a huge backlog delays another tenant's first result by at most
one parameter per worker.

Mechanism: round robin across tenants, kept in the job table (the source of truth) rather than in the broker, with
preemption at parameter boundaries.

- A broker message is a wake-up, not an assignment. The worker that takes one claims (leases) the waiting job of
  the tenant with the fewest jobs running now; ties go to the tenant least recently active, and within a tenant
  the oldest job runs first. "Waiting" is queued, or running with a lapsed lease (a dead worker's job).
- Before each parameter after the first, a job whose tenant runs more jobs than a tenant with waiting work yields:
  it goes back to ``queued`` (lease released, the delivery not counted against ``max_deliveries``) with a fresh
  wake-up, so the next free worker serves the waiting tenant. Answered parameters are never run again.

Every waiting job still has one message in the broker (a claim consumes some job's message, a yield sends one),
so the queue depth stays the autoscaling signal and every job is eventually claimed.

Why this and not the alternatives: one Celery queue per tenant needs workers to subscribe to queues as tenants
appear, and a job of 100 parameters would still hold its worker to the end; a token bucket caps a tenant's rate
even when every worker is idle. Weights are not needed yet: every tenant gets an equal share of the workers.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from app.config import get_settings
from app.db import session_scope
from app.jobs import leases
from app.jobs.queue import enqueue
from app.tables.jobs import Job, JobStatus
from app.timeutil import utcnow

log = logging.getLogger(__name__)

ACTIVE = (JobStatus.queued.value, JobStatus.running.value)
CANDIDATES_PER_TENANT = 4


def _leased(now: datetime):  # noqa: ANN202 - a SQL condition
    return and_(Job.lease_owner.is_not(None), Job.lease_expires_at >= now)


def _waiting(now: datetime):  # noqa: ANN202 - a SQL condition
    return and_(Job.status.in_(ACTIVE), or_(Job.lease_owner.is_(None), Job.lease_expires_at < now))


def running_by_tenant(session: Session, now: datetime) -> dict[str, int]:
    rows = session.execute(select(Job.tenant, func.count()).where(Job.status.in_(ACTIVE), _leased(now))
                           .group_by(Job.tenant))
    return {tenant: int(count) for tenant, count in rows}


def waiting_tenants(session: Session, now: datetime) -> dict[str, datetime]:
    """Tenants with waiting work, each with its latest activity (the least recently active goes first)."""
    rows = session.execute(select(Job.tenant, func.max(Job.updated_at)).where(_waiting(now)).group_by(Job.tenant))
    return {tenant: last for tenant, last in rows}


def claim_next(hint_job_id: str, owner: str) -> str:
    """The job this delivery should run, its lease already held by ``owner``. Falls back to the message's own
    job when nothing is waiting (it may be running elsewhere: the pipeline then drops the duplicate)."""
    if not get_settings().fair_scheduling:
        return hint_job_id
    now = utcnow()
    with session_scope() as session:
        running = running_by_tenant(session, now)
        waiting = waiting_tenants(session, now)
        for tenant in sorted(waiting, key=lambda t: (running.get(t, 0), waiting[t])):
            candidates = session.scalars(select(Job.id).where(Job.tenant == tenant, _waiting(now))
                                         .order_by(Job.created_at, Job.id).limit(CANDIDATES_PER_TENANT))
            for job_id in candidates:
                if leases.acquire(session, job_id, owner):
                    return job_id
    return hint_job_id


def should_yield(job_id: str) -> bool:
    """Whether another tenant waits while this job's tenant holds more workers than it."""
    if not get_settings().fair_scheduling:
        return False
    now = utcnow()
    with session_scope() as session:
        tenant = session.scalar(select(Job.tenant).where(Job.id == job_id))
        running = running_by_tenant(session, now)
        mine = running.get(tenant, 0)
        return any(other != tenant and running.get(other, 0) < mine for other in waiting_tenants(session, now))


def yield_job(job_id: str, owner: str) -> str:
    """Put a running job back in the queue for the next free worker; returns its status."""
    with session_scope() as session:
        moved = session.execute(
            update(Job).where(Job.id == job_id, Job.lease_owner == owner, Job.status == JobStatus.running.value)
            .values(status=JobStatus.queued.value, lease_owner=None, lease_expires_at=None,
                    deliveries=Job.deliveries - 1)
            .execution_options(synchronize_session=False)
        ).rowcount
    if moved:
        log.info("job %s yields its worker to another tenant", job_id)
        try:
            enqueue(job_id)
        except Exception:  # noqa: BLE001 - the sweeper re-enqueues a queued job whose message was lost
            log.warning("could not re-enqueue yielded job %s; the sweeper will", job_id, exc_info=True)
    return JobStatus.queued.value
