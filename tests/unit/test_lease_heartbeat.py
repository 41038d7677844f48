"""A job whose every model call outlasts its lease is never taken over: the heartbeat keeps the lease while the
worker waits on the model, so the sweeper and a second delivery leave it alone, and no paid call is repeated."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from app.config import reset_settings
from app.db import session_scope
from app.flows import extraction
from app.jobs import heartbeat, leases, service, sweeper
from app.tables.jobs import Job
from app.timeutil import utcnow
from tests.support.jobs import use_scripted_model
from tests.support.pdfs import text_pdf
from tests.support.processes import wait_until
from tests.support.scripted_llm import Behaviour, ScriptedLLM, submit, tool_call

# The heartbeat renews every second; a renewal may wait on SQLite's write lock on a loaded machine, so the lease
# leaves two renewals of slack. Every model reply takes longer than the whole lease.
LEASE_S = 3.0
CALL_S = 4.0
ROWS = {"Supply voltage": ("Supply voltage VDD 2.7 5.5 V", {"min": 2.7, "max": 5.5, "unit": "V"}),
        "Output current": ("Output current IOUT 20 mA", {"max": 20, "unit": "mA"})}
_REQUEST = re.compile(r"<parameter_request>(.*?)</parameter_request>", re.S)


def parameter_of(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return json.loads(_REQUEST.search(user).group(1))["name"]


def slow_and_diligent(body: dict[str, Any]) -> Behaviour:
    name = parameter_of(body)
    if not any(m["role"] == "tool" for m in body["messages"]):
        return tool_call("search_text", {"query": name}, delay_s=CALL_S)
    quote, value = ROWS[name]
    return submit({"found": True, "values": [value], "source_page": 1, "quote": quote, "confidence": 0.9},
                  delay_s=CALL_S)


@pytest.fixture
def short_lease(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("DSX_JOB_LEASE_S", str(LEASE_S))
    monkeypatch.setenv("DSX_REQUEUE_AFTER_S", "0.5")
    reset_settings()


def _create(parameters: list[str], tenant: str = "default") -> str:
    pdf = text_pdf(["Electrical characteristics\n" + "\n".join(quote for quote, _ in ROWS.values())])
    with session_scope() as session:
        job, _ = service.create_job(session, data=pdf, filename="x.pdf", parameters=json.dumps(parameters),
                                    engine="agentic", tenant=tenant)
        return job.id


def _job(job_id: str) -> Job:
    with session_scope() as session:
        return service.get_job(session, job_id)


def test_calls_longer_than_the_lease_finish_once_without_takeover(
        short_lease: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        llm.always(slow_and_diligent)
        use_scripted_model(monkeypatch, llm, tmp_path)
        monkeypatch.setenv("DSX_JOB_LEASE_S", str(LEASE_S))
        reset_settings()
        job_id = _create(list(ROWS))
        outcome: dict[str, str] = {}
        first = threading.Thread(target=lambda: outcome.update(status=extraction.run(job_id, owner="worker-a")))
        first.start()
        wait_until(lambda: llm.requests, timeout_s=30, interval_s=0.05, what="the first model call")
        requeued: list[str] = []
        second_deliveries: list[str] = []
        # While worker-a waits on calls that each outlast the lease, the sweeper and a second worker keep trying.
        while first.is_alive():
            requeued += sweeper.sweep()
            second_deliveries.append(extraction.run(job_id, owner="worker-b"))
            time.sleep(0.2)
        first.join()

    job = _job(job_id)
    assert outcome["status"] == job.status == "done", (job.failure_code, job.failure_detail)
    assert job.deliveries == 1 and job.lease_owner is None
    assert requeued == [] and set(second_deliveries) <= {"running"}, second_deliveries
    # Two calls per parameter (search, then submit), none repeated.
    assert Counter(parameter_of(r.body) for r in llm.requests) == dict.fromkeys(ROWS, 2)
    assert max(r.received_at for r in llm.requests) - min(r.received_at for r in llm.requests) > 2 * LEASE_S
    assert not [t for t in threading.enumerate() if t.name.startswith("dsx-lease-")]


def test_heartbeat_renews_only_a_lease_it_holds_and_reports_a_takeover(short_lease: None) -> None:
    job_id = _create(["Supply voltage"])
    with session_scope() as session:
        assert leases.acquire(session, job_id, "worker-a")
    with heartbeat.renewing(job_id, "worker-a") as lost:
        first_expiry = _job(job_id).lease_expires_at
        wait_until(lambda: _job(job_id).lease_expires_at > first_expiry, timeout_s=10, interval_s=0.05,
                   what="a renewal")
        # Another worker takes the lease over (as after a long database outage): the heartbeat notices.
        with session_scope() as session:
            session.execute(update(Job).where(Job.id == job_id).values(
                lease_owner="worker-b", lease_expires_at=utcnow() + timedelta(minutes=5)))
        wait_until(lost.is_set, timeout_s=10, interval_s=0.05, what="the takeover to be noticed")
    job = _job(job_id)
    assert job.lease_owner == "worker-b"  # the heartbeat never renewed someone else's lease
    assert not [t for t in threading.enumerate() if t.name.startswith("dsx-lease-")]


def test_a_dead_holders_lease_lapses_and_the_sweeper_requeues_the_job(short_lease: None) -> None:
    job_id = _create(["Supply voltage"])
    with session_scope() as session:
        assert leases.acquire(session, job_id, "worker-a")
        session.execute(update(Job).where(Job.id == job_id).values(status="running"))
    # Nothing renews: worker-a is gone. Within the lease plus requeue_after_s the sweeper sends it again.
    requeued = wait_until(lambda: sweeper.sweep(), timeout_s=LEASE_S + 10, interval_s=0.2,
                          what="the sweeper to requeue the job")
    assert requeued == [job_id]
