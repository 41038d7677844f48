"""Finished spans → the ``spans`` table (the dispatch record), and a truncating wrapper for OTLP export.

The database processor is synchronous and never drops a span: ``on_end`` only appends the finished span
to a buffer (cheap, on the agent's hot path); rows are written in batches when the buffer fills and on
``force_flush`` (``telemetry.flush()``, called by the pipeline after each parameter). A background queue
such as the SDK's ``BatchSpanProcessor`` was not used because it drops spans when its queue is full,
and a record with holes would make a tool-bypass look like an extraction that read nothing.

Writes are insert-or-ignore on ``(trace_id, span_id)`` on SQLite and Postgres alike, so a flush repeated
after a crash, or a buffer inherited by a forked worker, never duplicates a row.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import format_span_id, format_trace_id
from sqlalchemy import Engine, Text, bindparam, cast

from app.dispatch import semconv
from app.dispatch.models import SpanRecord
from app.timeutil import utcnow

log = logging.getLogger(__name__)

_PAYLOAD_KEYS = {semconv.DSX_PAYLOAD_INPUT: "input", semconv.DSX_PAYLOAD_OUTPUT: "output"}


def _plain(value: Any) -> Any:
    """OTel attribute values (tuples, bytes) as JSON-friendly values."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _plain_map(values: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: _plain(v) for k, v in (values or {}).items()}


def _payload_text(parts: dict[str, str]) -> str:
    """The stored payload as JSON text, assembled from the already-serialised parts: a payload can be
    megabytes (a single-pass document), and decoding it only to encode it again doubled the write cost."""
    return "{" + ", ".join(f"{json.dumps(name)}: {value}" for name, value in parts.items()) + "}"


def _as_int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def span_row(span: ReadableSpan) -> dict[str, Any]:
    """The ``spans`` row of a finished span: payload keys moved out of the attributes into ``payload``
    (as JSON text under ``payload_json``; ``insert_rows`` binds it without re-encoding)."""
    context = span.get_span_context()
    attributes: dict[str, Any] = {}
    payload: dict[str, str] = {}
    for key, value in (span.attributes or {}).items():
        if key in _PAYLOAD_KEYS:
            # set_payload is the one writer of these keys and stores JSON text; anything else is encoded here.
            payload[_PAYLOAD_KEYS[key]] = value if isinstance(value, str) else json.dumps(_plain(value))
        else:
            attributes[key] = _plain(value)
    start = span.start_time or 0
    end = span.end_time or start
    return {
        "trace_id": format_trace_id(context.trace_id),
        "span_id": format_span_id(context.span_id),
        "parent_span_id": format_span_id(span.parent.span_id) if span.parent else None,
        "name": span.name[:200],
        "kind": span.kind.name,
        "start_ns": start,
        "end_ns": end,
        "duration_ms": (end - start) / 1e6,
        "status_code": span.status.status_code.name,
        "status_message": span.status.description,
        "attributes": attributes,
        "events": [{"name": e.name, "time_ns": e.timestamp, "attributes": _plain_map(e.attributes)}
                   for e in span.events],
        "payload_json": _payload_text(payload),
        "job_id": attributes.get(semconv.DSX_JOB_ID),
        "parameter_id": _as_int(attributes.get(semconv.DSX_PARAMETER_ID)),
        "created_at": utcnow(),
    }


def insert_rows(engine: Engine, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert span rows, ignoring any already stored (same trace_id and span_id)."""
    if not rows:
        return
    dialect = engine.dialect.name
    payload_text = bindparam("payload_json", type_=Text)
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert

        payload: Any = payload_text  # SQLite keeps JSON as text
    elif dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert

        payload = cast(payload_text, SpanRecord.__table__.c.payload.type)
    else:  # pragma: no cover - only the two supported databases
        raise RuntimeError(f"unsupported database dialect for the dispatch record: {dialect}")
    statement = insert(SpanRecord).values(payload=payload).on_conflict_do_nothing(
        index_elements=["trace_id", "span_id"])
    with engine.begin() as connection:
        connection.execute(statement, [dict(r) for r in rows])


class DatabaseSpanProcessor(SpanProcessor):
    """Buffers finished spans and writes them to the database in batches; see the module docstring.

    ``engine`` is looked up at write time, so a process that switches databases (tests, a forked
    worker that reset its engines) writes to the current one.
    """

    def __init__(self, engine: Callable[[], Engine], *, batch_size: int = 256, max_buffer: int = 100_000) -> None:
        self._engine = engine
        self._batch_size = batch_size
        self._max_buffer = max_buffer
        self._buffer: list[ReadableSpan] = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()

    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            self._buffer.append(span)
            full = len(self._buffer) >= self._batch_size
        if full:
            self._write_pending()

    def _write_pending(self) -> bool:
        with self._write_lock:
            with self._lock:
                batch, self._buffer = self._buffer, []
            if not batch:
                return True
            try:
                insert_rows(self._engine(), [span_row(s) for s in batch])
                return True
            except Exception:
                log.exception("writing %d spans to the dispatch record failed; kept for the next flush", len(batch))
                with self._lock:
                    self._buffer = (batch + self._buffer)[-self._max_buffer:]
                return False

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._write_pending()

    def shutdown(self) -> None:
        self._write_pending()


def _truncate(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"…[{len(value) - limit} more chars]"
    if isinstance(value, tuple | list):
        return type(value)(_truncate(v, limit) for v in value)
    return value


def truncated_copy(span: ReadableSpan, limit: int) -> ReadableSpan:
    """A copy of ``span`` whose string attributes (payload previews included) are cut to ``limit`` chars."""
    attributes = {k: _truncate(v, limit) for k, v in (span.attributes or {}).items()}
    events = [
        Event(e.name, {k: _truncate(v, limit) for k, v in (e.attributes or {}).items()}, e.timestamp)
        for e in span.events
    ]
    return ReadableSpan(
        name=span.name,
        context=span.get_span_context(),
        parent=span.parent,
        resource=span.resource,
        attributes=attributes,
        events=events,
        links=span.links,
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class TruncatingExporter(SpanExporter):
    """Wraps an exporter (OTLP) so that long attribute values leave the process truncated."""

    def __init__(self, inner: SpanExporter, max_chars: int) -> None:
        self._inner = inner
        self._max_chars = max_chars

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self._inner.export([truncated_copy(s, self._max_chars) for s in spans])

    def shutdown(self) -> None:
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._inner.force_flush(timeout_millis)
