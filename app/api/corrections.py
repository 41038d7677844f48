"""HTTP route of the corrections export: reviewers' corrections as gold claims for evaluation."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from fastapi.responses import PlainTextResponse
from sqlalchemy.orm import Session

from app.auth.security import Principal, require_role
from app.db import get_session
from app.review.corrections import corrections_yaml

router = APIRouter(prefix="/v1", tags=["review"])


@router.get("/review/corrections.yaml", response_class=PlainTextResponse,
            responses={200: {"content": {"application/yaml": {}},
                             "description": "Corrections as gold claims (format of the evaluation set)"}})
def corrections(
    job_id: str | None = Query(default=None, max_length=32),
    principal: Principal = Depends(require_role("reviewer")),
    session: Session = Depends(get_session, scope="function"),
) -> PlainTextResponse:
    body = corrections_yaml(session, tenant=principal.tenant, job_id=job_id)
    return PlainTextResponse(body, media_type="application/yaml")
