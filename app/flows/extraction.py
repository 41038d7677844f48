"""The one path every job takes inside a worker: index → route → agent per parameter → review → status.

Redelivery-safe: a parameter already answered is not run again (a paid LLM call is never repeated),
and a job delivered more than ``max_deliveries`` times fails as ``poison_job``.
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import metrics
from app.agent import engines
from app.agent.registry import ModelConfig, resolve_model
from app.agent.schemas import EngineOutcome, ParameterRequest, RunContext
from app.config import OFFLINE_MODEL, get_settings
from app.db import session_scope
from app.detectors.audit import rule_set_version
from app.detectors.dimensions import to_requested
from app.detectors.severity import Severity
from app.dispatch import telemetry
from app.documents import store
from app.documents.index import DatasheetIndex, IndexBuildError
from app.documents.sandbox import open_index_limited
from app.flows import review
from app.jobs import failures, fairness, heartbeat, leases
from app.jobs.service import get_job, transition
from app.review.models import Flag
from app.tables.jobs import Extraction, Job, JobParameter, JobStatus

log = logging.getLogger(__name__)


def run(job_id: str, owner: str | None = None) -> str:
    """Process one job to a terminal state (or leave it for redelivery on a crash). Returns the status.
    An exception is recorded as the job's cause; a deterministic data error fails the job at once."""
    owner = owner or leases.worker_identity()
    with heartbeat.renewing(job_id, owner):
        try:
            return _process(job_id, owner)
        except Exception as exc:  # noqa: BLE001 - every escaping error is classified, recorded and, if retryable, re-raised
            return failures.record(job_id, owner, exc)


def _process(job_id: str, owner: str) -> str:
    settings = get_settings()
    with session_scope() as session:
        job = get_job(session, job_id)
        status = JobStatus(job.status)
        if status.is_terminal:
            return status.value
        if not leases.acquire(session, job_id, owner):
            log.info("job %s is held by %s; dropping this duplicate delivery", job_id, job.lease_owner)
            return status.value
        session.refresh(job)
        status = JobStatus(job.status)
        if status.is_terminal:  # cancelled after it was read above (or after a fair claim picked it)
            leases.release(session, job_id, owner)
            return status.value
        job.deliveries += 1
        if job.deliveries > settings.max_deliveries:
            failures.fail_as_poison(job)
            leases.release(session, job_id, owner)
            return job.status
        if status is JobStatus.queued:
            transition(job, JobStatus.running)
        sha256, engine_choice, model_alias = job.blob_sha256, job.engine, job.model

    started = time.perf_counter()
    try:
        index = open_index_limited(store.local_path(sha256), sha256=sha256)
    except IndexBuildError as exc:
        return _fail(job_id, exc.code, str(exc), owner)

    model = resolve_model(model_alias)
    try:
        with session_scope() as session:
            parameter_ids = [
                p.id for p in session.scalars(
                    select(JobParameter).where(JobParameter.job_id == job_id).order_by(JobParameter.position)
                )
            ]
        for parameter_id in parameter_ids:
            if _cancelled(job_id):
                return JobStatus.cancelled.value
            if parameter_id != parameter_ids[0] and fairness.make_way(job_id, owner):
                return JobStatus.queued.value
            _run_parameter(job_id, parameter_id, index, model, engine_choice)
            with session_scope() as session:
                leases.renew(session, job_id, owner)
    finally:
        telemetry.flush()

    with session_scope() as session:
        job = get_job(session, job_id)
        if JobStatus(job.status).is_terminal:
            return job.status
        target = JobStatus.needs_review if _has_review_flags(session, job_id) else JobStatus.done
        transition(job, target)
        leases.release(session, job_id, owner)
        log.info("job %s %s in %.1fs", job_id, target.value, time.perf_counter() - started)
        return job.status


def _run_parameter(job_id: str, parameter_id: int, index: DatasheetIndex, model: ModelConfig, engine: str) -> None:
    started = time.perf_counter()
    with session_scope() as session:
        parameter = session.get(JobParameter, parameter_id)
        if parameter is None or parameter.status == "done":
            return
        job = session.get(Job, job_id)
        request = ParameterRequest(name=parameter.name, unit=parameter.unit,
                                   conditions=list(parameter.conditions or []), notes=parameter.notes)
        tenant = job.tenant if job else "default"

    context = RunContext(job_id=job_id, parameter_id=parameter_id, tenant=tenant,
                         rule_set_version=rule_set_version())
    outcome = engines.run_parameter(index=index, request=request, model=model, engine=engine, context=context)
    cross = cross_check(index, request, model, context, outcome.engine)
    telemetry.flush()

    with session_scope() as session:
        record_answer(session, job_id, parameter_id, outcome, cross, index)
        metrics.observe_parameter(time.perf_counter() - started, outcome.engine, outcome.error_code, model.alias)
        raised = select(Flag.rule, Flag.severity).where(Flag.parameter_id == parameter_id)
        metrics.observe_flags(session.execute(raised))


def record_answer(session: Session, job_id: str, parameter_id: int, outcome: EngineOutcome,
                  cross: EngineOutcome | None,
                  index: DatasheetIndex) -> tuple[Extraction, Extraction | None, list[Flag]]:
    """Store a parameter's answer (and the reader's second opinion), review it, and mark the parameter done.
    Returns (primary extraction, cross-check extraction or None, flags raised)."""
    job = session.get(Job, job_id)
    parameter = session.get(JobParameter, parameter_id)
    extraction = store_outcome(session, job_id, parameter_id, outcome, role="primary")
    cross_row = store_outcome(session, job_id, parameter_id, cross, role="cross_check") if cross else None
    flags = review.review_extraction(session, job=job, parameter=parameter, extraction=extraction, index=index,
                                     cross_check=cross_row)
    parameter.status = "done"
    return extraction, cross_row, flags


def cross_check(index: DatasheetIndex, request: ParameterRequest, model: ModelConfig, context: RunContext,
                primary_engine: str | None = None) -> EngineOutcome | None:
    """The second opinion stored beside ``model``'s answer: the offline reader's agentic answer. For the offline
    reader itself (it cannot disagree with itself on one read path): a single-pass answer is checked by its
    agentic read; an agentic answer by the structural re-read of its row (``field_mismatch``), since its
    single-pass read, less often right than itself, disagreed with right answers more than with wrong ones."""
    cross_context = context.model_copy(update={"role": "cross_check"})
    if model.is_offline:
        if primary_engine != engines.SINGLE_PASS or not get_settings().cross_check_model:
            return None
        return engines.run_parameter(index=index, request=request, model=model, engine=engines.AGENTIC,
                                     context=cross_context)
    if not wants_cross_check(model):
        return None
    cross_model = resolve_model(get_settings().cross_check_model)
    return engines.run_parameter(index=index, request=request, model=cross_model, engine="agentic",
                                 context=cross_context)


def wants_cross_check(model: ModelConfig) -> bool:
    """Whether the offline reader should answer beside ``model`` as a second opinion."""
    cross = get_settings().cross_check_model
    return bool(cross) and cross == OFFLINE_MODEL and not model.is_offline


def store_outcome(session: Session, job_id: str, parameter_id: int, outcome: EngineOutcome, role: str) -> Extraction:
    """Upsert the extraction row of (parameter, attempt 1, role): a redelivered run never duplicates it."""
    row = session.scalar(
        select(Extraction).where(
            Extraction.parameter_id == parameter_id, Extraction.attempt == 1, Extraction.role == role
        )
    )
    if row is None:
        row = Extraction(job_id=job_id, parameter_id=parameter_id, attempt=1, role=role)
        session.add(row)
    submitted = outcome.extraction
    row.model = outcome.model
    row.engine = outcome.engine
    row.found = bool(submitted and submitted.found)
    parameter = session.get(JobParameter, parameter_id)
    requested_unit = parameter.unit if parameter is not None and role == "primary" else None
    row.values = [to_requested(v.model_dump(), requested_unit) for v in submitted.values] if submitted else []
    row.source_page = submitted.source_page if submitted else None
    row.quote = submitted.quote if submitted else None
    row.confidence = submitted.confidence if submitted else None
    row.reason = submitted.reason if submitted else outcome.error_detail
    row.error_code = outcome.error_code
    row.error_detail = outcome.error_detail
    row.trace_id = outcome.trace_id
    row.root_span_id = outcome.root_span_id
    row.cost_usd = outcome.cost_usd
    row.duration_ms = outcome.duration_ms
    session.flush()
    return row


def _has_review_flags(session: Session, job_id: str) -> bool:
    severities = session.scalars(select(Flag.severity).where(Flag.job_id == job_id))
    return any(Severity(s).rank >= Severity.warning.rank for s in severities)


def _cancelled(job_id: str) -> bool:
    with session_scope() as session:
        job = session.get(Job, job_id)
        return job is None or job.status == JobStatus.cancelled.value


def _fail(job_id: str, code: str, detail: str, owner: str) -> str:
    with session_scope() as session:
        job = get_job(session, job_id)
        if not JobStatus(job.status).is_terminal:
            transition(job, JobStatus.failed, failure_code=code, detail=detail)
        leases.release(session, job_id, owner)
        return job.status
