"""API keys: 401 without a key, 403 without the role, 404 (never 403) for another tenant's job."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from app.auth import keys as auth
from app.config import reset_settings
from app.db import session_scope
from tests.support.pdfs import text_pdf

PDF = text_pdf(["Supply voltage VDD 2.7 5.5 V"])


@pytest.fixture
def keys(dsx_env, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:  # noqa: ANN001
    monkeypatch.setenv("DSX_AUTH_MODE", "keys")
    reset_settings()
    with session_scope() as session:
        issued = {
            "a_submitter": auth.create_key(session, tenant="division-a", roles=["submitter"], name="alice"),
            "a_reviewer": auth.create_key(session, tenant="division-a", roles=["reviewer"], name="rita"),
            "b_submitter": auth.create_key(session, tenant="division-b", roles=["submitter"], name="bob"),
            "b_admin": auth.create_key(session, tenant="division-b", roles=["admin"], name="root"),
        }
    return {name: key.key for name, key in issued.items()}


@pytest.fixture
def client(keys: dict[str, str]) -> TestClient:
    from app.main import create_app

    return TestClient(create_app())


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def submit(client: TestClient, key: str):  # noqa: ANN201
    return client.post("/v1/jobs", files={"file": ("d.pdf", PDF, "application/pdf")},
                       data={"parameters": json.dumps(["Supply voltage"])}, headers=bearer(key))


def test_missing_and_unknown_keys_are_401(client: TestClient) -> None:
    missing = client.get("/v1/jobs")
    assert missing.status_code == 401 and missing.json()["code"] == "missing_api_key"
    unknown = client.get("/v1/jobs", headers=bearer("dsx_not-a-key"))
    assert unknown.status_code == 401 and unknown.json()["code"] == "invalid_api_key"


def test_role_is_enforced(client: TestClient, keys: dict[str, str]) -> None:
    response = submit(client, keys["a_reviewer"])
    assert response.status_code == 403 and response.json()["code"] == "missing_role"
    queue = client.get("/v1/review/queue", headers=bearer(keys["a_submitter"]))
    assert queue.status_code == 403
    assert client.get("/v1/review/queue", headers=bearer(keys["a_reviewer"])).status_code == 200


def test_other_tenants_job_is_404_everywhere(client: TestClient, keys: dict[str, str]) -> None:
    job_id = submit(client, keys["a_submitter"]).json()["job_id"]
    assert client.get(f"/v1/jobs/{job_id}", headers=bearer(keys["a_submitter"])).status_code == 200
    for key in (keys["b_submitter"], keys["b_admin"]):
        for method, path in (("GET", f"/v1/jobs/{job_id}"), ("GET", f"/v1/jobs/{job_id}/trace"),
                             ("POST", f"/v1/jobs/{job_id}/cancel")):
            response = client.request(method, path, headers=bearer(key))
            assert response.status_code == 404, (method, path, response.text)
        listing = client.get("/v1/jobs", headers=bearer(key)).json()
        assert listing["total"] == 0 and listing["items"] == []
    assert client.get("/v1/jobs", headers=bearer(keys["a_submitter"])).json()["total"] == 1


def test_same_idempotency_key_in_two_tenants_makes_two_jobs(client: TestClient, keys: dict[str, str]) -> None:
    headers_a = {**bearer(keys["a_submitter"]), "Idempotency-Key": "shared"}
    headers_b = {**bearer(keys["b_submitter"]), "Idempotency-Key": "shared"}
    files = {"file": ("d.pdf", PDF, "application/pdf")}
    data = {"parameters": json.dumps(["Supply voltage"])}
    a = client.post("/v1/jobs", files=files, data=data, headers=headers_a).json()["job_id"]
    b = client.post("/v1/jobs", files=files, data=data, headers=headers_b).json()["job_id"]
    assert a != b


def test_revoked_key_stops_working(client: TestClient, keys: dict[str, str]) -> None:
    with session_scope() as session:
        row = auth.lookup(session, keys["a_submitter"])
        assert row is not None and row.key_hash != keys["a_submitter"]  # stored hashed
        assert auth.revoke(session, row.id)
    assert client.get("/v1/jobs", headers=bearer(keys["a_submitter"])).status_code == 401


def test_production_refuses_to_start_open(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from app.main import create_app

    monkeypatch.setenv("DSX_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    monkeypatch.setenv("DSX_AUTH_MODE", "open")
    reset_settings()
    with pytest.raises(RuntimeError, match="Refusing to start"):
        create_app()
    monkeypatch.setenv("DSX_ALLOW_OPEN_IN_PRODUCTION", "true")
    reset_settings()
    assert create_app() is not None
    monkeypatch.delenv("DSX_AUTH_MODE")
    reset_settings()
    from app.config import get_settings

    assert get_settings().effective_auth_mode == "keys"


def test_rate_limit_per_key_is_429_with_retry_after(keys: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from app.auth import ratelimit
    from app.main import create_app

    monkeypatch.setenv("DSX_RATE_LIMIT_PER_MINUTE", "3")
    reset_settings()
    ratelimit.reset()
    client = TestClient(create_app())
    statuses = [client.get("/v1/jobs", headers=bearer(keys["a_submitter"])).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = client.get("/v1/jobs", headers=bearer(keys["a_submitter"]))
    assert limited.json()["code"] == "rate_limited"
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    # another key has its own budget
    assert client.get("/v1/jobs", headers=bearer(keys["b_submitter"])).status_code == 200
    ratelimit.reset()


def test_upload_quota_per_tenant(keys: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from app.auth import ratelimit
    from app.main import create_app

    monkeypatch.setenv("DSX_UPLOAD_QUOTA_BYTES_PER_HOUR", str(len(PDF) * 2 + 10))
    reset_settings()
    ratelimit.reset()
    client = TestClient(create_app())
    assert submit(client, keys["a_submitter"]).status_code == 202
    assert submit(client, keys["a_submitter"]).status_code == 202
    over = submit(client, keys["a_submitter"])
    assert over.status_code == 429 and over.json()["code"] == "upload_quota_exceeded"
    assert int(over.headers["Retry-After"]) > 0
    assert submit(client, keys["b_submitter"]).status_code == 202
    ratelimit.reset()
