"""Celery tasks: thin wrappers, no business logic."""

from __future__ import annotations

from typing import Any

from app.dispatch import propagation
from app.flows import extraction as extraction_flow
from app.jobs.queue import RUN_JOB_TASK
from app.observability import context as log_context
from workers.celery_app import celery_app


@celery_app.task(name=RUN_JOB_TASK, acks_late=True, reject_on_worker_lost=True, bind=True)
def run_job(self: Any, job_id: str) -> str:
    headers = {name: self.request.get(name) for name in
               (*propagation.TRACE_HEADERS, propagation.REQUEST_ID_HEADER, propagation.TENANT_HEADER)}
    parent = propagation.extract(headers)
    with log_context.bound(job_id=job_id, request_id=headers[propagation.REQUEST_ID_HEADER],
                           tenant=headers[propagation.TENANT_HEADER]), propagation.runs_continue(parent):
        return extraction_flow.run(job_id)
