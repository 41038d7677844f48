"""What the sync and async clients share: request descriptions, retry and polling policy, input coercion and
response parsing. Only the I/O loops differ between the two clients."""

from __future__ import annotations

import json
import os
import random
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx
from pydantic import BaseModel

from dsx_client._version import __version__
from dsx_client.errors import error_from_response
from dsx_client.models import Correction, Decision, DecisionRequest, Job, Parameter, ParameterResult, QueueItem

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT = 30.0
USER_AGENT = f"dsx-client/{__version__}"

PdfInput = str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes]
ParameterInput = str | Parameter | Mapping[str, Any]
JobRef = Job | str
ItemRef = QueueItem | ParameterResult | Decision | int

ModelT = TypeVar("ModelT", bound=BaseModel)

# Failures where the request may or may not have reached the server; safe to repeat because every
# mutating call is idempotent (submits carry an Idempotency-Key, identical decisions are replays).
RETRYABLE_ERRORS: tuple[type[Exception], ...] = (httpx.TimeoutException, httpx.NetworkError,
                                                 httpx.RemoteProtocolError)


@dataclass(frozen=True)
class Call:
    """One API request, described once and sent as many times as the retry policy allows."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    files: dict[str, tuple[str, bytes, str]] | None = None
    data: dict[str, str] | None = None
    headers: dict[str, str] | None = None

    def kwargs(self) -> dict[str, Any]:
        params = {k: v for k, v in (self.params or {}).items() if v is not None} or None
        return {"params": params, "json": self.json, "files": self.files, "data": self.data,
                "headers": self.headers}


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter; ``Retry-After`` from the server wins when it is given."""

    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 10.0

    def retryable_status(self, status: int) -> bool:
        return status == 429 or (status >= 500 and status not in (501, 505))

    def delay(self, attempt: int, response: httpx.Response | None = None) -> float:
        if response is not None:
            retry_after = response.headers.get("Retry-After", "")
            if retry_after.replace(".", "", 1).isdigit():
                return min(float(retry_after), self.max_backoff)
        return min(self.backoff * 2**attempt, self.max_backoff) * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class PollSchedule:
    """Intervals between status polls while waiting: start quick, back off to ``maximum``."""

    initial: float = 0.5
    factor: float = 1.5
    maximum: float = 5.0

    def __iter__(self) -> Iterator[float]:
        interval = self.initial
        while True:
            yield interval
            interval = min(interval * self.factor, self.maximum)


def headers(api_key: str | None) -> dict[str, str]:
    result = {"User-Agent": USER_AGENT, "Accept": "application/json"}
    if api_key:
        result["Authorization"] = f"Bearer {api_key}"
    return result


def normalise_base_url(base_url: str | None) -> str:
    return (base_url or DEFAULT_BASE_URL).rstrip("/")


def read_pdf(pdf: PdfInput, filename: str | None = None) -> tuple[bytes, str]:
    """The PDF's bytes (read once, so every retry sends the same body) and a file name for the upload."""
    if isinstance(pdf, bytes | bytearray | memoryview):
        return bytes(pdf), filename or "datasheet.pdf"
    if isinstance(pdf, str | os.PathLike):
        path = Path(pdf)
        return path.read_bytes(), filename or path.name
    if hasattr(pdf, "read"):
        data = pdf.read()
        if not isinstance(data, bytes | bytearray):
            raise TypeError("open the PDF in binary mode ('rb')")
        return bytes(data), filename or Path(str(getattr(pdf, "name", "") or "datasheet.pdf")).name
    raise TypeError(f"pdf must be a path, bytes or a binary file, not {type(pdf).__name__}")


def parameters_json(parameters: ParameterInput | Iterable[ParameterInput]) -> str:
    if isinstance(parameters, str | Parameter | Mapping):
        parameters = [parameters]
    items: list[Any] = []
    for item in parameters:
        if isinstance(item, str):
            items.append(item)
        elif isinstance(item, Parameter):
            items.append(item.model_dump(exclude_defaults=True))
        else:
            items.append(Parameter.model_validate(item).model_dump(exclude_defaults=True))
    if not items:
        raise ValueError("at least one parameter is required")
    return json.dumps(items)


def submit_call(pdf: PdfInput, parameters: ParameterInput | Iterable[ParameterInput], *, engine: str | None,
                model: str | None, idempotency_key: str | None, filename: str | None) -> Call:
    """The upload request. Without a caller-given key one is generated here, once, so that retries of this
    call (connection lost after the server stored the job, or a 5xx) replay it instead of creating another."""
    data, name = read_pdf(pdf, filename)
    form = {"parameters": parameters_json(parameters)}
    if engine:
        form["engine"] = engine
    if model:
        form["model"] = model
    key = idempotency_key or uuid.uuid4().hex
    return Call("POST", "/v1/jobs", files={"file": (name, data, "application/pdf")}, data=form,
                headers={"Idempotency-Key": key})


def decision_call(item: ItemRef, decision: str, *, comment: str | None, reviewer: str | None,
                  correction: Correction | Mapping[str, Any] | None) -> Call:
    body = DecisionRequest(
        decision=decision,  # type: ignore[arg-type]  # validated by the model
        comment=comment,
        reviewer=reviewer,
        correction=Correction.model_validate(correction) if isinstance(correction, Mapping) else correction,
    )
    return Call("POST", f"/v1/review/items/{extraction_id_of(item)}/decision",
                json=body.model_dump(mode="json", exclude_none=True))


def queue_params(*, status: str, rule: str | None, model: str | None, job: JobRef | None,
                 since: datetime | None, newest_first: bool, limit: int, offset: int) -> dict[str, Any]:
    """Query parameters of ``GET /v1/review/queue`` (``None`` values are left out when sent)."""
    return {"status": status, "rule": rule, "model": model, "job_id": job_id_of(job) if job is not None else None,
            "since": since.isoformat() if since is not None else None,
            "order": "newest" if newest_first else "oldest", "limit": limit, "offset": offset}


def job_id_of(job: JobRef) -> str:
    return job.job_id if isinstance(job, Job) else str(job)


def extraction_id_of(item: ItemRef) -> int:
    if isinstance(item, QueueItem | Decision):
        return item.extraction_id
    if isinstance(item, ParameterResult):
        if item.extraction_id is None:
            raise ValueError(f"parameter {item.parameter!r} has no extraction to review yet")
        return item.extraction_id
    return int(item)


def parse(response: httpx.Response, model: type[ModelT]) -> ModelT:
    if response.is_error:
        raise error_from_response(response)
    return model.model_validate(response.json())


def text(response: httpx.Response) -> str:
    if response.is_error:
        raise error_from_response(response)
    return response.text
