"""Celery tasks: thin wrappers, no business logic."""

from __future__ import annotations

from typing import Any

from app.dispatch import propagation
from app.flows import extraction as extraction_flow
from app.jobs import fairness, leases, limits
from app.jobs.queue import RUN_JOB_TASK
from app.observability import context as log_context
from workers.celery_app import celery_app


@celery_app.task(name=RUN_JOB_TASK, acks_late=True, reject_on_worker_lost=True, bind=True)
def run_job(self: Any, job_id: str) -> str:
    headers = {name: self.request.get(name) for name in
               (*propagation.TRACE_HEADERS, propagation.REQUEST_ID_HEADER, propagation.TENANT_HEADER)}
    owner = leases.worker_identity()

    def run(claimed: str) -> str:
        # A message is a wake-up: the job it names continues its request's trace; another job taken in its place
        # (fair scheduling) starts a trace of its own rather than borrow a stranger's request.
        own = claimed == job_id
        parent = propagation.extract(headers) if own else None
        with log_context.bound(job_id=claimed, request_id=headers[propagation.REQUEST_ID_HEADER] if own else None,
                               tenant=headers[propagation.TENANT_HEADER] if own else None), \
                propagation.runs_continue(parent):
            return limits.run_within_limits(claimed, owner, lambda: extraction_flow.run(claimed, owner))

    return fairness.run_fairly(job_id, owner, run)
