"""Request ids, JSON log lines with their context, trusted forwarded headers, and the API's server span."""

from __future__ import annotations

import io
import json
import logging

import pytest
from fastapi.testclient import TestClient

from app.observability import context
from app.observability.logging import configure_logging
from app.observability.request_id import accepted_or_new

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


@pytest.fixture
def client(dsx_env) -> TestClient:  # noqa: ANN001
    from app.main import create_app

    return TestClient(create_app())


@pytest.fixture
def log_lines(dsx_env):  # noqa: ANN001, ANN201
    """The JSON lines the dsx handler writes, captured (the handler is reinstalled on a buffer)."""
    configure_logging("dsx-test")
    handler = next(h for h in logging.getLogger().handlers if h.get_name() == "dsx")
    buffer = io.StringIO()
    handler.setStream(buffer)
    yield lambda: [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]
    logging.getLogger().removeHandler(handler)


@pytest.mark.parametrize("value", ["abc-123", "01HZX3K9Q2", "req_7f/2025:01+x=@", "a" * 128])
def test_a_safe_request_id_is_kept(value: str) -> None:
    assert accepted_or_new(value) == value


@pytest.mark.parametrize("value", [None, "", "a" * 129, "two words", 'quote"d', "line\nbreak", "tab\tbed", "é"])
def test_an_unsafe_or_missing_request_id_is_replaced(value: str | None) -> None:
    replaced = accepted_or_new(value)
    assert replaced != value and len(replaced) == 32 and replaced.isalnum()


def test_request_id_is_returned_and_generated_per_request(client: TestClient) -> None:
    given = client.get("/v1/jobs", headers={"X-Request-ID": "gateway-42"})
    assert given.headers["X-Request-ID"] == "gateway-42"
    first, second = client.get("/v1/jobs"), client.get("/v1/jobs")
    assert first.headers["X-Request-ID"] != second.headers["X-Request-ID"]
    forged = client.get("/v1/jobs", headers={"X-Request-ID": "x" * 500})
    assert forged.headers["X-Request-ID"] != "x" * 500
    assert client.get("/healthz", headers={"X-Request-ID": "probe-1"}).headers["X-Request-ID"] == "probe-1"


def test_log_lines_are_json_with_request_tenant_and_trace(client: TestClient, log_lines) -> None:  # noqa: ANN001
    logger = logging.getLogger("dsx.test")

    @client.app.get("/_log_probe")
    def probe() -> dict:
        context.annotate(tenant="acme")
        logger.info("probe handled")
        return {}

    client.get("/_log_probe", headers={"X-Request-ID": "req-77", "traceparent": TRACEPARENT})
    line = next(entry for entry in log_lines() if entry["message"] == "probe handled")
    assert line["service"] == "dsx-test" and line["level"] == "INFO" and line["logger"] == "dsx.test"
    assert line["request_id"] == "req-77"
    assert line["tenant"] == "acme"
    assert line["trace_id"] == TRACE_ID  # the server span continued the caller's trace
    assert line["span_id"] and line["span_id"] != "00f067aa0ba902b7"


def test_log_context_outside_a_request_is_empty_and_bound_blocks_nest(log_lines) -> None:  # noqa: ANN001
    logger = logging.getLogger("dsx.test")
    logger.warning("outside")
    with context.bound(job_id="job-1", tenant="t1"):
        with context.bound(request_id="r-1"):
            logger.warning("inside")
        context.annotate(tenant="t2")
        logger.warning("annotated")
    lines = {entry["message"]: entry for entry in log_lines()}
    assert lines["outside"]["job_id"] is None and lines["outside"]["trace_id"] is None
    assert (lines["inside"]["job_id"], lines["inside"]["tenant"], lines["inside"]["request_id"]) == ("job-1", "t1",
                                                                                                      "r-1")
    assert lines["annotated"]["tenant"] == "t2" and lines["annotated"]["request_id"] is None


def test_unknown_log_context_field_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown log context"), context.bound(user="x"):
        pass


def _scheme_probe(client: TestClient) -> None:
    @client.app.get("/_scheme")
    def scheme(request: __import__("fastapi").Request) -> dict:
        return {"scheme": request.url.scheme, "client": request.client.host if request.client else None}


def test_forwarded_proto_is_believed_only_from_trusted_proxies(dsx_env, monkeypatch) -> None:  # noqa: ANN001
    from app.config import reset_settings
    from app.main import create_app

    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    # TestClient connects from "testclient": not a trusted address by default.
    untrusted = TestClient(create_app())
    _scheme_probe(untrusted)
    assert untrusted.get("/_scheme", headers=forwarded).json()["scheme"] == "http"

    monkeypatch.setenv("DSX_FORWARDED_ALLOW_IPS", "10.0.0.0/8, testclient")
    reset_settings()
    trusted = TestClient(create_app())
    _scheme_probe(trusted)
    assert trusted.get("/_scheme", headers=forwarded).json() == {"scheme": "https", "client": "203.0.113.9"}


def test_review_cookie_is_secure_behind_a_trusted_tls_gateway(dsx_env, monkeypatch) -> None:  # noqa: ANN001
    from app.auth.keys import create_key
    from app.config import reset_settings
    from app.db import session_scope
    from app.main import create_app

    monkeypatch.setenv("DSX_AUTH_MODE", "keys")
    reset_settings()
    with session_scope() as session:
        key = create_key(session, tenant="t", roles=["reviewer"], name="r").key

    def sign_in(client: TestClient) -> str:
        response = client.post("/review/login", data={"key": key}, headers={"X-Forwarded-Proto": "https"},
                               follow_redirects=False)
        assert response.status_code == 303
        return response.headers["set-cookie"].lower()

    assert "secure" not in sign_in(TestClient(create_app()))
    monkeypatch.setenv("DSX_FORWARDED_ALLOW_IPS", "testclient")
    reset_settings()
    assert "; secure" in sign_in(TestClient(create_app()))


def test_otel_service_name_is_honoured_and_dsx_is_the_default(monkeypatch) -> None:  # noqa: ANN001
    from app.dispatch.telemetry import resource

    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.delenv("OTEL_RESOURCE_ATTRIBUTES", raising=False)
    assert resource().attributes["service.name"] == "dsx"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "dsx-eu-worker")
    assert resource().attributes["service.name"] == "dsx-eu-worker"
