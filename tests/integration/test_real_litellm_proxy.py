"""One job through a real LiteLLM proxy in front of the scripted provider: what dsx sends survives the real proxy
(tenant, tags, spend metadata, trace id, tool choice), the provider receives the proxy's call rather than dsx's,
and the proxy's ``x-litellm-*`` response headers end up on dsx's chat spans.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import reset_settings
from app.db import reset_engines, session_scope
from app.dispatch import semconv
from app.dispatch.models import SpanRecord
from tests.support.litellm_proxy import PROXY_BINARY, UPSTREAM_KEY, RealProxy, litellm_proxy
from tests.support.pdfs import text_pdf
from tests.support.prerequisites import missing_prerequisite
from tests.support.processes import dsx_process, wait_until, worker_env
from tests.support.scripted_llm import ScriptedLLM, submit, tool_call

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"
ALIAS = "datasheet-model"
UPSTREAM_MODEL = "gpt-primary"
QUOTE = "Supply voltage VDD 2.7 5.5 V"


@pytest.fixture
def upstream() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(model_name=UPSTREAM_MODEL) as llm:
        yield llm


@pytest.fixture
def proxy(tmp_path: Path, upstream: ScriptedLLM) -> Iterator[RealProxy]:
    if not PROXY_BINARY.exists():
        missing_prerequisite(f"the LiteLLM proxy ({PROXY_BINARY}); run `make gateway-proxy`")
    with litellm_proxy(tmp_path / "proxy", ALIAS, upstream.base_url, UPSTREAM_MODEL,
                       max_input_tokens=64000, supports_tool_choice=True) as running:
        yield running


@pytest.fixture
def stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy: RealProxy) -> Iterator[dict]:
    from app import migrate

    for key in [k for k in os.environ if k.startswith("DSX_") and not k.startswith("DSX_TEST_")]:
        monkeypatch.delenv(key)
    data_dir = tmp_path / "var"
    # No proxy database, so no virtual keys: every tenant calls with the master key as dsx's own.
    settings = {"DSX_DATA_DIR": str(data_dir), "DSX_GATEWAY_URL": proxy.base_url, "DSX_GATEWAY_KEY": proxy.master_key,
                "DSX_MODEL": ALIAS, "DSX_CROSS_CHECK_MODEL": "", "DSX_LOG_FORMAT": "json"}
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    reset_settings()
    reset_engines()
    migrate.upgrade()
    yield {"env": {**worker_env(data_dir), **settings}}
    reset_engines()
    reset_settings()


def test_a_job_runs_through_a_real_litellm_proxy(stack: dict, proxy: RealProxy, upstream: ScriptedLLM,
                                                 tmp_path: Path) -> None:
    from app.main import create_app

    upstream.script(tool_call("search_text", {"query": "supply voltage"}),
                    submit({"found": True, "values": [{"min": 2.7, "max": 5.5, "unit": "V"}], "source_page": 1,
                            "quote": QUOTE, "confidence": 0.9}))
    client = TestClient(create_app())
    response = client.post("/v1/jobs", files={"file": ("ds.pdf", text_pdf([QUOTE]), "application/pdf")},
                           data={"parameters": json.dumps(["Supply voltage"]), "engine": "agentic"},
                           headers={"traceparent": TRACEPARENT})
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]

    log = tmp_path / "worker.log"
    with dsx_process(["worker", "--pool", "solo"], stack["env"], log):
        job = wait_until(lambda: (j := client.get(f"/v1/jobs/{job_id}").json())["status"] not in ("queued",
                                                                                                  "running") and j,
                         timeout_s=240, what="the job to finish")
    assert job["status"] in ("done", "needs_review"), (job, log.read_text()[-3000:], proxy.log_path.read_text()[-3000:])
    result = job["results"][0]
    assert result["found"] is True and result["values"][0]["max"] == pytest.approx(5.5), result

    # The provider was called by the proxy: its own key and backing model, and dsx's tool-call contract intact.
    assert len(upstream.requests) == 2
    for request in upstream.requests:
        assert request.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
        assert request.body["model"] == UPSTREAM_MODEL
        # The tenant and spend metadata are the gateway's business: the proxy consumes them, the provider never
        # sees them (below, the proxy's own record of each call shows it read them).
        assert "user" not in request.body and "metadata" not in request.body
        assert request.body["tool_choice"] == "required"  # the proxy's /model/info said the group supports it
        assert {"search_text", "submit_extraction"} <= set(request.tool_names)
    assert upstream.requests[1].messages[-1]["role"] == "tool"  # the tool result went back through the proxy

    # What the proxy understood of each call: the tenant, dsx's tags and spend metadata, the caller's trace.
    with session_scope() as session:
        spans = list(session.scalars(select(SpanRecord).where(SpanRecord.job_id == job_id)))
    chats = sorted((s for s in spans if s.name.startswith("chat ")), key=lambda s: s.start_ns)
    assert [c.name for c in chats] == [f"chat {ALIAS}"] * 2
    calls = wait_until(lambda: len(proxy.calls()) == 2 and proxy.calls(), timeout_s=30, what="the proxy's call log")
    for call, chat in zip(calls, chats, strict=True):
        assert call["end_user"] == "default"
        assert call["model_group"] == ALIAS
        assert {"dsx", "tenant:default", "engine:agentic"} <= set(call["request_tags"])
        assert call["spend_logs_metadata"]["job_id"] == job_id
        assert call["spend_logs_metadata"]["parameter_id"] == chat.parameter_id
        assert call["trace_id"] == TRACE_ID

    # The proxy's response headers are on the chat spans: its call id, the group and deployment that answered.
    call_ids = {c.attributes.get(semconv.DSX_GATEWAY_CALL_ID) for c in chats}
    assert None not in call_ids and len(call_ids) == 2
    for chat in chats:
        assert chat.attributes[semconv.DSX_GATEWAY_MODEL_GROUP] == ALIAS
        assert chat.attributes[semconv.DSX_GATEWAY_MODEL_ID]
        assert chat.attributes[semconv.DSX_GATEWAY_API_BASE] == upstream.base_url
        assert chat.attributes[semconv.GEN_AI_PROVIDER_NAME] == "litellm_proxy"
    assert not [f for f in result["flags"] if f["rule"] == "model_fallback"]  # no fallback happened
