"""Trace context across process boundaries, in W3C Trace Context form (``traceparent``/``tracestate``).

The API's server span is carried with the job to the worker (Celery message headers), where it becomes the parent
of each ``invoke_agent``; every outgoing LLM call carries the current span as ``traceparent`` so that a gateway
(a LiteLLM proxy) continues the same trace. The request id and tenant ride along in the same headers, so the
worker's log lines name the request that submitted the job.

The W3C propagator is used explicitly rather than the process-global one, so ``OTEL_PROPAGATORS`` set for some
other library cannot switch the dispatch record to another header format.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from opentelemetry import context as otel_context
from opentelemetry.context import Context
from opentelemetry.trace import format_trace_id, get_current_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from app.observability import context as log_context

_PROPAGATOR = TraceContextTextMapPropagator()
TRACE_HEADERS = frozenset(_PROPAGATOR.fields)  # traceparent, tracestate
REQUEST_ID_HEADER = "dsx_request_id"
TENANT_HEADER = "dsx_tenant"


def current_headers(context: Context | None = None) -> dict[str, str]:
    """``traceparent`` (and ``tracestate``) of the current span, or of ``context``; empty when there is none."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=context)
    return carrier


def extract(carrier: Mapping[str, str] | None) -> Context | None:
    """The remote parent described by ``carrier``'s trace headers, or ``None`` when it holds no valid one."""
    if not carrier:
        return None
    extracted = _PROPAGATOR.extract({k: v for k, v in carrier.items() if isinstance(v, str)})
    return extracted if get_current_span(extracted).get_span_context().is_valid else None


def trace_id_of(context: Context | None) -> str | None:
    if context is None:
        return None
    span_context = get_current_span(context).get_span_context()
    return format_trace_id(span_context.trace_id) if span_context.is_valid else None


def job_message_headers() -> dict[str, str]:
    """Headers for a job's queue message: the submitting request's trace context, request id and tenant."""
    headers = current_headers()
    bound = log_context.current()
    if bound.get("request_id"):
        headers[REQUEST_ID_HEADER] = bound["request_id"]
    if bound.get("tenant"):
        headers[TENANT_HEADER] = bound["tenant"]
    return headers


_run_parent: ContextVar[Context | None] = ContextVar("dsx_run_parent", default=None)


@contextmanager
def runs_continue(parent: Context | None) -> Iterator[None]:
    """Inside the block, each ``invoke_agent`` is a child of ``parent`` (the submitting request's span) instead
    of the root of a new trace, and log lines carry its trace id. ``None``: unchanged (runs start their own
    traces)."""
    token = _run_parent.set(parent)
    attached = otel_context.attach(parent) if parent is not None else None
    try:
        yield
    finally:
        if attached is not None:
            otel_context.detach(attached)
        _run_parent.reset(token)


def run_parent() -> Context:
    """The parent context of an ``invoke_agent`` span: the job's remote parent, else an empty context (a new
    trace, whatever span the caller happens to be in)."""
    return _run_parent.get() or Context()
