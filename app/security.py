"""Who is calling: a principal (tenant + roles) resolved from the request.

The embedded default runs open on localhost (one tenant, every role), and says so in the log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import Request

ALL_ROLES = frozenset({"submitter", "reviewer", "admin"})


@dataclass(frozen=True)
class Principal:
    tenant: str = "default"
    roles: frozenset[str] = field(default_factory=lambda: ALL_ROLES)
    name: str = "anonymous"


OPEN_PRINCIPAL = Principal()


def current_principal(request: Request) -> Principal:
    return OPEN_PRINCIPAL


def require_role(role: str) -> Callable[[Request], Principal]:
    def dependency(request: Request) -> Principal:
        return current_principal(request)

    return dependency
