"""End to end: a job whose model answers HTTP 200 without a tool call shows up on the API's /metrics and as a
flag on the job.

The deployment shape is real: uvicorn and a separate Celery worker process, sharing a multiprocess metrics
directory, the agent calling a scripted OpenAI-compatible server through LiteLLM. The counter is incremented
in the worker (from the dispatch record's span) and read through the API.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.support.live import live_server
from tests.support.pdfs import text_pdf
from tests.support.processes import wait_until
from tests.support.scripted_llm import ScriptedLLM, submit, text

ANSWER = {"found": True, "values": [{"min": 2.7, "max": 5.5, "unit": "V"}], "source_page": 1,
          "quote": "Supply voltage VDD 2.7 5.5 V", "confidence": 0.9}


def scrape(base_url: str) -> dict[tuple[str, frozenset], float]:
    response = httpx.get(f"{base_url}/metrics", timeout=10)
    assert response.status_code == 200
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.text) for s in family.samples}


def sample(samples: dict[tuple[str, frozenset], float], name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def finished(base_url: str, job_id: str) -> dict | None:
    job = httpx.get(f"{base_url}/v1/jobs/{job_id}", timeout=10).json()
    return job if job["status"] not in ("queued", "running") else None


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in list(os.environ):
        if key.startswith("DSX_") and not key.startswith("DSX_TEST_") and key != "DSX_SHARED_DIR":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)


def test_http_200_without_tool_call_reaches_metrics_and_flags_the_job(tmp_path: Path, clean_environment) -> None:  # noqa: ANN001
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    with ScriptedLLM() as llm:
        # First turn: a fluent answer and no tool call, HTTP 200. After the loop's nudge, a proper submit.
        llm.script(text("The supply voltage is 2.7 V to 5.5 V."))
        llm.always(submit(ANSWER))
        models_file = tmp_path / "models.yaml"
        models_file.write_text(yaml.safe_dump({"model_list": [llm.models_file_entry("scripted")]}))
        env = {"DSX_MODELS_FILE": str(models_file), "DSX_CROSS_CHECK_MODEL": "",
               "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
        with live_server(tmp_path, worker=True, env=env) as server:
            before = scrape(server.base_url)
            assert sample(before, "dsx_llm_http_200_no_tool_call_total", model="scripted") == 0

            response = httpx.post(
                f"{server.base_url}/v1/jobs", timeout=30,
                files={"file": ("ds.pdf", text_pdf(["Supply voltage VDD 2.7 5.5 V"]), "application/pdf")},
                data={"parameters": json.dumps(["Supply voltage"]), "model": "scripted", "engine": "agentic"},
            )
            assert response.status_code == 202, response.text
            job_id = response.json()["job_id"]
            job = wait_until(lambda: finished(server.base_url, job_id), timeout_s=120,
                             what=f"job {job_id} to finish")
            after = scrape(server.base_url)

    assert job["status"] == "needs_review", job
    (result,) = job["results"]
    assert "no_tool_call_http_200" in {flag["rule"] for flag in result["flags"]}, result["flags"]

    # Counted once, in the worker, and visible through the API.
    assert sample(after, "dsx_llm_http_200_no_tool_call_total", model="scripted") == 1
    assert sample(after, "dsx_llm_requests_total", model="scripted", outcome="text_only", status_class="2xx") == 1
    assert sample(after, "dsx_llm_requests_total", model="scripted", outcome="tool_call", status_class="2xx") == 1
    assert sample(after, "dsx_flags_total", rule="no_tool_call_http_200", severity="warning") == 1
    assert sample(after, "dsx_jobs_submitted_total", engine="agentic") == 1
    assert sample(after, "dsx_jobs_finished_total", status="needs_review") == 1
    assert sample(after, "dsx_parameter_duration_seconds_count", model="scripted", engine="agentic",
                  outcome="submitted") == 1
    submits = sum(value for (name, labels), value in after.items()
                  if name == "dsx_tool_calls_total" and ("tool", "submit_extraction") in labels)
    assert submits == 1
    assert sample(after, "dsx_queue_depth") == 0
