"""Fair dispatch between tenants: a tenant with a huge backlog delays another tenant's job by at most one
parameter of one of its own jobs; the goal is the other tenant's job done within 2x its time on an idle stack
(``bench/load.py --tenants 2``).

Scheme: round robin across tenants by running jobs ("fewest running first"), kept in the job table (the source of
truth) rather than in the broker, with preemption at parameter boundaries and a direct hand-off. No weights and
no token bucket.

- A broker message is a wake-up, not an assignment. The worker that takes one claims (leases) the waiting job of
  the tenant with the fewest jobs running now; ties go to the tenant least recently active, and within a tenant
  the oldest job runs first. "Waiting" is queued, or running with a lapsed lease (a dead worker's job). So the
  messages a worker holds (``worker_prefetch_multiplier`` 1, acks late: one per pool process, the one it runs)
  never pin a tenant's job to a busy worker, and the order of messages in the broker does not matter.
- Before each parameter after the first, a job whose tenant runs more jobs than a tenant with waiting work makes
  way (:func:`make_way`): its worker claims that tenant's job, puts its own back to ``queued`` (lease released,
  the delivery not counted against ``max_deliveries``) and runs the claimed job at once (:func:`run_fairly`).
  Answered parameters are never run again.

What delays the waiting tenant is therefore one parameter of the job it preempts (the check waits for a boundary: a
paid LLM call is never cut off) plus one claim; beyond that its job shares the machine with the flooding tenant's
other running jobs (on a CPU-bound stack, the cores). The hand-off matters: yielding through the broker instead
(send a wake-up, return, fetch the next message) added a broker round trip, and in that window the other busy
workers saw the tenant still waiting and yielded too, each paying a restart. Claiming before releasing makes only
the worker that wins the waiting job give way. Per-parameter dispatch would not shorten the wait (a parameter is
still the unit of preemption) and would spread even an idle tenant's job over every worker, which a flooded tenant
then cannot match.

Every waiting job has one message in the broker: a claim consumes some job's message; a hand-off leaves the
claimed job's message to wake a worker for the job that made way; a job that makes way without a hand-off sends
a wake-up of its own. The queue depth thus stays the autoscaling signal and every job is eventually claimed. A
claim that loses a race for a job looks again, since the winner may have just released one (making way).

Why not the alternatives: one Celery queue per tenant needs workers to subscribe to queues as tenants appear, and
a job of 100 parameters would still hold its worker to the end; a token bucket caps a tenant's rate even when
every worker is idle. Weights are not needed yet: every tenant gets an equal share of the workers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from app.config import get_settings
from app.db import session_scope
from app.jobs import leases
from app.jobs.queue import wake
from app.tables.jobs import Job, JobStatus
from app.timeutil import utcnow

log = logging.getLogger(__name__)

ACTIVE = (JobStatus.queued.value, JobStatus.running.value)
CANDIDATES_PER_TENANT = 4
# Jobs one delivery may hand its worker to: bounds a delivery's length, not fairness (each is claimed fairly).
MAX_HAND_OFFS = 8
# Scans a claim makes when it lost the race for every candidate (another worker may have just released one).
CLAIM_ATTEMPTS = 3
# Where make_way leaves the job it claimed for this worker, while run_fairly can hand the worker over (else None).
_hand_off: ContextVar[list[str] | None] = ContextVar("dsx_hand_off", default=None)


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


def claim_waiting(owner: str, below: tuple[str, int] | None = None) -> str | None:
    """The waiting job of the tenant running the fewest jobs (ties: the least recently active tenant; within a
    tenant the oldest job), its lease now held by ``owner``; None when nothing waits. With ``below`` = (tenant,
    n): only jobs of other tenants running fewer than n jobs."""
    for _ in range(CLAIM_ATTEMPTS):
        claimed, lost_a_race = _claim_once(owner, below)
        if claimed is not None or not lost_a_race:
            return claimed
    return None


def _claim_once(owner: str, below: tuple[str, int] | None) -> tuple[str | None, bool]:
    now = utcnow()
    lost_a_race = False
    with session_scope() as session:
        running = running_by_tenant(session, now)
        waiting = waiting_tenants(session, now)
        if below is not None:
            waiting = {t: last for t, last in waiting.items() if t != below[0] and running.get(t, 0) < below[1]}
        for tenant in sorted(waiting, key=lambda t: (running.get(t, 0), waiting[t])):
            candidates = session.scalars(select(Job.id).where(Job.tenant == tenant, _waiting(now))
                                         .order_by(Job.created_at, Job.id).limit(CANDIDATES_PER_TENANT))
            for job_id in candidates:
                if leases.acquire(session, job_id, owner):
                    return job_id, lost_a_race
                lost_a_race = True
    return None, lost_a_race


def claim_next(hint_job_id: str, owner: str) -> str:
    """The job this delivery should run, its lease already held by ``owner``. Falls back to the message's own
    job when nothing is waiting (it may be running elsewhere: the pipeline then drops the duplicate)."""
    if not get_settings().fair_scheduling:
        return hint_job_id
    return claim_waiting(owner) or hint_job_id


def run_fairly(hint_job_id: str, owner: str, run: Callable[[str], str]) -> str:
    """One delivery: claim the fairest waiting job and ``run`` it (returns its status). A job that makes way
    (:func:`make_way`) hands this worker straight to the waiting job it claimed, at most ``MAX_HAND_OFFS`` times
    (the last job run makes way through the broker instead). Returns the status of the last job run."""
    job_id = claim_next(hint_job_id, owner)
    for turn in range(MAX_HAND_OFFS + 1):
        with handing_off(enabled=turn < MAX_HAND_OFFS) as successors:
            try:
                status = run(job_id)
            except BaseException:
                for successor in successors:  # claimed but never run: waiting again, with a wake-up of its own
                    with session_scope() as session:
                        leases.release(session, successor, owner)
                    _wake(successor)
                raise
        if not successors:
            return status
        job_id = successors[0]
    return status


@contextmanager
def handing_off(enabled: bool = True) -> Iterator[list[str]]:
    """While the block runs, a job that makes way leaves the job it claimed for this worker in the list yielded
    (the caller runs it next); not ``enabled``: it makes way through the broker."""
    successors: list[str] = []
    token = _hand_off.set(successors if enabled else None)
    try:
        yield successors
    finally:
        _hand_off.reset(token)


def should_yield(job_id: str) -> bool:
    """Whether another tenant waits while this job's tenant holds more workers than it."""
    return get_settings().fair_scheduling and _standing(job_id)[2]


def _standing(job_id: str) -> tuple[str | None, int, bool]:
    """This job's tenant, the jobs that tenant runs, and whether a tenant running fewer jobs waits."""
    now = utcnow()
    with session_scope() as session:
        tenant = session.scalar(select(Job.tenant).where(Job.id == job_id))
        running = running_by_tenant(session, now)
        mine = running.get(tenant, 0)
        others_wait = any(other != tenant and running.get(other, 0) < mine
                          for other in waiting_tenants(session, now))
    return tenant, mine, others_wait


def make_way(job_id: str, owner: str) -> bool:
    """Between two parameters: if a tenant running fewer jobs waits, give it this worker and return True (the
    job is queued again). Inside :func:`run_fairly` the waiting job is claimed before this one is released, so
    of two workers that see the same waiting tenant only the one that wins its job makes way; elsewhere the
    job is released with a wake-up for the next free worker."""
    if not get_settings().fair_scheduling:
        return False
    tenant, mine, others_wait = _standing(job_id)
    if not others_wait or tenant is None:
        return False
    successors = _hand_off.get()
    if successors is None:
        yield_job(job_id, owner)
        _wake(job_id)
        return True
    successor = claim_waiting(owner, below=(tenant, mine))
    if successor is None:
        return False  # another worker took the waiting job first: this one keeps its worker
    yield_job(job_id, owner)
    successors.append(successor)
    return True


def yield_job(job_id: str, owner: str) -> str:
    """Put a running job back in the queue (lease released, the delivery not counted); returns its status. The
    caller sees to its wake-up (:func:`make_way`): one it sends, or on a hand-off the message of the job it
    claimed, still in the broker; either way the job is marked as having one outstanding (``woken_at``)."""
    with session_scope() as session:
        moved = session.execute(
            update(Job).where(Job.id == job_id, Job.lease_owner == owner, Job.status == JobStatus.running.value)
            .values(status=JobStatus.queued.value, lease_owner=None, lease_expires_at=None,
                    deliveries=Job.deliveries - 1, woken_at=utcnow())
            .execution_options(synchronize_session=False)
        ).rowcount
    if moved:
        log.info("job %s yields its worker to another tenant", job_id)
    return JobStatus.queued.value


def _wake(job_id: str) -> None:
    try:
        wake(job_id)
    except Exception:  # noqa: BLE001 - the sweeper re-enqueues a queued job whose message was lost
        log.warning("could not send a wake-up for job %s; the sweeper will", job_id, exc_info=True)
