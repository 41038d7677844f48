"""HTTP route for a job's dispatch record: a tree by default, flat JSON lines with ``?format=jsonl``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.auth.security import Principal, require_role
from app.db import get_session
from app.dispatch import service
from app.dispatch.trace_view import labelled_job_trace, parameter_id_of
from app.jobs.service import get_job

router = APIRouter(prefix="/v1/jobs", tags=["dispatch"])


class SpanOut(BaseModel):
    trace_id: str
    span_id: str
    parent_span_id: str | None = None
    name: str
    kind: str
    start_ns: int
    end_ns: int
    duration_ms: float
    status_code: str
    status_message: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    events: list[dict[str, Any]] = Field(default_factory=list)
    job_id: str | None = None
    parameter_id: int | None = None
    payload: dict[str, Any] | None = Field(
        default=None, description="Full inputs and outputs ({input, output}), never truncated."
    )


class TreeTotals(BaseModel):
    input_tokens: int
    output_tokens: int
    cost_usd: float
    duration_ms: float
    llm_calls: int
    tool_calls: int


class SpanNode(SpanOut):
    children: list[SpanNode] = Field(default_factory=list)
    parameter: str | None = Field(default=None, description="On a root: the parameter this tree answered.")
    totals: TreeTotals | None = Field(default=None, description="On a root: tokens, cost, duration and calls.")


class JobTrace(BaseModel):
    job_id: str
    span_count: int
    trace_ids: list[str]
    roots: list[SpanNode] = Field(description="One invoke_agent root per parameter and role, by start time.")


def _jsonl(spans: list[dict[str, Any]]) -> Iterator[str]:
    for span in spans:
        yield json.dumps(span, ensure_ascii=False, default=str) + "\n"


@router.get(
    "/{job_id}/trace",
    response_model=JobTrace,
    response_model_exclude_none=False,
    responses={200: {"content": {"application/x-ndjson": {}},
                     "description": "The dispatch record (a tree; one span per line with format=jsonl)"}},
)
def job_trace(
    job_id: str,
    format: Literal["tree", "jsonl"] = Query(default="tree", description="tree (JSON) or jsonl (one span a line)"),  # noqa: A002
    payload: bool = Query(default=True, description="Include full tool/LLM inputs and outputs"),
    parameter: str | None = Query(default=None, max_length=500,
                                  description="Only the spans of this requested parameter (by name)"),
    principal: Principal = Depends(require_role("submitter")),
    session: Session = Depends(get_session, scope="function"),
) -> Any:
    get_job(session, job_id, principal.tenant)  # 404 for unknown jobs and other tenants' jobs
    if format == "jsonl":
        parameter_id = parameter_id_of(session, job_id, parameter)
        spans = [service.span_dict(s, include_payload=payload)
                 for s in service.load_job_spans(session, job_id, parameter_id)]
        return StreamingResponse(_jsonl(spans), media_type="application/x-ndjson")
    return labelled_job_trace(session, job_id, parameter=parameter, include_payload=payload)

