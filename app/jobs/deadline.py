"""A wall-clock deadline for the job running in this process: soft, then hard.

Celery's own time limits are fixed per message when it is sent, and a message is only a wake-up (the worker may
run another tenant's job, app/jobs/fairness.py), so the deadline of the job actually claimed is armed here, in
the pool process, once the job is known.

- Soft: ``SIGALRM`` raises :class:`SoftTimeLimitExceeded` in the main thread at the next bytecode, the same
  exception Celery's soft limit raises, so one handler fails the job cleanly (app/jobs/limits.py).
- Hard: :func:`faulthandler.dump_traceback_later` runs on a C thread that needs no GIL, so it fires even when the
  main thread is stuck in C code holding it (where a Python signal handler never runs). It writes every
  thread's stack to stderr (what was stuck) and ends the process; the pool starts a fresh one, and the job's
  lease lapses so it is redelivered and counted towards ``max_deliveries``.

Both are process-wide, so a deadline is armed only in the main thread (prefork and solo pools). Elsewhere (the
threads pool, a job run inline) nothing is armed and Celery's worst-case limits remain the backstop.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from celery.exceptions import SoftTimeLimitExceeded


def _raise_soft_limit(_signum: int, _frame: FrameType | None) -> None:
    raise SoftTimeLimitExceeded()


@contextmanager
def armed(soft_s: float, hard_s: float) -> Iterator[bool]:
    """Arm the soft and hard deadline (seconds from now) for the block; yields whether they could be armed."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, _raise_soft_limit)
    previous_delay, previous_interval = signal.setitimer(signal.ITIMER_REAL, soft_s)
    faulthandler.dump_traceback_later(hard_s, exit=True, file=sys.__stderr__)
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)
        if previous_delay:  # someone else's alarm (a test runner's timeout) was pending: it keeps its time
            remaining = max(previous_delay - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, remaining, previous_interval)
