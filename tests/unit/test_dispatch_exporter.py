"""The database span processor and the OTLP truncation: full payloads stored, rows idempotent, nothing lost."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import create_engine, func, select

from app.db import get_engine, session_scope
from app.dispatch import semconv, telemetry
from app.dispatch.exporter import DatabaseSpanProcessor, TruncatingExporter, insert_rows, span_row
from app.dispatch.models import SpanRecord

BIG = "x" * 50_000


def _count() -> int:
    with session_scope() as session:
        return int(session.scalar(select(func.count()).select_from(SpanRecord)) or 0)


def _provider(*processors) -> TracerProvider:  # noqa: ANN002
    provider = TracerProvider()
    for processor in processors:
        provider.add_span_processor(processor)
    return provider


def test_payload_is_stored_in_full_and_moved_out_of_the_attributes(dsx_env) -> None:  # noqa: ANN001
    processor = DatabaseSpanProcessor(get_engine, batch_size=100)
    tracer = _provider(processor).get_tracer("test")
    ids = {semconv.DSX_JOB_ID: "job1", semconv.DSX_PARAMETER_ID: 7}
    with tracer.start_as_current_span("invoke_agent", attributes=ids) as root, \
            tracer.start_as_current_span("execute_tool search_text") as span:
        telemetry.set_payload(span, input={"arguments": {"query": "VDD"}}, output={"text": BIG})
    assert processor.pending == 2 and _count() == 0  # buffered until the batch fills or a flush
    assert processor.force_flush()

    with session_scope() as session:
        rows = {r.name: r for r in session.scalars(select(SpanRecord))}
    tool = rows["execute_tool search_text"]
    assert tool.payload == {"input": {"arguments": {"query": "VDD"}}, "output": {"text": BIG}}
    assert semconv.DSX_PAYLOAD_OUTPUT not in tool.attributes
    assert tool.parent_span_id == rows["invoke_agent"].span_id
    assert rows["invoke_agent"].job_id == "job1" and rows["invoke_agent"].parameter_id == 7
    assert tool.trace_id == f"{root.get_span_context().trace_id:032x}"
    assert tool.duration_ms >= 0 and tool.end_ns >= tool.start_ns


def test_rows_are_idempotent_on_trace_and_span_id(dsx_env) -> None:  # noqa: ANN001
    exporter = InMemorySpanExporter()
    tracer = _provider(SimpleSpanProcessor(exporter)).get_tracer("test")
    for n in range(3):
        with tracer.start_as_current_span(f"span {n}"):
            pass
    rows = [span_row(s) for s in exporter.get_finished_spans()]
    insert_rows(get_engine(), rows)
    insert_rows(get_engine(), rows)  # a repeated flush, or a buffer inherited by a forked worker
    insert_rows(get_engine(), rows[:1])
    assert _count() == 3


def test_a_full_batch_is_written_without_waiting_for_a_flush(dsx_env) -> None:  # noqa: ANN001
    processor = DatabaseSpanProcessor(get_engine, batch_size=5)
    tracer = _provider(processor).get_tracer("test")
    for n in range(12):
        with tracer.start_as_current_span(f"span {n}"):
            pass
    assert _count() == 10 and processor.pending == 2
    processor.shutdown()
    assert _count() == 12 and processor.pending == 0


def test_a_failed_write_keeps_the_spans_for_the_next_flush(dsx_env, tmp_path) -> None:  # noqa: ANN001
    engines = {"current": create_engine(f"sqlite:///{tmp_path / 'missing-dir' / 'nope.db'}")}
    processor = DatabaseSpanProcessor(lambda: engines["current"], batch_size=100)
    tracer = _provider(processor).get_tracer("test")
    with tracer.start_as_current_span("kept"):
        pass
    assert processor.force_flush() is False
    assert processor.pending == 1
    engines["current"] = get_engine()
    assert processor.force_flush() is True
    assert _count() == 1


def test_exported_attributes_are_truncated_but_not_the_stored_ones(dsx_env) -> None:  # noqa: ANN001
    exported = InMemorySpanExporter()
    database = DatabaseSpanProcessor(get_engine)
    tracer = _provider(database, SimpleSpanProcessor(TruncatingExporter(exported, 100))).get_tracer("test")
    with tracer.start_as_current_span("execute_tool get_section_text", attributes={"short": "ok"}) as span:
        telemetry.set_payload(span, output={"text": BIG})
    database.force_flush()
    (span_out,) = exported.get_finished_spans()
    preview = span_out.attributes[semconv.DSX_PAYLOAD_OUTPUT]
    assert len(preview) < 200 and preview.startswith('{"text": "xxx') and "more chars" in preview
    assert span_out.attributes["short"] == "ok"
    with session_scope() as session:
        stored = session.scalar(select(SpanRecord))
    assert stored.payload["output"]["text"] == BIG


def test_process_provider_writes_to_the_current_database_on_flush(dsx_env) -> None:  # noqa: ANN001
    with telemetry.get_tracer().start_as_current_span("invoke_agent") as span:
        telemetry.set_payload(span, input={"n": 1})
    telemetry.flush()
    with session_scope() as session:
        rows = list(session.scalars(select(SpanRecord).where(
            SpanRecord.span_id == f"{span.get_span_context().span_id:016x}")))
    assert len(rows) == 1 and rows[0].payload == {"input": {"n": 1}}


def test_non_json_payload_values_are_stored_by_their_string_form() -> None:
    class Odd:
        def __str__(self) -> str:
            return "odd-value"

    assert json.loads(telemetry.payload_json({"value": Odd()})) == {"value": "odd-value"}


@pytest.mark.parametrize("limit", [10, 1000])
def test_truncation_keeps_short_values_and_sequences(limit: int) -> None:
    exporter = InMemorySpanExporter()
    tracer = _provider(SimpleSpanProcessor(TruncatingExporter(exporter, limit))).get_tracer("test")
    with tracer.start_as_current_span("s", attributes={"list": ["a" * 500, "b"], "n": 3}):
        pass
    (span,) = exporter.get_finished_spans()
    assert span.attributes["n"] == 3
    assert span.attributes["list"][1] == "b"
    assert len(span.attributes["list"][0]) <= max(limit, 500) + 30
    assert (len(span.attributes["list"][0]) < 500) == (limit < 500)


def test_insert_or_ignore_and_payload_text_on_postgres() -> None:
    from app.db import Base
    from tests.support.services import fresh_postgres_database

    exporter = InMemorySpanExporter()
    tracer = _provider(SimpleSpanProcessor(exporter)).get_tracer("test")
    with tracer.start_as_current_span("execute_tool search_text") as span:
        telemetry.set_payload(span, input={"arguments": {"query": "VDD ±5 %"}}, output={"hits": []})
    rows = [span_row(s) for s in exporter.get_finished_spans()]
    with fresh_postgres_database() as url:
        engine = create_engine(url)
        try:
            Base.metadata.create_all(engine, tables=[SpanRecord.__table__])
            insert_rows(engine, rows)
            insert_rows(engine, rows)
            with engine.connect() as connection:
                stored = connection.execute(select(SpanRecord.__table__.c.payload)).scalars().all()
        finally:
            engine.dispose()
    assert stored == [{"input": {"arguments": {"query": "VDD ±5 %"}}, "output": {"hits": []}}]


def test_otlp_export_is_added_when_configured_and_carries_truncated_previews(dsx_env, monkeypatch) -> None:  # noqa: ANN001
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from app.config import reset_settings

    received: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_POST(self) -> None:  # noqa: N802
            received.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("DSX_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
        monkeypatch.setenv("DSX_OTLP_ATTRIBUTE_MAX_CHARS", "100")
        reset_settings()
        provider = telemetry.build_provider()
        with telemetry.use_provider(provider):
            with telemetry.get_tracer().start_as_current_span("execute_tool get_section_text") as span:
                telemetry.set_payload(span, output={"text": BIG})
            telemetry.flush()
        provider.shutdown()
    finally:
        server.shutdown()
        server.server_close()

    assert [path for path, _ in received] == ["/v1/traces"]
    request = ExportTraceServiceRequest.FromString(received[0][1])
    (exported,) = [s for r in request.resource_spans for ss in r.scope_spans for s in ss.spans]
    preview = {a.key: a.value.string_value for a in exported.attributes}[semconv.DSX_PAYLOAD_OUTPUT]
    assert exported.name == "execute_tool get_section_text" and len(preview) < 150
    with session_scope() as session:
        assert session.scalar(select(SpanRecord)).payload["output"]["text"] == BIG
