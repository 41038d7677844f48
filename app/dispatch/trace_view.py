"""A job's dispatch record as people read it: one tree per parameter and role, each labelled with its parameter
and its totals (tokens, cost, duration, calls), optionally only the trees of one parameter."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.dispatch import semconv
from app.dispatch.service import build_tree, load_job_spans
from app.errors import NotFound
from app.tables.jobs import JobParameter


def labelled_job_trace(session: Session, job_id: str, *, parameter: str | None = None,
                       include_payload: bool = True) -> dict[str, Any]:
    """Like ``service.job_trace``, with ``parameter`` and ``totals`` on every root; ``parameter`` (a requested
    name, case-insensitive) keeps only that parameter's trees and is a 404 when the job did not ask for it."""
    names = _parameter_names(session, job_id)
    spans = load_job_spans(session, job_id, parameter_id_of(session, job_id, parameter, names))
    roots = build_tree(spans, include_payload=include_payload)
    for root in roots:
        root["parameter"] = names.get(root.get("parameter_id"))
        root["totals"] = tree_totals(root)
    return {"job_id": job_id, "span_count": len(spans), "trace_ids": sorted({s.trace_id for s in spans}),
            "roots": roots}


def parameter_id_of(session: Session, job_id: str, parameter: str | None,
                    names: dict[int, str] | None = None) -> int | None:
    """The id of the job's parameter named ``parameter`` (case-insensitive); None when no name is given."""
    if parameter is None:
        return None
    names = names if names is not None else _parameter_names(session, job_id)
    wanted = parameter.strip().casefold()
    found = next((pid for pid, name in names.items() if name.casefold() == wanted), None)
    if found is None:
        raise NotFound(f"Job {job_id} did not ask for a parameter named {parameter!r}; it asked for "
                       f"{', '.join(repr(n) for n in names.values()) or 'none'}.", code="parameter_not_found")
    return found


def _parameter_names(session: Session, job_id: str) -> dict[int, str]:
    query = select(JobParameter.id, JobParameter.name).where(JobParameter.job_id == job_id)
    return dict(session.execute(query).tuples().all())


def tree_totals(root: dict[str, Any]) -> dict[str, Any]:
    """Tokens and cost summed over the LLM calls under ``root``, its own duration, and its call counts."""
    totals: dict[str, Any] = {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                              "duration_ms": root["duration_ms"], "llm_calls": 0, "tool_calls": 0}
    stack = list(root["children"])
    while stack:
        node = stack.pop()
        stack.extend(node["children"])
        attributes = node.get("attributes") or {}
        operation = attributes.get(semconv.GEN_AI_OPERATION)
        if operation == "chat":
            totals["llm_calls"] += 1
            totals["input_tokens"] += int(attributes.get(semconv.GEN_AI_INPUT_TOKENS) or 0)
            totals["output_tokens"] += int(attributes.get(semconv.GEN_AI_OUTPUT_TOKENS) or 0)
            totals["cost_usd"] += float(attributes.get(semconv.DSX_LLM_COST_USD) or 0.0)
        elif operation == "execute_tool":
            totals["tool_calls"] += 1
    return totals
