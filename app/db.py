"""Engine and session factory: Postgres in production, SQLite embedded, same ORM."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy import DateTime, Engine, create_engine, event
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.types import TypeDecorator

from app.config import get_settings


class Base(DeclarativeBase):
    pass


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC in Python, on Postgres and on SQLite alike
    (SQLite keeps no zone, so values read back are marked UTC, which is how they were written)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:  # noqa: ANN001
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:  # noqa: ANN001
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # noqa: ANN001
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    # With WAL, NORMAL is durable across application crashes and avoids an fsync per commit.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str) -> Engine:
    settings = get_settings()
    pool = {"pool_size": settings.db_pool_size, "max_overflow": settings.db_max_overflow,
            "pool_timeout": settings.db_pool_timeout_s}
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30}, **pool)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, **pool)


_engines: dict[str, Engine] = {}


def get_engine() -> Engine:
    url = get_settings().resolved_database_url
    if url not in _engines:
        _engines[url] = make_engine(url)
    return _engines[url]


def session_factory() -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(), expire_on_commit=False)


@contextmanager
def session_scope() -> Iterator[Session]:
    """A unit of work: commit on success, roll back on error."""
    session = session_factory()()
    try:
        yield session
        session.commit()
    except PoolTimeout as exc:
        from app.errors import ServiceBusy  # app.errors imports app.metrics, which imports this module

        session.rollback()
        raise ServiceBusy("Every database connection is in use; retry shortly.", retry_after=1) from exc
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def get_session() -> Iterator[Session]:
    """FastAPI dependency; routes declare it with ``scope="function"`` so the commit happens before the
    response is sent (a client reading right after a write sees it)."""
    with session_scope() as session:
        yield session


def reset_engines() -> None:
    """Dispose every engine (tests switch databases; forked workers must not share connections)."""
    for engine in _engines.values():
        engine.dispose()
    _engines.clear()


def dialect_insert(session: Session):  # noqa: ANN201 - the dialect's own Insert construct
    """The ``insert`` of the session's dialect, for ``on_conflict_do_nothing`` (Postgres and SQLite)."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert
