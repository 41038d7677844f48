"""Call-level metrics fed by the dispatch record: every finished ``chat``/``execute_tool`` span updates the LLM,
token, cost, tool, no-tool-call and reasoning-dropped metrics. The span is the one source of truth for what a call
did, so the metrics can never disagree with the stored record."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode

from app.dispatch import semconv
from app.metrics import (
    LLM_COST,
    LLM_DURATION,
    LLM_NO_TOOL_CALL,
    LLM_REASONING_DROPPED,
    LLM_REQUESTS,
    LLM_TOKENS,
    TOOL_CALLS,
    TOOL_DURATION,
    bound,
    model_label,
    one_of,
    status_class,
)

log = logging.getLogger(__name__)

_LLM_OUTCOMES = frozenset({"tool_call", "text_only", "empty", "error"})
_TOOL_OUTCOMES = frozenset({"ok", "error", "empty"})
_KNOWN_TOOLS = semconv.NAVIGATION_TOOLS | {semconv.SUBMIT_TOOL}


def tool_label(value: object) -> str:
    """A tool name as a label: a model can ask for any name, so only the real tool surface is kept."""
    return one_of(value, _KNOWN_TOOLS)


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
    outcome = one_of(outcome, _LLM_OUTCOMES)
    status = _as_int(attributes.get(semconv.DSX_HTTP_STATUS))
    bound(LLM_REQUESTS, model, outcome, status_class(status)).inc()
    latency_ms = _as_float(attributes.get(semconv.DSX_LLM_LATENCY_MS))
    duration = latency_ms / 1000 if latency_ms is not None else _duration_s(span)
    if duration is not None:
        bound(LLM_DURATION, model).observe(duration)

    if _is_http_200_without_tool_call(attributes, outcome, status):
        bound(LLM_NO_TOOL_CALL, model).inc()
    if attributes.get(semconv.DSX_LLM_REASONING_EXPECTED) is True and \
            attributes.get(semconv.DSX_LLM_REASONING_PRESENT) is False and outcome != "error":
        bound(LLM_REASONING_DROPPED, model).inc()

    for key, kind in ((semconv.GEN_AI_INPUT_TOKENS, "input"), (semconv.GEN_AI_OUTPUT_TOKENS, "output")):
        tokens = _as_float(attributes.get(key))
        if tokens:
            bound(LLM_TOKENS, model, kind).inc(tokens)
    cost = _as_float(attributes.get(semconv.DSX_LLM_COST_USD))
    if cost:
        bound(LLM_COST, model).inc(cost)


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
    bound(TOOL_CALLS, tool, one_of(outcome, _TOOL_OUTCOMES)).inc()
    duration = _duration_s(span)
    if duration is not None:
        bound(TOOL_DURATION, tool).observe(duration)


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
