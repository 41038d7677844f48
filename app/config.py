"""Settings: the only place that reads the environment (prefix ``DSX_``).

The embedded default (no variables set) is SQLite plus Celery's SQLAlchemy transport under
``DSX_DATA_DIR`` and the offline model; production sets ``DSX_DATABASE_URL`` (Postgres) and
``DSX_BROKER_URL`` (Redis). Nothing else differs between the two.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

OFFLINE_MODEL = "offline/datasheet-reader"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DSX_", env_file=None, extra="ignore")

    data_dir: Path = Path("./var")
    database_url: str | None = None
    broker_url: str | None = None

    # Where uploaded PDFs live (app/blobs): "local" (this host's data dir), "database" (a table every host can
    # read) or "s3" (any S3-compatible object store). Unset: local when embedded, the database in production.
    blob_store: Literal["local", "database", "s3"] | None = None
    s3_bucket: str | None = None
    s3_prefix: str = "blobs/"
    s3_endpoint_url: str | None = None  # MinIO, Ceph, moto...; unset for AWS itself
    s3_region: str | None = None
    s3_access_key_id: str | None = None  # unset: boto3's usual chain (instance role, AWS_* variables)
    s3_secret_access_key: str | None = None
    # This host's copies of PDFs from a shared store (app/documents/blob_cache.py): least recently used go first
    # past the size, and any unused for longer than the age (0 = no bound).
    blob_cache_max_mb: int = Field(default=2048, ge=0)
    blob_cache_max_age_s: float = Field(default=7 * 24 * 3600, ge=0)

    # API concurrency (app/offload.py). Sync routes run on a thread pool of `api_threads`, submissions' admission
    # on one of `upload_threads`; each process's database pool holds `db_pool_size` + `db_max_overflow`
    # connections, at least as many as those threads, so a request never waits for a connection behind its own
    # process's threads. A checkout that still waits `db_pool_timeout_s` (the
    # database is saturated by other processes) is answered 503 `service_busy` with Retry-After, not a late 500.
    # PostgreSQL's max_connections must cover (pool size + overflow) x (API processes + worker processes).
    api_threads: int = Field(default=40, ge=1)
    upload_threads: int = Field(default=8, ge=1)
    db_pool_size: int = Field(default=20, ge=1)
    db_max_overflow: int = Field(default=30, ge=0)
    db_pool_timeout_s: float = Field(default=1.5, gt=0)

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
    gateway_key: str | None = None  # dsx's own key: model info, and tenants without a key of their own
    # Per-tenant gateway (LiteLLM virtual) keys, so the gateway attributes spend per tenant: a JSON object
    # {"tenant": "sk-..."} in DSX_GATEWAY_KEYS, or a YAML/JSON file of the same mapping (kept out of the
    # environment; entries in DSX_GATEWAY_KEYS win).
    gateway_keys: dict[str, str] = Field(default_factory=dict)
    gateway_keys_file: Path | None = None
    gateway_model_info_ttl_s: float = 300.0  # how long the gateway's /model/info answer is reused
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
    job_lease_s: float = 60.0  # renewed every third of it while the job runs (app/jobs/heartbeat.py)
    requeue_after_s: float = 60.0
    sweep_interval_s: float = 15.0
    # On SIGTERM, how long running jobs may go on before the worker stops (keep below the pod's grace period).
    worker_soft_shutdown_s: float = 600.0
    fair_scheduling: bool = True  # share workers equally between tenants (app/jobs/fairness.py)
    worker_warm_up: bool = True  # a pool process pays its first-use costs before taking work (workers/warmup.py)

    # Review rules: per-rule overrides {"rule": {"enabled": bool, "severity": str, ...options}} (JSON).
    review_rules: dict[str, dict[str, Any]] = Field(default_factory=dict)

    # Observability.
    otlp_endpoint: str | None = None
    otlp_attribute_max_chars: int = 2048  # exported attributes are cut here; the database keeps all
    log_level: str = "INFO"
    log_format: Literal["json", "text"] = "json"  # json: one object per line, for a log pipeline

    # HTTP gateway in front. Addresses whose X-Forwarded-Proto/-For are believed (comma-separated IPs or CIDRs,
    # "*" for any): behind a TLS-terminating gateway its address must be here, or the review cookie is issued
    # without Secure and redirects point at http://.
    forwarded_allow_ips: str = "127.0.0.1"
    # The prefix a gateway mounts dsx under and strips before forwarding (the ASGI root_path), e.g. "/dsx":
    # every Location, redirect, link and static path dsx generates carries it.
    root_path: str = Field(default="", pattern=r"^(/[A-Za-z0-9._~-]+)*$")
    # prometheus-client's multiprocess directory. The library reads PROMETHEUS_MULTIPROC_DIR itself, so the
    # setting mirrors that variable (a second name could disagree with what the library does). One per host (the
    # API's or a worker's process group), never shared between hosts: each host serves the sum of its own
    # processes, and Prometheus scrapes every host.
    metrics_dir: Path | None = Field(default=None, validation_alias="PROMETHEUS_MULTIPROC_DIR")
    # A worker's own /metrics (its parent and pool children), so workers on other hosts are scraped too; 0 = off.
    worker_metrics_port: int = Field(default=0, ge=0, le=65535)
    worker_metrics_host: str = "0.0.0.0"
    # The source revision the running build was made from (the Dockerfile's build argument), for dsx_build_info.
    build_revision: str | None = None

    # Security.
    auth_mode: str = Field(default="auto", description="auto | open | keys (auto: open when embedded)")
    allow_open_in_production: bool = False
    rate_limit_per_minute: int = 120
    upload_quota_bytes_per_hour: int = 2 * 1024 * 1024 * 1024


    @model_validator(mode="after")
    def _s3_needs_a_bucket(self) -> Settings:
        if self.blob_store == "s3" and not self.s3_bucket:
            raise ValueError("DSX_BLOB_STORE=s3 needs DSX_S3_BUCKET (the bucket that holds the uploaded PDFs).")
        return self

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
    def resolved_blob_store(self) -> str:
        if self.blob_store:
            return self.blob_store
        return "local" if self.is_embedded else "database"

    @property
    def blob_cache_dir(self) -> Path:
        """This host's copies of PDFs kept in a shared blob store (the tools and renderer need a file)."""
        return self.data_dir / "blob-cache"

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
        blob_dir = self.blob_dir if self.resolved_blob_store == "local" else None
        for path in (self.data_dir, blob_dir, self.index_cache_dir, self.metrics_dir):
            if path is not None:
                path.mkdir(parents=True, exist_ok=True)


_current: Settings | None = None


def get_settings() -> Settings:
    """This process's settings: read from the environment once, unless a command installed its own."""
    global _current
    if _current is None:
        settings = Settings()
        settings.ensure_dirs()
        _current = settings
    return _current


def use_settings(settings: Settings) -> None:
    """Run this process on ``settings`` (a command working on its own store, such as ``dsx eval run``) without
    touching the environment; spawned children get them through ``environment_for_children``."""
    global _current
    settings.ensure_dirs()
    _current = settings


def reset_settings() -> None:
    """Forget the current settings (tests change the environment between cases)."""
    global _current
    _current = None


def environment_for_children() -> dict[str, str]:
    """The environment a spawned process (worker, server) inherits, with resolved URLs pinned."""
    settings = get_settings()
    env = dict(os.environ)
    env["DSX_DATA_DIR"] = str(settings.data_dir.resolve())
    env["DSX_DATABASE_URL"] = settings.resolved_database_url
    env["DSX_BROKER_URL"] = settings.resolved_broker_url
    env["PROMETHEUS_MULTIPROC_DIR"] = str(host_metrics_dir(settings))
    return env


def host_metrics_dir(settings: Settings) -> Path:
    """This host's multiprocess metrics directory: the configured one, else ``metrics`` in the data dir. The
    processes started on one host (``dsx serve``: API and worker) share it, so one scrape reports them all."""
    metrics_dir = (settings.metrics_dir or settings.data_dir / "metrics").resolve()
    metrics_dir.mkdir(parents=True, exist_ok=True)
    return metrics_dir


def use_host_metrics_dir() -> Path:
    """Put this process (and the children it forks) in multiprocess mode on this host's directory, unless a
    directory is already configured. Must run before prometheus-client is imported: it reads the variable once."""
    path = host_metrics_dir(get_settings())
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    reset_settings()
    return path
