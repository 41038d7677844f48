"""Logging configuration for the API and the workers: one JSON object per line on stderr.

Every line carries ``service``, and, where known, ``request_id``, ``job_id``, ``tenant``, ``trace_id`` and
``span_id``, so a line can be joined to the HTTP request, the job and the dispatch record. ``DSX_LOG_FORMAT=text``
gives the same fields in a readable line for a terminal. Uvicorn's and Celery's loggers are routed through the
same handler instead of their own.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from opentelemetry import trace
from pythonjsonlogger.json import JsonFormatter

from app.config import get_settings
from app.observability import context

_HANDLER_NAME = "dsx"
# Servers that install handlers of their own: their lines go through ours instead.
_ROUTED_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "celery", "celery.task", "celery.worker")
_FIELDS = ("request_id", "job_id", "tenant", "trace_id", "span_id")
_TEXT_FORMAT = ("%(asctime)s %(levelname)s %(name)s [%(service)s req=%(request_id)s job=%(job_id)s "
                "tenant=%(tenant)s trace=%(trace_id)s] %(message)s")


class ContextFilter(logging.Filter):
    """Stamps each record with the service name, the bound identifiers and the current span's ids."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def filter(self, record: logging.LogRecord) -> bool:
        values: dict[str, Any] = dict.fromkeys(_FIELDS)
        values.update(context.current())
        span_context = trace.get_current_span().get_span_context()
        if span_context.is_valid:
            values["trace_id"] = f"{span_context.trace_id:032x}"
            values["span_id"] = f"{span_context.span_id:016x}"
        record.service = self.service
        for name, value in values.items():
            if getattr(record, name, None) is None:
                setattr(record, name, value)
        return True


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the write (like logging's last-resort handler), so a
    replaced or closed stderr (test capture, a daemonised worker) never leaves the handler writing to a dead
    stream. ``setStream`` pins another stream."""

    def __init__(self) -> None:
        self._pinned: Any = None
        super().__init__()

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return self._pinned if self._pinned is not None else sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        self._pinned = None if value is sys.stderr else value


def _formatter(log_format: str) -> logging.Formatter:
    if log_format == "text":
        return logging.Formatter(_TEXT_FORMAT)
    return JsonFormatter(
        "{asctime}{levelname}{name}{message}{service}" + "".join(f"{{{f}}}" for f in _FIELDS),
        style="{",
        rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        timestamp=False,
    )


def configure_logging(service: str) -> None:
    """Install the dsx handler on the root logger (idempotent: a second call replaces the first)."""
    settings = get_settings()
    handler = _StderrHandler()
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(_formatter(settings.log_format))
    handler.addFilter(ContextFilter(service))
    root = logging.getLogger()
    for existing in list(root.handlers):
        if existing.get_name() == _HANDLER_NAME:
            root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(settings.log_level.upper())
    for name in _ROUTED_LOGGERS:
        routed = logging.getLogger(name)
        routed.handlers.clear()
        routed.propagate = True
