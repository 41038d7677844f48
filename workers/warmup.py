"""Warm a fresh pool process before it takes work: one parameter of a small generated datasheet through the offline
reader, untraced and stored nowhere.

Importing the task module (done in the Celery parent, so forked children inherit it) is not all a job's first run
pays: LiteLLM loads its provider modules and its tokenizer on the first completion, the agent registers the offline
reader and the document tools on first use. A process that has not run a job yet took several seconds more on its
first one, and a tenant whose job a fresh process took (a worker just started or scaled up, a child replaced after a
crash) waited that long on top. Doing it in the parent instead would start LiteLLM's threads and tokenizer
runtime before the fork, which the children would inherit broken; so each child warms itself in
``worker_process_init``, before it reports up: the pool hands work only to children that have reported up
(``worker_proc_alive_timeout`` leaves room for this, app/jobs/limits.py).
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import time
from pathlib import Path

import pymupdf
from opentelemetry.trace import NoOpTracerProvider

from app.agent import engines
from app.agent.registry import resolve_model
from app.agent.schemas import ParameterRequest, RunContext
from app.config import OFFLINE_MODEL
from app.detectors.dimensions import to_requested
from app.dispatch import telemetry
from app.documents.build import build_index

log = logging.getLogger(__name__)

WARM_UP_BUILD_TIMEOUT_S = 30.0


def warm_up_datasheet() -> bytes:
    """One page: a title and a small characteristics table, enough for the reader to find and answer a row."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((50, 60), "Warm-up regulator", fontsize=12)
    page.insert_text((50, 80), "Electrical Characteristics", fontsize=10)
    rows = [("Parameter", "Symbol", "Min", "Typ", "Max", "Unit"), ("Supply voltage", "VIN", "1.5", "2.5", "9", "V")]
    for r, row in enumerate(rows):
        for x, cell in zip((50, 170, 230, 270, 310, 350), row, strict=True):
            page.insert_text((x, 110 + 14 * r), cell, fontsize=9)
    data = doc.tobytes()
    doc.close()
    return data


def _wait_for_completion_logging(timeout_s: float = 10.0) -> None:
    """LiteLLM logs a completion on a thread of its own after the call returns, and imports what that logging needs
    there: wait until its logging tasks are done, so that what the warm-up's completion loads is loaded before the
    first job rather than during it. Each pending task holds a slot of the logging executor; holding them all means
    none is left."""
    try:
        from litellm.litellm_core_utils.thread_pool_executor import executor

        slots, total = executor._pending_slots, int(executor._max_pending_tasks)
    except (ImportError, AttributeError):
        return  # another LiteLLM: its first job waits for nothing the warm-up could not do
    deadline = time.monotonic() + timeout_s
    held = 0
    try:
        while held < total and slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            held += 1
    finally:
        for _ in range(held):
            slots.release()


def warm_up() -> float:
    """Run the warm-up parameter in this process; returns its seconds. Never raises: a process that could not warm
    up still works, it pays the first-use costs on its first job instead."""
    started = time.perf_counter()
    try:
        data = warm_up_datasheet()
        with tempfile.TemporaryDirectory(prefix="dsx-warm-up-") as tmp:
            path = Path(tmp) / "warm-up.pdf"
            path.write_bytes(data)
            index = build_index(path, hashlib.sha256(data).hexdigest(), timeout_s=WARM_UP_BUILD_TIMEOUT_S,
                                max_pages=1)
            # No spans: the dispatch record and the metrics derived from it are about jobs, not this.
            with telemetry.use_provider(NoOpTracerProvider()):
                outcome = engines.run_parameter(index=index, request=ParameterRequest(name="Supply voltage", unit="V"),
                                                model=resolve_model(OFFLINE_MODEL), engine="auto",
                                                context=RunContext(tenant="warm-up"))
        for value in outcome.extraction.values if outcome.extraction else []:
            to_requested(value.model_dump(), "mV")  # the unit registry's first conversion
        _wait_for_completion_logging()
    except Exception:  # noqa: BLE001 - warming is an optimisation, never a reason for a process not to start
        log.warning("pool process warm-up failed; its first job pays the first-use costs", exc_info=True)
    seconds = time.perf_counter() - started
    log.info("pool process warmed up in %.1fs", seconds)
    return seconds
