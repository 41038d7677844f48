"""The Celery application, configured from Settings (same broker settings as the API's producer)."""

from __future__ import annotations

from celery import Celery
from celery.signals import worker_process_init

from app.jobs.queue import QUEUE, celery_config

celery_app = Celery("dsx", include=["workers.tasks"])
celery_app.conf.update(celery_config())
celery_app.conf.task_queues = None
celery_app.conf.task_default_queue = QUEUE


@worker_process_init.connect
def _fresh_connections(**_kwargs) -> None:  # noqa: ANN003
    # A forked pool child must not reuse the parent's database connections.
    from app.db import reset_engines

    reset_engines()
