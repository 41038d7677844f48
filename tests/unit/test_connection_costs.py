"""What the database costs a request besides its own statements: a status read opens no transaction on
PostgreSQL (at READ COMMITTED a transaction holds no snapshot across statements, so BEGIN and COMMIT bought
nothing) and reads the same as before; a pooled connection is pinged only when it sat idle, and one the server
closed is never handed out, idle or not."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app import db
from app.db import get_engine, read_scope, session_scope
from app.jobs import service
from tests.support.pdfs import text_pdf


@pytest.fixture
def postgres(dsx_env, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:  # noqa: ANN001
    from tests.support.services import embedded_on_postgres

    with embedded_on_postgres(monkeypatch) as url:
        yield url


def _backend_pid() -> int:
    with get_engine().connect() as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(pid: int) -> None:
    url = get_engine().url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # the server has closed its end once the backend is gone
            if not other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
                return
            time.sleep(0.02)


def test_a_status_read_opens_no_transaction_on_postgres_and_reads_the_same(postgres: str) -> None:
    from app.main import create_app

    with session_scope() as session:
        job, _ = service.create_job(
            session,
            data=text_pdf(["Gain 20 dB"]),
            filename="x.pdf",
            parameters=json.dumps(["Gain", {"name": "Offset", "unit": "mV"}]),
        )
    with read_scope() as session:
        service.read_job_row(session, job.id)
        status = session.connection().connection.dbapi_connection.info.transaction_status
        assert status == psycopg.pq.TransactionStatus.IDLE  # no transaction left open between statements
    with session_scope() as session:  # a writing unit of work still has its transaction
        session.execute(text("SELECT 1"))
        status = session.connection().connection.dbapi_connection.info.transaction_status
        assert status == psycopg.pq.TransactionStatus.INTRANS

    body = TestClient(create_app()).get(f"/v1/jobs/{job.id}").json()
    assert [p["name"] for p in body["parameters"]] == ["Gain", "Offset"]
    assert [r["parameter"] for r in body["results"]] == ["Gain", "Offset"]
    assert body["parameters"][1]["unit"] == "mV" and body["status"] == "queued"
    with session_scope() as session:  # and a pooled connection goes back to writing in a transaction
        session.execute(text("SELECT 1"))
        assert session.connection().connection.dbapi_connection.autocommit is False


def test_a_read_of_an_unknown_job_or_another_tenants_is_not_found(postgres: str) -> None:
    from app.errors import NotFound

    with session_scope() as session:
        job, _ = service.create_job(
            session, data=text_pdf(["Gain 20 dB"]), filename="x.pdf", parameters=json.dumps(["Gain"]), tenant="acme"
        )
    with read_scope() as session, pytest.raises(NotFound):
        service.read_job_row(session, job.id, tenant="other")
    with read_scope() as session, pytest.raises(NotFound):
        service.read_job_row(session, "nope")


def test_a_connection_used_just_now_is_not_pinged_and_an_idle_one_is(
    postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings: list[object] = []
    dialect = get_engine().dialect
    real_ping = dialect.do_ping
    monkeypatch.setattr(dialect, "do_ping", lambda connection: pings.append(connection) or real_ping(connection))
    pid = _backend_pid()
    for _ in range(5):
        assert _backend_pid() == pid
    assert pings == []  # each checkout came within the bypass window of the last use

    monkeypatch.setattr(db, "PING_BYPASS_S", 0.0)
    assert _backend_pid() == pid and len(pings) == 1


def test_a_connection_the_server_closed_is_replaced_within_the_bypass_window(
    postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "PING_BYPASS_S", 3600.0)  # never pinged: only the socket can tell
    pid = _backend_pid()
    _terminate(pid)
    assert _backend_pid() != pid  # handed a new connection, and the request did not fail


def test_a_dead_idle_connection_fails_its_ping_and_is_replaced(postgres: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pid = _backend_pid()
    _terminate(pid)
    monkeypatch.setattr(db, "PING_BYPASS_S", 0.0)
    monkeypatch.setattr(db, "_server_closed", lambda _connection: False)  # as if the close had not arrived yet
    assert _backend_pid() != pid
