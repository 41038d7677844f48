"""Detector verdicts as OpenTelemetry GenAI evaluation events, next to the run they judge.

The detectors run after the run's spans have ended, so the verdicts ride on a short ``evaluate_answer`` span, a
child of the run's ``invoke_agent`` span, with one ``gen_ai.evaluation.result`` event per rule that could judge
the answer: the rule's name, a label (``flagged`` or ``pass``) and score (1 or 0), the flag's sentence as the
explanation. Exported over OTLP, tools such as Langfuse or Phoenix show dsx's flags beside the trace; stored,
the span is part of the dispatch record like any other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags

from app.dispatch import semconv, telemetry

FLAGGED, PASSED = "flagged", "pass"


def _events(verdicts: Iterable[Any]) -> list[dict[str, Any]]:
    """Event attributes of each evaluable verdict (a ``Verdict`` of ``app.detectors.rules``)."""
    events = []
    for verdict in verdicts:
        if not verdict.evaluable:
            continue
        finding = verdict.findings[0] if verdict.findings else None
        attributes: dict[str, Any] = {
            semconv.GEN_AI_EVALUATION_NAME: verdict.rule,
            semconv.GEN_AI_EVALUATION_SCORE_LABEL: FLAGGED if finding else PASSED,
            semconv.GEN_AI_EVALUATION_SCORE_VALUE: 1.0 if finding else 0.0,
        }
        if finding is not None:
            attributes[semconv.GEN_AI_EVALUATION_EXPLANATION] = finding.message
            attributes[semconv.DSX_RULE_SEVERITY] = finding.severity.value
            attributes[semconv.DSX_RULE_VERSION] = finding.version
        events.append(attributes)
    return events


def record_verdicts(*, trace_id: str | None, root_span_id: str | None, verdicts: Iterable[Any],
                    identity: dict[str, Any]) -> None:
    """Emit the verdicts on an ``evaluate_answer`` span under the run ``root_span_id`` of ``trace_id``
    (nothing when the run left no record to attach them to)."""
    if not trace_id or not root_span_id:
        return
    parent = SpanContext(int(trace_id, 16), int(root_span_id, 16), is_remote=True,
                         trace_flags=TraceFlags(TraceFlags.SAMPLED))
    context = trace.set_span_in_context(NonRecordingSpan(parent))
    attributes = {**identity, semconv.GEN_AI_OPERATION: semconv.OPERATION_EVALUATE}
    with telemetry.get_tracer().start_as_current_span(semconv.SPAN_EVALUATE, context=context, kind=SpanKind.INTERNAL,
                                                      attributes=attributes) as span:
        for event in _events(verdicts):
            span.add_event(semconv.GEN_AI_EVALUATION_EVENT, event)
