"""The identifiers every log line carries: request id, job id and tenant of the work in progress.

They live in one context variable holding a small mutable mapping: ``bound()`` opens a new mapping for a block (a
request, a job), and ``annotate()`` adds to the open one in place. In place matters: FastAPI runs sync
dependencies in a copied context, so the tenant an authentication dependency learns would otherwise vanish when the
dependency returns. Trace and span ids are not kept here: they are read from the current span when a line is
written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

FIELDS = ("request_id", "job_id", "tenant")

_current: ContextVar[dict[str, str] | None] = ContextVar("dsx_log_context", default=None)


def _clean(values: dict[str, str | None]) -> dict[str, str]:
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown log context fields: {sorted(unknown)}")
    return {name: str(value) for name, value in values.items() if value is not None}


@contextmanager
def bound(**values: str | None) -> Iterator[None]:
    """A new context for the block: the enclosing identifiers plus ``values`` (``None`` values skipped)."""
    token = _current.set({**(_current.get() or {}), **_clean(values)})
    try:
        yield
    finally:
        _current.reset(token)


def annotate(**values: str | None) -> None:
    """Add identifiers to the context opened by the enclosing ``bound()`` (no-op outside one)."""
    open_context = _current.get()
    if open_context is not None:
        open_context.update(_clean(values))


def current() -> dict[str, str]:
    """The identifiers set now."""
    return dict(_current.get() or {})
