"""Reading the record back: the tree builder and ``GET /v1/jobs/{id}/trace`` (tree and JSON lines)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from app.db import session_scope
from app.dispatch import semconv, service, telemetry
from app.dispatch.models import SpanRecord
from app.jobs import service as jobs
from tests.support.pdfs import text_pdf


@pytest.fixture
def client(dsx_env) -> TestClient:  # noqa: ANN001
    from app.main import create_app

    return TestClient(create_app())


def _job() -> str:
    with session_scope() as session:
        job, _ = jobs.create_job(session, data=text_pdf(["Supply voltage VDD 2.7 5.5 V"]), filename="ds.pdf",
                                 parameters=json.dumps(["Supply voltage", "Gain"]))
        return job.id


def _record_run(job_id: str, parameter_id: int, role: str = "primary") -> tuple[str, str]:
    """One run's spans through the process provider, as the agent writes them."""
    tracer = telemetry.get_tracer()
    ids = {semconv.DSX_JOB_ID: job_id, semconv.DSX_PARAMETER_ID: parameter_id, semconv.DSX_ROLE: role}
    with tracer.start_as_current_span(semconv.SPAN_INVOKE_AGENT, attributes=ids) as root:
        with tracer.start_as_current_span(semconv.SPAN_ROUTE, attributes=ids):
            pass
        with tracer.start_as_current_span(semconv.chat_span_name("offline/datasheet-reader"), attributes=ids) as chat:
            telemetry.set_payload(chat, input={"messages": ["m"]}, output={"content": None})
        with tracer.start_as_current_span(semconv.tool_span_name("search_text"), attributes=ids) as tool:
            telemetry.set_payload(tool, input={"arguments": {"query": "VDD"}}, output={"hits": ["h" * 5000]})
    context = root.get_span_context()
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"


def test_tree_nests_children_by_start_and_keeps_orphans_as_roots() -> None:
    def row(span_id: str, parent: str | None, start: int) -> SpanRecord:
        return SpanRecord(id=start, trace_id="t" * 32, span_id=span_id, parent_span_id=parent, name=span_id,
                          kind="INTERNAL", start_ns=start, end_ns=start + 1, duration_ms=0.0, status_code="UNSET",
                          attributes={}, events=[], payload={"input": span_id})

    spans = [row("c2", "root", 30), row("root", None, 10), row("c1", "root", 20), row("g1", "c1", 25),
             row("orphan", "missing", 5)]
    roots = service.build_tree(spans)
    assert [r["span_id"] for r in roots] == ["orphan", "root"]
    root = roots[1]
    assert [c["span_id"] for c in root["children"]] == ["c1", "c2"]
    assert [g["span_id"] for g in root["children"][0]["children"]] == ["g1"]
    assert "payload" not in service.build_tree(spans, include_payload=False)[1]


def test_trace_endpoint_returns_the_tree_with_full_payloads(client: TestClient) -> None:
    job_id = _job()
    first = _record_run(job_id, 1)
    second = _record_run(job_id, 2)
    _record_run("some-other-job", 1)
    telemetry.flush()

    response = client.get(f"/v1/jobs/{job_id}/trace")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["job_id"] == job_id and body["span_count"] == 8
    assert body["trace_ids"] == sorted([first[0], second[0]])
    assert [(r["name"], r["span_id"]) for r in body["roots"]] == [
        (semconv.SPAN_INVOKE_AGENT, first[1]), (semconv.SPAN_INVOKE_AGENT, second[1])]
    children = body["roots"][0]["children"]
    assert [c["name"] for c in children] == [semconv.SPAN_ROUTE, "chat offline/datasheet-reader",
                                             "execute_tool search_text"]
    assert children[2]["payload"]["output"]["hits"] == ["h" * 5000]
    assert children[2]["attributes"][semconv.DSX_PARAMETER_ID] == 1

    lean = client.get(f"/v1/jobs/{job_id}/trace", params={"payload": "false"}).json()
    assert lean["roots"][0]["children"][2]["payload"] is None


def test_trace_endpoint_jsonl_is_one_span_a_line_by_start(client: TestClient) -> None:
    job_id = _job()
    _record_run(job_id, 1)
    telemetry.flush()
    response = client.get(f"/v1/jobs/{job_id}/trace", params={"format": "jsonl"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [line["name"] for line in lines] == [semconv.SPAN_INVOKE_AGENT, semconv.SPAN_ROUTE,
                                               "chat offline/datasheet-reader", "execute_tool search_text"]
    assert [line["start_ns"] for line in lines] == sorted(line["start_ns"] for line in lines)
    assert lines[3]["payload"]["input"] == {"arguments": {"query": "VDD"}}
    assert "children" not in lines[0]


def test_trace_of_an_unknown_job_is_a_problem_404(client: TestClient) -> None:
    response = client.get("/v1/jobs/nope/trace")
    assert response.status_code == 404
    assert response.json()["code"] == "job_not_found"
    assert client.get(f"/v1/jobs/{_job()}/trace", params={"format": "xml"}).status_code == 422


def test_job_without_spans_has_an_empty_record(client: TestClient) -> None:
    body = client.get(f"/v1/jobs/{_job()}/trace").json()
    assert body["span_count"] == 0 and body["roots"] == [] and body["trace_ids"] == []
