"""Fair dispatch: a wake-up runs the waiting job of the tenant with the fewest running jobs, and a job of a tenant
holding more workers than a waiting tenant yields between parameters without losing or repeating work."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from sqlalchemy import func, select, update

from app.config import reset_settings
from app.db import session_scope
from app.flows import extraction
from app.jobs import fairness, leases, service
from app.tables.jobs import Extraction, Job
from tests.support.pdfs import text_pdf

PDF = text_pdf(["Electrical characteristics\nSupply voltage VDD 2.7 5.5 V\nOutput current IOUT 20 mA\n"
                "Quiescent current IQ 85 uA"])


def _create(tenant: str, parameters: list[str] | None = None) -> str:
    with session_scope() as session:
        job, _ = service.create_job(session, data=PDF, filename="x.pdf", tenant=tenant,
                                    parameters=json.dumps(parameters or ["Supply voltage"]))
        return job.id


def _start(job_id: str, owner: str) -> None:
    with session_scope() as session:
        assert leases.acquire(session, job_id, owner)
        session.execute(update(Job).where(Job.id == job_id).values(status="running", deliveries=Job.deliveries + 1))


def _job(job_id: str) -> Job:
    with session_scope() as session:
        return service.get_job(session, job_id)


def test_wake_ups_serve_the_tenant_with_fewer_running_jobs(dsx_env) -> None:  # noqa: ANN001
    a1, a2, a3 = (_create("a") for _ in range(3))
    b1 = _create("b")
    assert fairness.claim_next(a2, "w1") == a1  # nobody runs: the least recently active tenant, oldest job first
    assert fairness.claim_next(a3, "w2") == b1  # a runs one, b none: b's job although its message is a3's
    assert fairness.claim_next(b1, "w3") == a2
    assert _job(a1).lease_owner == "w1" and _job(b1).lease_owner == "w2"


def test_without_waiting_work_the_message_names_the_job(dsx_env) -> None:  # noqa: ANN001
    a1 = _create("a")
    _start(a1, "w1")
    assert fairness.claim_next(a1, "w2") == a1  # the pipeline then drops it as a duplicate delivery


def test_fair_scheduling_can_be_switched_off(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("DSX_FAIR_SCHEDULING", "false")
    reset_settings()
    a1, a2 = _create("a"), _create("a")
    _start(a1, "w1")
    _create("b")
    assert fairness.claim_next(a2, "w2") == a2
    assert not fairness.should_yield(a1)


def test_a_tenant_holding_more_workers_yields_to_a_waiting_one(dsx_env) -> None:  # noqa: ANN001
    a1 = _create("a")
    _start(a1, "w1")
    assert not fairness.should_yield(a1)  # nobody else waits
    b1 = _create("b")
    assert fairness.should_yield(a1)
    _start(b1, "w2")
    assert not fairness.should_yield(a1)  # one worker each: fair already
    assert fairness.yield_job(a1, "w1") == "queued"
    job = _job(a1)
    assert (job.status, job.lease_owner, job.deliveries) == ("queued", None, 0)


def test_a_yielded_job_resumes_where_it_stopped(dsx_env) -> None:  # noqa: ANN001
    parameters = ["Supply voltage", "Output current", "Quiescent current"]
    a1 = _create("a", parameters)
    b1 = _create("b")
    assert extraction.run(a1, owner="w1") == "queued"  # answered its first parameter, then made way for b
    assert _answered(a1) == 1
    assert extraction.run(b1, owner="w1") in ("done", "needs_review")
    assert extraction.run(a1, owner="w1") in ("done", "needs_review")
    job = _job(a1)
    assert _answered(a1) == len(parameters) and job.deliveries == 1


def _answered(job_id: str) -> int:
    with session_scope() as session:
        return int(session.scalar(select(func.count()).select_from(Extraction)
                                  .where(Extraction.job_id == job_id, Extraction.role == "primary")))


def test_a_yielding_job_hands_its_worker_straight_to_the_waiting_tenant(
        dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    a1 = _create("a", ["Supply voltage", "Output current", "Quiescent current"])
    b1 = _create("b")
    wakes = _recorded_wakes(monkeypatch)
    ran: list[tuple[str, str]] = []

    def runner(owner: str) -> Callable[[str], str]:
        def run(job_id: str) -> str:
            status = extraction.run(job_id, owner=owner)
            ran.append((job_id, status))
            return status
        return run

    assert fairness.run_fairly(a1, "w1", runner("w1")) in ("done", "needs_review")
    # One delivery: a's job made way after one parameter, and the same worker ran b's job at once.
    assert [job for job, _ in ran] == [a1, b1] and ran[0][1] == "queued"
    assert _answered(a1) == 1 and _job(a1).lease_owner is None
    assert wakes == []  # b's message, still in the broker, is the wake-up of a's job: one message per waiting job
    assert fairness.run_fairly(b1, "w2", runner("w2")) in ("done", "needs_review")
    assert _answered(a1) == 3


def test_of_two_workers_that_see_a_waiting_tenant_only_the_one_winning_its_job_makes_way(
        dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    a1, a2 = _create("a"), _create("a")
    _start(a1, "w1")
    _start(a2, "w2")
    b1 = _create("b")
    assert fairness.should_yield(a1) and fairness.should_yield(a2)  # both look before either acts
    wakes = _recorded_wakes(monkeypatch)
    with fairness.handing_off() as w2_next:
        assert fairness.make_way(a2, "w2")
    assert w2_next == [b1] and _job(b1).lease_owner == "w2" and _job(a2).status == "queued"
    # The sweeper's books: b1's wake-up, still in the broker, now stands for a2, the job waiting again.
    assert _job(a2).woken_at is not None and _job(b1).woken_at is None
    monkeypatch.setattr(fairness, "_standing", lambda job_id: ("a", 2, True))  # w1's look, taken before w2 acted
    with fairness.handing_off() as w1_next:
        assert not fairness.make_way(a1, "w1")
    assert w1_next == [] and _job(a1).lease_owner == "w1" and _job(a1).status == "running"
    assert wakes == []  # b's message wakes a worker for a2


def test_a_job_that_yields_without_a_hand_off_gets_a_wake_up(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(fairness, "MAX_HAND_OFFS", 0)
    a1 = _create("a", ["Supply voltage", "Output current"])
    _create("b")
    wakes = _recorded_wakes(monkeypatch)
    assert fairness.run_fairly(a1, "w1", lambda job_id: extraction.run(job_id, owner="w1")) == "queued"
    assert wakes == [a1]


def test_a_claim_that_lost_every_race_looks_again(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    a1, b1 = _create("a"), _create("b")
    _start(a1, "w2")  # at the first look only b's job waits
    real_acquire = leases.acquire

    def w2_swaps_a_for_b_first(session, job_id: str, owner: str) -> bool:  # noqa: ANN001
        if job_id == b1 and owner == "w1":
            monkeypatch.setattr(leases, "acquire", real_acquire)
            assert fairness.yield_job(a1, "w2") == "queued"
            with session_scope() as other:
                assert real_acquire(other, b1, "w2")
            return False
        return real_acquire(session, job_id, owner)

    monkeypatch.setattr(leases, "acquire", w2_swaps_a_for_b_first)
    _recorded_wakes(monkeypatch)
    assert fairness.claim_waiting("w1") == a1  # the job the winner released, not nothing


def _recorded_wakes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    wakes: list[str] = []
    monkeypatch.setattr(fairness, "wake", wakes.append)
    return wakes


def test_a_delivery_with_nothing_else_waiting_runs_one_job(dsx_env) -> None:  # noqa: ANN001
    a1 = _create("a")
    ran: list[str] = []
    assert fairness.run_fairly(a1, "w1", lambda job_id: ran.append(job_id) or "queued") == "queued"
    assert ran == [a1]
