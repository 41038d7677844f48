"""Real Postgres and Redis for integration tests.

CI exports ``DSX_TEST_POSTGRES_URL`` / ``DSX_TEST_REDIS_URL`` and ``DSX_TEST_REQUIRE_SERVICES=1`` (a missing
service then fails the test instead of skipping it). Locally the default local servers are used when up.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.support.prerequisites import missing_prerequisite

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS = "redis://127.0.0.1:6379/14"


def _unavailable(what: str, why: object) -> None:
    missing_prerequisite(f"{what} unavailable: {why}")


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """Create an empty database on the test server, yield its URL, drop it afterwards."""
    base = make_url(os.environ.get("DSX_TEST_POSTGRES_URL", DEFAULT_POSTGRES))
    admin = create_engine(base.set(database="postgres"), isolation_level="AUTOCOMMIT")
    name = f"dsx_t_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001
        admin.dispose()
        _unavailable("PostgreSQL", exc)
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def embedded_on_postgres(monkeypatch) -> Iterator[str]:  # noqa: ANN001 - a pytest MonkeyPatch
    """The embedded settings of ``dsx_env`` (open mode) pointed at a fresh, migrated PostgreSQL database."""
    from app import migrate
    from app.config import reset_settings
    from app.db import reset_engines

    with fresh_postgres_database() as url:
        monkeypatch.setenv("DSX_DATABASE_URL", url)
        monkeypatch.setenv("DSX_AUTH_MODE", "open")
        monkeypatch.setenv("DSX_ALLOW_OPEN_IN_PRODUCTION", "true")
        reset_settings()
        reset_engines()
        migrate.upgrade()
        try:
            yield url
        finally:
            reset_engines()  # close its connections before the database is dropped


def redis_url() -> str:
    import redis

    url = os.environ.get("DSX_TEST_REDIS_URL", DEFAULT_REDIS)
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except Exception as exc:  # noqa: BLE001
        _unavailable("Redis", exc)
    return url
