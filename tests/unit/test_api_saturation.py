"""When every database connection is taken, the API answers 503 service_busy with Retry-After within the pool
timeout, instead of holding the request and failing later; and a job read costs the same number of queries
however many parameters the job has."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event

from app.config import reset_settings
from app.db import get_engine, reset_engines, session_scope
from app.jobs import service
from app.tables.jobs import Job
from tests.support.live import seed_flagged_extraction
from tests.support.pdfs import text_pdf


def test_a_saturated_pool_is_503_service_busy(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from app.main import create_app

    monkeypatch.setenv("DSX_DB_POOL_SIZE", "1")
    monkeypatch.setenv("DSX_DB_MAX_OVERFLOW", "0")
    monkeypatch.setenv("DSX_DB_POOL_TIMEOUT_S", "0.2")
    reset_settings()
    reset_engines()
    client = TestClient(create_app())
    with session_scope() as session:
        job, _ = service.create_job(session, data=text_pdf(["Gain 20 dB"]), filename="x.pdf",
                                    parameters=json.dumps(["Gain"]))
    assert client.get(f"/v1/jobs/{job.id}").status_code == 200

    with get_engine().connect():  # the only connection, held by someone else
        for path in (f"/v1/jobs/{job.id}", "/v1/jobs"):
            response = client.get(path)
            assert response.status_code == 503, response.text
            assert response.json()["code"] == "service_busy"
            assert response.headers["Retry-After"] == "1"

    assert client.get(f"/v1/jobs/{job.id}").status_code == 200  # and it recovers once the connection is back


def _queries_to_read(client: TestClient, job_id: str) -> int:
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:  # noqa: ANN001
        statements.append(statement)

    event.listen(get_engine(), "before_cursor_execute", count)
    try:
        response = client.get(f"/v1/jobs/{job_id}")
    finally:
        event.remove(get_engine(), "before_cursor_execute", count)
    assert response.status_code == 200, response.text
    return len(statements)


def test_a_job_read_costs_the_same_queries_for_1_or_12_parameters(dsx_env) -> None:  # noqa: ANN001
    from app.main import create_app

    client = TestClient(create_app())
    counts = {}
    for size in (1, 12):
        with session_scope() as session:
            job_id = seed_flagged_extraction(session, parameter="p0").job_id
            job = session.get(Job, job_id)
            for i in range(1, size):
                seed_flagged_extraction(session, parameter=f"p{i}", job=job)
        counts[size] = _queries_to_read(client, job_id)
    assert counts[1] == counts[12], counts


def test_a_job_without_answers_yet_is_read_in_two_queries(dsx_backend: str) -> None:
    from app.main import create_app

    with session_scope() as session:
        job, _ = service.create_job(session, data=text_pdf(["Gain 20 dB"]), filename="x.pdf",
                                    parameters=json.dumps([f"p{i}" for i in range(12)]))
    # the job with its parameters, its answers (none yet): nothing that hangs off an answer is looked up
    assert _queries_to_read(TestClient(create_app()), job.id) == 2
