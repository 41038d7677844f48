"""The job read model: one job with its answers, flags, review decisions, groundings and attributions."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db import read_scope
from app.flows import usage
from app.flows.review import attribution_summary
from app.jobs import service
from app.jobs.schemas import (
    AttributionOut,
    DecisionOut,
    FlagOut,
    GroundingOut,
    JobOut,
    ParameterResult,
    ParameterSpec,
    UsageOut,
    ValueOut,
)
from app.jobs.service import latest_extractions
from app.review.models import Attribution, Decision, Flag, Grounding
from app.tables.jobs import Job, JobParameter


def job_out(session: Session, job: Job, *, created: bool = False) -> JobOut:
    """``created``: the job was made in this unit of work, so it has no answers yet and nothing is read."""
    extractions = {} if created else latest_extractions(session, job.id)
    extraction_ids = [e.id for e in extractions.values()]
    flags_by_parameter: dict[int, list[Flag]] = {}
    decisions: dict[int, Decision] = {}
    groundings: dict[int, list[GroundingOut]] = {}
    attributions: dict[int, list[AttributionOut]] = {}
    # Flags, decisions, groundings and attributions all belong to answers: a job with none yet (the one clients
    # poll) is read in two queries (the job with its parameters, its answers), a finished one in one query per
    # table, whatever its number of parameters.
    if extraction_ids:
        for flag in session.scalars(select(Flag).where(Flag.job_id == job.id).order_by(Flag.id)):
            if flag.parameter_id is not None:
                flags_by_parameter.setdefault(flag.parameter_id, []).append(flag)
        for decision in session.scalars(select(Decision).where(Decision.job_id == job.id).order_by(Decision.id)):
            decisions[decision.extraction_id] = decision
        for g in session.scalars(select(Grounding).where(Grounding.extraction_id.in_(extraction_ids))
                                 .order_by(Grounding.value_index, Grounding.id)):
            groundings.setdefault(g.extraction_id, []).append(
                GroundingOut(value_index=g.value_index, outcome=g.outcome, method=g.method, score=g.score,
                             page=g.page, boxes=g.boxes or [],
                             value_boxes=(g.detail or {}).get("value_boxes") or []))
        for a in session.scalars(select(Attribution).where(Attribution.extraction_id.in_(extraction_ids))
                                 .order_by(Attribution.id)):
            attributions.setdefault(a.extraction_id, []).append(
                AttributionOut(span_id=a.span_id, category=a.category, charged_to=a.charged_to, detail=a.detail))

    spent = usage.usage_by_parameter(session, job.id) if extraction_ids else {}
    results: list[ParameterResult] = []
    for parameter in job.parameters:
        extraction = extractions.get(parameter.id)
        flags = [
            FlagOut(rule=f.rule, severity=f.severity, message=f.message, rule_version=f.rule_version,
                    evidence=f.evidence or {})
            for f in flags_by_parameter.get(parameter.id, [])
            if extraction is None or f.extraction_id in (None, extraction.id)
        ]
        if extraction is None:
            results.append(ParameterResult(parameter=parameter.name, found=False, status=parameter.status,
                                           flags=flags, usage=spent.get(parameter.id, UsageOut())))
            continue
        decision = decisions.get(extraction.id)
        results.append(
            ParameterResult(
                parameter=parameter.name,
                found=extraction.found,
                values=[ValueOut.model_validate(v) for v in (extraction.values or [])],
                source_page=extraction.source_page,
                quote=extraction.quote,
                confidence=extraction.confidence,
                reason=extraction.reason,
                flags=flags,
                status=parameter.status,
                engine=extraction.engine,
                model=extraction.model,
                error_code=extraction.error_code,
                extraction_id=extraction.id,
                review=DecisionOut(decision=decision.decision, reviewer=decision.reviewer, comment=decision.comment,
                                   correction=decision.correction, created_at=decision.created_at)
                if decision else None,
                grounding=groundings.get(extraction.id, []),
                attributions=attributions.get(extraction.id, []),
                usage=spent.get(parameter.id, UsageOut()),
            )
        )
    return JobOut(
        job_id=job.id,
        status=job.status,
        engine=job.engine,
        model=job.model,
        filename=job.filename,
        document_sha256=job.blob_sha256,
        created_at=job.created_at,
        updated_at=job.updated_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        failure_code=job.failure_code,
        failure_detail=job.failure_detail,
        parameters=[
            ParameterSpec(name=p.name, unit=p.unit, conditions=p.conditions or [], notes=p.notes)
            for p in job.parameters
        ],
        results=results,
        attribution_summary=_attribution_summary(session, job.id) if extraction_ids else {},
        usage=usage.total(list(spent.values())),
    )


def _attribution_summary(session: Session, job_id: str) -> dict:
    summary = attribution_summary(session, job_id)
    names = {p.id: p.name for p in session.scalars(select(JobParameter).where(JobParameter.job_id == job_id))}
    return {"job": summary["job"],
            "parameters": {names.get(pid, str(pid)): item for pid, item in summary["parameters"].items()}}


def read_job(job_id: str, tenant: str | None) -> JobOut:
    """The whole job read model in one read-only unit of work on one connection (the API's hot polling path):
    a job without answers yet, the one clients poll, is two queries."""
    with read_scope() as session:
        return job_out(session, service.read_job_row(session, job_id, tenant))
