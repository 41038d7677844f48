"""The API's HTTP server spans, by OpenTelemetry's FastAPI instrumentation on dsx's own HTTP tracer provider.

The span continues an incoming W3C ``traceparent`` (a gateway's) and wraps the whole middleware stack, so it is
current while the request is handled: the request id middleware records its id on it, log lines carry its trace
id, and a submitted job carries it to the worker. Health checks, metrics scrapes and static files are not traced.
"""

from __future__ import annotations

from fastapi import FastAPI
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

from app.dispatch.telemetry import build_http_provider

EXCLUDED_URLS = "/healthz,/readyz,/metrics,/review/static/.*"


def instrument(app: FastAPI) -> None:
    FastAPIInstrumentor.instrument_app(app, tracer_provider=build_http_provider(), excluded_urls=EXCLUDED_URLS,
                                       exclude_spans=["receive", "send"])
