"""Reviewer decisions: the review queue, recording a verdict, the audit list, and corrections as gold claims.

Every function takes a ``tenant`` (``None`` = all tenants, for internal callers) so the JSON API and the
HTML dashboard share one implementation of the scoping rules. The queue is built from stored rows only:
an item is a primary extraction (latest attempt of its parameter) with at least one flag of severity
warning or higher; "open" means no decision has been recorded for it yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import ColumnElement, Select, and_, distinct, exists, func, or_, select, tuple_, union_all
from sqlalchemy.orm import Session, aliased

from app.contracts import CorrectedValue, FlagOut, ValueOut
from app.detectors.severity import Severity
from app.errors import InvalidInput, NotFound
from app.review.models import Decision, Flag
from app.tables.jobs import Extraction, Job, JobParameter

DecisionKind = Literal["approve", "correct", "reject"]
QueueStatus = Literal["open", "decided", "all"]

QUEUE_STATUSES: tuple[str, ...] = ("open", "decided", "all")
REVIEW_SEVERITIES: tuple[str, ...] = tuple(s.value for s in Severity if s.rank >= Severity.warning.rank)
PRIMARY = "primary"


# --- API models -------------------------------------------------------------------------------------------


class ReviewCorrection(BaseModel):
    """The right answer according to the reviewer, in the same shape an engine submits."""

    model_config = ConfigDict(extra="forbid")

    values: list[CorrectedValue] = Field(min_length=1)
    source_page: int | None = Field(default=None, ge=1)
    quote: str | None = Field(default=None, max_length=4000)


class ReviewDecisionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: DecisionKind
    comment: str | None = Field(default=None, max_length=4000)
    correction: ReviewCorrection | None = None
    reviewer: str | None = Field(default=None, max_length=200,
                                 description="Used only when the API runs without keys; otherwise the key's name.")


class ReviewDecision(BaseModel):
    id: int
    job_id: str
    extraction_id: int
    parameter: str
    decision: str
    reviewer: str
    comment: str | None = None
    correction: ReviewCorrection | None = None
    created_at: datetime


class ReviewQueueItem(BaseModel):
    extraction_id: int
    job_id: str
    parameter: str
    model: str
    found: bool
    values: list[ValueOut] = Field(default_factory=list)
    source_page: int | None = None
    quote: str | None = None
    confidence: float | None = None
    flags: list[FlagOut] = Field(default_factory=list)
    created_at: datetime
    decision: ReviewDecision | None = None


class ReviewQueuePage(BaseModel):
    items: list[ReviewQueueItem]
    total: int
    counts_by_rule: dict[str, int] = Field(
        default_factory=dict,
        description="Items per rule under the same filters except `rule` (so every rule's count stays visible).",
    )


class ReviewDecisionPage(BaseModel):
    items: list[ReviewDecision]
    total: int
    limit: int
    offset: int


# --- Queue ------------------------------------------------------------------------------------------------


def _review_flags(rule: str | None = None) -> list[Select]:
    """Flags of severity warning or worse, as two selects by how they are attached: to an extraction, or to its
    parameter without naming an extraction (the same attachment rule as the job result). Kept apart rather
    than OR-ed so each side is an indexed lookup."""
    direct = select(Flag.extraction_id).where(Flag.extraction_id.is_not(None))
    by_parameter = select(Flag.parameter_id).where(Flag.extraction_id.is_(None), Flag.parameter_id.is_not(None))
    selects = []
    for query in (direct, by_parameter):
        query = query.where(Flag.severity.in_(REVIEW_SEVERITIES))
        selects.append(query.where(Flag.rule == rule) if rule else query)
    return selects


def _needs_review(rule: str | None = None, *, per_row: bool = False) -> ColumnElement[bool]:
    """Whether an extraction carries a review flag (of ``rule``, if given).

    By default as uncorrelated IN subqueries, evaluated once rather than once per extraction: the fast form
    for lists and counts that visit the whole queue. ``per_row`` gives the same test as correlated EXISTS
    probes of the flags' indexes, for a walk in queue order that stops at the first item it finds (an IN
    would first collect every flagged id).
    """
    direct, by_parameter = _review_flags(rule)
    if per_row:
        return or_(direct.where(Flag.extraction_id == Extraction.id).exists(),
                   by_parameter.where(Flag.parameter_id == Extraction.parameter_id).exists())
    return or_(Extraction.id.in_(direct), Extraction.parameter_id.in_(by_parameter))


def _scope(query: Select, *, tenant: str | None, model: str | None, job_id: str | None,
           status: str, since: datetime | None = None) -> Select:
    """Filters shared by the item list, the total, the per-rule counts and the neighbour lookups."""
    if status not in QUEUE_STATUSES:
        raise InvalidInput(f"Unknown review status {status!r}; use one of {', '.join(QUEUE_STATUSES)}.",
                           code="unknown_status")
    newer = aliased(Extraction)
    query = query.where(
        Extraction.role == PRIMARY,
        ~exists().where(newer.parameter_id == Extraction.parameter_id, newer.role == PRIMARY,
                        newer.attempt > Extraction.attempt),
    )
    if tenant is not None:
        query = query.where(Job.tenant == tenant)
    if job_id:
        query = query.where(Extraction.job_id == job_id)
    if model:
        # Accept the job's alias as well as the model string the engine reported.
        query = query.where(or_(Extraction.model == model, Job.model == model))
    if since is not None:
        query = query.where(Extraction.created_at >= since)
    decided = exists().where(Decision.extraction_id == Extraction.id)
    if status == "open":
        query = query.where(~decided)
    elif status == "decided":
        query = query.where(decided)
    return query


def _listed(*columns: Any, tenant: str | None, rule: str | None, model: str | None, job_id: str | None,
            status: str, since: datetime | None, per_row: bool = False) -> Select:
    """``columns`` over the queue's items under every filter (the one definition of queue membership)."""
    query = select(*columns).select_from(Extraction).join(Job, Job.id == Extraction.job_id)
    query = _scope(query, tenant=tenant, model=model, job_id=job_id, status=status, since=since)
    return query.where(_needs_review(rule, per_row=per_row))


def _queue_order(*, newest_first: bool) -> tuple[ColumnElement[Any], ...]:
    """The queue's order: by arrival, ties broken by id, so every item has exactly one place."""
    if newest_first:
        return Extraction.created_at.desc(), Extraction.id.desc()
    return Extraction.created_at.asc(), Extraction.id.asc()


def _newer_than(created_at: datetime, extraction_id: int) -> ColumnElement[bool]:
    return tuple_(Extraction.created_at, Extraction.id) > (created_at, extraction_id)


def _older_than(created_at: datetime, extraction_id: int) -> ColumnElement[bool]:
    return tuple_(Extraction.created_at, Extraction.id) < (created_at, extraction_id)


def review_queue(
    session: Session,
    *,
    tenant: str | None,
    rule: str | None = None,
    model: str | None = None,
    job_id: str | None = None,
    status: str = "open",
    since: datetime | None = None,
    newest_first: bool = False,
    limit: int = 50,
    offset: int = 0,
) -> ReviewQueuePage:
    """Flagged extractions, oldest first (a queue is worked from its head), or newest first on request.

    ``since`` keeps only items created at or after that moment; it narrows the counts as well.
    """
    filters = {"tenant": tenant, "model": model, "job_id": job_id, "status": status, "since": since}
    listed = _listed(Extraction, JobParameter.name, rule=rule, **filters).join(
        JobParameter, JobParameter.id == Extraction.parameter_id)
    total = session.scalar(_listed(func.count(), rule=rule, **filters)) or 0
    rows = session.execute(listed.order_by(*_queue_order(newest_first=newest_first)).limit(limit)
                           .offset(offset)).all()

    pairs = []
    for attached in (Flag.extraction_id == Extraction.id,
                     and_(Flag.extraction_id.is_(None), Flag.parameter_id == Extraction.parameter_id)):
        pair = select(Flag.rule.label("rule"), Extraction.id.label("extraction_id")).select_from(Extraction).join(
            Job, Job.id == Extraction.job_id).join(Flag, attached).where(Flag.severity.in_(REVIEW_SEVERITIES))
        pairs.append(_scope(pair, **filters))
    flagged = union_all(*pairs).subquery()
    counts = select(flagged.c.rule, func.count(distinct(flagged.c.extraction_id))).group_by(flagged.c.rule)
    counts_by_rule = {rule_name: int(n) for rule_name, n in session.execute(counts)}

    items = _queue_items(session, [(extraction, name) for extraction, name in rows])
    return ReviewQueuePage(items=items, total=int(total), counts_by_rule=counts_by_rule)


@dataclass(frozen=True)
class QueuePlace:
    """Where one item sits in a filtered queue, and the items either side of it."""

    total: int = 0
    position: int | None = None  # 1-based, in the order asked for; None when the item is not in this queue
    previous: int | None = None
    next: int | None = None


def queue_place(
    session: Session,
    extraction_id: int,
    *,
    tenant: str | None,
    rule: str | None = None,
    model: str | None = None,
    job_id: str | None = None,
    status: str = "open",
    since: datetime | None = None,
    newest_first: bool = False,
) -> QueuePlace:
    """The item's place in the queue listed with the same filters and order, by keyset queries on its
    (created_at, id): a fixed handful of statements however long the queue is."""
    filters = {"tenant": tenant, "rule": rule, "model": model, "job_id": job_id, "status": status, "since": since}
    key = session.execute(_listed(Extraction.created_at, Extraction.id, **filters, per_row=True)
                          .where(Extraction.id == extraction_id)).first()
    if key is None:
        return QueuePlace(total=int(session.scalar(_listed(func.count(), **filters)) or 0))
    newer, older = _newer_than(*key), _older_than(*key)
    ahead, behind = (newer, older) if newest_first else (older, newer)
    total, ahead_count = session.execute(_listed(func.count(), func.count().filter(ahead), **filters)).one()
    # The nearest item ahead is the last of those ahead in queue order: the first in the reversed order.
    previous = session.scalar(_listed(Extraction.id, **filters, per_row=True).where(ahead)
                              .order_by(*_queue_order(newest_first=not newest_first)).limit(1))
    following = session.scalar(_listed(Extraction.id, **filters, per_row=True).where(behind)
                               .order_by(*_queue_order(newest_first=newest_first)).limit(1))
    return QueuePlace(total=int(total), position=int(ahead_count) + 1, previous=previous, next=following)


def review_item(session: Session, extraction_id: int, *, tenant: str | None) -> ReviewQueueItem:
    """One extraction in queue-item shape, flagged or not (a reviewer may spot-check any answer)."""
    extraction, _job, parameter = _load_extraction(session, extraction_id, tenant)
    return _queue_items(session, [(extraction, parameter.name)])[0]


def _queue_items(session: Session, rows: list[tuple[Extraction, str]]) -> list[ReviewQueueItem]:
    if not rows:
        return []
    extraction_ids = [e.id for e, _ in rows]
    parameter_ids = [e.parameter_id for e, _ in rows]
    flags: dict[int, list[Flag]] = {}
    flag_rows = session.scalars(select(Flag).where(or_(
        Flag.extraction_id.in_(extraction_ids),
        and_(Flag.extraction_id.is_(None), Flag.parameter_id.in_(parameter_ids)),
    )).order_by(Flag.id))
    by_parameter = {e.parameter_id: e.id for e, _ in rows}
    for flag in flag_rows:
        owner = flag.extraction_id if flag.extraction_id is not None else by_parameter.get(flag.parameter_id)
        if owner is not None:
            flags.setdefault(owner, []).append(flag)
    names = {e.id: name for e, name in rows}
    decisions = _latest_decisions(session, extraction_ids, names)

    items = []
    for extraction, name in rows:
        ordered = sorted(flags.get(extraction.id, []), key=lambda f: (-_rank(f.severity), f.id))
        items.append(ReviewQueueItem(
            extraction_id=extraction.id,
            job_id=extraction.job_id,
            parameter=name,
            model=extraction.model,
            found=extraction.found,
            values=[ValueOut.model_validate(v) for v in extraction.values or []],
            source_page=extraction.source_page,
            quote=extraction.quote,
            confidence=extraction.confidence,
            flags=[FlagOut(rule=f.rule, severity=f.severity, message=f.message, rule_version=f.rule_version,
                           evidence=f.evidence or {}) for f in ordered],
            created_at=_utc(extraction.created_at),
            decision=decisions.get(extraction.id),
        ))
    return items


def _rank(severity: str) -> int:
    try:
        return Severity(severity).rank
    except ValueError:
        return -1


def _latest_decisions(session: Session, extraction_ids: list[int], names: dict[int, str]) -> dict[int, ReviewDecision]:
    latest: dict[int, Decision] = {}
    for decision in session.scalars(
        select(Decision).where(Decision.extraction_id.in_(extraction_ids)).order_by(Decision.id)
    ):
        latest[decision.extraction_id] = decision
    return {eid: _decision_out(d, names[eid]) for eid, d in latest.items()}


# --- Deciding ---------------------------------------------------------------------------------------------


def resolve_reviewer(*, auth_mode: str, principal_name: str, requested: str | None) -> str:
    """Who signs a decision: the API key's name when keys are on (a caller cannot sign as someone else),
    otherwise the name the caller gives, or "anonymous"."""
    if auth_mode == "keys":
        return principal_name
    return (requested or "").strip() or "anonymous"


def decide(
    session: Session,
    extraction_id: int,
    request: ReviewDecisionRequest,
    *,
    reviewer: str,
    tenant: str | None,
) -> tuple[ReviewDecision, bool]:
    """Record a verdict on one extraction. Returns (decision, created).

    Deciding again is allowed (the latest decision counts; the audit list keeps every one), but a request
    identical to the latest decision is a replay and returns it unchanged, so a client that retries a POST
    after a lost response never doubles the audit trail. Once every flagged answer of a ``needs_review`` job has
    a decision, the job reports ``reviewed``; its flags and the decisions stay in its result.
    """
    if request.decision == "correct" and request.correction is None:
        raise InvalidInput("A correction needs the corrected values (`correction.values`).",
                           code="correction_required")
    if request.decision != "correct" and request.correction is not None:
        raise InvalidInput(f"`correction` is only accepted with decision `correct`, not `{request.decision}`.",
                           code="unexpected_correction")
    extraction, job, parameter = _load_extraction(session, extraction_id, tenant)
    correction = request.correction.model_dump(mode="json") if request.correction else None
    comment = (request.comment or "").strip() or None

    latest = session.scalar(
        select(Decision).where(Decision.extraction_id == extraction.id).order_by(Decision.id.desc()).limit(1)
    )
    if latest is not None and (latest.decision, latest.correction, latest.comment, latest.reviewer) == (
        request.decision, correction, comment, reviewer
    ):
        return _decision_out(latest, parameter.name), False

    row = Decision(job_id=job.id, extraction_id=extraction.id, decision=request.decision, correction=correction,
                   comment=comment, reviewer=reviewer, tenant=job.tenant)
    session.add(row)
    session.flush()
    return _decision_out(row, parameter.name), True


def every_flagged_answer_decided(session: Session, job_id: str) -> bool:
    """Whether no primary answer of the job that needs review is left without a decision."""
    undecided = select(Extraction.id).where(
        Extraction.job_id == job_id, Extraction.role == PRIMARY, _needs_review(),
        ~exists().where(Decision.extraction_id == Extraction.id))
    return not session.scalar(select(undecided.exists()))


def _load_extraction(session: Session, extraction_id: int, tenant: str | None) -> tuple[Extraction, Job, JobParameter]:
    row = session.execute(
        select(Extraction, Job, JobParameter)
        .join(Job, Job.id == Extraction.job_id)
        .join(JobParameter, JobParameter.id == Extraction.parameter_id)
        .where(Extraction.id == extraction_id, Extraction.role == PRIMARY)
    ).first()
    if row is None or (tenant is not None and row[1].tenant != tenant):
        # Another tenant's extraction is reported exactly like a missing one.
        raise NotFound(f"No reviewable extraction {extraction_id}.", code="extraction_not_found")
    return row[0], row[1], row[2]


def _decision_out(decision: Decision, parameter: str) -> ReviewDecision:
    return ReviewDecision(
        id=decision.id,
        job_id=decision.job_id,
        extraction_id=decision.extraction_id,
        parameter=parameter,
        decision=decision.decision,
        reviewer=decision.reviewer,
        comment=decision.comment,
        correction=ReviewCorrection.model_validate(decision.correction) if decision.correction else None,
        created_at=_utc(decision.created_at),
    )


def _utc(moment: datetime) -> datetime:
    """SQLite hands stored times back without a zone; they were written in UTC, so say so in the API."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


# --- Audit list -------------------------------------------------------------------------------------------


def list_decisions(
    session: Session,
    *,
    tenant: str | None,
    job_id: str | None = None,
    extraction_id: int | None = None,
    limit: int = 50,
    offset: int = 0,
) -> ReviewDecisionPage:
    """Every decision ever recorded, newest first (superseded ones included: this is the audit trail)."""
    query = select(Decision, JobParameter.name).join(Extraction, Extraction.id == Decision.extraction_id).join(
        JobParameter, JobParameter.id == Extraction.parameter_id)
    if tenant is not None:
        query = query.where(Decision.tenant == tenant)
    if job_id:
        query = query.where(Decision.job_id == job_id)
    if extraction_id is not None:
        query = query.where(Decision.extraction_id == extraction_id)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.execute(query.order_by(Decision.id.desc()).limit(limit).offset(offset)).all()
    return ReviewDecisionPage(items=[_decision_out(d, name) for d, name in rows], total=int(total),
                              limit=limit, offset=offset)
