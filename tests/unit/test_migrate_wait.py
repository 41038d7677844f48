"""`dsx migrate --wait` (a pod's init container) returns once the database holds this build's migrations, and
migrates nothing itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from app import migrate
from app.cli import cli


def test_a_database_is_current_only_once_migrated_to_this_builds_head(tmp_path: Path, dsx_env) -> None:  # noqa: ANN001
    url = f"sqlite:///{tmp_path / 'w.db'}"
    assert not migrate.is_current(url)
    assert not migrate.wait_until_current(0.3, interval_s=0.1, url=url)
    migrate.upgrade(url)
    assert migrate.is_current(url)
    assert migrate.wait_until_current(0.3, interval_s=0.1, url=url)


def test_a_database_a_newer_build_migrated_counts_as_current(tmp_path: Path, dsx_env) -> None:  # noqa: ANN001
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    migrate.upgrade(url)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'f00dfeedbeef'"))
    engine.dispose()
    assert migrate.is_current(url)


def test_the_command_waits_without_migrating(dsx_env) -> None:  # noqa: ANN001
    runner = CliRunner()
    migrate.downgrade(revision="base")
    result = runner.invoke(cli, ["migrate", "--wait", "0.5"])
    assert result.exit_code == 1, result.output
    assert not migrate.is_current()  # waiting never migrates
    migrate.upgrade()
    result = runner.invoke(cli, ["migrate", "--wait", "0.5"])
    assert result.exit_code == 0, result.output


def test_the_recorded_head_is_alembics_head() -> None:
    from alembic.script import ScriptDirectory

    assert ScriptDirectory.from_config(migrate._config()).get_heads() == [migrate.HEAD_REVISION]


def test_upgrading_a_current_database_reads_its_version_and_runs_no_migration(tmp_path: Path, dsx_env,  # noqa: ANN001
                                                                             monkeypatch) -> None:  # noqa: ANN001
    url = f"sqlite:///{tmp_path / 'current.db'}"
    assert migrate.applied_revisions(url) == set()
    migrate.upgrade(url)
    assert migrate.applied_revisions(url) == {migrate.HEAD_REVISION}

    def no_migration(*_args, **_kwargs) -> None:  # noqa: ANN002, ANN003
        raise AssertionError("a current database was migrated again")

    monkeypatch.setattr(migrate, "_run", no_migration)
    migrate.upgrade(url)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0004'"))
    engine.dispose()
    with pytest.raises(AssertionError, match="migrated again"):  # one revision behind: it does migrate
        migrate.upgrade(url)
