"""Upload admission under resource limits: MuPDF reads each upload in a pre-started child process.

Why a child: ``inspect_pdf`` runs MuPDF, C code, on files anyone may upload. A crafted PDF can loop for minutes,
allocate gigabytes or segfault; inside the API process that would stall or kill every request it serves. Inside a
child it costs the child, and the upload is refused with a typed code instead:

* ``pdf_too_complex``: the check hit the child's ``RLIMIT_AS`` cap of ``admission_memory_mb``;
* ``pdf_check_timeout``: the check outran ``admission_timeout_s``; the pool's children are killed and replaced;
* ``pdf_check_crashed``: the child died (a MuPDF crash) on the check and on its one retry. A child that dies
  breaks the whole pool, so every check in flight fails with it, not only the culprit; each is tried once more
  on a fresh pool, where only the culprit dies again;
* the codes of ``inspect_pdf`` itself (``corrupt_pdf``, ``encrypted_pdf``, ``too_many_pages``).

The children are forked from a ``forkserver`` (the API process has threads, so plain ``fork`` is unsafe) that has
imported pymupdf already, so starting or replacing a child costs milliseconds and a check costs one round trip,
not an interpreter start. The cheap checks (``check_envelope``) run in the caller before anything is sent.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import threading
from collections.abc import Callable
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from app.config import get_settings
from app.documents.sandbox import address_space_bytes, die_with_parent
from app.documents.validate import check_envelope, inspect_pdf
from app.errors import InvalidPdf
from app.metrics import timed_upload_check

log = logging.getLogger(__name__)

#: Reads a PDF (bytes, page limit) and returns its page count or raises ``InvalidPdf``; runs in the child.
Inspect = Callable[[bytes, int], int]
#: Outcome a child sends back: the page count, or the (code, detail) of a refusal.
Outcome = int | tuple[str, str]

# How long a new pool may take to start its children. The first start also starts the forkserver, which imports
# pymupdf (seconds on a busy machine); later starts only fork from it.
START_TIMEOUT_S = 120.0


def admit_pdf(data: bytes, *, max_bytes: int, max_pages: int) -> int:
    """Return the page count of an upload we can process, or raise a typed error."""
    with timed_upload_check():
        check_envelope(data, max_bytes=max_bytes)
        settings = get_settings()
        if not settings.admission_sandbox:
            return inspect_pdf(data, max_pages)
        return shared_pool().check(data, max_pages, timeout_s=settings.admission_timeout_s)


class AdmissionPool:
    """A few child processes, each capped in address space, that run ``inspect`` on uploads one at a time."""

    def __init__(self, *, workers: int, memory_mb: int, inspect: Inspect = inspect_pdf) -> None:
        self.workers = workers
        self.memory_mb = memory_mb
        self._inspect = inspect
        self._lock = threading.Lock()
        # At most one check per child is handed over, so a check's timeout runs from when a child takes it,
        # not from when it joined a queue behind other uploads.
        self._slots = threading.BoundedSemaphore(workers)
        self._retry_lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False

    def start(self) -> None:
        """Start the children now rather than on the first check."""
        with self._lock:
            self._running()

    def check(self, data: bytes, max_pages: int, *, timeout_s: float) -> int:
        """The page count of ``data``, or a typed refusal; runs ``inspect`` in a child."""
        outcome = self._attempt(data, max_pages, timeout_s)
        if outcome is None:
            # The child died, and with it every check then in flight on the pool. Retries run one at a time, so
            # a file that kills its child again does so alone and the others are admitted on their retry.
            with self._retry_lock:
                outcome = self._attempt(data, max_pages, timeout_s)
            if outcome is None:
                raise InvalidPdf("The PDF parser stopped abnormally while reading this file.",
                                 code="pdf_check_crashed")
        return self._verdict(outcome)

    def _attempt(self, data: bytes, max_pages: int, timeout_s: float) -> Outcome | None:
        """What the child made of ``data``, or None when the pool lost the child before it answered."""
        with self._slots:
            executor: ProcessPoolExecutor | None = None
            try:
                with self._lock:  # taken and used under the lock, so never a pool another check retired
                    executor = self._running()
                    future = executor.submit(_check_in_child, self._inspect, data, max_pages)
                return future.result(timeout=timeout_s)
            except TimeoutError as exc:
                log.warning("upload check of a %d-byte PDF passed %gs; replacing its child", len(data), timeout_s)
                self._retire(executor)
                raise InvalidPdf(f"Reading the PDF took longer than {timeout_s:g}s.",
                                 code="pdf_check_timeout") from exc
            except (BrokenProcessPool, CancelledError):
                log.warning("upload check of a %d-byte PDF lost its child", len(data))
                self._retire(executor)
                return None
            except MemoryError as exc:  # raised in the child outside the inspection itself
                raise self._too_complex() from exc

    def close(self) -> None:
        """Stop the children (a check still running is killed) and refuse further checks."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            _stop(executor)

    def _running(self) -> ProcessPoolExecutor:
        """The current executor, started and warmed up if there is none (call with ``_lock`` held)."""
        if self._closed:
            raise RuntimeError("The upload check pool is closed.")
        if self._executor is None:
            context = multiprocessing.get_context("forkserver")
            # The main module too: otherwise every child imports it again (it must guard its entry point).
            context.set_forkserver_preload(["__main__", __name__])
            executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=context,
                                           initializer=_start_child, initargs=(self.memory_mb,))
            # Each submission to a pool without an idle child spawns one: this starts all of them.
            try:
                for warm_up in [executor.submit(os.getpid) for _ in range(self.workers)]:
                    warm_up.result(timeout=START_TIMEOUT_S)
            except (BrokenProcessPool, TimeoutError) as exc:
                _stop(executor)
                raise RuntimeError(f"The upload check processes did not start: {exc!r}") from exc
            self._executor = executor
        return self._executor

    def _retire(self, executor: ProcessPoolExecutor | None) -> None:
        """Kill ``executor``'s children (one may be stuck in MuPDF) so the next check starts a fresh pool."""
        with self._lock:
            if executor is None or self._executor is not executor:
                return  # another check retired it already (and stops it)
            self._executor = None
        _stop(executor)

    def _verdict(self, outcome: Outcome) -> int:
        if isinstance(outcome, int):
            return outcome
        code, detail = outcome
        if code == "pdf_too_complex":
            raise self._too_complex()
        raise InvalidPdf(detail, code=code)

    def _too_complex(self) -> InvalidPdf:
        return InvalidPdf(f"Reading the PDF needed more than the {self.memory_mb} MB an upload check may use.",
                          code="pdf_too_complex")


def _stop(executor: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor has no public way to kill its children before Python 3.14 (kill_workers()); a child
    # stuck in C code never reads the shutdown request, so it is killed. Idle children lose nothing.
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        process.kill()
    executor.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------------------------------------------
# The shared pool of this process.

_shared: AdmissionPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> AdmissionPool:
    """This process's pool, built from the settings (and rebuilt when they change)."""
    global _shared
    settings = get_settings()
    with _shared_lock:
        if _shared is not None and (_shared.workers, _shared.memory_mb) != (settings.admission_workers,
                                                                            settings.admission_memory_mb):
            _shared.close()
            _shared = None
        if _shared is None:
            _shared = AdmissionPool(workers=settings.admission_workers, memory_mb=settings.admission_memory_mb)
        return _shared


def start() -> None:
    """Start the shared pool's children, when uploads are checked in children at all."""
    if get_settings().admission_sandbox:
        shared_pool().start()


def shutdown() -> None:
    """Stop the shared pool's children."""
    global _shared
    with _shared_lock:
        pool, _shared = _shared, None
    if pool is not None:
        pool.close()


# ---------------------------------------------------------------------------------------------------------
# The child side.


def _start_child(memory_mb: int) -> None:
    """Pool initializer: die with the forkserver (so with the API process), then cap what a check may add to
    the address space of this interpreter with pymupdf loaded, and allow no core files."""
    _release_forkserver()
    die_with_parent(os.getppid())
    if memory_mb > 0:
        cap = (address_space_bytes() or 0) + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _release_forkserver() -> None:
    """Close this child's copy of the pipe that keeps the forkserver alive.

    The forkserver exits when the last writer of that pipe closes it, which should be the API process dying.
    multiprocessing hands every child a copy (so it could start processes of its own, which ours never do); with
    it, a SIGKILLed API would leave the forkserver and these children (waiting for work, or stuck in MuPDF)
    running for good. The attribute is private to multiprocessing, hence the guard."""
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    fd = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(fd, int):
        os.close(fd)
        server._forkserver_alive_fd = None  # type: ignore[union-attr]


def _check_in_child(inspect: Inspect, data: bytes, max_pages: int) -> Outcome:
    # MuPDF's resource cache (fonts, images) is kept between checks: emptying it made each check several times
    # slower, and MuPDF itself empties it when an allocation fails against the cap.
    try:
        return inspect(data, max_pages)
    except InvalidPdf as exc:
        return exc.code, exc.detail
    except MemoryError:
        return "pdf_too_complex", ""
