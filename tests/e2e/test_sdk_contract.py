"""The SDK and the server agree: model fields against the server's OpenAPI schemas, every request the SDK
makes against the server's routes; and the client-side behaviour that needs no server (polling, retries)."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime
from typing import Any

import dsx_client
import httpx
import pytest
from dsx_client import (
    AsyncClient,
    Client,
    Correction,
    Decision,
    DecisionPage,
    Flag,
    Job,
    JobFailed,
    JobPage,
    OtherVariant,
    Parameter,
    ParameterResult,
    QueueItem,
    QueuePage,
    Review,
    Span,
    StatedValue,
    Trace,
    TreeTotals,
    Usage,
    Value,
    WaitTimeout,
)
from dsx_client.errors import error_for
from dsx_client.models import Attribution, DecisionRequest, Grounding
from pydantic import BaseModel

from tests.support.paths import REPO_ROOT

# SDK model -> server schema it mirrors.
PAIRS: list[tuple[type[BaseModel], str]] = [
    (Job, "JobOut"),
    (JobPage, "JobPage"),
    (ParameterResult, "ParameterResult"),
    (Parameter, "ParameterSpec"),
    (Flag, "FlagOut"),
    (Value, "ValueOut"),
    (StatedValue, "CorrectedValue"),
    (Review, "DecisionOut"),
    (Grounding, "GroundingOut"),
    (Attribution, "AttributionOut"),
    (Correction, "ReviewCorrection"),
    (DecisionRequest, "ReviewDecisionRequest"),
    (Decision, "ReviewDecision"),
    (QueueItem, "ReviewQueueItem"),
    (QueuePage, "ReviewQueuePage"),
    (DecisionPage, "ReviewDecisionPage"),
    (Trace, "JobTrace"),
    (Span, "SpanNode"),
    (Usage, "UsageOut"),
    (TreeTotals, "TreeTotals"),
    (OtherVariant, "OtherVariant"),
]


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from app.config import reset_settings

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DSX_DATA_DIR", str(tmp_path_factory.mktemp("openapi")))
        reset_settings()
        try:
            from app.main import create_app

            return create_app().openapi()
        finally:
            reset_settings()


def _schema(components: dict[str, Any], name: str) -> dict[str, Any]:
    for candidate in (name, f"{name}-Output"):
        if candidate in components:
            return components[candidate]
    raise AssertionError(f"server OpenAPI has no schema {name!r} (have: {sorted(components)})")


def _types(prop: dict[str, Any]) -> frozenset[str]:
    """The JSON types a property admits (a $ref counts as "object"; integers are numbers too)."""
    if "$ref" in prop:
        return frozenset({"object"})
    if "anyOf" in prop:
        return frozenset().union(*(_types(p) for p in prop["anyOf"]))
    kind = prop.get("type")
    if kind is None:
        return frozenset({"any"})
    kinds = {kind} if isinstance(kind, str) else set(kind)
    return frozenset("number" if k == "integer" else k for k in kinds)


@pytest.mark.parametrize(("model", "schema_name"), PAIRS, ids=[f"{m.__name__}-{n}" for m, n in PAIRS])
def test_sdk_models_match_the_server_schemas(model: type[BaseModel], schema_name: str,
                                             openapi: dict[str, Any]) -> None:
    server = _schema(openapi["components"]["schemas"], schema_name)
    ours = model.model_json_schema()
    if "$ref" in ours:  # a recursive model is emitted as a reference into its own definitions
        ours = ours["$defs"][ours["$ref"].rsplit("/", 1)[-1]]
    assert set(ours["properties"]) == set(server["properties"]), schema_name
    for name, prop in server["properties"].items():
        server_types, our_types = _types(prop), _types(ours["properties"][name])
        if "any" not in server_types:
            assert our_types == server_types, (schema_name, name, our_types, server_types)
    # A field the server may omit must not be mandatory in the SDK.
    assert set(ours.get("required", [])) <= set(server.get("required", [])), schema_name


def _routes(openapi: dict[str, Any]) -> list[tuple[str, re.Pattern[str]]]:
    routes = []
    for path, methods in openapi["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")
        routes.extend((method.upper(), pattern) for method in methods)
    return routes


def _job_json(status: str = "running", results: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat()
    return {"job_id": "j" * 32, "status": status, "engine": "auto", "model": "offline/datasheet-reader",
            "filename": "a.pdf", "document_sha256": "0" * 64, "created_at": now, "updated_at": now,
            "parameters": [{"name": "Supply voltage"}, {"name": "Gain"}], "results": results or []}


def _item_json() -> dict[str, Any]:
    return {"extraction_id": 7, "job_id": "j" * 32, "parameter": "Gain", "model": "m", "found": True,
            "values": [], "flags": [], "created_at": datetime.now(UTC).isoformat(), "decision": None}


def _decision_json() -> dict[str, Any]:
    return {"id": 1, "job_id": "j" * 32, "extraction_id": 7, "parameter": "Gain", "decision": "approve",
            "reviewer": "a", "created_at": datetime.now(UTC).isoformat()}


def _canned(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path.endswith("/trace"):
        return httpx.Response(200, json={"job_id": "j" * 32, "span_count": 0, "trace_ids": [], "roots": []})
    if path == "/v1/jobs" and request.method == "GET":
        return httpx.Response(200, json={"items": [_job_json()], "total": 1, "limit": 50, "offset": 0})
    if path.startswith("/v1/jobs"):
        return httpx.Response(200, json=_job_json("cancelled" if path.endswith("/cancel") else "done"))
    if path == "/v1/review/queue":
        return httpx.Response(200, json={"items": [_item_json()], "total": 1, "counts_by_rule": {}})
    if path.endswith("/decision"):
        return httpx.Response(201, json=_decision_json())
    if path.startswith("/v1/review/items/"):
        return httpx.Response(200, json=_item_json())
    if path == "/v1/reviews":
        return httpx.Response(200, json={"items": [_decision_json()], "total": 1, "limit": 50, "offset": 0})
    if path == "/v1/review/corrections.yaml":
        return httpx.Response(200, text="version: 1\n")
    return httpx.Response(404, json={"code": "not_found", "detail": path, "status": 404})


def test_every_request_the_sdk_makes_is_a_server_route(openapi: dict[str, Any]) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _canned(request)

    with Client("http://dsx.test", transport=httpx.MockTransport(handler)) as dsx:
        job = dsx.submit(b"%PDF-1.7 fake", ["Supply voltage"], engine="agentic", model="m")
        dsx.get(job)
        dsx.list_jobs(status="done")
        dsx.wait(job, 1)
        dsx.result(job)
        dsx.trace(job)
        dsx.cancel(job)
        item = dsx.queue(rule="tool_bypass", model="m", job=job).items[0]
        dsx.queue(since=datetime(2026, 1, 1, tzinfo=UTC), newest_first=True)
        dsx.item(item)
        dsx.decide(item, "correct", correction={"values": [{"typical": 1.0}]}, comment="c", reviewer="r")
        dsx.reviews(job=job)
        dsx.corrections_yaml(job=job)

    routes = _routes(openapi)
    for request in seen:
        assert any(method == request.method and pattern.match(request.url.path) for method, pattern in routes), (
            request.method, request.url.path)
    query_names = {p["name"] for spec in openapi["paths"].values() for op in spec.values()
                   for p in op.get("parameters", []) if p.get("in") == "query"}
    for request in seen:
        assert set(request.url.params) <= query_names, request.url
    assert len({(r.method, r.url.path.split("/")[2]) for r in seen}) >= 4
    recent = next(r for r in seen if "order" in r.url.params and r.url.params["order"] == "newest")
    assert recent.url.params["since"] == "2026-01-01T00:00:00+00:00"


def test_submit_sends_the_form_the_server_reads() -> None:
    captured: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        captured.append(request)
        return httpx.Response(202, json=_job_json("queued"))

    with Client("http://dsx.test/", api_key="s3cret", transport=httpx.MockTransport(handler)) as dsx:
        dsx.submit(b"%PDF-1.7 fake", ["Supply voltage", Parameter(name="Gain", unit="dB")], model="m",
                   idempotency_key="k-1", filename="amp.pdf")
        dsx.submit(b"%PDF-1.7 fake", "Supply voltage")

    first, second = captured
    assert first.headers["Idempotency-Key"] == "k-1"
    assert first.headers["Authorization"] == "Bearer s3cret"
    assert first.headers["User-Agent"].startswith("dsx-client/")
    body = first.content.decode("latin-1")
    assert 'name="file"; filename="amp.pdf"' in body and "%PDF-1.7 fake" in body
    form = dict(re.findall(r'name="(\w+)"\r\n\r\n([^\r]*)', body))
    assert json.loads(form["parameters"]) == ["Supply voltage", {"name": "Gain", "unit": "dB"}]
    assert form["model"] == "m" and "engine" not in form
    # Without a key from the caller, every submit still gets one of its own.
    assert len(second.headers["Idempotency-Key"]) >= 16
    assert second.headers["Idempotency-Key"] != first.headers["Idempotency-Key"]


def test_wait_polls_with_backoff_until_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    statuses = iter(["queued", "running", "running", "running", "done"])
    sleeps: list[float] = []
    monkeypatch.setattr("dsx_client.client.time.sleep", sleeps.append)

    def handler(request: httpx.Request) -> httpx.Response:
        status = next(statuses)
        done = 2 if status == "done" else (1 if status == "running" else 0)
        results = [{"parameter": "Supply voltage", "found": False, "status": "done" if done >= 1 else "pending"},
                   {"parameter": "Gain", "found": False, "status": "done" if done == 2 else "pending"}]
        return httpx.Response(200, json=_job_json(status, results))

    progress: list[tuple[str, tuple[int, int]]] = []
    with Client("http://dsx.test", transport=httpx.MockTransport(handler)) as dsx:
        job = dsx.wait("j" * 32, 60, poll_interval=0.5, max_poll_interval=1.0,
                       on_progress=lambda j: progress.append((j.status, j.progress)))

    assert job.status == "done"
    assert sleeps == [0.5, 0.75, 1.0, 1.0]
    assert progress == [("queued", (0, 2)), ("running", (1, 2)), ("running", (1, 2)), ("running", (1, 2)),
                        ("done", (2, 2))]


def test_wait_times_out_with_the_last_snapshot_and_result_raises_for_failed_jobs() -> None:
    with Client("http://dsx.test", transport=httpx.MockTransport(
            lambda r: httpx.Response(200, json=_job_json("running")))) as dsx, \
            pytest.raises(WaitTimeout) as caught:
        dsx.wait("j" * 32, 0.05, poll_interval=0.01)
    assert caught.value.job.status == "running" and isinstance(caught.value, TimeoutError)

    failed = {**_job_json("failed"), "failure_code": "corrupt_pdf", "failure_detail": "broken xref"}
    with Client("http://dsx.test", transport=httpx.MockTransport(lambda r: httpx.Response(200, json=failed))) as dsx, \
            pytest.raises(JobFailed, match="corrupt_pdf"):
        dsx.result("j" * 32)


def test_retry_after_is_honoured_and_a_400_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps: list[float] = []
    monkeypatch.setattr("dsx_client.client.time.sleep", sleeps.append)
    answers = iter([httpx.Response(429, headers={"Retry-After": "2"}, json={"code": "rate_limited"}),
                    httpx.Response(200, json={"items": [], "total": 0, "limit": 5, "offset": 0})])
    with Client("http://dsx.test", transport=httpx.MockTransport(lambda r: next(answers))) as dsx:
        assert dsx.list_jobs(limit=5).total == 0
    assert sleeps == [2.0]

    calls: list[int] = []

    def bad_request(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(422, json={"code": "unknown_status", "detail": "no", "status": 422})

    with Client("http://dsx.test", transport=httpx.MockTransport(bad_request)) as dsx, \
            pytest.raises(dsx_client.InvalidInput) as caught:
        dsx.list_jobs(status="bogus")
    assert len(calls) == 1 and caught.value.code == "unknown_status"


def test_cancel_retried_after_it_landed_reports_the_cancelled_job() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/cancel"):
            return httpx.Response(409, json={"code": "job_already_finished", "detail": "already cancelled"})
        return httpx.Response(200, json=_job_json("cancelled"))

    with Client("http://dsx.test", transport=httpx.MockTransport(handler)) as dsx:
        assert dsx.cancel("j" * 32).status == "cancelled"


def test_async_wait_accepts_a_coroutine_callback() -> None:
    statuses = iter(["running", "needs_review"])

    async def scenario() -> list[str]:
        seen: list[str] = []

        async def note(job: Job) -> None:
            seen.append(job.status)

        transport = httpx.MockTransport(lambda r: httpx.Response(200, json=_job_json(next(statuses))))
        async with AsyncClient("http://dsx.test", transport=transport) as dsx:
            await dsx.wait("j" * 32, 5, poll_interval=0.01, on_progress=note)
        return seen

    assert asyncio.run(scenario()) == ["running", "needs_review"]


def test_trace_spans_are_walked_depth_first() -> None:
    def span(span_id: str, name: str, children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return {"trace_id": "t", "span_id": span_id, "name": name, "start_ns": 0, "end_ns": 1, "duration_ms": 0.0,
                "children": children or []}

    trace = Trace.model_validate({"job_id": "j", "span_count": 4, "trace_ids": ["t"], "roots": [
        span("a", "invoke_agent", [span("b", "chat m", [span("c", "execute_tool search_text")]),
                                   span("d", "execute_tool submit_extraction")])]})
    assert [s.span_id for s in trace.spans()] == ["a", "b", "c", "d"]


def test_the_sdk_needs_only_httpx_and_pydantic() -> None:
    """The client library needs httpx and pydantic; only its command line (cli.py, exits.py) adds typer, rich and
    pyyaml."""
    import ast
    import sys
    import tomllib
    from pathlib import Path

    package = Path(dsx_client.__file__).parent
    library = {"httpx", "pydantic", "dsx_client", *sys.stdlib_module_names}
    command_line = {"cli.py", "exits.py"}
    for source in package.glob("*.py"):
        allowed = library | {"typer", "rich", "yaml"} if source.name in command_line else library
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert (node.module or "").split(".")[0] in allowed, (source.name, node.module)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] in allowed, (source.name, alias.name)
    declared = tomllib.loads((package.parent / "pyproject.toml").read_text())["project"]["dependencies"]
    assert sorted(re.split(r"[<>=!~ ]", d)[0] for d in declared) == ["httpx", "pydantic", "pyyaml", "rich", "typer"]


def test_every_pdf_error_code_the_server_raises_is_an_invalid_pdf_in_the_sdk() -> None:
    raised = set()
    for module in (REPO_ROOT / "app").rglob("*.py"):
        source = module.read_text()
        for call in re.finditer(r"\bInvalidPdf\((?:[^()]|\([^()]*\))*\)", source, re.DOTALL):
            raised.update(re.findall(r'code="([a-z_]+)"', call.group(0)))
    assert {"corrupt_pdf", "pdf_too_complex", "pdf_check_timeout"} <= raised  # the scan itself works
    unknown = {code for code in raised if error_for(422, code) is not dsx_client.InvalidPdf}
    assert not unknown, f"server PDF codes the SDK does not map to InvalidPdf: {sorted(unknown)}"
