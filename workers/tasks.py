"""Celery tasks: thin wrappers, no business logic."""

from __future__ import annotations

from app.flows import extraction as extraction_flow
from app.jobs.queue import RUN_JOB_TASK
from workers.celery_app import celery_app


@celery_app.task(name=RUN_JOB_TASK, acks_late=True, reject_on_worker_lost=True)
def run_job(job_id: str) -> str:
    return extraction_flow.run(job_id)
