"""Prometheus metrics of dsx: one definition each, with the label rules every feeder uses.

This module imports nothing from the rest of dsx; each domain feeds its own metrics:

* ``app.dispatch.metrics.MetricsSpanProcessor``, an OpenTelemetry span processor, turns finished
  ``chat``/``execute_tool`` spans of the dispatch record into LLM, token, cost, tool, no-tool-call and
  reasoning-dropped metrics.
* Plain functions (``observe_*``) called by the extraction flow and the jobs API for job-level facts.
* ``app.api.metrics.HttpMetricsMiddleware`` counts and times every request at the HTTP edge; the problem handlers
  (``observe_problem``) and the upload check (``timed_upload_check``) add why requests were refused.
* ``app.jobs.metrics.JobQueueCollector`` reads queue depth from the jobs table at scrape time.

Read at ``GET /metrics`` of the API and of each worker (``DSX_WORKER_METRICS_PORT``). Uvicorn workers and Celery
pool children are separate processes, so the processes of one host share samples through prometheus-client's
multiprocess mode: every process writes its samples to files under ``PROMETHEUS_MULTIPROC_DIR``
(``Settings.metrics_dir``, one directory per host) and that host's endpoint adds them up on each scrape
(``app.observability.host_metrics``). Files are named by host and pid, not pid alone, so that a file's owner can be
told apart even in a directory that outlived a container (each has its own pid namespace).

Labels are bounded on purpose (model alias, tool name, rule name, outcome, status): values outside a known set
or shape collapse to ``other``, because a label value taken from model output or user input would let one
misbehaving model create unbounded series. Job, parameter and tenant ids are never labels.
"""

from __future__ import annotations

import logging
import os
import platform
import re
import socket
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache

from prometheus_client import Counter, Histogram, values
from prometheus_client.core import InfoMetricFamily, Metric
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.registry import Collector

from app import __version__
from app.contracts import ENGINE_NAMES

log = logging.getLogger(__name__)

NAMESPACE = "dsx"
OTHER = "other"

_JOB_STATUSES = frozenset({"done", "needs_review", "failed", "cancelled"})
_ENGINES = frozenset(ENGINE_NAMES)
_SEVERITIES = frozenset({"info", "warning", "error"})
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


# Underscores separate the metric type from the identifier in a file name, so the host name must not have any.
HOST = socket.gethostname().replace("_", "-")


def process_identifier(pid: int) -> str:
    """How a process's multiprocess files are named: by host and pid."""
    return f"{HOST}-{pid}"


def _process_identifier() -> str:
    # Called on every increment (that is how prometheus-client notices a fork): no system call but getpid.
    return process_identifier(os.getpid())


def file_owner(file_name: str) -> tuple[str, int] | None:
    """The host and pid that wrote a multiprocess file (``counter_myhost-42.db`` -> ``("myhost", 42)``), or
    ``None`` for a name this module did not make."""
    stem, dot, suffix = file_name.rpartition(".")
    _kind, _, identifier = stem.rpartition("_")
    host, _, pid = identifier.rpartition("-")
    if not dot or suffix != "db" or not host or not pid.isdigit():
        return None
    return host, int(pid)


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
UPLOAD_CHECK_FAILURE_STATUS = 422


# --- Build ------------------------------------------------------------------------------------------------

class BuildInfo(Collector):
    """``dsx_build_info{version, revision, python_version} 1``, exported by the API and every worker: which build
    each replica runs. A collector rather than an ``Info`` metric, which multiprocess mode cannot aggregate."""

    def __init__(self, revision: str | None) -> None:
        self.labels = {"version": __version__, "revision": revision or "unknown",
                       "python_version": platform.python_version()}

    def describe(self) -> Iterator[Metric]:
        return self.collect()

    def collect(self) -> Iterator[Metric]:
        yield InfoMetricFamily("dsx_build", "The dsx build this process runs.", value=self.labels)


# --- Label hygiene ------------------------------------------------------------------------------------------

def one_of(value: object, allowed: frozenset[str]) -> str:
    text = str(value) if value is not None else ""
    return text if text in allowed else OTHER


def identifier_label(value: object) -> str:
    text = str(value) if value is not None else ""
    return text if _IDENTIFIER.match(text) else OTHER


def model_label(value: object) -> str:
    """A model alias as a label: aliases come from configuration, so they are kept, but never empty or huge."""
    text = str(value).strip() if value is not None else ""
    if not text:
        return "unknown"
    return text[:_MODEL_ALIAS_MAX]


def is_http_status(status: object) -> bool:
    return isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599


def status_class(status: object) -> str:
    return f"{status // 100}xx" if is_http_status(status) else "none"  # type: ignore[operator]


# --- Job-level observations ---------------------------------------------------------------------------------

def observe_job_submitted(engine: str) -> None:
    JOBS_SUBMITTED.labels(engine=one_of(engine, _ENGINES)).inc()


def observe_job_finished(status: str, duration_s: float | None) -> None:
    """Count a job's terminal state; ``duration_s`` is submission → terminal (skipped when unknown)."""
    label = one_of(status, _JOB_STATUSES)
    JOBS_FINISHED.labels(status=label).inc()
    if duration_s is not None and duration_s >= 0:
        JOB_DURATION.labels(status=label).observe(duration_s)


def observe_parameter(duration_s: float, engine: str, outcome: str | None = None, model: str | None = None) -> None:
    """One answered parameter. ``outcome`` is ``None``/``submitted`` for an answer, else the engine error code."""
    PARAMETER_DURATION.labels(
        model=model_label(model), engine=one_of(engine, _ENGINES), outcome=identifier_label(outcome or "submitted")
    ).observe(max(duration_s, 0.0))


def observe_flags(flags: Iterable[tuple[str, str]]) -> None:
    """Count raised flags, given as ``(rule, severity)`` pairs."""
    for rule, severity in flags:
        FLAGS.labels(rule=identifier_label(rule), severity=one_of(severity, _SEVERITIES)).inc()


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    """``end - start`` in seconds; naive datetimes (SQLite drops the zone) are taken as UTC."""
    if start is None or end is None:
        return None
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    if end.tzinfo is None:
        end = end.replace(tzinfo=UTC)
    return (end - start).total_seconds()


@lru_cache(maxsize=4096)
def bound(metric: MetricWrapperBase, *labels: str) -> MetricWrapperBase:
    """``metric.labels(*labels)``, memoised: spans end on the agent's hot path, and label values are bounded,
    so the bound children can be kept instead of looked up (and validated) again on every span."""
    return metric.labels(*labels)


# --- API observations --------------------------------------------------------------------------------------

def observe_problem(code: str, status: int) -> None:
    """Count one RFC 9457 problem the API returned."""
    status_label = str(status) if is_http_status(status) else OTHER
    bound(API_PROBLEMS, identifier_label(code), status_label).inc()


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
        bound(UPLOAD_CHECK_DURATION, identifier_label(outcome)).observe(time.perf_counter() - started)
