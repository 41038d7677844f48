"""Engine and session factory: Postgres in production, SQLite embedded, same ORM."""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import DateTime, Engine, create_engine, event
from sqlalchemy.exc import InvalidatePoolError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry
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


#: A pooled server connection used this recently is handed out without a ping (HikariCP's alive-bypass window).
PING_BYPASS_S = 0.5
_LAST_USED = "dsx_last_used"


def _note_last_use(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
    record.info[_LAST_USED] = time.monotonic()


def _server_closed(dbapi_connection: Any) -> bool:
    """Whether an idle connection's socket has something to read: the server closed it (a restart, an
    administrator's termination) or sent its last error before doing so. An idle connection is sent nothing else."""
    pgconn = getattr(dbapi_connection, "pgconn", None)
    if pgconn is None:
        return False
    try:
        poller = select.poll()  # not select.select: it cannot watch a descriptor numbered past 1023
        poller.register(pgconn.socket, select.POLLIN)
        return bool(poller.poll(0))
    except Exception:  # noqa: BLE001 - no socket any more (the driver raises its own error type)
        return True


def _check_alive(engine: Engine):  # noqa: ANN202 - a pool event listener
    """Instead of ``pool_pre_ping`` (a round trip before every checkout, one of the few a request makes): a
    connection is pinged when it sat idle for longer than ``PING_BYPASS_S``; one used more recently is handed
    out unless its socket shows that the server closed it, which a restart does at once. A failed check discards
    every connection pooled before it and hands out a new one, as a failed pre-ping does."""

    def checkout(dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: object) -> None:
        last_used = record.info.get(_LAST_USED)
        if last_used is not None and time.monotonic() - last_used < PING_BYPASS_S:
            if not _server_closed(dbapi_connection):
                return
            raise InvalidatePoolError("the server closed this pooled connection")
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # noqa: BLE001 - whatever the driver raises, the connection is unusable
            raise InvalidatePoolError(f"a pooled connection failed its ping: {exc}") from exc
        if not alive:
            raise InvalidatePoolError("a pooled connection failed its ping")

    return checkout


def make_engine(url: str) -> Engine:
    settings = get_settings()
    pool = {"pool_size": settings.db_pool_size, "max_overflow": settings.db_max_overflow,
            "pool_timeout": settings.db_pool_timeout_s}
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30}, **pool)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(url, **pool)
    for name in ("connect", "checkin"):
        event.listen(engine, name, _note_last_use)
    event.listen(engine, "checkout", _check_alive(engine))
    return engine


_engines: dict[str, Engine] = {}


def get_engine() -> Engine:
    url = get_settings().resolved_database_url
    if url not in _engines:
        _engines[url] = make_engine(url)
    return _engines[url]


def session_factory() -> sessionmaker[Session]:
    return _session_factory(get_engine())


@lru_cache(maxsize=8)
def _session_factory(engine: Engine) -> sessionmaker[Session]:
    # One per engine: a new sessionmaker per unit of work rebuilt its event dispatch on every request.
    return sessionmaker(bind=engine, expire_on_commit=False)


@contextmanager
def session_scope() -> Iterator[Session]:
    """A unit of work: commit on success, roll back on error."""
    with _unit_of_work(session_factory()) as session:
        yield session


@contextmanager
def read_scope() -> Iterator[Session]:
    """A unit of work that only reads (it must not write). On PostgreSQL at READ COMMITTED, its default, it runs
    without a transaction: there every statement takes its own snapshot whether or not a transaction wraps them,
    so BEGIN and COMMIT were two round trips that changed nothing the reader sees. SQLite (and a server whose
    default isolation is stricter) keeps the transaction, which there does hold one snapshot for the whole read."""
    engine = get_engine()
    with _unit_of_work(_session_factory(_read_engine(engine))) as session:
        yield session


@lru_cache(maxsize=8)
def _read_engine(engine: Engine) -> Engine:
    if engine.dialect.name != "postgresql":
        return engine
    with engine.connect():  # the server's default isolation level is known once a connection was made
        pass
    if engine.dialect.default_isolation_level != "READ COMMITTED":
        return engine
    # Shares the engine's pool; the connection is back in its usual mode when it returns to the pool.
    return engine.execution_options(isolation_level="AUTOCOMMIT")


@contextmanager
def _unit_of_work(factory: sessionmaker[Session]) -> Iterator[Session]:
    session = factory()
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
    _session_factory.cache_clear()
    _read_engine.cache_clear()


def dialect_insert(session: Session):  # noqa: ANN201 - the dialect's own Insert construct
    """The ``insert`` of the session's dialect, for ``on_conflict_do_nothing`` (Postgres and SQLite)."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert
