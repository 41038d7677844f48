"""dsx mounted under /dsx by a prefix-stripping gateway (DSX_ROOT_PATH=/dsx): the Location of a new job, the job
itself, and every link, form, image and static file of the dashboard resolve through the gateway."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from app.config import reset_settings
from app.db import session_scope
from app.tables.jobs import Job
from tests.support.live import seed_flagged_extraction
from tests.support.pdfs import text_pdf
from tests.support.prefix_proxy import PrefixProxy

PREFIX = "/dsx"


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str, str]] = []  # (tag, attribute, value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src", "action", "hx-get", "data-href", "data-src-base") and value:
                self.found.append((tag, name, value))


def links_of(html: str) -> list[tuple[str, str, str]]:
    parser = Links()
    parser.feed(html)
    return [(t, a, v) for t, a, v in parser.found if not v.startswith(("#", "data:", "http"))]


@pytest.fixture
def gateway(dsx_env, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001, ANN201
    from app.main import create_app

    monkeypatch.setenv("DSX_ROOT_PATH", PREFIX)
    reset_settings()
    proxy = PrefixProxy(create_app(), PREFIX)
    client = TestClient(proxy, follow_redirects=False)
    client.proxy = proxy  # type: ignore[attr-defined]
    return client


def test_a_job_posted_through_the_gateway_is_found_at_its_location(gateway: TestClient) -> None:
    response = gateway.post(f"{PREFIX}/v1/jobs", files={"file": ("ds.pdf", text_pdf(["Supply voltage 5 V"]),
                                                                "application/pdf")},
                            data={"parameters": json.dumps(["Supply voltage"])})
    assert response.status_code == 202, response.text
    location = response.headers["Location"]
    assert location == f"{PREFIX}/v1/jobs/{response.json()['job_id']}"
    fetched = gateway.get(location)
    assert fetched.status_code == 200 and fetched.json()["job_id"] == response.json()["job_id"]
    assert gateway.get(f"{PREFIX}/docs").status_code == 200
    assert gateway.get(f"{PREFIX}/openapi.json").json()["servers"] == [{"url": PREFIX}]


def test_every_dashboard_link_resolves_under_the_prefix(gateway: TestClient) -> None:
    with session_scope() as session:
        first = seed_flagged_extraction(session, parameter="Supply voltage")
        seed_flagged_extraction(session, parameter="Gain", job=session.get(Job, first.job_id))
        item_id = first.id
    pages = [f"{PREFIX}/review", f"{PREFIX}/review/items/{item_id}"]
    checked: set[str] = set()
    for page in pages:
        response = gateway.get(page)
        assert response.status_code == 200, (page, response.text[:500])
        for tag, attribute, value in links_of(response.text):
            assert value.startswith(PREFIX + "/"), f"{page}: <{tag} {attribute}={value!r}> escapes the prefix"
            target = value.split("#")[0]
            if tag == "form" or target in checked or attribute == "data-src-base":
                continue
            checked.add(target)
            status = gateway.get(target).status_code
            assert status in (200, 303), f"{page}: <{tag} {attribute}={value!r}> answers {status}"
    assert any("/review/static/" in c for c in checked) and any("/review/items/" in c for c in checked)
    assert gateway.proxy.outside == []  # type: ignore[attr-defined]


def test_decisions_and_sign_in_redirect_under_the_prefix(gateway: TestClient, monkeypatch) -> None:  # noqa: ANN001
    with session_scope() as session:
        item = seed_flagged_extraction(session, parameter="Supply voltage").id
    decided = gateway.post(f"{PREFIX}/review/items/{item}/decision", data={"decision": "approve", "reviewer": "r"})
    assert decided.status_code == 303 and decided.headers["location"].startswith(f"{PREFIX}/review")

    monkeypatch.setenv("DSX_AUTH_MODE", "keys")
    reset_settings()
    from app.main import create_app

    keys = TestClient(PrefixProxy(create_app(), PREFIX), follow_redirects=False)
    to_login = keys.get(f"{PREFIX}/review/items/{item}")
    assert to_login.status_code == 303
    assert re.match(rf"^{PREFIX}/review/login\?next=%2Freview%2Fitems%2F{item}&", to_login.headers["location"])
    assert keys.post(f"{PREFIX}/review/logout").headers["location"] == f"{PREFIX}/review/login"
