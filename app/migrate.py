"""Run Alembic migrations programmatically (used by `dsx migrate`, `dsx serve` and tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from app.config import get_settings
from app.db import make_engine

ROOT = Path(__file__).resolve().parent.parent


def _run(action, url: str | None, revision: str) -> None:  # noqa: ANN001
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    engine = make_engine(url or get_settings().resolved_database_url)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            action(config, revision)
    finally:
        engine.dispose()


def upgrade(url: str | None = None, revision: str = "head") -> None:
    _run(command.upgrade, url, revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    _run(command.downgrade, url, revision)
