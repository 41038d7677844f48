"""Shared fixtures: an isolated embedded dsx (own data dir, migrated SQLite) per test that asks for it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from app.config import Settings, get_settings, reset_settings  # noqa: E402
from app.db import reset_engines  # noqa: E402
from tests.support.paths import CLAIMS_FILE, DATASHEETS_DIR  # noqa: E402
from tests.support.prerequisites import missing_prerequisite  # noqa: E402


@pytest.fixture(scope="module")
def isolated_index_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Indexes a module builds go to a cache of its own, never to a shared data directory (a module asks for it
    with ``pytestmark = pytest.mark.usefixtures("isolated_index_cache")``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DSX_DATA_DIR", str(tmp_path_factory.mktemp("var")))
        reset_settings()
        yield
    reset_settings()


@pytest.fixture
def dsx_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """Embedded dsx in a temporary data dir: SQLite database migrated to head, SQLAlchemy broker."""
    from app import migrate

    for key in list(os.environ):
        if key.startswith("DSX_") and key not in ("DSX_SHARED_DIR",) and not key.startswith("DSX_TEST_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("DSX_DATA_DIR", str(tmp_path / "var"))
    reset_settings()
    reset_engines()
    migrate.upgrade()
    yield get_settings()
    from app.dispatch import telemetry

    telemetry.flush()  # spans the test left buffered belong to its own database, not the next test's
    reset_engines()
    reset_settings()


@pytest.fixture(params=["sqlite", "postgres"])
def dsx_backend(request: pytest.FixtureRequest, dsx_env: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``dsx_env`` on its embedded SQLite store, or on a fresh PostgreSQL database (open mode, as embedded):
    for behaviour that must not depend on the backend, such as what bad input gets back."""
    if request.param == "postgres":
        from tests.support.services import embedded_on_postgres

        with embedded_on_postgres(monkeypatch):
            yield request.param
        return
    yield request.param


@pytest.fixture(scope="session")
def datasheets_dir() -> Path:
    if not DATASHEETS_DIR.exists():
        missing_prerequisite(f"shared datasheets not found at {DATASHEETS_DIR}")
    return DATASHEETS_DIR


@pytest.fixture(scope="session")
def claims_file() -> Path:
    if not CLAIMS_FILE.exists():
        missing_prerequisite(f"shared dev claims not found at {CLAIMS_FILE}")
    return CLAIMS_FILE
