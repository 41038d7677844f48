"""Typed errors and their RFC 9457 problem-detail responses (each with a stable ``code``)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.metrics import observe_problem

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"


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


def problem(status: int, code: str, title: str, detail: str, instance: str | None = None, **extra: Any) -> JSONResponse:
    observe_problem(code, status)
    body: dict[str, Any] = {
        "type": f"https://dsx.dev/problems/{code}",
        "title": title,
        "status": status,
        "code": code,
        "detail": detail,
    }
    if instance:
        body["instance"] = instance
    body.update(extra)
    headers = {}
    if "retry_after" in extra:
        headers["Retry-After"] = str(extra["retry_after"])
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(DsxError)
    async def _dsx(request: Request, exc: DsxError) -> JSONResponse:
        return problem(exc.status, exc.code, exc.title, exc.detail, str(request.url.path), **exc.extra)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": list(e.get("loc", [])), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        return problem(422, "invalid_input", "Invalid input", "Request validation failed",
                       str(request.url.path), errors=errors)

    @app.exception_handler(OperationalError)
    async def _database_down(request: Request, exc: OperationalError) -> JSONResponse:
        # The database is unreachable or restarting: tell clients to come back, never a bare 500.
        return problem(503, "database_unavailable", "The database is unavailable",
                       "The database is unavailable; retry shortly.", str(request.url.path), retry_after=5)

    @app.exception_handler(OverflowError)
    async def _out_of_range(request: Request, exc: OverflowError) -> JSONResponse:
        # An id or offset beyond what the database stores (SQLite's INTEGER is 64-bit): a client error, not a 500.
        return problem(422, "value_out_of_range", "Invalid input", "A number in the request is out of range.",
                       str(request.url.path))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # A bug, not the client's fault: a problem like every other answer, with the details in the log only.
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return problem(500, "internal_error", "Internal server error",
                       "The server hit an unexpected error; it has been logged.", str(request.url.path))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return problem(exc.status_code, code, str(exc.detail), str(exc.detail), str(request.url.path))
