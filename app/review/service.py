"""Review of one answer: run the detector rules, ground every value, attribute every call, store the findings.

``audit`` is the pure part (a run record in, verdicts, groundings and attributions out), shared by the
pipeline, ``dsx detect`` and the benchmark. ``review_extraction`` adds the database: it rebuilds the record
from the stored spans, replaces the extraction's earlier Flag/Grounding/Attribution rows (a re-run is
idempotent), and returns the new flags. Whether a job needs review is decided from the stored flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.dispatch.service import load_trace
from app.documents.index import DatasheetIndex
from app.jobs.models import Extraction, Job, JobParameter
from app.review import attribution as rubric
from app.review.answer_rules import ANSWER_RULES
from app.review.config import RuleSettings, rule_settings
from app.review.document_rules import DOCUMENT_RULES
from app.review.grounding import GroundingResult, ground_values
from app.review.models import Attribution, Flag, Grounding, Severity
from app.review.record import RunRecord, Submission, records_from_spans
from app.review.rules import Context, Finding, Verdict, evaluate
from app.review.structural import STRUCTURAL_RULES


@dataclass
class Audit:
    verdicts: list[Verdict]
    groundings: list[GroundingResult] | None
    attributions: list[rubric.CallAttribution] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for v in self.verdicts for f in v.findings]

    @property
    def needs_review(self) -> bool:
        return any(f.severity.rank >= Severity.warning.rank for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "flags": [f.to_dict() for f in self.findings],
            "grounding": [g.to_dict() for g in self.groundings or []],
            "evaluable": [v.to_dict() for v in self.verdicts],
            "attribution": [a.to_dict() for a in self.attributions],
            "attribution_summary": rubric.summarize(self.attributions),
        }


def audit(record: RunRecord | None, *, submission: Submission | None = None, index: DatasheetIndex | None = None,
          request: Mapping[str, Any] | None = None, cross_check: Submission | None = None,
          cross_check_error: str | None = None, error_code: str | None = None, error_detail: str | None = None,
          engine: str | None = None, settings: RuleSettings | None = None, model: str | None = None) -> Audit:
    """Audit one answer. ``submission`` defaults to the record's own; without ``index`` grounding is skipped."""
    submission = submission if submission is not None else (record.submission if record else None)
    if error_code is None and record is not None and record.outcome not in (None, "submitted"):
        error_code = record.outcome
    request = dict(request or (record.parameter if record else {}) or {})
    groundings = None
    if index is not None and submission is not None and submission.found:
        groundings = ground_values(index, submission.values, submission.quote, submission.pages)
    ctx = Context(record=record, submission=submission, request=request, groundings=groundings,
                  cross_check=cross_check, cross_check_error=cross_check_error, error_code=error_code,
                  error_detail=error_detail, engine=engine or (record.engine if record else None),
                  settings=settings or rule_settings(), document=index,
                  model=model or (record.model if record else None))
    verdicts = evaluate(ctx) + evaluate(ctx, ANSWER_RULES) + evaluate(ctx, STRUCTURAL_RULES) \
        + evaluate(ctx, DOCUMENT_RULES)
    attributions = rubric.attribute(record, request=request, submission=submission, groundings=groundings,
                                    error_code=error_code)
    return Audit(verdicts, groundings, attributions)


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
    spans = load_trace(session, extraction.trace_id)
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
