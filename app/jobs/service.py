"""Job lifecycle: admission (validation, storage, idempotency), state machine, and result views."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from app import metrics
from app.agent.registry import resolve_model
from app.config import get_settings
from app.documents import store
from app.documents.admission import admit_pdf
from app.errors import Conflict, InvalidInput, NotFound
from app.jobs.models import TERMINAL_STATUSES, Extraction, Job, JobParameter, JobStatus
from app.jobs.schemas import (
    AttributionOut,
    DecisionOut,
    FlagOut,
    GroundingOut,
    JobOut,
    ParameterResult,
    ParameterSpec,
    ValueOut,
)
from app.review.models import Attribution, Decision, Flag, Grounding
from app.timeutil import utcnow

ENGINES = ("auto", "agentic", "single-pass")

# Allowed transitions of the job state machine.
TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    JobStatus.queued: frozenset({JobStatus.running, JobStatus.cancelled, JobStatus.failed}),
    JobStatus.running: frozenset(
        {JobStatus.done, JobStatus.needs_review, JobStatus.failed, JobStatus.cancelled, JobStatus.queued}
    ),
    # The run is over either way; this records that reviewers have decided every flagged answer.
    JobStatus.needs_review: frozenset({JobStatus.reviewed}),
}


class InvalidTransition(Conflict):
    code = "invalid_transition"


def parse_parameters(raw: str | Sequence[Any] | None) -> list[ParameterSpec]:
    """Parse the ``parameters`` field: a JSON array of strings or ``{name, unit?, conditions?, notes?}``."""
    settings = get_settings()
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise InvalidInput("At least one parameter is required.", code="no_parameters")
    if isinstance(raw, str):
        try:
            items = json.loads(raw)
        except json.JSONDecodeError:
            # A single bare name is accepted as a convenience for form posts.
            items = [raw]
    else:
        items = list(raw)
    if not isinstance(items, list):
        raise InvalidInput("`parameters` must be a JSON array.", code="invalid_parameters")
    if not items:
        raise InvalidInput("At least one parameter is required.", code="no_parameters")
    if len(items) > settings.max_parameters:
        raise InvalidInput(
            f"{len(items)} parameters requested; the limit is {settings.max_parameters}.",
            code="too_many_parameters",
        )
    specs: list[ParameterSpec] = []
    for position, item in enumerate(items):
        try:
            spec = ParameterSpec(name=item) if isinstance(item, str) else ParameterSpec.model_validate(item)
        except ValidationError as exc:
            raise InvalidInput(f"Parameter {position}: {exc.errors()[0]['msg']}", code="invalid_parameters") from exc
        if not spec.name:
            raise InvalidInput(f"Parameter {position} has an empty name.", code="empty_parameter_name")
        if len(spec.name) > settings.max_parameter_name_chars:
            raise InvalidInput(
                f"Parameter {position} name is longer than {settings.max_parameter_name_chars} characters.",
                code="parameter_name_too_long",
            )
        specs.append(spec)
    return specs


def _request_hash(digest: str, specs: list[ParameterSpec], engine: str, model: str) -> str:
    body = json.dumps(
        {"pdf": digest, "parameters": [s.model_dump() for s in specs], "engine": engine, "model": model},
        sort_keys=True,
    )
    return hashlib.sha256(body.encode()).hexdigest()


def create_job(
    session: Session,
    *,
    data: bytes,
    filename: str | None,
    parameters: str | Sequence[Any] | None,
    engine: str | None = None,
    model: str | None = None,
    idempotency_key: str | None = None,
    tenant: str = "default",
) -> tuple[Job, bool]:
    """Validate and store a job. Returns (job, created); an idempotent replay returns the first job."""
    settings = get_settings()
    engine = (engine or "auto").strip()
    if engine not in ENGINES:
        raise InvalidInput(f"Unknown engine {engine!r}; use one of {', '.join(ENGINES)}.", code="unknown_engine")
    model_config = resolve_model(model)
    specs = parse_parameters(parameters)
    page_count = admit_pdf(data, max_bytes=settings.max_upload_bytes, max_pages=settings.max_pages)
    digest = store.sha256_of(data)
    request_hash = _request_hash(digest, specs, engine, model_config.alias)

    if idempotency_key:
        existing = session.scalar(
            select(Job).where(Job.tenant == tenant, Job.idempotency_key == idempotency_key)
        )
        if existing is not None:
            if existing.request_hash != request_hash:
                raise Conflict(
                    "This Idempotency-Key was used with a different request body.", code="idempotency_conflict"
                )
            return existing, False

    store.put(session, data, page_count)
    job = Job(
        id=uuid.uuid4().hex,
        tenant=tenant,
        status=JobStatus.queued.value,
        engine=engine,
        model=model_config.alias,
        blob_sha256=digest,
        filename=(filename or "datasheet.pdf")[:255],
        idempotency_key=idempotency_key,
        request_hash=request_hash,
    )
    job.parameters = [
        JobParameter(position=i, name=s.name, unit=s.unit, conditions=s.conditions, notes=s.notes)
        for i, s in enumerate(specs)
    ]
    session.add(job)
    try:
        session.flush()
    except IntegrityError:
        # A concurrent request with the same key won the race; replay it.
        session.rollback()
        if idempotency_key:
            existing = session.scalar(
                select(Job).where(Job.tenant == tenant, Job.idempotency_key == idempotency_key)
            )
            if existing is not None and existing.request_hash == request_hash:
                return existing, False
        raise
    return job, True


def get_job(session: Session, job_id: str, tenant: str | None = None) -> Job:
    query = select(Job).options(selectinload(Job.parameters)).where(Job.id == job_id)
    if tenant is not None:
        query = query.where(Job.tenant == tenant)
    job = session.scalar(query)
    if job is None:
        raise NotFound(f"No job {job_id!r}.", code="job_not_found")
    return job


def list_jobs(
    session: Session, *, tenant: str | None = None, status: str | None = None, limit: int = 50, offset: int = 0
) -> tuple[list[Job], int]:
    query = select(Job)
    count = select(func.count()).select_from(Job)
    if tenant is not None:
        query = query.where(Job.tenant == tenant)
        count = count.where(Job.tenant == tenant)
    if status:
        if status not in JobStatus.__members__:
            raise InvalidInput(f"Unknown status {status!r}.", code="unknown_status")
        query = query.where(Job.status == status)
        count = count.where(Job.status == status)
    query = query.options(selectinload(Job.parameters)).order_by(Job.created_at.desc(), Job.id).limit(limit)
    jobs = list(session.scalars(query.offset(offset)))
    return jobs, int(session.scalar(count) or 0)


def transition(job: Job, target: JobStatus, *, failure_code: str | None = None, detail: str | None = None) -> None:
    current = JobStatus(job.status)
    if target not in TRANSITIONS.get(current, frozenset()):
        raise InvalidTransition(f"Job {job.id} cannot go from {current.value} to {target.value}.")
    job.status = target.value
    now = utcnow()
    job.updated_at = now
    if target is JobStatus.running and job.started_at is None:
        job.started_at = now
    if target in TERMINAL_STATUSES and not current.is_terminal:
        job.finished_at = now
        metrics.observe_job_finished(target.value, metrics.seconds_between(job.created_at, now))
    if failure_code:
        job.failure_code = failure_code
        job.failure_detail = detail


def cancel_job(session: Session, job_id: str, tenant: str | None = None) -> Job:
    job = get_job(session, job_id, tenant)
    if JobStatus(job.status).is_terminal:
        raise InvalidTransition(f"Job {job.id} is already {job.status}.", code="job_already_finished")
    transition(job, JobStatus.cancelled)
    return job


def latest_extractions(session: Session, job_id: str, role: str = "primary") -> dict[int, Extraction]:
    rows = session.scalars(
        select(Extraction).where(Extraction.job_id == job_id, Extraction.role == role).order_by(Extraction.attempt)
    )
    return {row.parameter_id: row for row in rows}


def job_out(session: Session, job: Job) -> JobOut:
    extractions = latest_extractions(session, job.id)
    flags_by_parameter: dict[int, list[Flag]] = {}
    for flag in session.scalars(select(Flag).where(Flag.job_id == job.id).order_by(Flag.id)):
        if flag.parameter_id is not None:
            flags_by_parameter.setdefault(flag.parameter_id, []).append(flag)
    decisions: dict[int, Decision] = {}
    for decision in session.scalars(select(Decision).where(Decision.job_id == job.id).order_by(Decision.id)):
        decisions[decision.extraction_id] = decision
    extraction_ids = [e.id for e in extractions.values()]
    groundings: dict[int, list[GroundingOut]] = {}
    attributions: dict[int, list[AttributionOut]] = {}
    if extraction_ids:
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
                                           flags=flags))
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
    )


def _attribution_summary(session: Session, job_id: str) -> dict:
    from app.review.service import attribution_summary

    summary = attribution_summary(session, job_id)
    names = {p.id: p.name for p in session.scalars(select(JobParameter).where(JobParameter.job_id == job_id))}
    return {"job": summary["job"],
            "parameters": {names.get(pid, str(pid)): item for pid, item in summary["parameters"].items()}}
