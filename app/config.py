"""Settings: the only place that reads the environment (prefix ``DSX_``).

The embedded default (no variables set) is SQLite plus Celery's SQLAlchemy transport under
``DSX_DATA_DIR`` and the offline model; production sets ``DSX_DATABASE_URL`` (Postgres) and
``DSX_BROKER_URL`` (Redis). Nothing else differs between the two.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

OFFLINE_MODEL = "offline/datasheet-reader"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DSX_", env_file=None, extra="ignore")

    data_dir: Path = Path("./var")
    database_url: str | None = None
    broker_url: str | None = None

    # Upload and request limits.
    max_upload_bytes: int = 50 * 1024 * 1024
    max_pages: int = 2000
    max_parameters: int = 100
    max_parameter_name_chars: int = 200
    index_build_timeout_s: float = 120.0
    # Index builds run in a child process (app/documents/sandbox.py): the address space a build may add to the
    # loaded interpreter (0 = no cap), and when a silent child is killed (default: the build timeout plus 30 s).
    index_sandbox: bool = True
    index_build_memory_mb: int = 1536
    index_build_kill_after_s: float | None = None
    # Upload admission reads the PDF in pre-started child processes (app/jobs/admission.py).
    admission_sandbox: bool = True  # off: read it in the API process itself (fast start for one-off commands)
    admission_workers: int = Field(default=2, ge=1)  # child processes checking uploads at the same time
    admission_memory_mb: int = 768  # address space a check may add to the loaded child (0 = no cap)
    admission_timeout_s: float = Field(default=10.0, gt=0)  # wall clock per check; a child past it is killed

    # Models: a LiteLLM model string or an alias from the models file (LiteLLM `model_list` YAML).
    model: str = OFFLINE_MODEL
    models_file: Path | None = None
    gateway_url: str | None = None
    gateway_key: str | None = None
    cross_check_model: str | None = OFFLINE_MODEL

    # Agent budgets.
    max_turns: int = 30
    call_timeout_s: float = 120.0
    parameter_timeout_s: float = 600.0
    token_budget: int = 400_000
    llm_max_retries: int = 3  # retries after the first attempt, on 429/5xx/timeouts
    llm_backoff_s: float = 1.0  # first retry delay; doubles per retry (with jitter), Retry-After honoured
    llm_backoff_max_s: float = 30.0
    llm_max_output_tokens: int = 4096  # per call: bounds a runaway generation (a repeated token)

    # Worker behaviour.
    max_deliveries: int = 3
    job_lease_s: float = 120.0
    requeue_after_s: float = 60.0
    sweep_interval_s: float = 15.0

    # Review rules: per-rule overrides {"rule": {"enabled": bool, "severity": str, ...options}} (JSON).
    review_rules: dict[str, dict[str, Any]] = Field(default_factory=dict)

    # Observability.
    otlp_endpoint: str | None = None
    otlp_attribute_max_chars: int = 2048  # exported attributes are cut here; the database keeps all
    # prometheus-client's multiprocess directory. The library reads PROMETHEUS_MULTIPROC_DIR itself, so the
    # setting mirrors that variable (a second name could disagree with what the library does).
    metrics_dir: Path | None = Field(default=None, validation_alias="PROMETHEUS_MULTIPROC_DIR")

    # Security.
    auth_mode: str = Field(default="auto", description="auto | open | keys (auto: open when embedded)")
    allow_open_in_production: bool = False
    rate_limit_per_minute: int = 120
    upload_quota_bytes_per_hour: int = 2 * 1024 * 1024 * 1024


    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'dsx.db').resolve()}"

    @property
    def resolved_broker_url(self) -> str:
        if self.broker_url:
            return self.broker_url
        return f"sqla+sqlite:///{(self.data_dir / 'broker.db').resolve()}"

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def index_cache_dir(self) -> Path:
        return self.data_dir / "index-cache"

    @property
    def effective_auth_mode(self) -> str:
        if self.auth_mode == "auto":
            return "open" if self.is_embedded else "keys"
        return self.auth_mode

    @property
    def is_embedded(self) -> bool:
        return self.database_url is None or self.database_url.startswith("sqlite")

    def ensure_dirs(self) -> None:
        for path in (self.data_dir, self.blob_dir, self.index_cache_dir, self.metrics_dir):
            if path is not None:
                path.mkdir(parents=True, exist_ok=True)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    settings = Settings()
    settings.ensure_dirs()
    return settings


def reset_settings() -> None:
    """Forget cached settings (tests change the environment between cases)."""
    get_settings.cache_clear()


def environment_for_children() -> dict[str, str]:
    """The environment a spawned process (worker, server) inherits, with resolved URLs pinned."""
    settings = get_settings()
    env = dict(os.environ)
    env["DSX_DATA_DIR"] = str(settings.data_dir.resolve())
    env["DSX_DATABASE_URL"] = settings.resolved_database_url
    env["DSX_BROKER_URL"] = settings.resolved_broker_url
    # API and worker processes share one metrics directory, so /metrics also reports what the workers did.
    metrics_dir = (settings.metrics_dir or settings.data_dir / "metrics").resolve()
    metrics_dir.mkdir(parents=True, exist_ok=True)
    env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    return env
