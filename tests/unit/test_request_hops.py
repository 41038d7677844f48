"""The hot job routes check the caller's role on the event loop when that needs no I/O (open mode), saving the
thread hop a sync dependency costs; with API keys the lookup (database, Redis) still runs off the loop, and who
may call what is unchanged."""

from __future__ import annotations

import asyncio
import json

import pytest
from fastapi.testclient import TestClient

from app.auth import keys as auth
from app.auth import security
from app.config import reset_settings
from app.db import session_scope
from app.jobs import service
from tests.support.jobs_api import post
from tests.support.pdfs import text_pdf

PDF = text_pdf(["Supply voltage VDD 2.7 5.5 V"])


def _on_loop() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


@pytest.fixture
def resolved_on_loop(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    seen: list[bool] = []
    real = security.current_principal

    def recording(request):  # noqa: ANN001, ANN202
        seen.append(_on_loop())
        return real(request)

    monkeypatch.setattr(security, "current_principal", recording)
    return seen


def _job(tenant: str = "default") -> str:
    with session_scope() as session:
        job, _ = service.create_job(session, data=PDF, filename="x.pdf", parameters=json.dumps(["Gain"]), tenant=tenant)
        return job.id


def test_open_mode_resolves_the_caller_on_the_event_loop(dsx_env, resolved_on_loop: list[bool]) -> None:  # noqa: ANN001
    from app.main import create_app

    client = TestClient(create_app())
    assert client.get(f"/v1/jobs/{_job()}").status_code == 200
    assert post(client, PDF, ["Gain"]).status_code == 202
    assert resolved_on_loop == [True, True]


def test_with_keys_the_lookup_runs_off_the_loop_and_roles_still_hold(
    dsx_env, monkeypatch: pytest.MonkeyPatch, resolved_on_loop: list[bool]
) -> None:  # noqa: ANN001
    from app.main import create_app

    monkeypatch.setenv("DSX_AUTH_MODE", "keys")
    reset_settings()
    with session_scope() as session:
        submitter = auth.create_key(session, tenant="acme", roles=["submitter"], name="ci").key
        reviewer = auth.create_key(session, tenant="acme", roles=["reviewer"], name="eyes").key
    job_id = _job("acme")
    client = TestClient(create_app())

    assert client.get(f"/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {submitter}"}).status_code == 200
    assert post(client, PDF, ["Gain"], headers={"Authorization": f"Bearer {submitter}"}).status_code == 202
    assert resolved_on_loop == [False, False]

    assert client.get(f"/v1/jobs/{job_id}").json()["code"] == "missing_api_key"
    forbidden = client.get(f"/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {reviewer}"})
    assert (forbidden.status_code, forbidden.json()["code"]) == (403, "missing_role")
    refused = post(client, PDF, ["Gain"], headers={"Authorization": f"Bearer {reviewer}"})
    assert (refused.status_code, refused.json()["code"]) == (403, "missing_role")
