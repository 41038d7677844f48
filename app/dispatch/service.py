"""Reading the dispatch record: a trace's or a job's spans, flat or as a tree.

Readers (detectors, the trace API, the dashboard) come here rather than querying ``spans`` themselves,
so that ordering and tree-building are the same everywhere: by start time, children under their
parent, and a span whose parent is missing (not flushed, or from another process) shown as a root
rather than lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.dispatch.models import SpanRecord


def load_trace(session: Session, trace_id: str) -> list[SpanRecord]:
    """Every stored span of one trace, by start time."""
    query = select(SpanRecord).where(SpanRecord.trace_id == trace_id)
    return list(session.scalars(query.order_by(SpanRecord.start_ns, SpanRecord.id)))


def load_run(session: Session, trace_id: str, root_span_id: str | None) -> list[SpanRecord]:
    """The spans of one engine run: its root span and the root's descendants. A job's runs share the trace of
    the request that submitted it, so a trace alone no longer names one run (without a root id: the trace)."""
    spans = load_trace(session, trace_id)
    if root_span_id is None:
        return spans
    children: dict[str | None, list[SpanRecord]] = {}
    for span in spans:
        children.setdefault(span.parent_span_id, []).append(span)
    keep = {root_span_id}
    stack = [root_span_id]
    while stack:
        for child in children.get(stack.pop(), []):
            keep.add(child.span_id)
            stack.append(child.span_id)
    return [span for span in spans if span.span_id in keep]


def load_job_spans(session: Session, job_id: str, parameter_id: int | None = None) -> list[SpanRecord]:
    """Every stored span of a job (optionally of one parameter), by start time."""
    query = select(SpanRecord).where(SpanRecord.job_id == job_id)
    if parameter_id is not None:
        query = query.where(SpanRecord.parameter_id == parameter_id)
    return list(session.scalars(query.order_by(SpanRecord.start_ns, SpanRecord.id)))


def span_dict(span: SpanRecord, *, include_payload: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id,
        "name": span.name,
        "kind": span.kind,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "duration_ms": span.duration_ms,
        "status_code": span.status_code,
        "status_message": span.status_message,
        "attributes": span.attributes or {},
        "events": span.events or [],
        "job_id": span.job_id,
        "parameter_id": span.parameter_id,
    }
    if include_payload:
        body["payload"] = span.payload or {}
    return body


def build_tree(spans: Iterable[SpanRecord], *, include_payload: bool = True) -> list[dict[str, Any]]:
    """Nest spans under their parents (``children``, by start time); orphans become roots."""
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.id or 0))
    nodes = {(s.trace_id, s.span_id): {**span_dict(s, include_payload=include_payload), "children": []}
             for s in ordered}
    roots: list[dict[str, Any]] = []
    for span in ordered:
        node = nodes[(span.trace_id, span.span_id)]
        parent = nodes.get((span.trace_id, span.parent_span_id)) if span.parent_span_id else None
        (parent["children"] if parent is not None else roots).append(node)
    return roots


def job_trace(session: Session, job_id: str, *, include_payload: bool = True) -> dict[str, Any]:
    """A job's dispatch record as a tree: one root ``invoke_agent`` per parameter and role."""
    spans = load_job_spans(session, job_id)
    return {
        "job_id": job_id,
        "span_count": len(spans),
        "trace_ids": sorted({s.trace_id for s in spans}),
        "roots": build_tree(spans, include_payload=include_payload),
    }
