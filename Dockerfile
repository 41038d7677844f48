# syntax=docker/dockerfile:1
#
# One image, two roles chosen by the command:
#   API     (default)  uvicorn app.main:app            -> HTTP on :8000, /metrics for Prometheus
#   worker             dsx worker --concurrency N      -> Celery; /metrics on DSX_WORKER_METRICS_PORT when set
#   one-off            dsx migrate                     -> Alembic upgrade to head
# Both roles need the same DSX_DATABASE_URL and DSX_BROKER_URL and share nothing on disk: each container keeps its
# caches and its Prometheus multiprocess directory in its own DSX_DATA_DIR (see docker-compose.yml).
#
#   docker build --build-arg DSX_BUILD_REVISION=$(git rev-parse HEAD) .   # the revision in dsx_build_info

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: a virtualenv with dsx and its dependencies ---------------------------------------------------
FROM ${PYTHON_IMAGE} AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

# The source lives at /app in both stages: the install is editable so that app/migrate.py finds alembic.ini and
# migrations/ beside the package, exactly as in a checkout.
WORKDIR /app
COPY pyproject.toml README.md ./
COPY app ./app
COPY workers ./workers
COPY sdk ./sdk
RUN pip install --upgrade pip setuptools wheel \
 && pip install -e . -e ./sdk \
 && find /opt/venv -name '__pycache__' -type d -prune -exec rm -rf {} +

# --- runtime: no compilers, no pip cache, a non-root user ------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

ARG DSX_BUILD_REVISION=""

LABEL org.opencontainers.image.title="dsx" \
      org.opencontainers.image.description="Datasheet parameter extraction with a dispatch record"

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DSX_DATA_DIR=/var/lib/dsx \
    PROMETHEUS_MULTIPROC_DIR=/var/lib/dsx/metrics \
    DSX_BUILD_REVISION=${DSX_BUILD_REVISION} \
    LITELLM_LOCAL_MODEL_COST_MAP=True

RUN groupadd --system --gid 10001 dsx \
 && useradd --system --uid 10001 --gid dsx --home-dir /var/lib/dsx --shell /usr/sbin/nologin dsx \
 && mkdir -p /var/lib/dsx/metrics \
 && chown -R dsx:dsx /var/lib/dsx

COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
COPY alembic.ini /app/alembic.ini
COPY migrations /app/migrations

WORKDIR /app
USER dsx:dsx
EXPOSE 8000

# Keep-alive longer than clients keep idle connections (see HTTP_KEEP_ALIVE_S in app/cli.py).
CMD ["uvicorn", "app.main:app", "--host", "0.0.0.0", "--port", "8000", "--no-server-header", "--timeout-keep-alive", "75"]
