"""ORM: jobs, their parameters, and the extractions answering them."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base, UTCDateTime
from app.timeutil import utcnow


class JobStatus(enum.StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    needs_review = "needs_review"
    reviewed = "reviewed"  # was needs_review; every flagged answer has a reviewer's decision since
    failed = "failed"
    cancelled = "cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL_STATUSES


TERMINAL_STATUSES = frozenset({JobStatus.done, JobStatus.needs_review, JobStatus.reviewed, JobStatus.failed,
                               JobStatus.cancelled})


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (UniqueConstraint("tenant", "idempotency_key", name="uq_jobs_tenant_idempotency_key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant: Mapped[str] = mapped_column(String(64), default="default", index=True)
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.queued.value, index=True)
    engine: Mapped[str] = mapped_column(String(16), default="auto")
    model: Mapped[str] = mapped_column(String(200))
    blob_sha256: Mapped[str] = mapped_column(ForeignKey("blobs.sha256"))
    filename: Mapped[str] = mapped_column(String(255), default="datasheet.pdf")
    idempotency_key: Mapped[str | None] = mapped_column(String(200), nullable=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    failure_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    failure_detail: Mapped[str | None] = mapped_column(Text, nullable=True)
    deliveries: Mapped[int] = mapped_column(Integer, default=0)
    # Which worker holds the job and until when; an expired lease lets another delivery take over.
    lease_owner: Mapped[str | None] = mapped_column(String(128), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    # When a wake-up (broker message) naming this job was last sent and not yet taken by a delivery; None: the job
    # has none outstanding (app/jobs/sweeper.py re-sends only then, or once the redelivery window has passed).
    woken_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    parameters: Mapped[list[JobParameter]] = relationship(
        back_populates="job", order_by="JobParameter.position", cascade="all, delete-orphan"
    )


class JobParameter(Base):
    """One requested parameter; only the allow-listed fields here may ever reach a model."""

    __tablename__ = "job_parameters"
    __table_args__ = (UniqueConstraint("job_id", "position", name="uq_job_parameters_position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(500))
    unit: Mapped[str | None] = mapped_column(String(64), nullable=True)
    conditions: Mapped[list[str]] = mapped_column(JSON, default=list)
    notes: Mapped[str | None] = mapped_column(Text, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")

    job: Mapped[Job] = relationship(back_populates="parameters")


class Extraction(Base):
    """An answer to one parameter, as submitted through `submit_extraction` (or an engine error).

    Unique on (parameter, attempt, role): a redelivered task re-uses the row instead of duplicating it.
    ``role`` is ``primary`` for the job's model and ``cross_check`` for the offline reader's second opinion.
    """

    __tablename__ = "extractions"
    __table_args__ = (
        UniqueConstraint("parameter_id", "attempt", "role", name="uq_extractions_parameter_attempt_role"),
        # The review queue's order: its pages and an item's neighbours are keyset lookups on it.
        Index("ix_extractions_created_at_id", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    parameter_id: Mapped[int] = mapped_column(ForeignKey("job_parameters.id", ondelete="CASCADE"), index=True)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    role: Mapped[str] = mapped_column(String(16), default="primary")
    model: Mapped[str] = mapped_column(String(200))
    engine: Mapped[str] = mapped_column(String(16))
    found: Mapped[bool] = mapped_column(Boolean, default=False)
    values: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    source_page: Mapped[int | None] = mapped_column(Integer, nullable=True)
    quote: Mapped[str | None] = mapped_column(Text, nullable=True)
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    error_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    error_detail: Mapped[str | None] = mapped_column(Text, nullable=True)
    trace_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    root_span_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    duration_ms: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
