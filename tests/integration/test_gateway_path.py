"""One job through both gateways: a caller's trace and request id into the API, over the queue to a worker
process, out through a LiteLLM-proxy stand-in (the scripted server) that checks what dsx tells it and answers
with ``x-litellm-*`` headers, including a fallback the job must flag.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import reset_settings
from app.db import reset_engines, session_scope
from app.dispatch import semconv
from app.dispatch.models import SpanRecord
from tests.support.pdfs import text_pdf
from tests.support.processes import dsx_process, wait_until, worker_env
from tests.support.scripted_llm import ScriptedLLM, submit, tool_call

pytestmark = pytest.mark.integration

TRACE_ID = "5c1a0b2e9f8d4c3b8a7f6e5d4c3b2a19"
TRACEPARENT = f"00-{TRACE_ID}-1f2e3d4c5b6a7988-01"
ALIAS = "datasheet-model"
TENANT_KEY = "sk-tenant-default-123"
SERVICE_KEY = "sk-dsx-service"
QUOTE = "Supply voltage VDD 2.7 5.5 V"


@pytest.fixture
def gateway() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(model_name="gpt-primary") as llm:
        llm.gateway_models = [{"model_name": ALIAS, "litellm_params": {"model": "openai/gpt-4o"},
                               "model_info": {"max_input_tokens": 64000, "supports_tool_choice": True}}]
        yield llm


@pytest.fixture
def stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gateway: ScriptedLLM) -> Iterator[dict]:
    from app import migrate

    for key in [k for k in os.environ if k.startswith("DSX_") and not k.startswith("DSX_TEST_")]:
        monkeypatch.delenv(key)
    data_dir = tmp_path / "var"
    keys_file = tmp_path / "gateway-keys.yaml"
    keys_file.write_text(yaml.safe_dump({"default": TENANT_KEY}))
    settings = {"DSX_DATA_DIR": str(data_dir), "DSX_GATEWAY_URL": gateway.base_url, "DSX_GATEWAY_KEY": SERVICE_KEY,
                "DSX_GATEWAY_KEYS_FILE": str(keys_file), "DSX_MODEL": ALIAS, "DSX_CROSS_CHECK_MODEL": "",
                "DSX_LOG_FORMAT": "json"}
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    reset_settings()
    reset_engines()
    migrate.upgrade()
    yield {"env": {**worker_env(data_dir), **settings}}
    reset_engines()
    reset_settings()


def test_trace_ids_and_gateway_fields_cross_both_gateways(stack: dict, gateway: ScriptedLLM, tmp_path: Path) -> None:
    from app.main import create_app

    fallback = submit({"found": True, "values": [{"min": 2.7, "max": 5.5, "unit": "V"}], "source_page": 1,
                       "quote": QUOTE, "confidence": 0.9})
    fallback.headers = {"x-litellm-model-group": "datasheet-model-fallback", "x-litellm-attempted-fallbacks": "1",
                        "x-litellm-attempted-retries": "0", "x-litellm-response-cost": "0.0125",
                        "x-litellm-model-id": "deployment-b", "x-litellm-call-id": "call-2",
                        "x-litellm-overhead-duration-ms": "3.5"}
    gateway.always_headers = {"x-litellm-model-group": ALIAS, "x-litellm-response-cost": "0.0025",
                              "x-litellm-model-id": "deployment-a", "x-litellm-attempted-fallbacks": "0"}
    gateway.script(tool_call("search_text", {"query": "supply voltage"}), fallback)

    client = TestClient(create_app())
    response = client.post("/v1/jobs", files={"file": ("ds.pdf", text_pdf([QUOTE]), "application/pdf")},
                           data={"parameters": json.dumps(["Supply voltage"]), "engine": "agentic"},
                           headers={"traceparent": TRACEPARENT, "X-Request-ID": "edge-req-1"})
    assert response.status_code == 202, response.text
    assert response.headers["X-Request-ID"] == "edge-req-1"
    job_id = response.json()["job_id"]

    log = tmp_path / "worker.log"
    with dsx_process(["worker", "--pool", "solo"], stack["env"], log):
        job = wait_until(lambda: (j := client.get(f"/v1/jobs/{job_id}").json())["status"] not in ("queued",
                                                                                                  "running") and j,
                         timeout_s=180, what="the job to finish")
    assert job["status"] == "needs_review", (job, log.read_text()[-3000:])

    # The worker's run continues the caller's trace ...
    with session_scope() as session:
        spans = list(session.scalars(select(SpanRecord).where(SpanRecord.job_id == job_id)))
    root = next(s for s in spans if s.name == semconv.SPAN_INVOKE_AGENT)
    assert root.trace_id == TRACE_ID
    assert root.parent_span_id not in {s.span_id for s in spans}  # the API's server span, not in the record
    chats = sorted((s for s in spans if s.name.startswith("chat ")), key=lambda s: s.start_ns)
    assert [c.name for c in chats] == [f"chat {ALIAS}"] * 2

    # ... and so does each request the gateway received, as the chat span that made it.
    assert len(gateway.requests) == 2
    for request, chat in zip(gateway.requests, chats, strict=True):
        assert request.headers["traceparent"] == f"00-{TRACE_ID}-{chat.span_id}-01"
        assert request.headers["authorization"] == f"Bearer {TENANT_KEY}"
        assert request.body["model"] == ALIAS
        assert request.body["user"] == "default"
        assert request.body["tool_choice"] == "required"  # the gateway said the alias supports it
        metadata = request.body["metadata"]
        assert {"dsx", "tenant:default", "engine:agentic"} <= set(metadata["tags"])
        assert any(tag.startswith("rules:") for tag in metadata["tags"])
        assert metadata["spend_logs_metadata"]["job_id"] == job_id
        assert metadata["spend_logs_metadata"]["parameter_id"] == chat.parameter_id
    assert gateway.info_requests and gateway.info_requests[0].headers["authorization"] == f"Bearer {SERVICE_KEY}"

    # What the gateway reported is on the chat spans, and the fallback is flagged.
    assert chats[0].attributes[semconv.GEN_AI_PROVIDER_NAME] == "litellm_proxy"
    assert chats[0].attributes[semconv.SERVER_ADDRESS] == "127.0.0.1"
    assert chats[1].attributes[semconv.DSX_GATEWAY_ATTEMPTED_FALLBACKS] == 1
    assert chats[1].attributes[semconv.DSX_GATEWAY_MODEL_GROUP] == "datasheet-model-fallback"
    assert chats[1].attributes[semconv.DSX_GATEWAY_OVERHEAD_MS] == pytest.approx(3.5)
    result = job["results"][0]
    fallback_flags = [f for f in result["flags"] if f["rule"] == "model_fallback"]
    assert fallback_flags and fallback_flags[0]["evidence"]["span_ids"] == [chats[1].span_id]

    # The verdicts are evaluation events on a span under the run, for OpenTelemetry backends to show.
    evaluation = next(s for s in spans if s.name == semconv.SPAN_EVALUATE)
    assert evaluation.parent_span_id == root.span_id and evaluation.trace_id == TRACE_ID
    events = {e["attributes"][semconv.GEN_AI_EVALUATION_NAME]: e["attributes"] for e in evaluation.events
              if e["name"] == semconv.GEN_AI_EVALUATION_EVENT}
    assert events["model_fallback"][semconv.GEN_AI_EVALUATION_SCORE_LABEL] == "flagged"
    assert events["model_fallback"][semconv.GEN_AI_EVALUATION_EXPLANATION] == fallback_flags[0]["message"]
    assert events["tool_bypass"][semconv.GEN_AI_EVALUATION_SCORE_LABEL] == "pass"

    # Cost as the gateway reported it, per parameter and for the job.
    assert result["usage"]["cost_usd"] == pytest.approx(0.0025 + 0.0125)
    assert job["usage"]["cost_usd"] == pytest.approx(0.015)
    assert job["usage"]["input_tokens"] == result["usage"]["input_tokens"] > 0

    # The worker's log lines are JSON and name the job, the tenant, the submitting request and its trace.
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    finished = [entry for entry in lines if entry.get("job_id") == job_id]
    assert finished, log.read_text()[-3000:]
    assert all(entry["request_id"] == "edge-req-1" and entry["tenant"] == "default" for entry in finished)
    assert all(entry["trace_id"] == TRACE_ID for entry in finished)
