"""The asynchronous client: the same calls as :class:`dsx_client.Client`, awaitable."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any

import httpx

from dsx_client import _core
from dsx_client._core import Call, ItemRef, JobRef, ParameterInput, PdfInput, PollSchedule, RetryPolicy
from dsx_client.errors import DsxConnectionError, InvalidTransition, JobFailed, WaitTimeout
from dsx_client.models import (
    Correction,
    Decision,
    DecisionPage,
    Job,
    JobPage,
    ParameterResult,
    QueueItem,
    QueuePage,
    Trace,
)

log = logging.getLogger("dsx_client")

ProgressCallback = Callable[[Job], Any]  # may also return an awaitable


class AsyncClient:
    """Talks to a dsx server from asyncio code. Close it (or use ``async with``) when done.

    Connection errors, 429 and 5xx answers are retried with backoff (``retries`` times); submits carry an
    Idempotency-Key so a retry never creates a second job. API errors raise subclasses of
    :class:`dsx_client.errors.ApiError` chosen by the problem detail's ``code``.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = _core.DEFAULT_TIMEOUT,
        *,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.base_url = _core.normalise_base_url(base_url)
        self.retry = RetryPolicy(retries=retries, backoff=backoff)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=_core.headers(api_key),
                                  timeout=httpx.Timeout(timeout), transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    # --- jobs -------------------------------------------------------------------------------------------

    async def submit(
        self,
        pdf: PdfInput,
        parameters: ParameterInput | Iterable[ParameterInput],
        *,
        engine: str | None = None,
        model: str | None = None,
        idempotency_key: str | None = None,
        filename: str | None = None,
    ) -> Job:
        """Upload a datasheet and the parameters to extract; returns the queued job (or, for a key already
        used with the same request, the job it created)."""
        call = _core.submit_call(pdf, parameters, engine=engine, model=model, idempotency_key=idempotency_key,
                                 filename=filename)
        return _core.parse(await self._send(call), Job)

    async def get(self, job: JobRef) -> Job:
        return _core.parse(await self._send(Call("GET", f"/v1/jobs/{_core.job_id_of(job)}")), Job)

    async def list_jobs(self, *, status: str | None = None, limit: int = 50, offset: int = 0) -> JobPage:
        """Jobs of this tenant, newest first."""
        call = Call("GET", "/v1/jobs", params={"status": status, "limit": limit, "offset": offset})
        return _core.parse(await self._send(call), JobPage)

    async def cancel(self, job: JobRef) -> Job:
        job_id = _core.job_id_of(job)
        try:
            return _core.parse(await self._send(Call("POST", f"/v1/jobs/{job_id}/cancel")), Job)
        except InvalidTransition:
            # A retried cancel whose first attempt landed finds the job already cancelled: that is success.
            current = await self.get(job_id)
            if current.status == "cancelled":
                return current
            raise

    async def wait(
        self,
        job: JobRef,
        timeout: float = 600.0,
        *,
        poll_interval: float = 0.5,
        max_poll_interval: float = 5.0,
        on_progress: ProgressCallback | None = None,
    ) -> Job:
        """Poll until the job is terminal (done, needs_review, reviewed, failed, cancelled) and return it.

        ``on_progress(job)`` is called with every snapshot; raises :class:`WaitTimeout` after ``timeout``
        seconds (the job keeps running on the server).
        """
        deadline = time.monotonic() + timeout
        current = job if isinstance(job, Job) and job.is_terminal else await self.get(job)
        for interval in PollSchedule(initial=poll_interval, maximum=max_poll_interval):
            if on_progress is not None:
                outcome = on_progress(current)
                if inspect.isawaitable(outcome):
                    await outcome
            if current.is_terminal:
                return current
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeout(current, timeout)
            await asyncio.sleep(min(interval, remaining))
            current = await self.get(current.job_id)
        raise AssertionError("unreachable")  # PollSchedule is endless

    async def result(self, job: JobRef, timeout: float = 600.0, *,
               on_progress: ProgressCallback | None = None) -> list[ParameterResult]:
        """The answers of a job, waiting for it if needed; raises :class:`JobFailed` for a failed or
        cancelled job."""
        finished = await self.wait(job, timeout, on_progress=on_progress)
        if finished.status in ("failed", "cancelled"):
            raise JobFailed(finished)
        return finished.results

    async def trace(self, job: JobRef, *, payload: bool = True, parameter: str | None = None) -> Trace:
        """The job's dispatch record as a span tree, one labelled root per parameter and role (``payload=False``
        leaves out full inputs/outputs; ``parameter`` keeps only that requested parameter's trees)."""
        params = {"payload": str(payload).lower()}
        if parameter is not None:
            params["parameter"] = parameter
        call = Call("GET", f"/v1/jobs/{_core.job_id_of(job)}/trace", params=params)
        return _core.parse(await self._send(call), Trace)

    # --- review -----------------------------------------------------------------------------------------

    async def queue(self, *, status: str = "open", rule: str | None = None, model: str | None = None,
              job: JobRef | None = None, since: datetime | None = None, newest_first: bool = False,
              limit: int = 50, offset: int = 0) -> QueuePage:
        """Flagged answers awaiting review (``status="decided"`` or ``"all"`` for history), oldest first unless
        ``newest_first``; ``since`` keeps the items created at or after that moment."""
        params = _core.queue_params(status=status, rule=rule, model=model, job=job, since=since,
                                    newest_first=newest_first, limit=limit, offset=offset)
        return _core.parse(await self._send(Call("GET", "/v1/review/queue", params=params)), QueuePage)

    async def item(self, item: ItemRef) -> QueueItem:
        call = Call("GET", f"/v1/review/items/{_core.extraction_id_of(item)}")
        return _core.parse(await self._send(call), QueueItem)

    async def decide(self, item: ItemRef, decision: str, *, comment: str | None = None,
               correction: Correction | Mapping[str, Any] | None = None, reviewer: str | None = None) -> Decision:
        """Approve, correct (with ``correction``) or reject one answer."""
        call = _core.decision_call(item, decision, comment=comment, reviewer=reviewer, correction=correction)
        return _core.parse(await self._send(call), Decision)

    async def reviews(self, *, job: JobRef | None = None, limit: int = 50, offset: int = 0) -> DecisionPage:
        """The audit list of decisions, newest first."""
        params = {"job_id": _core.job_id_of(job) if job is not None else None, "limit": limit, "offset": offset}
        return _core.parse(await self._send(Call("GET", "/v1/reviews", params=params)), DecisionPage)

    async def corrections_yaml(self, *, job: JobRef | None = None) -> str:
        """Reviewer corrections as gold claims (YAML in the evaluation set's format)."""
        params = {"job_id": _core.job_id_of(job) if job is not None else None}
        return _core.text(await self._send(Call("GET", "/v1/review/corrections.yaml", params=params)))

    # --- transport --------------------------------------------------------------------------------------

    async def _send(self, call: Call) -> httpx.Response:
        attempt = 0
        while True:
            try:
                response = await self._http.request(call.method, call.path, **call.kwargs())
            except _core.RETRYABLE_ERRORS as exc:
                if attempt >= self.retry.retries:
                    raise DsxConnectionError(f"{call.method} {self.base_url}{call.path}: {exc!r}") from exc
                delay = self.retry.delay(attempt)
                log.info("%s %s failed (%r); retry %d in %.2fs", call.method, call.path, exc, attempt + 1, delay)
            except httpx.TransportError as exc:
                raise DsxConnectionError(f"{call.method} {self.base_url}{call.path}: {exc!r}") from exc
            else:
                if attempt >= self.retry.retries or not self.retry.retryable_status(response.status_code):
                    return response
                delay = self.retry.delay(attempt, response)
                log.info("%s %s answered %d; retry %d in %.2fs", call.method, call.path, response.status_code,
                         attempt + 1, delay)
                await response.aclose()
            attempt += 1
            await asyncio.sleep(delay)
