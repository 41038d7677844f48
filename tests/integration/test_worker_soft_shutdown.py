"""A deploy stops a worker with SIGTERM while it waits on the model: the job it is running still finishes, once.

Real parts: PostgreSQL, a private Redis broker, a ``dsx worker`` process configured as the Kubernetes bundle
configures it (Celery's soft shutdown, SIGTERM remapped to the cold shutdown that honours it), LiteLLM calling a
scripted server whose replies are slow.
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

from app.config import reset_settings
from app.db import reset_engines, session_scope
from app.jobs import service
from app.jobs.queue import enqueue
from tests.support.paths import REPO_ROOT
from tests.support.pdfs import text_pdf
from tests.support.processes import dsx_process, wait_until, worker_env
from tests.support.scripted_llm import Behaviour, ScriptedLLM, submit, tool_call
from tests.support.services import fresh_postgres_database
from tests.support.throwaway import redis_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROWS = {"Supply voltage": ("Supply voltage VDD 2.7 5.5 V", {"min": 2.7, "max": 5.5, "unit": "V"}),
        "Output current": ("Output current IOUT 20 mA", {"max": 20, "unit": "mA"})}
REPLY_DELAY_S = 1.5
_REQUEST = re.compile(r"<parameter_request>(.*?)</parameter_request>", re.S)


def parameter_of(body: dict[str, Any]) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return json.loads(_REQUEST.search(user).group(1))["name"]


def slow(body: dict[str, Any]) -> Behaviour:
    name = parameter_of(body)
    if not any(m["role"] == "tool" for m in body["messages"]):
        return tool_call("search_text", {"query": name}, delay_s=REPLY_DELAY_S)
    quote, value = ROWS[name]
    return submit({"found": True, "values": [value], "source_page": 1, "quote": quote, "confidence": 0.9},
                  delay_s=REPLY_DELAY_S)


def bundle_worker_environment() -> dict[str, str]:
    """The worker container's own environment in the Kubernetes bundle (beside the ConfigMap)."""
    worker = yaml.safe_load((REPO_ROOT / "deploy" / "k8s" / "worker.yaml").read_text())
    (container,) = worker["spec"]["template"]["spec"]["containers"]
    return {item["name"]: item["value"] for item in container.get("env", [])}


@pytest.fixture
def stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    from app import migrate

    for key in [k for k in os.environ if k.startswith("DSX_") and not k.startswith("DSX_TEST_")]:
        monkeypatch.delenv(key)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    with ScriptedLLM() as llm, redis_server() as redis, fresh_postgres_database() as database:
        llm.always(slow)
        models_file = tmp_path / "models.yaml"
        models_file.write_text(yaml.safe_dump({"model_list": [llm.models_file_entry("scripted")]}))
        settings = {"DSX_DATA_DIR": str(tmp_path / "var"), "DSX_DATABASE_URL": database,
                    "DSX_BROKER_URL": redis.url, "DSX_MODELS_FILE": str(models_file), "DSX_MODEL": "scripted",
                    "DSX_CROSS_CHECK_MODEL": "", "DSX_WORKER_SOFT_SHUTDOWN_S": "60"}
        for key, value in settings.items():
            monkeypatch.setenv(key, value)
        reset_settings()
        reset_engines()
        migrate.upgrade()
        env = worker_env(tmp_path / "var", database, redis.url)
        env.update(settings)
        env.update(bundle_worker_environment())
        yield {"env": env, "llm": llm}
        reset_engines()
    reset_settings()


def test_sigterm_lets_the_running_job_finish(stack: dict, tmp_path: Path) -> None:
    llm: ScriptedLLM = stack["llm"]
    pdf = text_pdf(["Electrical characteristics\n" + "\n".join(quote for quote, _ in ROWS.values())])
    with session_scope() as session:
        job, _ = service.create_job(session, data=pdf, filename="part.pdf", parameters=json.dumps(list(ROWS)),
                                    engine="agentic")
        job_id = job.id
    enqueue(job_id)
    log_path = tmp_path / "worker.log"
    with dsx_process(["worker", "--concurrency", "1"], stack["env"], log_path) as worker:
        wait_until(lambda: llm.requests, timeout_s=120, interval_s=0.1, what="the first model call")
        os.kill(worker.pid, signal.SIGTERM)  # what the kubelet sends to the container's main process
        worker.wait(timeout=120)
    with session_scope() as session:
        job = service.get_job(session, job_id)
        assert job.status == "done", (job.status, log_path.read_text(errors="replace")[-3000:])
        assert job.deliveries == 1
    assert Counter(parameter_of(r.body) for r in llm.requests) == dict.fromkeys(ROWS, 2)
