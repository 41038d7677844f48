"""create_app(): routers, error handlers, instrumentation."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

from app import __version__
from app.api.corrections import router as corrections_router
from app.api.health import router as health_router
from app.api.jobs import router as jobs_router
from app.api.metrics import HttpMetricsMiddleware
from app.api.metrics import router as metrics_router
from app.api.problems import install_handlers
from app.api.traces import router as traces_router
from app.config import get_settings
from app.dashboard.views import install as install_review_dashboard
from app.jobs import admission
from app.review.api import router as review_router
from app.security import check_startup_policy

log = logging.getLogger(__name__)


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    # The upload-check children start with the server, so the first upload does not wait for them.
    await run_in_threadpool(admission.start)
    yield
    await run_in_threadpool(admission.shutdown)


def create_app() -> FastAPI:
    settings = get_settings()
    check_startup_policy()
    app = FastAPI(
        title="dsx",
        version=__version__,
        description="Datasheet parameter extraction with a dispatch record: every LLM and tool call is "
        "recorded, detectors read that record, and suspect answers go to a review queue.",
        lifespan=lifespan,
    )
    install_handlers(app)
    app.add_middleware(HttpMetricsMiddleware)
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


app = create_app()
