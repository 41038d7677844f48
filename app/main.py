"""create_app(): routers, error handlers, instrumentation."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.concurrency import run_in_threadpool
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app import __version__
from app.api.corrections import router as corrections_router
from app.api.health import router as health_router
from app.api.jobs import router as jobs_router
from app.api.metrics import HttpMetricsMiddleware
from app.api.metrics import router as metrics_router
from app.api.problems import install_handlers
from app.api.review import router as review_router
from app.api.traces import router as traces_router
from app.auth.security import check_startup_policy
from app.config import get_settings
from app.dashboard.views import install as install_review_dashboard
from app.http_input import check_request_text
from app.jobs import admission
from app.observability.host_metrics import prepare_metrics_dir
from app.observability.http_tracing import instrument
from app.observability.logging import configure_logging
from app.observability.request_id import RequestIdMiddleware
from app.offload import size_thread_pools
from app.urls import RootPathMiddleware

log = logging.getLogger(__name__)


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    metrics_dir = get_settings().metrics_dir
    if metrics_dir is not None:
        await run_in_threadpool(prepare_metrics_dir, metrics_dir)
    # The upload-check children start with the server, so the first upload does not wait for them.
    size_thread_pools()
    await run_in_threadpool(admission.start)
    yield
    await run_in_threadpool(admission.shutdown)


def create_app() -> FastAPI:
    settings = get_settings()
    configure_logging("dsx-api")
    check_startup_policy()
    app = FastAPI(
        title="dsx",
        version=__version__,
        description="Datasheet parameter extraction with a dispatch record: every LLM and tool call is "
        "recorded, detectors read that record, and suspect answers go to a review queue.",
        lifespan=lifespan,
        dependencies=[Depends(check_request_text)],
    )
    install_handlers(app)
    app.add_middleware(HttpMetricsMiddleware)
    app.add_middleware(RequestIdMiddleware)
    instrument(app)  # the server span (from an incoming traceparent) wraps the request id middleware
    # Outermost: the scheme, client address and prefix are the gateway's view before anything reads them.
    app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=_trusted_proxies(settings.forwarded_allow_ips))
    app.add_middleware(RootPathMiddleware, root=settings.root_path)
    app.include_router(health_router)
    app.include_router(jobs_router)
    app.include_router(traces_router)
    app.include_router(metrics_router)
    app.include_router(review_router)
    app.include_router(corrections_router)
    install_review_dashboard(app)
    if settings.effective_auth_mode == "open":
        log.warning("dsx API is running OPEN (no API keys): every caller is tenant 'default' with all roles.")
    return app


def _trusted_proxies(value: str) -> list[str] | str:
    hosts = [host.strip() for host in value.split(",") if host.strip()]
    return "*" if "*" in hosts else hosts


app = create_app()
