"""Prometheus metrics of dsx: one definition each, and the ways they are fed and read.

Fed four ways:

* ``MetricsSpanProcessor``, an OpenTelemetry span processor, turns finished ``chat``/``execute_tool`` spans of
  the dispatch record into LLM, token, cost, tool, no-tool-call and reasoning-dropped metrics. The span is the
  one source of truth for what a call did, so the metrics can never disagree with the stored record.
* Plain functions (``observe_*``) called by the pipeline and the jobs API for job-level facts.
* ``HttpMetricsMiddleware``, an ASGI middleware on the API, counts and times every request by method, route
  template and status class; the problem handlers (``observe_problem``) and the upload check
  (``timed_upload_check``) add why requests were refused.
* ``JobQueueCollector`` reads queue depth from the jobs table at scrape time, so it is right whichever process
  enqueued or dequeued.

Read at ``GET /metrics``. Celery workers are separate processes, so their metrics reach Prometheus through
prometheus-client's multiprocess mode: every process writes its samples to files under
``PROMETHEUS_MULTIPROC_DIR`` (``Settings.metrics_dir``) and the API aggregates those files on each scrape.
Files are named by host and pid, not pid alone: containers sharing the directory through a volume each have
their own pid namespace, and two processes writing one file would corrupt each other's samples.

Labels are bounded on purpose (model alias, tool name, rule name, outcome, status): values outside a known set
or shape collapse to ``other``, because a label value taken from model output or user input would let one
misbehaving model create unbounded series. Job, parameter and tenant ids are never labels.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from fastapi import APIRouter, Request, Response
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, values
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import get_settings
from app.db import session_scope
from app.dispatch import semconv
from app.jobs.models import Job, JobStatus

log = logging.getLogger(__name__)

NAMESPACE = "dsx"
OTHER = "other"

_JOB_STATUSES = frozenset({"done", "needs_review", "failed", "cancelled"})
_ENGINES = frozenset({"agentic", "single-pass", "auto"})
_LLM_OUTCOMES = frozenset({"tool_call", "text_only", "empty", "error"})
_TOOL_OUTCOMES = frozenset({"ok", "error", "empty"})
_SEVERITIES = frozenset({"info", "warning", "error"})
_KNOWN_TOOLS = semconv.NAVIGATION_TOOLS | {semconv.SUBMIT_TOOL}
_HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# Rule names and engine error codes are written by our own code, not by a model: any identifier-shaped value
# is kept, anything else (or anything surprisingly long) becomes "other".
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
_MODEL_ALIAS_MAX = 100

# Buckets in seconds, chosen from where each duration actually lives: local tools run in milliseconds, provider
# calls in seconds, a parameter in tens of seconds to minutes (a 400-page agentic run took ~2 minutes), and a
# job end to end (queue wait included) up to an hour.
_TOOL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_LLM_BUCKETS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)
_PARAMETER_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0)
_JOB_BUCKETS = (1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0, 7200.0)
# An API request: reads take milliseconds, an upload (stored, checked by MuPDF) up to the check's timeout (10 s).
_HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# An upload check: the envelope refusals take microseconds, a MuPDF read milliseconds to seconds, a timeout
# `admission_timeout_s` (10 s by default, configurable).
_UPLOAD_CHECK_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


_HOST = socket.gethostname().replace("_", "-")


def _process_identifier() -> str:
    # Called on every increment (that is how prometheus-client notices a fork): no system call but getpid.
    return f"{_HOST}-{os.getpid()}"


# Must run before the first metric below is constructed: each value binds its storage class when created.
if values.ValueClass is not values.MutexValue:
    values.ValueClass = values.MultiProcessValue(process_identifier=_process_identifier)

# --- Job level (pipeline and API) -------------------------------------------------------------------------

JOBS_SUBMITTED = Counter(
    "jobs_submitted_total", "Jobs accepted by the API (idempotent replays excluded).",
    ["engine"], namespace=NAMESPACE,
)
JOBS_FINISHED = Counter(
    "jobs_finished_total", "Jobs that reached a terminal state, by that state.",
    ["status"], namespace=NAMESPACE,
)
JOB_DURATION = Histogram(
    "job_duration_seconds", "Time from a job's submission to its terminal state, queue wait included.",
    ["status"], namespace=NAMESPACE, buckets=_JOB_BUCKETS,
)
PARAMETER_DURATION = Histogram(
    "parameter_duration_seconds",
    "Time to answer and review one parameter; `outcome` is `submitted` or the engine's error code.",
    ["model", "engine", "outcome"], namespace=NAMESPACE, buckets=_PARAMETER_BUCKETS,
)
FLAGS = Counter(
    "flags_total", "Review flags raised by the detectors, by rule and severity.",
    ["rule", "severity"], namespace=NAMESPACE,
)

# --- Call level (from the dispatch record's spans) ----------------------------------------------------------

LLM_REQUESTS = Counter(
    "llm_requests_total",
    "LLM call attempts by model alias, outcome (tool_call|text_only|empty|error) and HTTP status class.",
    ["model", "outcome", "status_class"], namespace=NAMESPACE,
)
LLM_DURATION = Histogram(
    "llm_request_duration_seconds", "Provider round trip of one LLM call attempt, as seen by the client.",
    ["model"], namespace=NAMESPACE, buckets=_LLM_BUCKETS,
)
LLM_NO_TOOL_CALL = Counter(
    "llm_http_200_no_tool_call_total",
    "LLM calls that returned HTTP 200 without any tool call on a turn that required one: the silent failure of "
    "a decoding constraint masking tool calls.",
    ["model"], namespace=NAMESPACE,
)
LLM_REASONING_DROPPED = Counter(
    "llm_reasoning_dropped_total",
    "LLM calls configured to reason whose response carried no reasoning (a passthrough dropped it).",
    ["model"], namespace=NAMESPACE,
)
LLM_TOKENS = Counter(
    "llm_tokens_total", "Tokens reported by the provider, by model alias and type (input|output).",
    ["model", "type"], namespace=NAMESPACE,
)
LLM_COST = Counter(
    "llm_cost_usd_total", "LLM spend in US dollars at the configured list prices.",
    ["model"], namespace=NAMESPACE,
)
TOOL_CALLS = Counter(
    "tool_calls_total", "Tool calls executed for the model, by tool and outcome (ok|error|empty).",
    ["tool", "outcome"], namespace=NAMESPACE,
)
TOOL_DURATION = Histogram(
    "tool_call_duration_seconds", "Local execution time of one tool call.",
    ["tool"], namespace=NAMESPACE, buckets=_TOOL_BUCKETS,
)


# --- API level (HTTP middleware, problem handlers, upload check) -------------------------------------------

HTTP_REQUESTS = Counter(
    "http_requests_total",
    "HTTP requests the API answered, by method, route template (`other` when no route matched) and status class.",
    ["method", "route", "status_class"], namespace=NAMESPACE,
)
HTTP_DURATION = Histogram(
    "http_request_duration_seconds", "Time the API took to answer one request, by method and route template.",
    ["method", "route"], namespace=NAMESPACE, buckets=_HTTP_BUCKETS,
)
API_PROBLEMS = Counter(
    "api_problems_total", "RFC 9457 problems the API returned, by their stable code and HTTP status.",
    ["code", "status"], namespace=NAMESPACE,
)
UPLOAD_CHECK_DURATION = Histogram(
    "upload_check_duration_seconds",
    "Time to check one upload before it is stored; `outcome` is `admitted` or the refusal's code.",
    ["outcome"], namespace=NAMESPACE, buckets=_UPLOAD_CHECK_BUCKETS,
)
# Refusals that mean a hostile or pathological PDF (an alert watches them): their series exist from the start, at
# zero, so the first one after a restart is an increase Prometheus can see.
UPLOAD_CHECK_FAILURE_CODES = ("pdf_check_crashed", "pdf_check_timeout", "pdf_too_complex")
_UPLOAD_CHECK_FAILURE_STATUS = 422


# --- Label hygiene ------------------------------------------------------------------------------------------

def _one_of(value: object, allowed: frozenset[str]) -> str:
    text = str(value) if value is not None else ""
    return text if text in allowed else OTHER


def _identifier(value: object) -> str:
    text = str(value) if value is not None else ""
    return text if _IDENTIFIER.match(text) else OTHER


def model_label(value: object) -> str:
    """A model alias as a label: aliases come from configuration, so they are kept, but never empty or huge."""
    text = str(value).strip() if value is not None else ""
    if not text:
        return "unknown"
    return text[:_MODEL_ALIAS_MAX]


def tool_label(value: object) -> str:
    """A tool name as a label: a model can ask for any name, so only the real tool surface is kept."""
    return _one_of(value, _KNOWN_TOOLS)


def _is_http_status(status: object) -> bool:
    return isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599


def _status_class(status: object) -> str:
    return f"{status // 100}xx" if _is_http_status(status) else "none"  # type: ignore[operator]


# --- Job-level observations ---------------------------------------------------------------------------------

def observe_job_submitted(engine: str) -> None:
    JOBS_SUBMITTED.labels(engine=_one_of(engine, _ENGINES)).inc()


def observe_job_finished(status: str, duration_s: float | None) -> None:
    """Count a job's terminal state; ``duration_s`` is submission → terminal (skipped when unknown)."""
    label = _one_of(status, _JOB_STATUSES)
    JOBS_FINISHED.labels(status=label).inc()
    if duration_s is not None and duration_s >= 0:
        JOB_DURATION.labels(status=label).observe(duration_s)


def observe_parameter(duration_s: float, engine: str, outcome: str | None = None, model: str | None = None) -> None:
    """One answered parameter. ``outcome`` is ``None``/``submitted`` for an answer, else the engine error code."""
    PARAMETER_DURATION.labels(
        model=model_label(model), engine=_one_of(engine, _ENGINES), outcome=_identifier(outcome or "submitted")
    ).observe(max(duration_s, 0.0))


def observe_flags(flags: Iterable[tuple[str, str]]) -> None:
    """Count raised flags, given as ``(rule, severity)`` pairs."""
    for rule, severity in flags:
        FLAGS.labels(rule=_identifier(rule), severity=_one_of(severity, _SEVERITIES)).inc()


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    """``end - start`` in seconds; naive datetimes (SQLite drops the zone) are taken as UTC."""
    if start is None or end is None:
        return None
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    if end.tzinfo is None:
        end = end.replace(tzinfo=UTC)
    return (end - start).total_seconds()


# --- Span-derived observations -----------------------------------------------------------------------------

@lru_cache(maxsize=4096)
def _child(metric: MetricWrapperBase, *labels: str) -> MetricWrapperBase:
    """``metric.labels(*labels)``, memoised: spans end on the agent's hot path, and label values are bounded,
    so the bound children can be kept instead of looked up (and validated) again on every span."""
    return metric.labels(*labels)


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _as_float(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number == number and number >= 0 else None  # drop NaN and negatives


def _duration_s(span: ReadableSpan) -> float | None:
    if span.start_time is None or span.end_time is None:
        return None
    return max(span.end_time - span.start_time, 0) / 1e9


def _span_model(name: str, attributes: Mapping[str, Any]) -> str:
    alias = attributes.get(semconv.DSX_MODEL_ALIAS) or attributes.get(semconv.GEN_AI_REQUEST_MODEL)
    if not alias:
        alias = name[len(semconv.SPAN_CHAT_PREFIX) + 1:]
    return model_label(alias)


def observe_chat_span(span: ReadableSpan) -> None:
    """Metrics of one LLM call attempt (a ``chat {model}`` span)."""
    attributes = span.attributes or {}
    model = _span_model(span.name, attributes)
    errored = span.status is not None and span.status.status_code is StatusCode.ERROR
    outcome = attributes.get(semconv.DSX_LLM_OUTCOME) or ("error" if errored else None)
    outcome = _one_of(outcome, _LLM_OUTCOMES)
    status = _as_int(attributes.get(semconv.DSX_HTTP_STATUS))
    _child(LLM_REQUESTS, model, outcome, _status_class(status)).inc()
    latency_ms = _as_float(attributes.get(semconv.DSX_LLM_LATENCY_MS))
    duration = latency_ms / 1000 if latency_ms is not None else _duration_s(span)
    if duration is not None:
        _child(LLM_DURATION, model).observe(duration)

    if _is_http_200_without_tool_call(attributes, outcome, status):
        _child(LLM_NO_TOOL_CALL, model).inc()
    if attributes.get(semconv.DSX_LLM_REASONING_EXPECTED) is True and \
            attributes.get(semconv.DSX_LLM_REASONING_PRESENT) is False and outcome != "error":
        _child(LLM_REASONING_DROPPED, model).inc()

    for key, kind in ((semconv.GEN_AI_INPUT_TOKENS, "input"), (semconv.GEN_AI_OUTPUT_TOKENS, "output")):
        tokens = _as_float(attributes.get(key))
        if tokens:
            _child(LLM_TOKENS, model, kind).inc(tokens)
    cost = _as_float(attributes.get(semconv.DSX_LLM_COST_USD))
    if cost:
        _child(LLM_COST, model).inc(cost)


def _is_http_200_without_tool_call(attributes: Mapping[str, Any], outcome: str, status: int | None) -> bool:
    """A successful call that made no tool call although one was required.

    Every dsx turn answers through ``submit_extraction``, so a turn counts as requiring a tool unless the
    span says otherwise. A call whose status attribute is missing but did not fail went through the provider
    SDK's success path, which is HTTP 200.
    """
    if attributes.get(semconv.DSX_LLM_TOOL_REQUIRED) is False or outcome == "error":
        return False
    if status is not None and status != 200:
        return False
    calls = _as_int(attributes.get(semconv.DSX_LLM_TOOL_CALLS))
    if calls is None:
        return outcome in ("text_only", "empty")
    return calls == 0


def observe_tool_span(span: ReadableSpan) -> None:
    """Metrics of one tool execution (an ``execute_tool {tool}`` span)."""
    attributes = span.attributes or {}
    name = attributes.get(semconv.GEN_AI_TOOL_NAME) or span.name[len(semconv.SPAN_TOOL_PREFIX) + 1:]
    tool = tool_label(name)
    errored = span.status is not None and span.status.status_code is StatusCode.ERROR
    outcome = attributes.get(semconv.DSX_TOOL_OUTCOME) or ("error" if errored else "ok")
    _child(TOOL_CALLS, tool, _one_of(outcome, _TOOL_OUTCOMES)).inc()
    duration = _duration_s(span)
    if duration is not None:
        _child(TOOL_DURATION, tool).observe(duration)


class MetricsSpanProcessor(SpanProcessor):
    """Updates call-level metrics as spans of the dispatch record end.

    Runs synchronously inside ``span.end()``, so it only increments in-memory (or mmapped) values, and it never
    raises: a metrics bug must not break the agent loop that is ending the span.
    """

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        try:
            if span.name.startswith(semconv.SPAN_CHAT_PREFIX + " "):
                observe_chat_span(span)
            elif span.name.startswith(semconv.SPAN_TOOL_PREFIX + " "):
                observe_tool_span(span)
        except Exception:  # noqa: BLE001 - see the class docstring
            log.exception("could not record metrics for span %r", span.name)

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


# --- API observations --------------------------------------------------------------------------------------

def observe_problem(code: str, status: int) -> None:
    """Count one RFC 9457 problem the API returned."""
    status_label = str(status) if _is_http_status(status) else OTHER
    _child(API_PROBLEMS, _identifier(code), status_label).inc()


@contextmanager
def timed_upload_check() -> Iterator[None]:
    """Time the enclosed upload check: ``admitted`` when it returns, else the ``code`` of the typed error it
    raises (``error`` for an exception without one)."""
    started = time.perf_counter()
    outcome = "error"
    try:
        yield
        outcome = "admitted"
    except Exception as exc:
        outcome = getattr(exc, "code", None) or "error"
        raise
    finally:
        _child(UPLOAD_CHECK_DURATION, _identifier(outcome)).observe(time.perf_counter() - started)


class HttpMetricsMiddleware:
    """Counts and times every HTTP request the API answers, ``/metrics`` itself excepted.

    A plain ASGI middleware rather than Starlette's ``BaseHTTPMiddleware``, which would buffer streamed
    responses. The route label is the matched route's template (``/v1/jobs/{job_id}``), never the raw path, and
    ``other`` when nothing matched: a scanner requesting random paths adds no series.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # Built once per API process: only the API returns problems.
        for code in UPLOAD_CHECK_FAILURE_CODES:
            API_PROBLEMS.labels(code, str(_UPLOAD_CHECK_FAILURE_STATUS))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status: int | None = None

        async def send_and_note_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, send_and_note_status)
        except Exception:
            status = status or 500  # raised before a response started: the server's error middleware answers 500
            raise
        finally:
            # None only when the client went away (cancelled) before any answer: nothing was answered to count.
            if status is not None:
                self._observe(scope, status, time.perf_counter() - started)

    @staticmethod
    def _observe(scope: Scope, status: int, duration_s: float) -> None:
        route = route_template(scope)
        if route == "/metrics":
            return
        method = _one_of(scope.get("method"), _HTTP_METHODS)
        _child(HTTP_REQUESTS, method, route, _status_class(status)).inc()
        _child(HTTP_DURATION, method, route).observe(duration_s)


def route_template(scope: Scope) -> str:
    """The template of the route that handled a request (its scope after routing), or ``other``.

    FastAPI leaves its route in the scope. A mount (the review dashboard's static files) leaves only the app it
    mounts, which is looked up among the application's mounts.
    """
    route = scope.get("route")
    template = getattr(route, "path_format", None)
    if isinstance(template, str):
        return template
    endpoint = scope.get("endpoint")
    application = scope.get("app")
    if endpoint is not None and application is not None:
        for candidate in getattr(application, "routes", ()):
            if isinstance(candidate, Mount) and candidate.app is endpoint:
                return candidate.path + "/{path}"
    return OTHER


# --- Scrape-time collectors and the /metrics route -------------------------------------------------------

class JobQueueCollector(Collector):
    """Queue depth from the jobs table, read at scrape time.

    The database, not the broker, is the source: it is the same for the embedded and production brokers, and a
    job counts as waiting until a worker has actually started it.
    """

    def describe(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("dsx_queue_depth", "Jobs waiting for a worker (status queued).")
        yield GaugeMetricFamily("dsx_queue_oldest_age_seconds", "Age of the oldest queued job; 0 when none wait.")
        yield GaugeMetricFamily("dsx_jobs_running", "Jobs a worker is processing now.")

    def collect(self) -> Iterator[Metric]:
        try:
            with session_scope() as session:
                queued, oldest = session.execute(
                    select(func.count(), func.min(Job.created_at)).where(Job.status == JobStatus.queued.value)
                ).one()
                running = session.scalar(
                    select(func.count()).select_from(Job).where(Job.status == JobStatus.running.value)
                )
        except Exception:  # noqa: BLE001 - a database outage must not hide every other metric
            log.warning("queue metrics unavailable: the jobs table could not be read", exc_info=True)
            return
        age = seconds_between(oldest, datetime.now(UTC)) if oldest is not None else 0.0
        yield GaugeMetricFamily("dsx_queue_depth", "Jobs waiting for a worker (status queued).", value=queued)
        yield GaugeMetricFamily("dsx_queue_oldest_age_seconds", "Age of the oldest queued job; 0 when none wait.",
                                value=max(age or 0.0, 0.0))
        yield GaugeMetricFamily("dsx_jobs_running", "Jobs a worker is processing now.", value=running or 0)


class _ProcessRegistry(Collector):
    """This process's own registry, for the single-process case (no multiprocess directory configured)."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def scrape_registry() -> CollectorRegistry:
    """The registry one scrape reads: every process's samples (multiprocess mode) or this process's, plus the
    queue gauges."""
    registry = CollectorRegistry(auto_describe=False)
    metrics_dir = get_settings().metrics_dir
    if metrics_dir is not None:
        MultiProcessCollector(registry, path=str(metrics_dir))
    else:
        registry.register(_ProcessRegistry())
    registry.register(JobQueueCollector())
    return registry


router = APIRouter(tags=["metrics"])


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Prometheus exposition, text or OpenMetrics as the scraper asks (unauthenticated, like every scrape
    target: keep it off the public network)."""
    encode, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(scrape_registry()), media_type=content_type)
