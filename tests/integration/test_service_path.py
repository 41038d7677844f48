"""The one path every job takes, with real backing services: API → broker → worker process → database.

Runs twice: on production parts (Postgres + Redis + a separate Celery worker process) and on the embedded
default (SQLite + kombu's SQLAlchemy transport), with the same code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.config import reset_settings
from app.db import reset_engines, session_scope
from app.dispatch.models import SpanRecord
from app.tables.jobs import Extraction
from tests.support.paths import datasheet
from tests.support.processes import dsx_process, wait_until, worker_env
from tests.support.services import fresh_postgres_database, redis_url

pytestmark = pytest.mark.integration

TERMINAL = {"done", "needs_review", "failed", "cancelled"}


@pytest.fixture(params=["postgres+redis", "embedded"])
def stack(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    from app import migrate

    data_dir = tmp_path / "var"
    for key in [k for k in __import__("os").environ if k.startswith("DSX_") and not k.startswith("DSX_TEST_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("DSX_DATA_DIR", str(data_dir))
    if request.param == "postgres+redis":
        broker = redis_url()
        with fresh_postgres_database() as database:
            monkeypatch.setenv("DSX_DATABASE_URL", database)
            monkeypatch.setenv("DSX_BROKER_URL", broker)
            _flush_redis(broker)
            reset_settings()
            reset_engines()
            migrate.upgrade()
            yield {"env": worker_env(data_dir, database, broker), "data_dir": data_dir,
                   "headers": {"Authorization": f"Bearer {_submitter_key()}"}}
            reset_engines()
    else:
        reset_settings()
        reset_engines()
        migrate.upgrade()
        yield {"env": worker_env(data_dir), "data_dir": data_dir, "headers": {}}
        reset_engines()
    reset_settings()


def _submitter_key() -> str:
    """Production runs with API keys (it refuses to start open): issue one for the test."""
    from app.auth import keys as auth

    with session_scope() as session:
        return auth.create_key(session, tenant="integration", roles=["submitter"], name="integration").key


def _flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


def test_job_reaches_terminal_state_with_stored_results(stack: dict, tmp_path: Path) -> None:
    from app.main import create_app

    client = TestClient(create_app(), headers=stack["headers"])
    pdf = datasheet("speaker_amplifier")
    response = client.post(
        "/v1/jobs",
        files={"file": (pdf.name, pdf.read_bytes(), "application/pdf")},
        data={"parameters": json.dumps(["Operating supply voltage", {"name": "Quiescent current", "unit": "mA"}])},
    )
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]

    with dsx_process(["worker", "--pool", "solo"], stack["env"], tmp_path / "worker.log"):
        job = wait_until(
            lambda: (j := client.get(f"/v1/jobs/{job_id}").json())["status"] in TERMINAL and j,
            timeout_s=180, what="the job to finish",
        )
    assert job["status"] in {"done", "needs_review"}, (job, (tmp_path / "worker.log").read_text()[-3000:])
    assert [r["parameter"] for r in job["results"]] == ["Operating supply voltage", "Quiescent current"]
    supply = job["results"][0]
    assert supply["found"] is True
    assert supply["values"][0]["min"] == pytest.approx(4) and supply["values"][0]["max"] == pytest.approx(12)
    assert supply["source_page"] == 3

    with session_scope() as session:
        extractions = session.scalar(select(func.count()).select_from(Extraction).where(Extraction.job_id == job_id))
        spans = session.scalar(select(func.count()).select_from(SpanRecord).where(SpanRecord.job_id == job_id))
    assert extractions == 2
    assert spans > 4  # invoke_agent + chat turns + tool calls, per parameter
