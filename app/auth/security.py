"""Who is calling: a principal (tenant + roles) resolved from the request's API key.

``auth_mode`` ``open`` (the embedded default on localhost) makes every caller tenant ``default`` with every role,
and says so in the log; production (``keys``) requires ``Authorization: Bearer <key>`` or ``X-API-Key`` (the
dashboard also accepts the key in the ``dsx_api_key`` cookie). Missing or unknown key: 401; a key without the
role: 403; another tenant's resource: 404 (tenant-scoped queries never reveal it exists).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from app.auth.ratelimit import check_request_rate
from app.config import get_settings
from app.db import session_scope
from app.errors import Forbidden, Unauthorized
from app.observability import context as log_context

ALL_ROLES = frozenset({"submitter", "reviewer", "admin"})
KEY_COOKIE = "dsx_api_key"


@dataclass(frozen=True)
class Principal:
    tenant: str = "default"
    roles: frozenset[str] = field(default_factory=lambda: ALL_ROLES)
    name: str = "anonymous"
    key_id: int | None = None


OPEN_PRINCIPAL = Principal()


def presented_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return request.headers.get("x-api-key") or request.cookies.get(KEY_COOKIE) or None


def current_principal(request: Request) -> Principal:
    cached = getattr(request.state, "principal", None)
    if cached is not None:
        return cached
    if get_settings().effective_auth_mode == "open":
        principal = OPEN_PRINCIPAL
    else:
        principal = _principal_for_key(presented_key(request))
    request.state.principal = principal
    log_context.annotate(tenant=principal.tenant)
    return principal


def _principal_for_key(key: str | None) -> Principal:
    from app.auth.keys import lookup

    if not key:
        raise Unauthorized("Send an API key as `Authorization: Bearer <key>`.", code="missing_api_key")
    with session_scope() as session:
        row = lookup(session, key)
        if row is None:
            raise Unauthorized("The API key is unknown or revoked.", code="invalid_api_key")
        return Principal(tenant=row.tenant, roles=frozenset(row.roles or ()), name=row.name, key_id=row.id)


def require_role(role: str) -> Callable[[Request], Principal]:
    """FastAPI dependency: the caller, who must hold ``role`` (admin holds every role)."""

    def dependency(request: Request) -> Principal:
        principal = current_principal(request)
        if role not in principal.roles and "admin" not in principal.roles:
            raise Forbidden(f"This key lacks the `{role}` role.", code="missing_role")
        if principal.key_id is not None and not getattr(request.state, "rate_counted", False):
            request.state.rate_counted = True
            check_request_rate(f"key:{principal.key_id}")
        return principal

    return dependency


def require_role_on_loop(role: str) -> Callable[[Request], Awaitable[Principal]]:
    """:func:`require_role` for the hot async routes: checked on the event loop when that needs no I/O (open mode,
    where every caller is the open principal), else in the thread pool as any sync dependency is (the key lookup
    reads the database, the rate check Redis). A sync dependency always costs a thread hop: two thread switches,
    each a wait for a core on a busy machine."""
    check = require_role(role)

    async def dependency(request: Request) -> Principal:
        if get_settings().effective_auth_mode == "open":
            return check(request)
        return await run_in_threadpool(check, request)

    return dependency


def check_startup_policy() -> None:
    """Refuse to serve production data open to anyone unless explicitly allowed."""
    settings = get_settings()
    if settings.effective_auth_mode == "open" and not settings.is_embedded and not settings.allow_open_in_production:
        raise RuntimeError(
            "Refusing to start without API keys on a production database. Set DSX_AUTH_MODE=keys (and create "
            "keys with `dsx admin create-key`), or DSX_ALLOW_OPEN_IN_PRODUCTION=true to run open deliberately."
        )
