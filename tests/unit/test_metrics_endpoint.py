"""GET /metrics: the exposition, the queue gauges read from the jobs table, and worker-side samples reaching
the API through the shared multiprocess directory."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.config import environment_for_children, reset_settings
from app.db import session_scope
from app.tables.jobs import Job
from app.timeutil import utcnow
from tests.support.paths import REPO_ROOT
from tests.support.pdfs import text_pdf

PDF = text_pdf(["Supply voltage VDD 2.7 5.5 V"])


@pytest.fixture
def client(dsx_env) -> TestClient:  # noqa: ANN001
    from app.main import create_app

    return TestClient(create_app())


def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def submit(client: TestClient) -> str:
    response = client.post("/v1/jobs", files={"file": ("ds.pdf", PDF, "application/pdf")},
                           data={"parameters": json.dumps(["Supply voltage"])})
    assert response.status_code == 202, response.text
    return response.json()["job_id"]


def test_queue_gauges_follow_the_jobs_table(client: TestClient) -> None:
    empty = scrape(client)
    assert empty[("dsx_queue_depth", ())] == 0
    assert empty[("dsx_queue_oldest_age_seconds", ())] == 0
    assert empty[("dsx_jobs_running", ())] == 0

    submitted_before = empty.get(("dsx_jobs_submitted_total", (("engine", "auto"),)), 0.0)
    first, _second = submit(client), submit(client)
    with session_scope() as session:
        session.get(Job, first).created_at = utcnow() - timedelta(minutes=20)

    busy = scrape(client)
    assert busy[("dsx_queue_depth", ())] == 2
    assert 20 * 60 <= busy[("dsx_queue_oldest_age_seconds", ())] < 21 * 60
    assert busy[("dsx_jobs_submitted_total", (("engine", "auto"),))] == submitted_before + 2

    cancelled_before = busy.get(("dsx_jobs_finished_total", (("status", "cancelled"),)), 0.0)
    assert client.post(f"/v1/jobs/{first}/cancel").status_code == 200
    after = scrape(client)
    assert after[("dsx_queue_depth", ())] == 1
    assert after[("dsx_queue_oldest_age_seconds", ())] < 60
    assert after[("dsx_jobs_finished_total", (("status", "cancelled"),))] == cancelled_before + 1
    assert after[("dsx_job_duration_seconds_count", (("status", "cancelled"),))] >= 1


def test_metrics_survive_an_unreadable_jobs_table(client: TestClient, dsx_env) -> None:  # noqa: ANN001
    from sqlalchemy import text

    from app.db import get_engine

    with get_engine().begin() as connection:
        connection.execute(text("ALTER TABLE jobs RENAME TO jobs_gone"))
    samples = scrape(client)
    assert ("dsx_queue_depth", ()) not in samples
    assert any(name.startswith("dsx_") for name, _ in samples)  # everything else is still exposed


WORKER_SCRIPT = """
import sys
from opentelemetry.sdk.trace import TracerProvider
from app import metrics
from app.dispatch import semconv
from app.dispatch.metrics import MetricsSpanProcessor

provider = TracerProvider()
provider.add_span_processor(MetricsSpanProcessor())
span = provider.get_tracer("worker").start_span(
    semconv.chat_span_name(sys.argv[1]),
    attributes={semconv.DSX_MODEL_ALIAS: sys.argv[1], semconv.DSX_HTTP_STATUS: 200, semconv.DSX_LLM_TOOL_CALLS: 0,
                semconv.DSX_LLM_OUTCOME: "text_only"},
)
span.end()
metrics.observe_flags([("tool_bypass", "warning")])
metrics.observe_job_finished("needs_review", 30.0)
"""


def test_worker_processes_reach_the_api_through_the_multiprocess_dir(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two separate processes (as Celery pool children are) write samples; one API scrape sums them."""
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    model = f"worker-model-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "DSX_DATA_DIR": str(tmp_path / "w")}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", WORKER_SCRIPT, model], env=env, cwd=REPO_ROOT, check=True,
                       timeout=120)
    files = sorted(path.name for path in metrics_dir.glob("*.db"))
    # One file per process and type, named by host and pid (containers sharing the volume reuse pids).
    host = socket.gethostname().replace("_", "-")
    assert len(files) == 4 and all(f"_{host}-" in name for name in files), files

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(metrics_dir))
    reset_settings()
    samples = scrape(client)
    assert samples[("dsx_llm_http_200_no_tool_call_total", (("model", model),))] == 2
    assert samples[("dsx_flags_total", (("rule", "tool_bypass"), ("severity", "warning")))] == 2
    assert samples[("dsx_jobs_finished_total", (("status", "needs_review"),))] == 2
    assert samples[("dsx_job_duration_seconds_sum", (("status", "needs_review"),))] == 60
    assert samples[("dsx_queue_depth", ())] == 0  # the scrape-time gauges are still there


def test_spawned_processes_share_a_metrics_dir_under_the_data_dir(dsx_env) -> None:  # noqa: ANN001
    env = environment_for_children()
    metrics_dir = Path(env["PROMETHEUS_MULTIPROC_DIR"])
    assert metrics_dir == (dsx_env.data_dir / "metrics").resolve()
    assert metrics_dir.is_dir()


def test_an_explicit_metrics_dir_is_kept(dsx_env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    chosen = tmp_path / "elsewhere"
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(chosen))
    reset_settings()
    assert Path(environment_for_children()["PROMETHEUS_MULTIPROC_DIR"]) == chosen.resolve()
    assert chosen.is_dir()
