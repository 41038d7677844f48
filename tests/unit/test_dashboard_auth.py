"""The dashboard with API keys on: sign-in through a cookie, decisions signed by the key, tenants kept apart."""

from __future__ import annotations

from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from app.auth.keys import create_key
from app.auth.security import KEY_COOKIE
from app.config import reset_settings
from app.db import session_scope
from tests.support.dashboard_seed import seed_flagged_run


@pytest.fixture
def keys_client(dsx_env, datasheets_dir, monkeypatch: pytest.MonkeyPatch) -> TestClient:  # noqa: ANN001
    monkeypatch.setenv("DSX_AUTH_MODE", "keys")
    reset_settings()
    from app.main import create_app

    return TestClient(create_app(), follow_redirects=False)


def issue(roles: list[str], name: str, tenant: str = "default") -> str:
    with session_scope() as session:
        return create_key(session, tenant=tenant, roles=roles, name=name).key


def test_pages_without_a_key_redirect_to_sign_in_and_assets_stay_401(keys_client: TestClient) -> None:
    run = seed_flagged_run()
    response = keys_client.get("/review", params={"rule": "tool_bypass"})
    assert response.status_code == 303
    location = urlsplit(response.headers["location"])
    assert location.path == "/review/login"
    assert parse_qs(location.query)["next"] == ["/review?rule=tool_bypass"]
    assert keys_client.get(response.headers["location"]).status_code == 200
    image = keys_client.get(f"/review/items/{run.extraction_id}/page.png")
    assert image.status_code == 401 and image.json()["code"] == "missing_api_key"
    posted = keys_client.post(f"/review/items/{run.extraction_id}/decision", data={"decision": "approve"})
    assert posted.status_code == 303 and posted.headers["location"].startswith("/review/login")
    assert keys_client.get("/v1/reviews", headers={"Authorization": f"Bearer {issue(['admin'], 'root')}"}) \
        .json()["total"] == 0


def test_sign_in_checks_the_key_and_its_role(keys_client: TestClient) -> None:
    wrong = keys_client.post("/review/login", data={"key": "dsx_nope", "next": "/review"})
    assert wrong.status_code == 401 and "unknown or revoked" in wrong.text
    submitter = keys_client.post("/review/login", data={"key": issue(["submitter"], "uploader"), "next": "/review"})
    assert submitter.status_code == 403 and "lacks the reviewer role" in unescape(submitter.text)
    assert KEY_COOKIE not in keys_client.cookies

    key = issue(["reviewer"], "rita")
    ok = keys_client.post("/review/login", data={"key": key, "next": "https://elsewhere.example/"})
    assert ok.status_code == 303 and ok.headers["location"] == "/review"  # no redirect off the dashboard
    cookie = ok.headers["set-cookie"]
    assert f"{KEY_COOKIE}={key}" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = keys_client.get("/review")
    assert page.status_code == 200 and ">rita</span>" in page.text

    out = keys_client.post("/review/logout")
    assert out.status_code == 303 and KEY_COOKIE not in keys_client.cookies
    assert keys_client.get("/review").status_code == 303


def test_decisions_are_signed_by_the_key_and_tenants_do_not_see_each_other(keys_client: TestClient) -> None:
    ours = seed_flagged_run()
    theirs = seed_flagged_run(parameter="Gain", tenant="other")
    keys_client.cookies.set(KEY_COOKIE, issue(["reviewer"], "rita"))

    html = keys_client.get("/review").text
    assert f'data-item-id="{ours.extraction_id}"' in html and f'data-item-id="{theirs.extraction_id}"' not in html
    assert 'name="reviewer"' not in keys_client.get(f"/review/items/{ours.extraction_id}").text
    assert keys_client.get(f"/review/items/{theirs.extraction_id}").status_code == 404
    assert keys_client.get(f"/review/items/{theirs.extraction_id}/page.png").status_code == 404
    assert keys_client.get(f"/review/items/{theirs.extraction_id}/spans/{theirs.spans['chat1']}").status_code == 404
    assert keys_client.post(f"/review/items/{theirs.extraction_id}/decision",
                            data={"decision": "approve"}).status_code == 404

    # The reviewer name typed in a form cannot override the key's identity.
    response = keys_client.post(f"/review/items/{ours.extraction_id}/decision",
                                data={"decision": "reject", "reviewer": "someone-else", "comment": "wrong table"})
    assert response.status_code == 303
    decisions = keys_client.get("/v1/reviews").json()["items"]
    assert [(d["extraction_id"], d["reviewer"], d["decision"]) for d in decisions] == [
        (ours.extraction_id, "rita", "reject")]
