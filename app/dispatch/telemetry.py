"""Telemetry (placeholder signature)."""

from __future__ import annotations


def flush() -> None:
    return None
