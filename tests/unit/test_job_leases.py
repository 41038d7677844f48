"""Leases keep one worker per job; the sweeper re-enqueues lost and orphaned jobs; poison jobs stop."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import update

from app.db import session_scope
from app.flows import extraction as extraction_flow
from app.jobs import leases, service, sweeper
from app.tables.jobs import Job
from app.timeutil import utcnow
from tests.support.pdfs import text_pdf


@pytest.fixture
def job_id(dsx_env) -> str:  # noqa: ANN001
    with session_scope() as session:
        job, _ = service.create_job(session, data=text_pdf(["Supply voltage 5 V"]), filename="x.pdf",
                                    parameters=json.dumps(["Supply voltage"]))
        return job.id


def _set(job_id: str, **values: object) -> None:
    with session_scope() as session:
        session.execute(update(Job).where(Job.id == job_id).values(**values))


def _job(job_id: str) -> Job:
    with session_scope() as session:
        return service.get_job(session, job_id)


def test_lease_is_exclusive_until_it_expires(job_id: str) -> None:
    with session_scope() as session:
        assert leases.acquire(session, job_id, "worker-a")
        assert leases.acquire(session, job_id, "worker-a")  # re-entrant for its holder
        assert not leases.acquire(session, job_id, "worker-b")
    _set(job_id, lease_expires_at=utcnow() - timedelta(seconds=1))
    with session_scope() as session:
        assert leases.acquire(session, job_id, "worker-b")
        assert not leases.renew(session, job_id, "worker-a")
        assert leases.renew(session, job_id, "worker-b")


def test_duplicate_delivery_while_leased_is_dropped(job_id: str) -> None:
    _set(job_id, status="running", lease_owner="worker-a", lease_expires_at=utcnow() + timedelta(minutes=5))
    assert extraction_flow.run(job_id, owner="worker-b") == "running"
    job = _job(job_id)
    assert job.deliveries == 0 and job.lease_owner == "worker-a"


def test_poison_job_fails_after_max_deliveries(job_id: str, dsx_env) -> None:  # noqa: ANN001
    _set(job_id, deliveries=dsx_env.max_deliveries)
    assert extraction_flow.run(job_id, owner="worker-a") == "failed"
    job = _job(job_id)
    assert job.failure_code == "poison_job" and job.lease_owner is None


def test_sweeper_requeues_lost_and_orphaned_jobs_once(job_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []
    monkeypatch.setattr(sweeper, "enqueue", sent.append)
    assert sweeper.sweep() == []  # fresh queued job: its message is presumably on the way

    _set(job_id, updated_at=utcnow() - timedelta(minutes=10))
    assert sweeper.sweep() == [job_id]
    assert sweeper.sweep() == []  # claimed: not sent again right away

    # running with a live lease: left alone, even when old
    _set(job_id, status="running", lease_owner="w", lease_expires_at=utcnow() + timedelta(minutes=5),
         updated_at=utcnow() - timedelta(minutes=10))
    assert sweeper.sweep() == []
    # its worker died: the lease expired
    _set(job_id, lease_expires_at=utcnow() - timedelta(seconds=5), updated_at=utcnow() - timedelta(minutes=10))
    assert sweeper.sweep() == [job_id]
    assert sent == [job_id, job_id]


def test_terminal_jobs_are_never_swept(job_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweeper, "enqueue", lambda _job_id: pytest.fail("must not enqueue"))
    _set(job_id, status="done", updated_at=utcnow() - timedelta(hours=1))
    assert sweeper.sweep() == []
