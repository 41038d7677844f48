"""Leases keep one worker per job; the sweeper re-enqueues lost and orphaned jobs; poison jobs stop."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import update

from app.db import session_scope
from app.errors import ServiceUnavailable
from app.flows import extraction as extraction_flow
from app.jobs import leases, queue, service, sweeper
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


def test_a_job_cancelled_as_its_delivery_starts_is_left_cancelled(job_id: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    real_acquire = leases.acquire

    def cancelled_meanwhile(session, claimed: str, owner: str) -> bool:  # noqa: ANN001
        with session_scope() as other:
            service.cancel_job(other, claimed)
        return real_acquire(session, claimed, owner)

    monkeypatch.setattr(leases, "acquire", cancelled_meanwhile)
    assert extraction_flow.run(job_id, owner="worker-a") == "cancelled"
    job = _job(job_id)
    assert job.status == "cancelled" and job.lease_owner is None and job.deliveries == 0


def test_poison_job_fails_after_max_deliveries(job_id: str, dsx_env) -> None:  # noqa: ANN001
    _set(job_id, deliveries=dsx_env.max_deliveries)
    assert extraction_flow.run(job_id, owner="worker-a") == "failed"
    job = _job(job_id)
    assert job.failure_code == "poison_job" and job.lease_owner is None


def test_sweeper_requeues_lost_and_orphaned_jobs_once(job_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[str] = []
    monkeypatch.setattr(sweeper, "enqueue", sent.append)
    assert sweeper.sweep() == []  # fresh queued job: its message is presumably on the way

    # stored long ago, its wake-up never sent (the API process died in between): the queue is short of one
    _set(job_id, updated_at=utcnow() - timedelta(minutes=10), woken_at=utcnow() - timedelta(minutes=10))
    assert sweeper.sweep() == [job_id]
    assert sweeper.sweep() == []  # claimed: not sent again right away

    # running with a live lease: left alone, even when old
    _set(job_id, status="running", lease_owner="w", lease_expires_at=utcnow() + timedelta(minutes=5),
         updated_at=utcnow() - timedelta(minutes=10))
    assert sweeper.sweep() == []
    # a delivery took it (its wake-up consumed), then its worker died: the lease expired
    with session_scope() as session:
        assert leases.acquire(session, job_id, "w")
    _set(job_id, lease_expires_at=utcnow() - timedelta(seconds=5), updated_at=utcnow() - timedelta(minutes=10))
    assert sweeper.sweep() == [job_id]
    assert sent == [job_id, job_id]


def test_terminal_jobs_are_never_swept(job_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweeper, "enqueue", lambda _job_id: pytest.fail("must not enqueue"))
    _set(job_id, status="done", updated_at=utcnow() - timedelta(hours=1))
    assert sweeper.sweep() == []


def _queue_depth() -> int:
    with queue.producer().connection_for_write() as connection:
        return connection.default_channel.queue_declare(queue.QUEUE, passive=True).message_count


def _age(job_id: str, **older: timedelta) -> None:
    """Move the job's timestamps into the past (``updated_at=timedelta(minutes=10)``: ten minutes ago); an
    ``updated_at`` not given becomes now."""
    _set(job_id, **{column: utcnow() - ago for column, ago in older.items()})


def test_jobs_waiting_behind_a_backlog_get_no_second_wake_up(dsx_env) -> None:  # noqa: ANN001
    job_ids = []
    for _ in range(3):
        with session_scope() as session:
            job, _ = service.create_job(session, data=text_pdf(["Supply voltage 5 V"]), filename="x.pdf",
                                        parameters=json.dumps(["Supply voltage"]))
        queue.enqueue(job.id)  # as the API does once the job is stored
        job_ids.append(job.id)
    assert _queue_depth() == 3

    # Every worker busy for an hour minus a little: the jobs wait, their wake-ups still in the broker.
    for job_id in job_ids:
        _age(job_id, updated_at=timedelta(minutes=50), woken_at=timedelta(minutes=50))
    for _ in range(3):
        assert sweeper.sweep() == []
    assert _queue_depth() == 3

    # A delivery takes the first job and its worker dies: that job alone lacks a wake-up, and gets one, once.
    with session_scope() as session:
        assert leases.acquire(session, job_ids[0], "w")
    _age(job_ids[0], updated_at=timedelta(minutes=10), lease_expires_at=timedelta(seconds=5))
    assert sweeper.sweep() == [job_ids[0]]
    _age(job_ids[0], updated_at=timedelta(minutes=10))
    assert sweeper.sweep() == []

    # Past the broker's redelivery window a wake-up is no longer trusted to be there (a broker that lost its data).
    _age(job_ids[1], updated_at=timedelta(minutes=50), woken_at=timedelta(seconds=queue.REDELIVERY_WINDOW_S + 60))
    assert sweeper.sweep() == [job_ids[1]]
    assert _queue_depth() == 3 + 2


def test_a_wake_up_that_could_not_be_sent_is_left_to_the_sweeper(job_id: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    class BrokerDown:
        def send_task(self, *_args: object, **_kwargs: object) -> None:
            raise ConnectionError("broker down")

    with monkeypatch.context() as patch:
        patch.setattr(queue, "producer", BrokerDown)
        with pytest.raises(ServiceUnavailable):
            queue.enqueue(job_id)
    assert _job(job_id).woken_at is None
    _age(job_id, updated_at=timedelta(minutes=10))
    assert sweeper.sweep() == [job_id]
    assert _job(job_id).woken_at is not None and _queue_depth() == 1


def test_wake_ups_a_broker_lost_are_sent_again(dsx_env) -> None:  # noqa: ANN001
    job_ids = []
    for _ in range(3):
        with session_scope() as session:
            job, _ = service.create_job(session, data=text_pdf(["Supply voltage 5 V"]), filename="x.pdf",
                                        parameters=json.dumps(["Supply voltage"]))
        queue.enqueue(job.id)
        job_ids.append(job.id)
    for minutes, job_id in zip((30, 20, 10), job_ids, strict=True):
        _age(job_id, updated_at=timedelta(minutes=minutes), woken_at=timedelta(minutes=minutes))
    assert sweeper.sweep() == []

    with queue.producer().connection_for_write() as connection:  # the broker restarts empty
        connection.default_channel.queue_purge(queue.QUEUE)
    assert queue.queue_depth() == 0
    assert sweeper.sweep() == job_ids  # the longest-waiting first
    assert _queue_depth() == 3
    assert sweeper.sweep() == []  # one per waiting job again: nothing more
