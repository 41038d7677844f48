"""Every route of the app, classified and tried across tenants.

* Routes naming a resource (a job, an extraction, a span): the owning tenant gets it, any other tenant gets 404
  (never 403), even with an admin key, and a caller without a key gets 401 (a sign-in redirect for pages).
* Listings: another tenant's rows never appear.
* Public routes (health, readiness, metrics, API docs, the sign-in form) name no resource and carry no tenant
  data. ``/metrics`` is public on purpose: Prometheus scrapes without credentials, and its labels are bounded
  values (model alias, tool, rule, status), never job, parameter or tenant ids; keep it off the public network.

A route added later fails ``test_every_route_is_classified`` until it is put in one of these groups.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from app.auth import keys as auth
from app.config import reset_settings
from app.db import session_scope
from app.dispatch.models import SpanRecord
from app.jobs import service
from tests.support.live import seed_flagged_extraction
from tests.support.pdfs import text_pdf

SPAN_ID = "00000000000000aa"
SECRET = "Division A confidential rail"

# (method, path): how to call it. Bodies are valid, so only tenancy can refuse them.
SCOPED: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/v1/jobs/{job_id}"): {},
    ("GET", "/v1/jobs/{job_id}/trace"): {},
    ("GET", "/v1/review/items/{extraction_id}"): {},
    ("POST", "/v1/review/items/{extraction_id}/decision"): {"json": {"decision": "approve"}},
    ("GET", "/review/items/{extraction_id}"): {},
    ("POST", "/review/items/{extraction_id}/decision"): {"data": {"decision": "approve"}},
    ("GET", "/review/items/{extraction_id}/page.png"): {},
    ("GET", "/review/items/{extraction_id}/spans/{span_id}"): {},
    ("POST", "/v1/jobs/{job_id}/cancel"): {},  # last: it changes the job
}
LISTINGS = {("GET", "/v1/jobs"), ("GET", "/v1/review/queue"), ("GET", "/v1/reviews"),
            ("GET", "/v1/review/corrections.yaml"), ("GET", "/review")}
CREATES = {("POST", "/v1/jobs")}  # always in the caller's own tenant (tests/unit/test_auth.py)
PUBLIC = {("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"), ("GET", "/openapi.json"), ("GET", "/docs"),
          ("GET", "/docs/oauth2-redirect"), ("GET", "/redoc"), ("GET", "/review/login"), ("POST", "/review/login"),
          ("POST", "/review/logout")}
PAGES = {"/review", "/review/items/{extraction_id}", "/review/items/{extraction_id}/decision"}


def all_routes(app) -> set[tuple[str, str]]:  # noqa: ANN001
    """(method, path) of every route, through included routers whichever way FastAPI nests them."""
    found: set[tuple[str, str]] = set()

    def walk(routes) -> None:  # noqa: ANN001
        for route in routes:
            nested = getattr(route, "original_router", None)
            if nested is not None:
                walk(nested.routes)
            elif isinstance(route, APIRoute) or hasattr(route, "methods"):
                for method in (route.methods or set()) - {"HEAD"}:
                    found.add((method, route.path))

    walk(app.routes)
    return found


@pytest.fixture
def world(dsx_env, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:  # noqa: ANN001
    """Tenant A owns a processed-looking job (stored PDF, answer, flag, span); tenant B has an admin key."""
    from app.main import create_app

    monkeypatch.setenv("DSX_AUTH_MODE", "keys")
    monkeypatch.setenv("DSX_RATE_LIMIT_PER_MINUTE", "0")
    reset_settings()
    with session_scope() as session:
        a = auth.create_key(session, tenant="division-a", roles=["submitter", "reviewer"], name="alice").key
        b = auth.create_key(session, tenant="division-b", roles=["admin"], name="bob").key
        job, _ = service.create_job(session, data=text_pdf([f"{SECRET}\nSupply voltage VDD 2.7 5.5 V"]),
                                    filename="a.pdf", parameters=json.dumps(["Supply voltage"]), tenant="division-a")
        job.status = "needs_review"
        extraction = seed_flagged_extraction(session, job=job, parameter=SECRET, source_page=1)
        extraction.trace_id = "ab" * 16
        session.add(SpanRecord(trace_id=extraction.trace_id, span_id=SPAN_ID, name="invoke_agent", start_ns=1,
                               end_ns=2, duration_ms=0.0, job_id=job.id, parameter_id=extraction.parameter_id))
        ids = {"job_id": job.id, "extraction_id": extraction.id, "span_id": SPAN_ID}
    app = create_app()
    return {"app": app, "client": TestClient(app, follow_redirects=False), "a": a, "b": b, "ids": ids}


def call(world: dict[str, Any], method: str, template: str, key: str | None, **kwargs: Any):  # noqa: ANN201
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return world["client"].request(method, template.format(**world["ids"]), headers=headers, **kwargs)


def test_every_route_is_classified(world: dict[str, Any]) -> None:
    known = set(SCOPED) | LISTINGS | CREATES | PUBLIC
    assert all_routes(world["app"]) == known


def test_another_tenant_gets_404_on_every_resource_even_as_admin(world: dict[str, Any]) -> None:
    for (method, template), kwargs in SCOPED.items():
        response = call(world, method, template, world["b"], **kwargs)
        assert response.status_code == 404, (method, template, response.status_code, response.text[:300])
        assert SECRET not in response.text
    # The owner reaches each of them (so the 404s above are about tenancy, not about missing rows).
    for (method, template), kwargs in SCOPED.items():
        response = call(world, method, template, world["a"], **kwargs)
        # (409 for the cancel: the owner reached the job, which has already finished)
        assert response.status_code in (200, 201, 303, 409), (method, template, response.status_code)


def test_listings_never_show_another_tenants_rows(world: dict[str, Any]) -> None:
    for method, template in sorted(LISTINGS):
        theirs = call(world, method, template, world["b"])
        assert theirs.status_code == 200, (template, theirs.text[:300])
        assert world["ids"]["job_id"] not in theirs.text and SECRET not in theirs.text, template
    mine = call(world, "GET", "/v1/review/queue", world["a"])
    assert SECRET in mine.text


def test_without_a_key_nothing_but_public_routes_answer(world: dict[str, Any]) -> None:
    for (method, template), kwargs in [*SCOPED.items(), *((route, {}) for route in LISTINGS)]:
        response = call(world, method, template, None, **kwargs)
        if template in PAGES:
            assert response.status_code == 303 and "/review/login" in response.headers["location"], template
        else:
            assert response.status_code == 401, (method, template, response.status_code)


def test_public_routes_carry_no_tenant_data(world: dict[str, Any]) -> None:
    for method, template in sorted(PUBLIC):
        kwargs = {"data": {"key": "dsx_wrong"}} if (method, template) == ("POST", "/review/login") else {}
        response = call(world, method, template, None, **kwargs)
        assert response.status_code < 500, template
        for secret in (world["ids"]["job_id"], SECRET, "division-a"):
            assert secret not in response.text, (template, secret)
