"""HTTP routes for jobs: thin, all logic lives in service.py."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from app import metrics
from app.auth.ratelimit import charge_upload
from app.auth.security import Principal, require_role, require_role_on_loop
from app.config import get_settings
from app.contracts import ENGINE_NAMES
from app.db import get_session, session_scope
from app.flows.job_view import job_out, read_job
from app.input_policy import MAX_OFFSET
from app.jobs import service
from app.jobs.queue import enqueue
from app.jobs.schemas import JobOut, JobPage
from app.jobs.upload import JobUpload, read_job_upload
from app.offload import run_upload_work
from app.urls import public_path

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

_UPLOAD_SCHEMA = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "parameters"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "The datasheet PDF"},
                        "parameters": {
                            "type": "string",
                            "description": 'JSON array; each item a name or {"name", "unit"?, "conditions"?, '
                                           '"notes"?}',
                        },
                        "engine": {"type": "string", "enum": list(ENGINE_NAMES)},
                        "model": {"type": "string"},
                    },
                }
            }
        },
    }
}


@router.post("", status_code=202, response_model=JobOut, openapi_extra=_UPLOAD_SCHEMA,
             responses={409: {"description": "Idempotency-Key reused with another body"},
                        413: {"description": "Upload too large"}, 422: {"description": "Invalid input"}})
async def submit_job(
    request: Request,
    response: Response,
    idempotency_key: str | None = Header(default=None, alias="Idempotency-Key", max_length=200),
    principal: Principal = Depends(require_role_on_loop("submitter")),
) -> JobOut:
    upload = await read_job_upload(request, get_settings().max_upload_bytes)
    # The quota charge, validation, storage and enqueueing block (Redis, MuPDF, database, broker): keep them off
    # the event loop.
    job, created = await run_upload_work(_admit, upload, idempotency_key, principal)
    if not created:
        response.status_code = 200 if service.JobStatus(job.status).is_terminal else 202
    response.headers["Location"] = public_path(request, f"/v1/jobs/{job.job_id}")
    return job


def _admit(upload: JobUpload, idempotency_key: str | None, principal: Principal) -> tuple[JobOut, bool]:
    if principal.key_id is not None:
        charge_upload(principal.tenant, len(upload.data))
    # One session, so one connection and one transaction for the whole submission.
    with session_scope() as session:
        job, created = service.create_job(
            session,
            data=upload.data,
            filename=upload.filename,
            parameters=upload.parameters,
            engine=upload.engine,
            model=upload.model,
            idempotency_key=idempotency_key,
            tenant=principal.tenant,
        )
        session.commit()
        if created:
            enqueue(job.id)
            metrics.observe_job_submitted(job.engine)
        return job_out(session, job, created=created), created


@router.get("", response_model=JobPage)
def list_jobs(
    status: str | None = Query(default=None),
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    principal: Principal = Depends(require_role("submitter")),
    session: Session = Depends(get_session, scope="function"),
) -> JobPage:
    jobs, total = service.list_jobs(session, tenant=principal.tenant, status=status, limit=limit, offset=offset)
    return JobPage(items=[job_out(session, j) for j in jobs], total=total, limit=limit, offset=offset)


@router.get("/{job_id}", response_model=JobOut)
async def get_job(job_id: str, principal: Principal = Depends(require_role_on_loop("submitter"))) -> JobOut:
    # The hot polling path: one thread hop and one connection for the whole read, not one per dependency.
    return await run_in_threadpool(read_job, job_id, principal.tenant)


@router.post("/{job_id}/cancel", response_model=JobOut)
def cancel_job(
    job_id: str,
    principal: Principal = Depends(require_role("submitter")),
    session: Session = Depends(get_session, scope="function"),
) -> JobOut:
    job = service.cancel_job(session, job_id, principal.tenant)
    session.flush()
    return job_out(session, job)
