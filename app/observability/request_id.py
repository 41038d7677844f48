"""``X-Request-ID``: taken from the caller (a gateway usually sets one) when it is safe, else generated; bound to
the request's log lines, put on its server span and returned on the response.

A caller's id is accepted only when it is 1-128 characters of letters, digits and ``-._:+=/@`` (what UUIDs,
ULIDs, base64 ids and common gateway formats use). Anything else — too long, spaces, control characters, quotes —
would let a client forge or break log lines, so it is replaced by a fresh id rather than rejected: a request must
not fail over a correlation header.
"""

from __future__ import annotations

import re
import uuid

from opentelemetry import trace
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability import context

HEADER = "X-Request-ID"
SPAN_ATTRIBUTE = "dsx.request_id"
MAX_LENGTH = 128
_SAFE = re.compile(rf"[A-Za-z0-9\-._:+=/@]{{1,{MAX_LENGTH}}}")


def accepted_or_new(value: str | None) -> str:
    """``value`` when it is a safe request id, else a new one."""
    if value is not None and _SAFE.fullmatch(value):
        return value
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """Pure ASGI middleware (no response buffering, works for streaming and static files alike)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = next((v for k, v in scope["headers"] if k == b"x-request-id"), None)
        request_id = accepted_or_new(raw.decode("latin-1") if raw is not None else None)
        scope.setdefault("state", {})["request_id"] = request_id
        span = trace.get_current_span()
        if span.is_recording():
            span.set_attribute(SPAN_ATTRIBUTE, request_id)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[HEADER] = request_id
            await send(message)

        with context.bound(request_id=request_id):
            await self.app(scope, receive, send_with_id)
