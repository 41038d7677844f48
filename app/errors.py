"""Typed errors, each with a stable machine-readable ``code`` and the HTTP status it maps to.

Pure types: the API edge (``app.api.problems``) turns them into RFC 9457 problem details."""

from __future__ import annotations

from typing import Any


class DsxError(Exception):
    """An error with a stable machine-readable code and an HTTP status."""

    status: int = 400
    code: str = "bad_request"
    title: str = "Bad request"

    def __init__(self, detail: str, *, code: str | None = None, status: int | None = None, **extra: Any):
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code
        if status:
            self.status = status
        self.extra = extra


class InvalidInput(DsxError):
    status, code, title = 422, "invalid_input", "Invalid input"


class InvalidPdf(DsxError):
    status, code, title = 422, "invalid_pdf", "The file is not a usable PDF"


class PayloadTooLarge(DsxError):
    status, code, title = 413, "file_too_large", "Upload too large"


class NotFound(DsxError):
    status, code, title = 404, "not_found", "Not found"


class Conflict(DsxError):
    status, code, title = 409, "conflict", "Conflict"


class Unauthorized(DsxError):
    status, code, title = 401, "unauthorized", "Missing or invalid API key"


class Forbidden(DsxError):
    status, code, title = 403, "forbidden", "Not allowed for this key"


class ServiceUnavailable(DsxError):
    status, code, title = 503, "service_unavailable", "A backing service is unavailable"


class ServiceBusy(ServiceUnavailable):
    """Every database connection is in use: a load condition the client should ride out by retrying."""

    code, title = "service_busy", "The service is busy"
