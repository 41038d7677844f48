"""The jobs API: admission, idempotency, listing, cancel, and every bad-input problem code."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from tests.support.jobs_api import blob_files, post, stored_rows
from tests.support.pdfs import encrypted_pdf, text_pdf

PDF = text_pdf(["Supply voltage VDD 2.7 5.5 V"])


@pytest.fixture
def client(dsx_env) -> TestClient:  # noqa: ANN001
    from app.main import create_app

    return TestClient(create_app())


def test_submit_returns_202_location_and_stores_job(client: TestClient, dsx_env) -> None:  # noqa: ANN001
    response = post(client, PDF, [{"name": "Supply voltage", "unit": "V", "conditions": ["TA = 25 °C"]}, "Gain"])
    assert response.status_code == 202, response.text
    body = response.json()
    assert response.headers["Location"] == f"/v1/jobs/{body['job_id']}"
    assert body["status"] == "queued"
    assert [p["name"] for p in body["parameters"]] == ["Supply voltage", "Gain"]
    assert body["parameters"][0]["conditions"] == ["TA = 25 °C"]
    assert stored_rows() == (1, 2, 1)
    assert len(blob_files(dsx_env)) == 1

    fetched = client.get(body and f"/v1/jobs/{body['job_id']}").json()
    assert fetched["job_id"] == body["job_id"]
    listing = client.get("/v1/jobs", params={"status": "queued"}).json()
    assert listing["total"] == 1 and listing["items"][0]["job_id"] == body["job_id"]
    assert client.get("/v1/jobs", params={"status": "done"}).json()["total"] == 0


def test_identical_pdfs_share_one_blob(client: TestClient, dsx_env) -> None:  # noqa: ANN001
    assert post(client, PDF).status_code == 202
    assert post(client, PDF, ["Gain"]).status_code == 202
    assert stored_rows() == (2, 2, 1)
    assert len(blob_files(dsx_env)) == 1


def test_idempotency_key_replays_same_job_and_rejects_other_body(client: TestClient) -> None:
    first = post(client, PDF, headers={"Idempotency-Key": "k-1"})
    again = post(client, PDF, headers={"Idempotency-Key": "k-1"})
    assert first.status_code == 202 and again.status_code in (200, 202)
    assert again.json()["job_id"] == first.json()["job_id"]
    other = post(client, PDF, ["Gain"], headers={"Idempotency-Key": "k-1"})
    assert other.status_code == 409
    assert other.json()["code"] == "idempotency_conflict"
    assert stored_rows()[0] == 1


def test_cancel_then_cancel_again(client: TestClient) -> None:
    job_id = post(client, PDF).json()["job_id"]
    cancelled = client.post(f"/v1/jobs/{job_id}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = client.post(f"/v1/jobs/{job_id}/cancel")
    assert again.status_code == 409 and again.json()["code"] == "job_already_finished"


def test_unknown_job_is_problem_404(client: TestClient) -> None:
    response = client.get("/v1/jobs/doesnotexist")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "job_not_found"


def _corrupt_pdf() -> bytes:
    return b"%PDF-1.7\n" + b"\x00garbage" * 50


def _zero_page_pdf() -> bytes:
    return b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n" \
           b"trailer<</Root 1 0 R>>\n%%EOF"


BAD_INPUTS = {
    "not_a_pdf": dict(data=b"hello, I am a text file" * 10),
    "empty_file": dict(data=b""),
    "encrypted_pdf": dict(data=encrypted_pdf()),
    "corrupt_pdf": dict(data=_corrupt_pdf()),
    "no_parameters": dict(data=PDF, parameters="[]"),
    "invalid_parameters": dict(data=PDF, parameters='{"name": "x"}'),
    "empty_parameter_name": dict(data=PDF, parameters='["  "]'),
    "parameter_name_too_long": dict(data=PDF, parameters=json.dumps(["x" * 201])),
    "too_many_parameters": dict(data=PDF, parameters=json.dumps([f"p{i}" for i in range(101)])),
    "unknown_engine": dict(data=PDF, engine="telepathy"),
    "unknown_model": dict(data=PDF, model="nobody/nothing"),
}


@pytest.mark.parametrize("code", sorted(BAD_INPUTS))
def test_bad_input_has_problem_code_and_stores_nothing(client: TestClient, dsx_env, code: str) -> None:  # noqa: ANN001
    case = dict(BAD_INPUTS[code])
    data = case.pop("data")
    parameters = case.pop("parameters", ["Supply voltage"])
    response = post(client, data, parameters, **case)
    assert 400 <= response.status_code < 500, response.text
    body = response.json()
    assert body["code"] == code, body
    assert body["status"] == response.status_code
    assert response.headers["content-type"].startswith("application/problem+json")
    assert stored_rows() == (0, 0, 0)
    assert blob_files(dsx_env) == []


def test_zero_page_pdf_rejected(client: TestClient) -> None:
    response = post(client, _zero_page_pdf())
    assert response.status_code == 422
    assert response.json()["code"] in {"corrupt_pdf", "empty_pdf"}
    assert stored_rows() == (0, 0, 0)


def test_page_cap(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.config import reset_settings

    monkeypatch.setenv("DSX_MAX_PAGES", "2")
    reset_settings()
    response = post(client, text_pdf(["a", "b", "c"]))
    assert response.status_code == 422 and response.json()["code"] == "too_many_pages"
    assert stored_rows() == (0, 0, 0)


def test_size_cap_is_enforced_while_streaming(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.config import reset_settings

    monkeypatch.setenv("DSX_MAX_UPLOAD_BYTES", "1000")
    reset_settings()
    big = PDF + b"%" + b"x" * 400_000

    def body():  # noqa: ANN202 - a generator: no Content-Length, the cap must bite mid-stream
        boundary = b"--b0undary"
        yield boundary + b'\r\nContent-Disposition: form-data; name="parameters"\r\n\r\n["Gain"]\r\n'
        yield boundary + b'\r\nContent-Disposition: form-data; name="file"; filename="x.pdf"\r\n' \
                         b"Content-Type: application/pdf\r\n\r\n"
        for start in range(0, len(big), 65536):
            yield big[start:start + 65536]
        yield b"\r\n" + boundary + b"--\r\n"

    response = client.post("/v1/jobs", content=body(),
                           headers={"Content-Type": "multipart/form-data; boundary=b0undary"})
    assert response.status_code == 413
    assert response.json()["code"] == "file_too_large"
    assert stored_rows() == (0, 0, 0)


def test_missing_file_part(client: TestClient) -> None:
    response = client.post("/v1/jobs", data={"parameters": '["Gain"]'},
                           files={"other": ("x.txt", b"x", "text/plain")})
    assert response.status_code == 422 and response.json()["code"] == "missing_file"


def test_healthz_and_readyz(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"] == {"database": "ok", "broker": "ok"}


def test_database_outage_is_503_with_retry_after(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from app.config import reset_settings
    from app.db import reset_engines
    from app.main import create_app

    client = TestClient(create_app(), raise_server_exceptions=False)
    monkeypatch.setenv("DSX_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:9/none?connect_timeout=1")
    monkeypatch.setenv("DSX_ALLOW_OPEN_IN_PRODUCTION", "true")
    monkeypatch.setenv("DSX_AUTH_MODE", "open")
    reset_settings()
    reset_engines()
    response = client.get("/v1/jobs")
    assert response.status_code == 503
    assert response.json()["code"] == "database_unavailable"
    assert response.headers["Retry-After"] == "5"
    assert client.get("/readyz").status_code == 503


def test_an_unexpected_error_is_a_500_problem_without_internals(dsx_env) -> None:  # noqa: ANN001
    from app.main import create_app

    app = create_app()

    def broken() -> None:
        raise RuntimeError("secret internal state 0xdeadbeef")

    app.add_api_route("/v1/broken", broken)
    response = TestClient(app, raise_server_exceptions=False).get("/v1/broken")
    assert response.status_code == 500
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "internal_error"
    assert "0xdeadbeef" not in response.text


def test_concurrent_uploads_of_one_pdf_share_a_blob(client: TestClient, dsx_env) -> None:  # noqa: ANN001
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda _: post(client, PDF).status_code, range(8)))
    assert statuses == [202] * 8
    assert stored_rows() == (8, 8, 1)
    assert len(blob_files(dsx_env)) == 1
