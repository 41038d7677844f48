"""Request metrics at the HTTP edge and the ``/metrics`` route.

``HttpMetricsMiddleware`` counts and times every request by method, route template and status class. A scrape
reads the samples of every process of this host (``app.observability.host_metrics``: the API's processes, or on
a single host started by ``dsx serve`` its worker's too), plus the queue gauges read from the jobs table. Workers
elsewhere serve their own ``/metrics``."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request, Response
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import get_settings
from app.jobs.metrics import JobQueueCollector
from app.metrics import (
    API_PROBLEMS,
    HTTP_DURATION,
    HTTP_REQUESTS,
    OTHER,
    UPLOAD_CHECK_FAILURE_CODES,
    UPLOAD_CHECK_FAILURE_STATUS,
    bound,
    one_of,
    status_class,
)
from app.observability.host_metrics import host_registry

_HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class HttpMetricsMiddleware:
    """Counts and times every HTTP request the API answers, ``/metrics`` itself excepted.

    A plain ASGI middleware rather than Starlette's ``BaseHTTPMiddleware``, which would buffer streamed
    responses. The route label is the matched route's template (``/v1/jobs/{job_id}``), never the raw path, and
    ``other`` when nothing matched: a scanner requesting random paths adds no series.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # Built once per API process: only the API returns problems.
        for code in UPLOAD_CHECK_FAILURE_CODES:
            API_PROBLEMS.labels(code, str(UPLOAD_CHECK_FAILURE_STATUS))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status: int | None = None

        async def send_and_note_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, send_and_note_status)
        except Exception:
            status = status or 500  # raised before a response started: the server's error middleware answers 500
            raise
        finally:
            # None only when the client went away (cancelled) before any answer: nothing was answered to count.
            if status is not None:
                self._observe(scope, status, time.perf_counter() - started)

    @staticmethod
    def _observe(scope: Scope, status: int, duration_s: float) -> None:
        route = route_template(scope)
        if route == "/metrics":
            return
        method = one_of(scope.get("method"), _HTTP_METHODS)
        bound(HTTP_REQUESTS, method, route, status_class(status)).inc()
        bound(HTTP_DURATION, method, route).observe(duration_s)


def route_template(scope: Scope) -> str:
    """The template of the route that handled a request (its scope after routing), or ``other``.

    FastAPI leaves its route in the scope. A mount (the review dashboard's static files) leaves only the app it
    mounts, which is looked up among the application's mounts.
    """
    route = scope.get("route")
    template = getattr(route, "path_format", None)
    if isinstance(template, str):
        return template
    endpoint = scope.get("endpoint")
    application = scope.get("app")
    if endpoint is not None and application is not None:
        for candidate in getattr(application, "routes", ()):
            if isinstance(candidate, Mount) and candidate.app is endpoint:
                return candidate.path + "/{path}"
    return OTHER


def scrape_registry() -> CollectorRegistry:
    """The registry one scrape reads: this host's samples and build, plus the queue gauges."""
    settings = get_settings()
    registry = host_registry(settings.metrics_dir, settings.build_revision)
    registry.register(JobQueueCollector())
    return registry


router = APIRouter(tags=["metrics"])


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """Prometheus exposition, text or OpenMetrics as the scraper asks (unauthenticated, like every scrape
    target: keep it off the public network)."""
    encode, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(scrape_registry()), media_type=content_type)
