"""UTC timestamps in one place, so every table stores the same kind of time."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
