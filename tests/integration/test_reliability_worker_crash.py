"""A worker SIGKILLed in the middle of a job: after a new worker starts, the job finishes exactly once.

Real parts: PostgreSQL, a private Redis broker, Celery worker processes running ``dsx worker``, LiteLLM calling
a scripted OpenAI-compatible server on loopback. Leases and the sweeper are set to seconds so the takeover is
quick. What "exactly once" means here, checked on the stored rows:

* one primary extraction per parameter, and the parameter answered before the crash was not asked again
  (its paid model calls happened once);
* the dispatch record holds one ``invoke_agent`` run per parameter and no span outside those runs;
* the job was delivered twice and ended done.
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import func, select

from app.config import reset_settings
from app.db import reset_engines, session_scope
from app.dispatch import semconv as sc
from app.dispatch.models import SpanRecord
from app.jobs import service
from app.jobs.queue import enqueue
from app.tables.jobs import Extraction, Job
from tests.support.pdfs import text_pdf
from tests.support.processes import dsx_process, wait_until, worker_env
from tests.support.scripted_llm import Behaviour, ScriptedLLM, submit, tool_call
from tests.support.services import fresh_postgres_database
from tests.support.throwaway import redis_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROWS = {
    "Supply voltage": ("Supply voltage VDD 2.7 5.5 V", {"min": 2.7, "max": 5.5, "unit": "V"}),
    "Quiescent current": ("Quiescent current IQ 85 120 uA", {"typical": 85, "max": 120, "unit": "uA"}),
    "Output current": ("Output current IOUT 20 mA", {"max": 20, "unit": "mA"}),
}
PARAMETERS = list(ROWS)
REPLY_DELAY_S = 2.5  # every model reply takes this long: the worker is inside a paid call when it is killed
_REQUEST = re.compile(r"<parameter_request>(.*?)</parameter_request>", re.S)

# Shorter than one model reply: only the heartbeat keeps the live worker's lease, and only its death ends it.
FAST_TAKEOVER = {"DSX_JOB_LEASE_S": "2", "DSX_REQUEUE_AFTER_S": "2", "DSX_SWEEP_INTERVAL_S": "1"}


def parameter_of(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return json.loads(_REQUEST.search(user).group(1))["name"]


def diligent(body: dict[str, Any]) -> Behaviour:
    """Search for the parameter, then submit the row it found (what a careful model does)."""
    name = parameter_of(body)
    if not any(m["role"] == "tool" for m in body["messages"]):
        return tool_call("search_text", {"query": name}, delay_s=REPLY_DELAY_S)
    quote, value = ROWS[name]
    return submit({"found": True, "values": [value], "source_page": 1, "quote": quote, "confidence": 0.9},
                  delay_s=REPLY_DELAY_S)


@pytest.fixture
def stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    from app import migrate

    for key in [k for k in os.environ if k.startswith("DSX_") and not k.startswith("DSX_TEST_")]:
        monkeypatch.delenv(key)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    data_dir = tmp_path / "var"
    with ScriptedLLM() as llm, redis_server() as redis, fresh_postgres_database() as database:
        llm.always(diligent)
        models_file = tmp_path / "models.yaml"
        models_file.write_text(yaml.safe_dump({"model_list": [llm.models_file_entry("scripted")]}))
        settings = {"DSX_DATA_DIR": str(data_dir), "DSX_DATABASE_URL": database, "DSX_BROKER_URL": redis.url,
                    "DSX_MODELS_FILE": str(models_file), "DSX_MODEL": "scripted", "DSX_CROSS_CHECK_MODEL": "",
                    **FAST_TAKEOVER}
        for key, value in settings.items():
            monkeypatch.setenv(key, value)
        reset_settings()
        reset_engines()
        migrate.upgrade()
        env = worker_env(data_dir, database, redis.url)
        env.update({k: v for k, v in settings.items() if k not in env})
        yield {"env": env, "llm": llm}
        reset_engines()
    reset_settings()


def test_a_worker_killed_mid_job_is_taken_over_and_the_job_finishes_exactly_once(stack: dict, tmp_path: Path) -> None:
    llm: ScriptedLLM = stack["llm"]
    pdf = text_pdf(["Electrical characteristics\n" + "\n".join(quote for quote, _ in ROWS.values())])
    with session_scope() as session:
        job, _ = service.create_job(session, data=pdf, filename="part.pdf", parameters=json.dumps(PARAMETERS),
                                    engine="agentic")
        job_id = job.id
    enqueue(job_id)

    asked = lambda: Counter(parameter_of(r.body) for r in list(llm.requests))  # noqa: E731
    with dsx_process(["worker", "--pool", "solo"], stack["env"], tmp_path / "worker-1.log") as first:
        # Parameter 1 is answered and stored; the worker is waiting on the model for parameter 2.
        wait_until(lambda: asked()[PARAMETERS[1]] >= 1, timeout_s=120, interval_s=0.1,
                   what="the worker to reach the second parameter")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
    with session_scope() as session:
        crashed = service.get_job(session, job_id)
        assert crashed.status == "running" and crashed.deliveries == 1
        assert _extractions(session, job_id) == {PARAMETERS[0]: 1}

    with dsx_process(["worker", "--pool", "solo"], stack["env"], tmp_path / "worker-2.log"):
        wait_until(lambda: _status(job_id) in ("done", "needs_review", "failed"), timeout_s=180,
                   what="the job to finish after the takeover")
    log = (tmp_path / "worker-2.log").read_text(errors="replace")[-3000:]

    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job.status == "done", (job.status, job.failure_code, job.failure_detail, log)
        assert job.deliveries == 2 and job.lease_owner is None
        assert _extractions(session, job_id) == dict.fromkeys(PARAMETERS, 1)
        extractions = list(session.scalars(select(Extraction).where(Extraction.job_id == job_id)))
        traces = {e.trace_id for e in extractions}
        spans = list(session.scalars(select(SpanRecord).where(SpanRecord.job_id == job_id)))
        duplicates = session.execute(
            select(SpanRecord.trace_id, SpanRecord.span_id, func.count()).where(SpanRecord.job_id == job_id)
            .group_by(SpanRecord.trace_id, SpanRecord.span_id).having(func.count() > 1)).all()
    assert duplicates == []
    roots = Counter(s.parameter_id for s in spans if s.name == sc.SPAN_INVOKE_AGENT)
    assert sorted(roots.values()) == [1, 1, 1] and set(roots) == {e.parameter_id for e in extractions}
    assert {s.trace_id for s in spans} == traces  # nothing left over from the killed run
    # The answered parameter was not asked again; the interrupted one was asked once more from the start.
    assert asked() == {PARAMETERS[0]: 2, PARAMETERS[1]: 3, PARAMETERS[2]: 2}


def _status(job_id: str) -> str:
    with session_scope() as session:
        return session.scalar(select(Job.status).where(Job.id == job_id))


def _extractions(session, job_id: str) -> dict[str, int]:  # noqa: ANN001
    rows = session.scalars(select(Extraction).where(Extraction.job_id == job_id, Extraction.role == "primary"))
    job = service.get_job(session, job_id)
    names = {p.id: p.name for p in job.parameters}
    return dict(Counter(names[r.parameter_id] for r in rows))
