"""Tokens and cost of a job, per parameter and in total, read from the dispatch record.

Each ``invoke_agent`` span carries its run's totals (``gen_ai.usage.*_tokens``, ``dsx.llm.cost_usd``), so the
usage of a parameter is the sum over its runs (primary and cross-check), and a redelivered job that did not repeat a
run does not count it twice.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.dispatch import semconv
from app.dispatch.models import SpanRecord
from app.jobs.schemas import UsageOut


def _number(value: object) -> float:
    try:
        return float(value) if value is not None else 0.0  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def usage_by_parameter(session: Session, job_id: str) -> dict[int, UsageOut]:
    """Usage per parameter id (parameters without a stored run are absent)."""
    rows = session.execute(select(SpanRecord.parameter_id, SpanRecord.attributes).where(
        SpanRecord.job_id == job_id, SpanRecord.name == semconv.SPAN_INVOKE_AGENT))
    usage: dict[int, UsageOut] = {}
    for parameter_id, attributes in rows:
        if parameter_id is None:
            continue
        attributes = attributes or {}
        total = usage.setdefault(parameter_id, UsageOut())
        total.input_tokens += int(_number(attributes.get(semconv.GEN_AI_INPUT_TOKENS)))
        total.output_tokens += int(_number(attributes.get(semconv.GEN_AI_OUTPUT_TOKENS)))
        total.cost_usd += _number(attributes.get(semconv.DSX_LLM_COST_USD))
    return usage


def total(parts: list[UsageOut]) -> UsageOut:
    return UsageOut(input_tokens=sum(p.input_tokens for p in parts), output_tokens=sum(p.output_tokens for p in parts),
                    cost_usd=sum(p.cost_usd for p in parts))
