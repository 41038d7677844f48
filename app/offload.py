"""Where blocking work runs in the API process, and how much of it at once.

Sync routes and dependencies run on the event loop's default thread pool, sized to ``api_threads``. Job
submissions run their admission (PDF check, storage, enqueue) on a separate pool of ``upload_threads``, so a burst
of uploads, each waiting seconds for the PDF check, cannot take the threads that status reads need. Every thread of
both pools can hold a database connection at once; ``db_pool_size + db_max_overflow`` must cover
``api_threads + upload_threads`` (checked at start-up), so a request never waits for a connection behind its own
process's threads.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

import anyio.to_thread

from app.config import get_settings

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


def size_thread_pools() -> None:
    """Size the event loop's default thread pool (call from inside the running loop, at start-up)."""
    settings = get_settings()
    anyio.to_thread.current_default_thread_limiter().total_tokens = settings.api_threads
    connections = settings.db_pool_size + settings.db_max_overflow
    if connections < settings.api_threads + settings.upload_threads:
        log.warning("database pool (%d connections) is smaller than the API's threads (%d + %d uploads): requests "
                    "may be answered 503 service_busy while threads wait for connections",
                    connections, settings.api_threads, settings.upload_threads)


@functools.lru_cache(maxsize=1)
def _upload_executor() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=get_settings().upload_threads, thread_name_prefix="dsx-upload")


async def run_upload_work(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run blocking admission work on the upload pool, with the caller's context (trace, log fields)."""
    context = contextvars.copy_context()
    call = functools.partial(context.run, function, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_upload_executor(), call)
