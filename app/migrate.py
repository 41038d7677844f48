"""Run Alembic migrations programmatically (used by `dsx migrate`, `dsx serve` and tests), and wait for them
(`dsx migrate --wait`: a pod's init container holds the API or worker until the migrate Job has run)."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.exc import OperationalError, ProgrammingError

from app.config import get_settings
from app.db import make_engine

if TYPE_CHECKING:
    from alembic.config import Config

ROOT = Path(__file__).resolve().parent.parent
# The newest migration in migrations/versions (a test holds it to Alembic's own head). It lets a database that is
# already current be recognised without importing Alembic, which costs a one-off command such as `dsx extract`
# more than the check itself.
HEAD_REVISION = "0005"
log = logging.getLogger(__name__)


def _config() -> Config:
    from alembic.config import Config

    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    return config


def _run(action, url: str | None, revision: str) -> None:  # noqa: ANN001
    config = _config()
    engine = make_engine(url or get_settings().resolved_database_url)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            action(config, revision)
    finally:
        engine.dispose()


def upgrade(url: str | None = None, revision: str = "head") -> None:
    if revision == "head" and applied_revisions(url) == {HEAD_REVISION}:
        return
    from alembic import command

    _run(command.upgrade, url, revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    from alembic import command

    _run(command.downgrade, url, revision)


def applied_revisions(url: str | None = None) -> set[str]:
    """The revisions recorded in the database's ``alembic_version`` table; empty for a database never migrated."""
    engine = make_engine(url or get_settings().resolved_database_url)
    try:
        with engine.connect() as connection:
            return {str(row[0]) for row in connection.execute(text("SELECT version_num FROM alembic_version"))}
    except (OperationalError, ProgrammingError) as exc:
        if "alembic_version" not in str(exc):
            raise
        return set()
    finally:
        engine.dispose()


def is_current(url: str | None = None) -> bool:
    """Whether the database holds every migration of this build. A database a newer build already migrated
    (a revision this build does not know) counts as current: an older pod restarting mid-rollout must not wait
    for a head it will never see."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_config())
    applied = applied_revisions(url)
    known = {revision.revision for revision in script.walk_revisions()}
    return applied == set(script.get_heads()) or bool(applied - known)


def wait_until_current(timeout_s: float, interval_s: float = 2.0, url: str | None = None) -> bool:
    """Poll until :func:`is_current` (an unreachable database counts as not yet); False after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if is_current(url):
                return True
        except OperationalError as exc:
            log.info("database not reachable yet: %s", str(exc).splitlines()[0])
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)
