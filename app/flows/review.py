"""Review of one answer: run the detectors (``app.detectors.audit``) and store the findings.

``review_extraction`` rebuilds the record
from the stored spans, replaces the extraction's earlier Flag/Grounding/Attribution rows (a re-run is
idempotent), and returns the new flags. Whether a job needs review is decided from the stored flags.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.detectors import attribution as rubric
from app.detectors.audit import audit
from app.detectors.record import RunRecord, Submission, records_from_spans
from app.dispatch import evaluations, semconv
from app.dispatch.service import load_run
from app.documents.index import DatasheetIndex
from app.jobs.service import transition
from app.review import decisions
from app.review.models import Attribution, Flag, Grounding
from app.tables.jobs import Extraction, Job, JobParameter, JobStatus


def submission_of(extraction: Extraction) -> Submission | None:
    """The answer stored on an extraction row (``None`` when the engine errored)."""
    if extraction.error_code:
        return None
    return Submission.from_mapping({
        "found": extraction.found, "values": extraction.values or [], "quote": extraction.quote,
        "source_page": extraction.source_page, "confidence": extraction.confidence, "reason": extraction.reason,
    })


def record_of(session: Session, extraction: Extraction) -> RunRecord | None:
    """The extraction's run rebuilt from its stored spans (``None`` when none were stored)."""
    if not extraction.trace_id:
        return None
    spans = load_run(session, extraction.trace_id, extraction.root_span_id)
    if not spans:
        return None
    records = records_from_spans(spans, root_span_id=extraction.root_span_id)
    if not records and extraction.root_span_id is None:
        return None
    if extraction.root_span_id is None:
        records = [r for r in records if r.role == extraction.role] or records
    return records[0] if records else None


def review_extraction(session: Session, *, job: Job, parameter: JobParameter, extraction: Extraction,
                      index: DatasheetIndex | None, cross_check: Extraction | None = None) -> list[Flag]:
    """Review one extraction, replacing its earlier review rows; returns the flags stored."""
    for model in (Flag, Grounding, Attribution):
        session.execute(delete(model).where(model.extraction_id == extraction.id))
    request = {"name": parameter.name, "unit": parameter.unit, "conditions": list(parameter.conditions or [])}
    record = record_of(session, extraction)
    cross = submission_of(cross_check) if cross_check is not None else None
    result = audit(
        record, submission=submission_of(extraction), index=index, request=request, cross_check=cross,
        cross_check_error=cross_check.error_code if cross_check is not None else None,
        error_code=extraction.error_code, error_detail=extraction.error_detail, engine=extraction.engine,
        model=extraction.model,
    )
    flags = [
        Flag(job_id=job.id, parameter_id=parameter.id, extraction_id=extraction.id, rule=f.rule,
             rule_version=f.version, severity=f.severity.value, message=f.message, evidence=f.evidence)
        for f in result.findings
    ]
    session.add_all(flags)
    evaluations.record_verdicts(trace_id=extraction.trace_id, root_span_id=extraction.root_span_id,
                                verdicts=result.verdicts, identity={semconv.DSX_JOB_ID: job.id,
                                                                    semconv.DSX_PARAMETER_ID: parameter.id})
    session.add_all(
        Grounding(extraction_id=extraction.id, value_index=g.value_index, outcome=g.outcome.value, method=g.method,
                  score=g.score, page=g.page, boxes=g.boxes, detail=g.detail)
        for g in result.groundings or []
    )
    session.add_all(
        Attribution(extraction_id=extraction.id, span_id=a.span_id, category=a.category, charged_to=a.charged_to,
                    detail=a.detail)
        for a in result.attributions
    )
    session.flush()
    return flags


def attribution_summary(session: Session, job_id: str) -> dict[str, Any]:
    """The job's failure attribution: totals, and one summary per parameter (primary answers only)."""
    rows = session.execute(
        select(Extraction.parameter_id, Attribution.category)
        .join(Attribution, Attribution.extraction_id == Extraction.id)
        .where(Extraction.job_id == job_id, Extraction.role == "primary")
    ).all()
    per_parameter: dict[int, list[dict[str, Any]]] = {}
    for parameter_id, category in rows:
        per_parameter.setdefault(parameter_id, []).append({"category": category})
    return {
        "job": rubric.summarize({"category": c} for _, c in rows),
        "parameters": {pid: rubric.summarize(items) for pid, items in sorted(per_parameter.items())},
    }


def decide(session: Session, extraction_id: int, body: decisions.ReviewDecisionRequest, *, reviewer: str,
           tenant: str | None) -> tuple[decisions.ReviewDecision, bool]:
    """Record a reviewer's decision; once every flagged answer of a ``needs_review`` job has one, the job reports
    ``reviewed`` (its flags and the decisions stay in its result)."""
    out, created = decisions.decide(session, extraction_id, body, reviewer=reviewer, tenant=tenant)
    extraction = session.get(Extraction, extraction_id)
    job = session.get(Job, extraction.job_id) if extraction is not None else None
    if (job is not None and job.status == JobStatus.needs_review.value
            and decisions.every_flagged_answer_decided(session, job.id)):
        transition(job, JobStatus.reviewed)
    return out, created
