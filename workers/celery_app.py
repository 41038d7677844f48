"""The Celery application, configured from Settings (same broker settings as the API's producer)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from celery import Celery
from celery.signals import (
    setup_logging,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from app.jobs.limits import worker_config
from app.jobs.queue import QUEUE, celery_config

if TYPE_CHECKING:
    from app.observability.host_metrics import MetricsServer

celery_app = Celery("dsx", include=["workers.tasks"])
celery_app.conf.update(celery_config())
celery_app.conf.update(worker_config())
celery_app.conf.task_queues = None
celery_app.conf.task_default_queue = QUEUE


@setup_logging.connect
def _json_logs(**_kwargs) -> None:  # noqa: ANN003
    # Connected, this replaces Celery's own logging setup: worker lines are JSON like the API's.
    from app.observability.logging import configure_logging

    configure_logging("dsx-worker")


@worker_process_init.connect
def _fresh_connections(**_kwargs) -> None:  # noqa: ANN003
    # A forked pool child must not reuse the parent's database connections.
    from app.db import reset_engines

    reset_engines()


@worker_process_init.connect
def _warm_up(**_kwargs) -> None:  # noqa: ANN003
    # Before the child reports up, so that no job waits for its first-use costs (workers/warmup.py).
    from app.config import get_settings

    if get_settings().worker_warm_up:
        from workers.warmup import warm_up

        warm_up()


@worker_init.connect
def _fresh_metrics_dir(**_kwargs) -> None:  # noqa: ANN003
    # In the parent, before the pool starts: what dead processes of this host left is an earlier run's.
    from app.config import get_settings
    from app.observability.host_metrics import prepare_metrics_dir

    metrics_dir = get_settings().metrics_dir
    if metrics_dir is not None:
        prepare_metrics_dir(metrics_dir)


@worker_process_shutdown.connect
def _forget_live_gauges(pid: int | None = None, **_kwargs) -> None:  # noqa: ANN003
    from app.config import get_settings
    from app.observability.host_metrics import mark_process_dead

    metrics_dir = get_settings().metrics_dir
    if metrics_dir is not None and pid is not None:
        mark_process_dead(pid, metrics_dir)


_metrics_server: list[MetricsServer] = []


@worker_ready.connect
def _serve_metrics(**_kwargs) -> None:  # noqa: ANN003
    from app.config import get_settings
    from app.observability.host_metrics import host_registry, serve_metrics

    settings = get_settings()
    if settings.worker_metrics_port:
        registry = host_registry(settings.metrics_dir, settings.build_revision)
        _metrics_server.append(serve_metrics(settings.worker_metrics_host, settings.worker_metrics_port, registry))


@worker_shutdown.connect
def _stop_serving_metrics(**_kwargs) -> None:  # noqa: ANN003
    while _metrics_server:
        _metrics_server.pop().close()


_sweeper_stop = threading.Event()


@worker_ready.connect
def _start_sweeper(**_kwargs) -> None:  # noqa: ANN003
    from app.jobs.sweeper import start_background_sweeper

    start_background_sweeper(_sweeper_stop)


@worker_shutdown.connect
def _stop_sweeper(**_kwargs) -> None:  # noqa: ANN003
    _sweeper_stop.set()
