"""What one job submission costs the database: one connection and one transaction, the PDF's bytes written once
per document (inside that transaction when they live in the database), and no read of answers a job just made
cannot have; on SQLite and on PostgreSQL alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event

from app.config import reset_settings
from app.db import get_engine, reset_engines, session_scope
from app.jobs import service
from tests.support.jobs_api import post, stored_blobs, stored_rows
from tests.support.pdfs import text_pdf

PDF = text_pdf(["Supply voltage VDD 2.7 5.5 V"])


@dataclass
class Traffic:
    checkouts: int = 0
    commits: int = 0
    statements: list[str] = field(default_factory=list)

    def touching(self, table: str) -> list[str]:
        return [s for s in self.statements if f" {table} " in f" {s} " or f" {table}(" in s]


@contextmanager
def database_traffic() -> Iterator[Traffic]:
    engine = get_engine()
    traffic = Traffic()

    def checkout(*_args: object) -> None:
        traffic.checkouts += 1

    def commit(*_args: object) -> None:
        traffic.commits += 1

    def statement(_conn, _cursor, text: str, *_args: object) -> None:  # noqa: ANN001
        traffic.statements.append(" ".join(text.split()))

    listeners = [(engine.pool, "checkout", checkout), (engine, "commit", commit),
                 (engine, "before_cursor_execute", statement)]
    for target, name, listener in listeners:
        event.listen(target, name, listener)
    try:
        yield traffic
    finally:
        for target, name, listener in listeners:
            event.remove(target, name, listener)


@pytest.fixture
def database_blobs(dsx_backend: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The backend with the PDFs in the database too (the production default on PostgreSQL)."""
    monkeypatch.setenv("DSX_BLOB_STORE", "database")
    reset_settings()
    reset_engines()
    return dsx_backend


def test_a_submission_is_one_transaction_and_a_known_pdf_is_not_stored_again(database_blobs: str) -> None:
    from app.main import create_app

    client = TestClient(create_app())
    with database_traffic() as first:
        assert post(client, PDF, ["Supply voltage", "Gain"]).status_code == 202
    with database_traffic() as again:
        response = post(client, PDF, ["Supply voltage", "Gain", "Quiescent current"])
    assert response.status_code == 202, response.text
    body = response.json()
    assert [r["parameter"] for r in body["results"]] == ["Supply voltage", "Gain", "Quiescent current"]
    assert all(r["status"] == "pending" and not r["found"] for r in body["results"])

    for traffic in (first, again):
        assert (traffic.checkouts, traffic.commits) == (1, 1), traffic
        assert traffic.touching("extractions") == []  # a job made just now has no answers to read
    if database_blobs == "postgres":  # (SQLite has no round trips to save)
        # A new PDF: the single statement below finds no admitted blob and writes nothing; once the PDF is checked
        # and stored, every parameter is still written in one statement.
        assert len([s for s in first.touching("job_parameters") if s.startswith("INSERT")]) == 1, first
        # A known PDF: its lookup, the job and every parameter are one statement, the only one of the submission.
        assert len(again.statements) == 1 and again.statements[0].startswith("WITH new_job AS"), again
    assert len(first.touching("blob_contents")) == 1
    assert again.touching("blob_contents") == [] and not [s for s in again.statements if "INSERT INTO blobs" in s]
    assert stored_rows() == (2, 5, 1) and len(stored_blobs()) == 1


def test_the_bytes_of_a_new_pdf_commit_with_its_job_or_not_at_all(database_blobs: str) -> None:
    with session_scope() as session:
        service.create_job(session, data=PDF, filename="x.pdf", parameters=json.dumps(["Gain"]))
        session.rollback()  # the request failed after the job was written (say, its transaction did)
    assert stored_rows() == (0, 0, 0) and stored_blobs() == []

    with session_scope() as session:
        service.create_job(session, data=PDF, filename="x.pdf", parameters=json.dumps(["Gain"]))
    assert stored_rows() == (1, 1, 1) and len(stored_blobs()) == 1


def test_the_upload_quota_is_charged_off_the_event_loop_and_a_refusal_stores_nothing(
        dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    import asyncio

    from app.api import jobs as routes
    from app.auth import keys as auth
    from app.auth.ratelimit import RateLimited
    from app.main import create_app

    monkeypatch.setenv("DSX_AUTH_MODE", "keys")
    reset_settings()
    with session_scope() as session:
        key = auth.create_key(session, tenant="acme", roles=["submitter"], name="ci").key
    charged_on_the_loop: list[bool] = []

    def refusing_charge(tenant: str, size_bytes: int) -> None:
        try:
            asyncio.get_running_loop()
            charged_on_the_loop.append(True)  # a Redis round trip here would stall every request the loop serves
        except RuntimeError:
            charged_on_the_loop.append(False)
        raise RateLimited(f"{tenant} is over its quota.", code="upload_quota_exceeded", retry_after=60)

    monkeypatch.setattr(routes, "charge_upload", refusing_charge)
    response = post(TestClient(create_app()), PDF, headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 429 and response.json()["code"] == "upload_quota_exceeded"
    assert charged_on_the_loop == [False]
    assert stored_rows() == (0, 0, 0) and stored_blobs() == []


def _rows(job_id: str) -> tuple[dict, list[dict]]:
    from sqlalchemy import select

    from app.tables.jobs import Job, JobParameter

    with session_scope() as session:
        job = session.execute(select(Job.__table__).where(Job.id == job_id)).mappings().one()
        parameters = session.execute(select(JobParameter.__table__).where(JobParameter.job_id == job_id)
                                     .order_by(JobParameter.position)).mappings().all()
    skip = {"id", "job_id", "created_at", "updated_at", "woken_at"}
    return ({k: v for k, v in job.items() if k not in skip},
            [{k: v for k, v in row.items() if k not in skip} for row in parameters])


def test_a_known_pdfs_job_written_in_one_statement_is_the_job_the_unit_of_work_writes(dsx_backend: str) -> None:
    parameters = json.dumps(["Gain", {"name": "Offset", "unit": "mV", "conditions": ["TA = 25 C"], "notes": "max"}])
    with session_scope() as session:  # a new PDF: checked, stored, and its job written by the unit of work
        first, created = service.create_job(session, data=PDF, filename="a.pdf", parameters=parameters,
                                            idempotency_key="k1", tenant="acme")
        first_id = first.id
    with session_scope() as session:  # a known one: in one statement on PostgreSQL
        again, created = service.create_job(session, data=PDF, filename="a.pdf", parameters=parameters,
                                            idempotency_key="k2", tenant="acme")
        assert created and again in session and [p.name for p in again.parameters] == ["Gain", "Offset"]
        assert again.parameters[1].conditions == ["TA = 25 C"] and again.deliveries == 0
        assert again.created_at is not None and again.parameters[0].job is again
        again_id = again.id
        again.filename = "renamed.pdf"  # the returned rows are the session's: a change is flushed as usual
    (job_a, params_a), (job_b, params_b) = _rows(first_id), _rows(again_id)
    assert {**job_a, "idempotency_key": "k2", "filename": "renamed.pdf"} == job_b
    assert params_a == params_b and [p["status"] for p in params_b] == ["pending", "pending"]

    with session_scope() as session:  # the key replays the job the single statement wrote
        replay, created = service.create_job(session, data=PDF, filename="a.pdf", parameters=parameters,
                                             idempotency_key="k2", tenant="acme")
        assert not created and replay.id == again_id
    assert stored_rows()[:2] == (2, 4)


def test_a_known_pdf_over_tightened_page_limits_is_checked_again(dsx_backend: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from app.errors import InvalidPdf

    with session_scope() as session:
        service.create_job(session, data=PDF, filename="a.pdf", parameters=json.dumps(["Gain"]))
    monkeypatch.setenv("DSX_MAX_PAGES", "0")
    reset_settings()
    with pytest.raises(InvalidPdf), session_scope() as session:
        service.create_job(session, data=PDF, filename="a.pdf", parameters=json.dumps(["Gain"]))
    assert stored_rows()[:2] == (1, 1)
