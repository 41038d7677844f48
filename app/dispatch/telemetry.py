"""The tracer provider of the dispatch record, and the writer-side helpers the agent uses.

One ``TracerProvider`` per process, built on first use: it writes every finished span to the database
(``exporter.DatabaseSpanProcessor``), feeds the Prometheus metrics (``app.dispatch.metrics.MetricsSpanProcessor``)
and, when ``DSX_OTLP_ENDPOINT`` is set, exports to an OpenTelemetry collector with long attributes
truncated. It is deliberately not installed as the global OTel provider: the record must not depend on
(or be sampled by) whatever else in the process configures OpenTelemetry.

``flush()`` writes buffered spans; the pipeline calls it after each parameter and at the end of a job,
and anything reading the record right after a run (detectors, tests) must call it first.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from app import __version__
from app.config import get_settings
from app.db import get_engine
from app.dispatch import semconv
from app.dispatch.exporter import DatabaseSpanProcessor, TruncatingExporter

log = logging.getLogger(__name__)

TRACER_NAME = "dsx.agent"

_lock = threading.Lock()
_provider: TracerProvider | None = None
_override: trace.TracerProvider | None = None


def _metrics_processor() -> SpanProcessor | None:
    try:
        from app.dispatch.metrics import MetricsSpanProcessor
    except ImportError:
        return None
    return MetricsSpanProcessor()


def resource() -> Resource:
    """The process's resource: ``OTEL_SERVICE_NAME``/``OTEL_RESOURCE_ATTRIBUTES`` when set (read by the SDK),
    else service name ``dsx``."""
    detected = Resource.create({"service.version": __version__})
    if str(detected.attributes.get("service.name", "")).startswith("unknown_service"):
        detected = detected.merge(Resource({"service.name": "dsx"}))
    return detected


def _otlp_processor() -> SpanProcessor | None:
    settings = get_settings()
    if not settings.otlp_endpoint:
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    endpoint = settings.otlp_endpoint.rstrip("/")
    if not endpoint.endswith("/v1/traces"):
        endpoint += "/v1/traces"
    exporter = TruncatingExporter(OTLPSpanExporter(endpoint=endpoint), settings.otlp_attribute_max_chars)
    return BatchSpanProcessor(exporter)


def build_provider() -> TracerProvider:
    """A provider wired to the database, the metrics and (optionally) OTLP."""
    provider = TracerProvider(
        resource=resource(),
        sampler=ALWAYS_ON,  # the record is evidence: never sampled, whatever OTEL_TRACES_SAMPLER says
        # Payloads ride on attributes until the database processor moves them out: no length limit here.
        span_limits=SpanLimits(max_span_attributes=256, max_attribute_length=SpanLimits.UNSET,
                               max_span_attribute_length=SpanLimits.UNSET),
    )
    provider.add_span_processor(DatabaseSpanProcessor(get_engine))
    metrics = _metrics_processor()
    if metrics is not None:
        provider.add_span_processor(metrics)
    otlp = _otlp_processor()
    if otlp is not None:
        provider.add_span_processor(otlp)
    return provider


def build_http_provider() -> TracerProvider:
    """The provider of the API's HTTP server spans: exported over OTLP when configured, never written to the
    dispatch record (a poll is not evidence about a run). Without OTLP its spans still get real ids, which is
    what the job carries to the worker so its runs continue the request's trace."""
    provider = TracerProvider(resource=resource())  # honours an incoming sampled flag, unlike the record
    otlp = _otlp_processor()
    if otlp is not None:
        provider.add_span_processor(otlp)
    return provider


def provider() -> trace.TracerProvider:
    """The active provider (an override installed by ``use_provider``, else the process provider)."""
    global _provider
    if _override is not None:
        return _override
    if _provider is None:
        with _lock:
            if _provider is None:
                _provider = build_provider()
    return _provider


_tracers: dict[int, tuple[trace.TracerProvider, trace.Tracer]] = {}


def get_tracer() -> trace.Tracer:
    """The dsx tracer of the active provider (cached: creating a tracer costs more than a span)."""
    active = provider()
    cached = _tracers.get(id(active))
    if cached is None or cached[0] is not active:
        cached = (active, active.get_tracer(TRACER_NAME, __version__))
        _tracers[id(active)] = cached
    return cached[1]


def flush(timeout_ms: int = 30_000) -> None:
    """Write every buffered span of the dispatch record (and push pending OTLP exports)."""
    active = _override if _override is not None else _provider
    flusher = getattr(active, "force_flush", None)
    if flusher is not None and not flusher(timeout_ms):
        log.warning("dispatch record flush did not complete; spans remain buffered")


def reset() -> None:
    """Flush and discard the process provider (tests and forked processes rebuild it from Settings)."""
    global _provider
    with _lock:
        if _provider is not None:
            _provider.shutdown()
        _provider = None
        _tracers.clear()


@contextmanager
def use_provider(override: trace.TracerProvider) -> Iterator[trace.TracerProvider]:
    """Record through ``override`` inside the block (benchmarks compare against a no-op provider)."""
    global _override
    previous, _override = _override, override
    try:
        yield override
    finally:
        _override = previous


def payload_json(value: Any) -> str:
    """Serialise a span payload; anything not JSON-native is stored by its string form."""
    return json.dumps(value, ensure_ascii=False, default=str)


def set_payload(span: trace.Span, *, input: Any = None, output: Any = None,  # noqa: A002
                scrub: Callable[[str], str] | None = None) -> None:
    """Attach full inputs/outputs to ``span`` (stored untruncated; only exported previews are cut).
    ``scrub`` rewrites the serialised JSON (e.g. to replace inline base64 by a marker)."""
    if not span.is_recording():
        return
    if input is not None:
        text = payload_json(input)
        set_payload_json(span, input_json=scrub(text) if scrub else text)
    if output is not None:
        text = payload_json(output)
        set_payload_json(span, output_json=scrub(text) if scrub else text)


def set_payload_json(span: trace.Span, *, input_json: str | None = None, output_json: str | None = None) -> None:
    """Like ``set_payload`` for payloads already serialised to JSON text (saves encoding them twice)."""
    if not span.is_recording():
        return
    if input_json is not None:
        span.set_attribute(semconv.DSX_PAYLOAD_INPUT, input_json)
    if output_json is not None:
        span.set_attribute(semconv.DSX_PAYLOAD_OUTPUT, output_json)
