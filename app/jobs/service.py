"""Job lifecycle: admission (validation, storage, idempotency) and the state machine."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Integer, bindparam, func, insert, literal, select, true, union_all
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload, make_transient_to_detached, selectinload
from sqlalchemy.orm.attributes import set_committed_value

from app import metrics
from app.agent.registry import resolve_model
from app.config import get_settings
from app.contracts import ENGINE_NAMES
from app.documents import store
from app.errors import Conflict, InvalidInput, NotFound
from app.jobs.admission import admit_pdf
from app.jobs.parameters_field import check_parameter_text, decode_parameters
from app.jobs.schemas import (
    ParameterSpec,
)
from app.tables.jobs import TERMINAL_STATUSES, Extraction, Job, JobParameter, JobStatus
from app.timeutil import utcnow

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
    items = decode_parameters(raw) if isinstance(raw, str) else list(raw)
    if not isinstance(items, list):
        raise InvalidInput("`parameters` must be a JSON array.", code="invalid_parameters")
    check_parameter_text(items)
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
    if engine not in ENGINE_NAMES:
        raise InvalidInput(f"Unknown engine {engine!r}; use one of {', '.join(ENGINE_NAMES)}.",
                           code="unknown_engine")
    model_config = resolve_model(model)
    specs = parse_parameters(parameters)
    digest = store.sha256_of(data)
    request_hash = _request_hash(digest, specs, engine, model_config.alias)

    if idempotency_key:
        existing = _job_by_key(session, tenant, idempotency_key)
        if existing is not None:
            if existing.request_hash != request_hash:
                raise Conflict(
                    "This Idempotency-Key was used with a different request body.", code="idempotency_conflict"
                )
            # A replay admits nothing new: its PDF was checked when the key was first used.
            return existing, False

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
        # Its wake-up is sent once it is stored (app/api/jobs.py): a send that fails clears this, and a job stored
        # but never sent shows as a queue short of messages (app/jobs/sweeper.py).
        woken_at=utcnow(),
    )
    parameters = [
        JobParameter(position=i, name=s.name, unit=s.unit, conditions=s.conditions, notes=s.notes)
        for i, s in enumerate(specs)
    ]
    try:
        # Blobs are stored only after passing the check, and the check is deterministic: a datasheet submitted
        # again skips the round trip to a check process, unless the limits have tightened since it was admitted.
        # Its row exists only once its bytes are stored (and blobs are never deleted), so nor are they stored
        # again. On PostgreSQL that lookup, the job and its parameters are one statement.
        if len(data) <= settings.max_upload_bytes and _insert_if_admitted(session, job, parameters,
                                                                           settings.max_pages):
            return job, True
        known_pages = store.admitted_page_count(session, digest)
        if known_pages is not None and known_pages <= settings.max_pages and len(data) <= settings.max_upload_bytes:
            page_count = known_pages
        else:
            page_count = admit_pdf(data, max_bytes=settings.max_upload_bytes, max_pages=settings.max_pages)
        if known_pages is None:
            store.put(session, data, page_count)
        job.parameters = parameters
        session.add(job)
        session.flush()
    except IntegrityError:
        # A concurrent request with the same key won the race; replay it.
        session.rollback()
        if idempotency_key:
            existing = _job_by_key(session, tenant, idempotency_key)
            if existing is not None and existing.request_hash == request_hash:
                return existing, False
        raise
    return job, True


def _job_by_key(session: Session, tenant: str, idempotency_key: str) -> Job | None:
    return session.scalar(select(Job).where(Job.tenant == tenant, Job.idempotency_key == idempotency_key))


def _insert_if_admitted(session: Session, job: Job, parameters: list[JobParameter], max_pages: int) -> bool:
    """On PostgreSQL, store ``job`` and its ``parameters`` in one statement if the job's PDF was admitted before
    (within ``max_pages``): one round trip instead of a lookup and two inserts, and none of the unit of work's
    bookkeeping. The rows are then the session's as if loaded. False (nothing written) when the PDF is new to this
    database or the dialect has no such statement (SQLite: no data-modifying CTE, and no round trips to save)."""
    if session.get_bind().dialect.name != "postgresql":
        return False
    job_values = {column.key: getattr(job, column.key) for column in _JOB_COLUMNS}
    job_values.update(deliveries=0, created_at=job.woken_at, updated_at=job.woken_at)
    rows = [(p.position, p.name, p.unit, list(p.conditions or []), p.notes) for p in parameters]
    ids = session.execute(_admitted_job_insert(len(rows)),
                          {**job_values, "max_pages": max_pages,
                           **{f"{field}_{i}": value for i, row in enumerate(rows)
                              for field, value in zip(_PARAMETER_FIELDS, row, strict=True)}}).all()
    if not ids:
        return False
    by_position = dict((position, row_id) for row_id, position in ids)
    for key, value in job_values.items():
        setattr(job, key, value)
    for parameter in parameters:
        parameter.id, parameter.job_id, parameter.status = by_position[parameter.position], job.id, "pending"
        parameter.conditions = list(parameter.conditions or [])
        make_transient_to_detached(parameter)
    make_transient_to_detached(job)
    set_committed_value(job, "parameters", parameters)
    for parameter in parameters:
        set_committed_value(parameter, "job", job)
    session.add(job)
    return True


_PARAMETER_FIELDS = ("position", "name", "unit", "conditions", "notes")


def _job_columns() -> list[Any]:
    return [c for c in Job.__table__.columns if c.key not in ("deliveries", "created_at", "updated_at")]


_JOB_COLUMNS = _job_columns()


@lru_cache(maxsize=64)
def _admitted_job_insert(count: int) -> Any:
    """``INSERT INTO jobs ... SELECT ... FROM blobs WHERE admitted`` and, in the same statement, the job's
    ``count`` parameters, returning their ids. Every column of ``jobs`` is written, from the Job's attributes: a
    column added later whose default is applied by the unit of work needs it set on the Job too (a test compares
    the rows with the unit of work's)."""
    jobs, params = Job.__table__, JobParameter.__table__
    blobs = store.Blob.__table__
    job_columns = [c.key for c in jobs.columns]
    admitted = (select(*[bindparam(key, type_=jobs.c[key].type) if key != "blob_sha256" else blobs.c.sha256
                         for key in job_columns])
                .where(blobs.c.sha256 == bindparam("blob_sha256", type_=blobs.c.sha256.type),
                       blobs.c.page_count <= bindparam("max_pages", type_=Integer)))
    new_job = insert(jobs).from_select(job_columns, admitted).returning(jobs.c.id).cte("new_job")
    # A UNION ALL of one-row SELECTs rather than VALUES, which SQLAlchemy cannot cache (it compiled on every call).
    given = union_all(*[select(*[bindparam(f"{field}_{i}", type_=params.c[field].type).label(field)
                                 for field in _PARAMETER_FIELDS]) for i in range(count)]).subquery("given")
    source = select(new_job.c.id, *[given.c[field] for field in _PARAMETER_FIELDS], literal("pending"))
    return (insert(params)
            .from_select(["job_id", *_PARAMETER_FIELDS, "status"], source.select_from(new_job).join(given, true()))
            .returning(params.c.id, params.c.position)
            .add_cte(new_job))


def get_job(session: Session, job_id: str, tenant: str | None = None) -> Job:
    query = select(Job).options(selectinload(Job.parameters)).where(Job.id == job_id)
    if tenant is not None:
        query = query.where(Job.tenant == tenant)
    job = session.scalar(query)
    if job is None:
        raise NotFound(f"No job {job_id!r}.", code="job_not_found")
    return job


def read_job_row(session: Session, job_id: str, tenant: str | None = None) -> Job:
    """:func:`get_job` for reading only, in one query: its parameters are joined, not fetched by a second one."""
    query = select(Job).options(joinedload(Job.parameters)).where(Job.id == job_id)
    if tenant is not None:
        query = query.where(Job.tenant == tenant)
    job = session.scalars(query).unique().one_or_none()
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
    elif target in (JobStatus.done, JobStatus.needs_review):
        job.failure_detail = None  # a retried delivery's error, no longer the job's story once it succeeded


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
