"""Redis and PostgreSQL restarted while jobs run: the API answers 503 with Retry-After meanwhile, recovers by
itself, and every job it accepted finishes (none lost, none doubled).

The stack is the production shape on loopback: uvicorn and a Celery worker as processes, a private PostgreSQL
cluster and a private Redis (no persistence: a restart forgets every queued message, the worst case), the
agent calling a scripted model. Lost broker messages are recovered by the worker's sweeper from the job rows;
leases and the sweeper run on a seconds scale here.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import func, select

from app.tables.jobs import Extraction, Job
from tests.support.live import LiveServer, live_server
from tests.support.pdfs import text_pdf
from tests.support.processes import wait_until
from tests.support.scripted_llm import Behaviour, ScriptedLLM, submit, tool_call
from tests.support.throwaway import postgres_cluster, redis_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROW = "Supply voltage VDD 2.7 5.5 V"
ANSWER = {"found": True, "values": [{"min": 2.7, "max": 5.5, "unit": "V"}], "source_page": 1, "quote": ROW,
          "confidence": 0.9}
REPLY_DELAY_S = 1.0  # long enough for the database to go away in the middle of a job
TERMINAL = {"done", "needs_review", "failed", "cancelled"}


def diligent(body: dict[str, Any]) -> Behaviour:
    if not any(m["role"] == "tool" for m in body["messages"]):
        return tool_call("search_text", {"query": "supply voltage"}, delay_s=REPLY_DELAY_S)
    return submit(ANSWER, delay_s=REPLY_DELAY_S)


@pytest.fixture
def stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    for key in [k for k in os.environ if k.startswith("DSX_") and not k.startswith("DSX_TEST_")]:
        monkeypatch.delenv(key)
    with ScriptedLLM() as llm, postgres_cluster() as postgres, redis_server() as redis:
        llm.always(diligent)
        models_file = tmp_path / "models.yaml"
        models_file.write_text(yaml.safe_dump({"model_list": [llm.models_file_entry("scripted")]}))
        env = {
            "DSX_DATABASE_URL": postgres.url, "DSX_BROKER_URL": redis.url, "DSX_MODELS_FILE": str(models_file),
            "DSX_MODEL": "scripted", "DSX_CROSS_CHECK_MODEL": "", "DSX_AUTH_MODE": "open",
            "DSX_ALLOW_OPEN_IN_PRODUCTION": "true", "DSX_JOB_LEASE_S": "4", "DSX_REQUEUE_AFTER_S": "3",
            "DSX_SWEEP_INTERVAL_S": "1", "DSX_MAX_DELIVERIES": "6",
        }
        with live_server(tmp_path, worker=True, env=env) as server:
            yield {"server": server, "postgres": postgres, "redis": redis, "llm": llm}


@functools.cache
def datasheet(name: str) -> bytes:
    """One file per name: a retried upload must send the very same bytes."""
    return text_pdf([f"{name}\nElectrical characteristics\n{ROW}"])


def post_job(server: LiveServer, name: str, key: str) -> httpx.Response:
    pdf = datasheet(name)
    return httpx.post(f"{server.base_url}/v1/jobs", timeout=30, headers={"Idempotency-Key": key},
                      files={"file": (f"{name}.pdf", pdf, "application/pdf")},
                      data={"parameters": json.dumps(["Supply voltage"]), "engine": "agentic"})


def assert_unavailable(response: httpx.Response, code: str) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["code"] == code
    assert int(response.headers["Retry-After"]) > 0


def get(server: LiveServer, path: str) -> httpx.Response:
    return httpx.get(f"{server.base_url}{path}", timeout=30)


def test_redis_and_postgres_restarts_lose_no_job(stack: dict[str, Any]) -> None:
    server: LiveServer = stack["server"]
    accepted: list[str] = []
    for i in range(4):
        response = post_job(server, f"part-{i}", f"key-{i}")
        assert response.status_code == 202, response.text
        accepted.append(response.json()["job_id"])

    # --- the broker goes away (and comes back empty) -------------------------------------------------------
    stack["redis"].stop()
    ready = get(server, "/readyz")
    assert ready.status_code == 503 and int(ready.headers["Retry-After"]) > 0
    assert ready.json()["checks"]["broker"].startswith("error")
    during = post_job(server, "part-during-redis", "key-during-redis")
    assert_unavailable(during, "broker_unavailable")
    assert get(server, f"/v1/jobs/{accepted[0]}").status_code == 200  # reads do not need the broker
    stack["redis"].start()
    wait_until(lambda: get(server, "/readyz").status_code == 200, timeout_s=60, what="readiness after Redis")
    # The client retries with the same Idempotency-Key: the job stored before the 503 is the one returned.
    retried = post_job(server, "part-during-redis", "key-during-redis")
    assert retried.status_code in (200, 202), retried.text
    accepted.append(retried.json()["job_id"])

    # --- the database goes away ---------------------------------------------------------------------------
    wait_until(lambda: _any_status(server, accepted, {"running"}), timeout_s=120, interval_s=0.2,
               what="a worker to be in the middle of a job")
    stack["postgres"].stop("fast")
    assert_unavailable(get(server, f"/v1/jobs/{accepted[0]}"), "database_unavailable")
    assert_unavailable(get(server, "/v1/jobs"), "database_unavailable")
    assert_unavailable(post_job(server, "part-during-postgres", "key-during-postgres"), "database_unavailable")
    assert get(server, "/readyz").status_code == 503
    stack["postgres"].start()
    wait_until(lambda: get(server, f"/v1/jobs/{accepted[0]}").status_code == 200, timeout_s=60,
               what="the API to recover after PostgreSQL")
    late = post_job(server, "part-during-postgres", "key-during-postgres")
    assert late.status_code == 202, late.text
    accepted.append(late.json()["job_id"])

    # --- every accepted job finishes, once ---------------------------------------------------------------
    wait_until(lambda: all(get(server, f"/v1/jobs/{j}").json()["status"] in TERMINAL for j in accepted),
               timeout_s=240, interval_s=1, what="every accepted job to finish")
    jobs = {j: get(server, f"/v1/jobs/{j}").json() for j in accepted}
    assert {j["status"] for j in jobs.values()} == {"done"}, {k: (v["status"], v["failure_code"])
                                                            for k, v in jobs.items()}
    assert all(j["results"][0]["values"][0]["max"] == 5.5 for j in jobs.values())
    with server.session() as session:
        assert session.scalar(select(func.count()).select_from(Job)) == len(set(accepted))
        per_job = dict(session.execute(select(Extraction.job_id, func.count()).group_by(Extraction.job_id)).all())
    assert per_job == dict.fromkeys(accepted, 1)


def _any_status(server: LiveServer, job_ids: list[str], statuses: set[str]) -> bool:
    return any(get(server, f"/v1/jobs/{j}").json()["status"] in statuses for j in job_ids)
