"""Per-key request rate limits and per-tenant upload quotas (429 + Retry-After).

Counters live in Redis when the broker is Redis (shared by every API process), else in process memory
(the embedded default runs one API process).
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

from limits import RateLimitItemPerHour, RateLimitItemPerMinute, storage
from limits.strategies import MovingWindowRateLimiter

from app.config import get_settings
from app.errors import DsxError


class RateLimited(DsxError):
    status, code, title = 429, "rate_limited", "Too many requests"


@lru_cache(maxsize=4)
def _limiter(storage_uri: str) -> MovingWindowRateLimiter:
    return MovingWindowRateLimiter(storage.storage_from_string(storage_uri))


def _storage_uri() -> str:
    broker = get_settings().resolved_broker_url
    return broker if broker.startswith(("redis://", "rediss://")) else "memory://"


def _retry_after(limiter: MovingWindowRateLimiter, item, *identifiers: str) -> int:  # noqa: ANN001
    reset_at = limiter.get_window_stats(item, *identifiers).reset_time
    return max(1, math.ceil(reset_at - time.time()))


def check_request_rate(identity: str) -> None:
    """Count one request for ``identity`` (an API key id, or the open principal)."""
    settings = get_settings()
    if settings.rate_limit_per_minute <= 0:
        return
    limiter = _limiter(_storage_uri())
    item = RateLimitItemPerMinute(settings.rate_limit_per_minute)
    if not limiter.hit(item, "dsx-req", identity):
        retry = _retry_after(limiter, item, "dsx-req", identity)
        raise RateLimited(f"More than {settings.rate_limit_per_minute} requests a minute for this key.",
                          retry_after=retry)


def charge_upload(tenant: str, size_bytes: int) -> None:
    """Charge an accepted upload to the tenant's hourly byte quota."""
    settings = get_settings()
    quota = settings.upload_quota_bytes_per_hour
    if quota <= 0:
        return
    limiter = _limiter(_storage_uri())
    item = RateLimitItemPerHour(quota)
    if not limiter.hit(item, "dsx-upload", tenant, cost=max(1, size_bytes)):
        retry = _retry_after(limiter, item, "dsx-upload", tenant)
        raise RateLimited(f"Tenant upload quota of {quota} bytes an hour is used up.", code="upload_quota_exceeded",
                          retry_after=retry)


def reset() -> None:
    """Forget limiter state (tests)."""
    _limiter.cache_clear()
