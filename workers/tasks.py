"""Celery tasks: thin wrappers, no business logic."""

from __future__ import annotations

from app.jobs import fairness, leases, limits, pipeline
from app.jobs.queue import RUN_JOB_TASK
from workers.celery_app import celery_app


@celery_app.task(name=RUN_JOB_TASK, acks_late=True, reject_on_worker_lost=True)
def run_job(job_id: str) -> str:
    owner = leases.worker_identity()
    job_id = fairness.claim_next(job_id, owner)
    return limits.run_within_limits(job_id, owner, lambda: pipeline.run(job_id, owner))
