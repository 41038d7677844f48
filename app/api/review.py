"""HTTP routes of the review queue (JSON): thin, the logic lives in decisions.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from fastapi import APIRouter, Depends, Query, Response
from sqlalchemy.orm import Session

from app.auth.security import Principal, require_role
from app.config import get_settings
from app.db import get_session
from app.flows import review as review_flow
from app.http_input import RowId
from app.input_policy import MAX_OFFSET
from app.review import decisions
from app.review.decisions import (
    QueueStatus,
    ReviewDecision,
    ReviewDecisionPage,
    ReviewDecisionRequest,
    ReviewQueueItem,
    ReviewQueuePage,
)

router = APIRouter(prefix="/v1", tags=["review"])

_NOT_FOUND = {404: {"description": "No such extraction for this tenant"}}


@router.get("/review/queue", response_model=ReviewQueuePage)
def review_queue(
    rule: str | None = Query(default=None, max_length=64, description="Only items flagged by this rule"),
    model: str | None = Query(default=None, max_length=200),
    job_id: str | None = Query(default=None, max_length=32),
    status: QueueStatus = Query(default="open", description="open = not decided yet"),
    since: datetime | None = Query(default=None, description="Only items created at or after this moment "
                                   "(ISO 8601; without a zone it is UTC)"),
    order: Literal["oldest", "newest"] = Query(default="oldest", description="oldest first works the queue from "
                                               "its head; newest first shows what just arrived"),
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    principal: Principal = Depends(require_role("reviewer")),
    session: Session = Depends(get_session, scope="function"),
) -> ReviewQueuePage:
    if since is not None:
        # In UTC here, not in the query: a moment whose UTC form lies outside the storable years (9999-12-31
        # at -01:00) raises OverflowError, answered as the client's error (422); inside the query the database
        # layer would wrap it into a 500.
        since = since.replace(tzinfo=UTC) if since.tzinfo is None else since.astimezone(UTC)
    return decisions.review_queue(session, tenant=principal.tenant, rule=rule, model=model, job_id=job_id,
                                  status=status, since=since, newest_first=order == "newest", limit=limit,
                                  offset=offset)


@router.get("/review/items/{extraction_id}", response_model=ReviewQueueItem, responses=_NOT_FOUND)
def review_item(
    extraction_id: RowId,
    principal: Principal = Depends(require_role("reviewer")),
    session: Session = Depends(get_session, scope="function"),
) -> ReviewQueueItem:
    return decisions.review_item(session, extraction_id, tenant=principal.tenant)


@router.post("/review/items/{extraction_id}/decision", status_code=201, response_model=ReviewDecision,
             responses={200: {"description": "Identical to the latest decision: replayed, nothing stored",
                              "model": ReviewDecision},
                        422: {"description": "Invalid input, e.g. `correction_required`"}, **_NOT_FOUND})
def decide(
    extraction_id: RowId,
    body: ReviewDecisionRequest,
    response: Response,
    principal: Principal = Depends(require_role("reviewer")),
    session: Session = Depends(get_session, scope="function"),
) -> ReviewDecision:
    reviewer = decisions.resolve_reviewer(auth_mode=get_settings().effective_auth_mode, principal_name=principal.name,
                                          requested=body.reviewer)
    decision, created = review_flow.decide(session, extraction_id, body, reviewer=reviewer, tenant=principal.tenant)
    # Commit before answering: the session dependency's own commit runs only after the response is sent, and a
    # client that reads right after a 201 must see its decision.
    session.commit()
    if not created:
        response.status_code = 200
    return decision


@router.get("/reviews", response_model=ReviewDecisionPage)
def list_reviews(
    job_id: str | None = Query(default=None, max_length=32),
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    principal: Principal = Depends(require_role("reviewer")),
    session: Session = Depends(get_session, scope="function"),
) -> ReviewDecisionPage:
    return decisions.list_decisions(session, tenant=principal.tenant, job_id=job_id, limit=limit, offset=offset)
