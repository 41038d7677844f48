"""Queue metrics read from the jobs table at scrape time, so they are right whichever process enqueued or
dequeued."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from app.db import session_scope
from app.metrics import seconds_between
from app.tables.jobs import Job, JobStatus

log = logging.getLogger(__name__)


class JobQueueCollector(Collector):
    """Queue depth from the jobs table, read at scrape time.

    The database, not the broker, is the source: it is the same for the embedded and production brokers, and a
    job counts as waiting until a worker has actually started it.
    """

    def describe(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("dsx_queue_depth", "Jobs waiting for a worker (status queued).")
        yield GaugeMetricFamily("dsx_queue_oldest_age_seconds", "Age of the oldest queued job; 0 when none wait.")
        yield GaugeMetricFamily("dsx_jobs_running", "Jobs a worker is processing now.")

    def collect(self) -> Iterator[Metric]:
        try:
            with session_scope() as session:
                queued, oldest = session.execute(
                    select(func.count(), func.min(Job.created_at)).where(Job.status == JobStatus.queued.value)
                ).one()
                running = session.scalar(
                    select(func.count()).select_from(Job).where(Job.status == JobStatus.running.value)
                )
        except Exception:  # noqa: BLE001 - a database outage must not hide every other metric
            log.warning("queue metrics unavailable: the jobs table could not be read", exc_info=True)
            return
        age = seconds_between(oldest, datetime.now(UTC)) if oldest is not None else 0.0
        yield GaugeMetricFamily("dsx_queue_depth", "Jobs waiting for a worker (status queued).", value=queued)
        yield GaugeMetricFamily("dsx_queue_oldest_age_seconds", "Age of the oldest queued job; 0 when none wait.",
                                value=max(age or 0.0, 0.0))
        yield GaugeMetricFamily("dsx_jobs_running", "Jobs a worker is processing now.", value=running or 0)
