"""API keys: issued once in clear, stored as a SHA-256 hash, bound to a tenant and roles.

Keys carry 256 bits of randomness, so a fast hash is enough (no password stretching needed), and lookups are
a single indexed equality on the hash.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.models import ApiKey
from app.errors import InvalidInput
from app.timeutil import utcnow

ROLES = ("submitter", "reviewer", "admin")
KEY_PREFIX = "dsx_"


@dataclass(frozen=True)
class IssuedKey:
    id: int
    key: str
    tenant: str
    roles: tuple[str, ...]
    name: str


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(session: Session, *, tenant: str, roles: list[str], name: str) -> IssuedKey:
    unknown = sorted(set(roles) - set(ROLES))
    if unknown or not roles:
        raise InvalidInput(f"Roles must be among {', '.join(ROLES)}; got {', '.join(unknown) or 'none'}.",
                           code="invalid_roles")
    if not tenant.strip():
        raise InvalidInput("A key needs a tenant.", code="invalid_tenant")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(name=name, tenant=tenant.strip(), roles=sorted(set(roles)), key_hash=hash_key(key))
    session.add(row)
    session.flush()
    return IssuedKey(id=row.id, key=key, tenant=row.tenant, roles=tuple(row.roles), name=name)


def lookup(session: Session, key: str) -> ApiKey | None:
    row = session.scalar(select(ApiKey).where(ApiKey.key_hash == hash_key(key)))
    if row is None or row.revoked_at is not None:
        return None
    return row


def revoke(session: Session, key_id: int) -> bool:
    row = session.get(ApiKey, key_id)
    if row is None or row.revoked_at is not None:
        return False
    row.revoked_at = utcnow()
    return True


def list_keys(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.id)))
