"""Alembic upgrade head → downgrade base → upgrade head, on SQLite and on real Postgres."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from app import migrate
from app.models import Base
from tests.support.services import fresh_postgres_database

pytestmark = pytest.mark.integration


def _round_trip(url: str) -> None:
    migrate.upgrade(url)
    engine = create_engine(url)
    try:
        tables = set(inspect(engine).get_table_names())
        assert set(Base.metadata.tables) <= tables
        migrate.downgrade(url, "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        migrate.upgrade(url)
        assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_sqlite_upgrade_downgrade(tmp_path: Path, dsx_env) -> None:  # noqa: ANN001
    _round_trip(f"sqlite:///{tmp_path / 'm.db'}")


def test_postgres_upgrade_downgrade() -> None:
    with fresh_postgres_database() as url:
        _round_trip(url)


def test_models_match_migrations(tmp_path: Path, dsx_env) -> None:  # noqa: ANN001
    """The ORM and the migration history describe the same schema (no forgotten migration)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    url = f"sqlite:///{tmp_path / 'cmp.db'}"
    migrate.upgrade(url)
    engine = create_engine(url)
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    engine.dispose()
    assert diff == []
