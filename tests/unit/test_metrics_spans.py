"""Call-level metrics derived from dispatch-record spans, and the job-level observation functions.

Spans are real OpenTelemetry SDK spans ended through a provider carrying ``MetricsSpanProcessor``; the
assertions read the process registry before and after, so other tests' increments do not matter.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode
from prometheus_client import REGISTRY

from app import metrics
from app.dispatch import metrics as span_metrics
from app.dispatch import semconv
from app.dispatch.metrics import MetricsSpanProcessor

T0 = 1_700_000_000_000_000_000


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def tracer():  # noqa: ANN201
    provider = TracerProvider()
    provider.add_span_processor(MetricsSpanProcessor())
    return provider.get_tracer("test")


@pytest.fixture
def model() -> str:
    return f"model-{uuid.uuid4().hex[:8]}"


def end_span(tracer, name: str, attributes: dict[str, Any], seconds: float = 1.0,  # noqa: ANN001
             error: bool = False) -> None:
    span = tracer.start_span(name, attributes=attributes, start_time=T0)
    if error:
        span.set_status(Status(StatusCode.ERROR, "boom"))
    span.end(end_time=T0 + int(seconds * 1e9))


def chat(tracer, model: str, **attributes: Any) -> None:  # noqa: ANN001
    end_span(tracer, semconv.chat_span_name(model), {semconv.DSX_MODEL_ALIAS: model, **attributes})


NO_TOOL = "dsx_llm_http_200_no_tool_call_total"


def test_http_200_turn_without_tool_call_is_counted(tracer, model: str) -> None:  # noqa: ANN001
    chat(tracer, model, **{semconv.DSX_HTTP_STATUS: 200, semconv.DSX_LLM_TOOL_CALLS: 0,
                           semconv.DSX_LLM_TOOL_REQUIRED: True, semconv.DSX_LLM_OUTCOME: "text_only"})
    assert value(NO_TOOL, model=model) == 1
    assert value("dsx_llm_requests_total", model=model, outcome="text_only", status_class="2xx") == 1


@pytest.mark.parametrize("attributes", [
    {semconv.DSX_HTTP_STATUS: 200, semconv.DSX_LLM_TOOL_CALLS: 1, semconv.DSX_LLM_OUTCOME: "tool_call"},
    {semconv.DSX_HTTP_STATUS: 200, semconv.DSX_LLM_TOOL_CALLS: 0, semconv.DSX_LLM_TOOL_REQUIRED: False,
     semconv.DSX_LLM_OUTCOME: "text_only"},
    {semconv.DSX_HTTP_STATUS: 429, semconv.DSX_LLM_TOOL_CALLS: 0, semconv.DSX_LLM_OUTCOME: "error"},
    {semconv.DSX_HTTP_STATUS: 400, semconv.DSX_LLM_OUTCOME: "text_only"},
], ids=["made-a-tool-call", "tool-not-required", "rate-limited", "http-400"])
def test_other_calls_are_not_no_tool_call(tracer, model: str, attributes: dict) -> None:  # noqa: ANN001
    chat(tracer, model, **attributes)
    assert value(NO_TOOL, model=model) == 0
    outcome = attributes[semconv.DSX_LLM_OUTCOME]
    status_class = f"{attributes[semconv.DSX_HTTP_STATUS] // 100}xx"
    assert value("dsx_llm_requests_total", model=model, outcome=outcome, status_class=status_class) == 1


def test_without_a_tool_count_the_outcome_decides(tracer, model: str) -> None:  # noqa: ANN001
    chat(tracer, model, **{semconv.DSX_LLM_OUTCOME: "empty"})
    chat(tracer, model, **{semconv.DSX_LLM_OUTCOME: "tool_call"})
    chat(tracer, model, **{semconv.DSX_LLM_OUTCOME: "error"})
    assert value(NO_TOOL, model=model) == 1
    assert value("dsx_llm_requests_total", model=model, outcome="empty", status_class="none") == 1


def test_errored_span_without_outcome_counts_as_error(tracer, model: str) -> None:  # noqa: ANN001
    end_span(tracer, semconv.chat_span_name(model), {semconv.GEN_AI_REQUEST_MODEL: model}, error=True)
    assert value("dsx_llm_requests_total", model=model, outcome="error", status_class="none") == 1
    assert value(NO_TOOL, model=model) == 0


def test_tokens_cost_and_latency(tracer, model: str) -> None:  # noqa: ANN001
    chat(tracer, model, **{semconv.GEN_AI_INPUT_TOKENS: 1200, semconv.GEN_AI_OUTPUT_TOKENS: 80,
                           semconv.DSX_LLM_COST_USD: 0.0125, semconv.DSX_LLM_LATENCY_MS: 1500.0,
                           semconv.DSX_LLM_OUTCOME: "tool_call", semconv.DSX_LLM_TOOL_CALLS: 1})
    chat(tracer, model, **{semconv.GEN_AI_INPUT_TOKENS: 300, semconv.DSX_LLM_COST_USD: 0.0025,
                           semconv.DSX_LLM_OUTCOME: "tool_call", semconv.DSX_LLM_TOOL_CALLS: 1})
    assert value("dsx_llm_tokens_total", model=model, type="input") == 1500
    assert value("dsx_llm_tokens_total", model=model, type="output") == 80
    assert value("dsx_llm_cost_usd_total", model=model) == pytest.approx(0.015)
    # The first call reports its provider latency (1.5 s); the second falls back to the span's 1 s.
    assert value("dsx_llm_request_duration_seconds_count", model=model) == 2
    assert value("dsx_llm_request_duration_seconds_sum", model=model) == pytest.approx(2.5)
    assert value("dsx_llm_request_duration_seconds_bucket", model=model, le="1.0") == 1
    assert value("dsx_llm_request_duration_seconds_bucket", model=model, le="2.0") == 2


def test_reasoning_dropped_only_when_expected_and_absent(tracer, model: str) -> None:  # noqa: ANN001
    expected, present = semconv.DSX_LLM_REASONING_EXPECTED, semconv.DSX_LLM_REASONING_PRESENT
    chat(tracer, model, **{expected: True, present: False, semconv.DSX_LLM_OUTCOME: "tool_call"})
    chat(tracer, model, **{expected: True, present: True, semconv.DSX_LLM_OUTCOME: "tool_call"})
    chat(tracer, model, **{expected: False, present: False, semconv.DSX_LLM_OUTCOME: "tool_call"})
    chat(tracer, model, **{expected: True, present: False, semconv.DSX_LLM_OUTCOME: "error"})
    assert value("dsx_llm_reasoning_dropped_total", model=model) == 1


def test_tool_spans_by_tool_and_outcome(tracer) -> None:  # noqa: ANN001
    before = {
        ("search_text", "empty"): value("dsx_tool_calls_total", tool="search_text", outcome="empty"),
        ("inspect_page", "error"): value("dsx_tool_calls_total", tool="inspect_page", outcome="error"),
        ("other", "error"): value("dsx_tool_calls_total", tool="other", outcome="error"),
    }
    duration_before = value("dsx_tool_call_duration_seconds_bucket", tool="search_text", le="0.05")
    end_span(tracer, semconv.tool_span_name("search_text"),
             {semconv.GEN_AI_TOOL_NAME: "search_text", semconv.DSX_TOOL_OUTCOME: "empty"}, seconds=0.03)
    end_span(tracer, semconv.tool_span_name("inspect_page"), {}, error=True)
    # A model may ask for any tool name; it must not become a label value of its own.
    end_span(tracer, semconv.tool_span_name("delete_everything"),
             {semconv.GEN_AI_TOOL_NAME: "delete_everything", semconv.DSX_TOOL_OUTCOME: "error"})
    assert value("dsx_tool_calls_total", tool="search_text", outcome="empty") == before[("search_text", "empty")] + 1
    assert value("dsx_tool_calls_total", tool="inspect_page", outcome="error") == before[("inspect_page", "error")] + 1
    assert value("dsx_tool_calls_total", tool="other", outcome="error") == before[("other", "error")] + 1
    assert value("dsx_tool_calls_total", tool="delete_everything", outcome="error") == 0
    assert value("dsx_tool_call_duration_seconds_bucket", tool="search_text", le="0.05") == duration_before + 1


def test_other_spans_are_ignored(tracer, model: str) -> None:  # noqa: ANN001
    end_span(tracer, semconv.SPAN_INVOKE_AGENT, {semconv.DSX_MODEL_ALIAS: model, semconv.DSX_HTTP_STATUS: 200,
                                                 semconv.DSX_LLM_TOOL_CALLS: 0})
    end_span(tracer, "chatter", {semconv.DSX_MODEL_ALIAS: model, semconv.DSX_LLM_OUTCOME: "text_only"})
    samples = [s for family in REGISTRY.collect() for s in family.samples if s.labels.get("model") == model]
    assert samples == []


def test_processor_survives_malformed_attributes(tracer, model: str) -> None:  # noqa: ANN001
    chat(tracer, model, **{semconv.DSX_HTTP_STATUS: "teapot", semconv.GEN_AI_INPUT_TOKENS: "lots",
                           semconv.DSX_LLM_COST_USD: -3.0, semconv.DSX_LLM_OUTCOME: "weird"})
    assert value("dsx_llm_requests_total", model=model, outcome="other", status_class="none") == 1
    assert value("dsx_llm_tokens_total", model=model, type="input") == 0
    assert value("dsx_llm_cost_usd_total", model=model) == 0


def test_processor_never_raises(tracer, model: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    called: list[object] = []

    def broken(span: object) -> None:
        called.append(span)
        raise RuntimeError("metrics bug")

    monkeypatch.setattr(span_metrics, "observe_chat_span", broken)
    chat(tracer, model, **{semconv.DSX_LLM_OUTCOME: "tool_call"})  # must not propagate
    assert len(called) == 1  # the processor did reach the broken observer, and swallowed its error


def test_job_level_observations_keep_labels_bounded() -> None:
    done = value("dsx_jobs_finished_total", status="done")
    other = value("dsx_jobs_finished_total", status="other")
    durations = value("dsx_job_duration_seconds_count", status="done")
    metrics.observe_job_finished("done", 12.5)
    metrics.observe_job_finished("exploded", None)
    assert value("dsx_jobs_finished_total", status="done") == done + 1
    assert value("dsx_jobs_finished_total", status="other") == other + 1
    assert value("dsx_job_duration_seconds_count", status="done") == durations + 1

    flags = {key: value("dsx_flags_total", rule=key[0], severity=key[1])
             for key in [("tool_bypass", "warning"), ("other", "other")]}
    metrics.observe_flags([("tool_bypass", "warning"), ("Robert'); DROP TABLE--", "catastrophic")])
    assert value("dsx_flags_total", rule="tool_bypass", severity="warning") == flags[("tool_bypass", "warning")] + 1
    assert value("dsx_flags_total", rule="other", severity="other") == flags[("other", "other")] + 1


def test_parameter_outcome_defaults_to_submitted(model: str) -> None:
    metrics.observe_parameter(4.0, "agentic", None, model)
    metrics.observe_parameter(9.0, "single-pass", "timeout", model)
    metrics.observe_parameter(1.0, "warp-drive", "x" * 200, model)
    assert value("dsx_parameter_duration_seconds_count", model=model, engine="agentic", outcome="submitted") == 1
    assert value("dsx_parameter_duration_seconds_sum", model=model, engine="single-pass", outcome="timeout") == 9
    assert value("dsx_parameter_duration_seconds_count", model=model, engine="other", outcome="other") == 1


def test_model_labels_are_never_empty_or_huge() -> None:
    assert metrics.model_label(None) == "unknown"
    assert metrics.model_label("  ") == "unknown"
    assert len(metrics.model_label("m" * 1000)) == 100


def test_seconds_between_accepts_naive_utc() -> None:
    aware = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    naive = datetime(2026, 1, 1, 11, 59, 30)
    assert metrics.seconds_between(naive, aware) == 30
    assert metrics.seconds_between(aware, aware + timedelta(minutes=2)) == 120
    assert metrics.seconds_between(None, aware) is None
