"""Exceptions: every API error is an :class:`ApiError` carrying the problem detail's stable ``code``.

The class is chosen by ``code`` first (so callers can catch e.g. :class:`InvalidPdf` whatever its
sub-code) and by HTTP status otherwise, so a code the client does not know yet still lands in the right
family (:class:`InvalidInput` for any 422, :class:`ServerError` for any 5xx).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from dsx_client.models import Job


class DsxError(Exception):
    """Base of every error raised by this client."""


class DsxConnectionError(DsxError):
    """The server could not be reached (or kept dropping the connection) after every retry."""


class ApiError(DsxError):
    """The server answered with an RFC 9457 problem detail (or an error status without one)."""

    def __init__(self, status: int, code: str, detail: str, *, title: str | None = None,
                 problem: dict[str, Any] | None = None, headers: dict[str, str] | None = None):
        super().__init__(f"{detail} [{code}, HTTP {status}]")
        self.status = status
        self.code = code
        self.detail = detail
        self.title = title
        self.problem = problem or {}
        self.headers = headers or {}


class BadRequest(ApiError):
    pass


class AuthenticationError(ApiError):
    """Missing or invalid API key (401)."""


class PermissionDenied(ApiError):
    """The key lacks the role this call needs (403)."""


class NotFoundError(ApiError):
    pass


class JobNotFound(NotFoundError):
    pass


class ExtractionNotFound(NotFoundError):
    pass


class ConflictError(ApiError):
    pass


class IdempotencyConflict(ConflictError):
    """The Idempotency-Key was already used with a different request body."""


class InvalidTransition(ConflictError):
    """The job cannot make that move (e.g. cancelling a finished job)."""


class PayloadTooLarge(ApiError):
    pass


class InvalidInput(ApiError):
    """The request was understood but rejected (422); ``problem["errors"]`` lists field errors if any."""


class InvalidPdf(InvalidInput):
    """The upload is not a PDF the service can process (empty, not a PDF, corrupt, encrypted, too long)."""


class UnknownModel(InvalidInput):
    pass


class CorrectionRequired(InvalidInput):
    """A ``correct`` decision was sent without the corrected values."""


class RateLimited(ApiError):
    pass


class ServerError(ApiError):
    pass


class ServiceUnavailable(ServerError):
    pass


class JobFailed(DsxError):
    """The job ended failed or cancelled, so it has no results to give."""

    def __init__(self, job: Job):
        reason = f"{job.failure_detail} [{job.failure_code}]" if job.failure_code else job.status
        super().__init__(f"job {job.job_id} {job.status}: {reason}")
        self.job = job


class WaitTimeout(DsxError, TimeoutError):
    """The job did not reach a terminal status in time; ``job`` is the last snapshot seen."""

    def __init__(self, job: Job, timeout: float):
        super().__init__(f"job {job.job_id} still {job.status} after {timeout:g}s")
        self.job = job
        self.timeout = timeout


_BY_CODE: dict[str, type[ApiError]] = {
    "job_not_found": JobNotFound,
    "extraction_not_found": ExtractionNotFound,
    "idempotency_conflict": IdempotencyConflict,
    "invalid_transition": InvalidTransition,
    "job_already_finished": InvalidTransition,
    "invalid_pdf": InvalidPdf,
    "empty_file": InvalidPdf,
    "not_a_pdf": InvalidPdf,
    "corrupt_pdf": InvalidPdf,
    "encrypted_pdf": InvalidPdf,
    "too_many_pages": InvalidPdf,
    "pdf_too_complex": InvalidPdf,
    "pdf_check_timeout": InvalidPdf,
    "pdf_check_crashed": InvalidPdf,
    "unknown_model": UnknownModel,
    "correction_required": CorrectionRequired,
    "unauthorized": AuthenticationError,
    "forbidden": PermissionDenied,
}

_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLarge,
    422: InvalidInput,
    429: RateLimited,
    503: ServiceUnavailable,
}


def error_for(status: int, code: str | None) -> type[ApiError]:
    if code and code in _BY_CODE:
        return _BY_CODE[code]
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else ApiError


def error_from_response(response: httpx.Response) -> ApiError:
    """The typed exception for an error response (problem+json, plain JSON, or anything else)."""
    problem: dict[str, Any] = {}
    try:
        body = response.json()
        if isinstance(body, dict):
            problem = body
    except ValueError:
        pass
    code = str(problem.get("code") or f"http_{response.status_code}")
    detail = str(problem.get("detail") or problem.get("title") or response.reason_phrase
                 or f"HTTP {response.status_code}")
    cls = error_for(response.status_code, problem.get("code"))
    return cls(response.status_code, code, detail, title=problem.get("title"), problem=problem,
               headers=dict(response.headers))
