"""The jobs API: admission, idempotency, listing, cancel, and every bad-input problem code."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from tests.support.jobs_api import post, stored_blobs, stored_rows
from tests.support.pdfs import encrypted_pdf, text_pdf

PDF = text_pdf(["Supply voltage VDD 2.7 5.5 V"])


@pytest.fixture
def client(dsx_backend: str) -> TestClient:
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
    assert len(stored_blobs()) == 1

    fetched = client.get(body and f"/v1/jobs/{body['job_id']}").json()
    assert fetched["job_id"] == body["job_id"]
    listing = client.get("/v1/jobs", params={"status": "queued"}).json()
    assert listing["total"] == 1 and listing["items"][0]["job_id"] == body["job_id"]
    assert client.get("/v1/jobs", params={"status": "done"}).json()["total"] == 0


def test_identical_pdfs_share_one_blob(client: TestClient, dsx_env) -> None:  # noqa: ANN001
    assert post(client, PDF).status_code == 202
    assert post(client, PDF, ["Gain"]).status_code == 202
    assert stored_rows() == (2, 2, 1)
    assert len(stored_blobs()) == 1


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
    "invalid_characters": dict(data=PDF, parameters=json.dumps([{"name": "Gain", "unit": "dB\u0000"}])),
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
    assert stored_blobs() == []


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
    assert len(stored_blobs()) == 1


# Each case: the field the problem must name, and the request that carries a control character in it.
HOSTILE_TEXT = {
    "nul-in-name": ("parameters[0].name", dict(parameters=json.dumps(["Supply\u0000voltage"]))),
    "raw-nul-in-json": ("parameters[1].name", dict(parameters='["Gain", "Supply\x00voltage"]')),
    "nul-in-unit": ("parameters[0].unit", dict(parameters=json.dumps([{"name": "Supply voltage", "unit": "V\0"}]))),
    "nul-in-condition": ("parameters[0].conditions[1]", dict(parameters=json.dumps(
        [{"name": "Supply voltage", "conditions": ["TA = 25 C", "VDD\u0000= 5 V"]}]))),
    "bell-in-notes": ("parameters[0].notes", dict(parameters=json.dumps([{"name": "Vdd", "notes": "min\u0007max"}]))),
    "line-break-in-name": ("parameters[0].name", dict(parameters=json.dumps(["Supply\nvoltage"]))),
    "nul-in-plain-name": ("parameters[0].name", dict(parameters="Supply\x00voltage")),
    "lone-surrogate": ("parameters[0].name", dict(parameters=json.dumps(["Supply \ud800 voltage"]))),
    "escape-in-model": ("model", dict(model="offline/datasheet-reader\x1b")),
    "del-in-idempotency-key": ("header.idempotency-key", dict(headers={"Idempotency-Key": "key\x7f1"})),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TEXT))
def test_control_characters_are_rejected_naming_the_field(client: TestClient, dsx_env, case: str) -> None:  # noqa: ANN001
    field, request = HOSTILE_TEXT[case]
    response = post(client, PDF, **request)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "invalid_characters", body
    assert body["field"] == field
    assert response.headers["content-type"].startswith("application/problem+json")
    assert stored_rows() == (0, 0, 0)
    assert stored_blobs() == []


def test_a_control_character_in_the_filename_is_rejected(client: TestClient) -> None:
    # Written by hand: HTTP clients percent-encode such a filename, a hostile one sends the raw byte.
    body = (b'--b0undary\r\nContent-Disposition: form-data; name="parameters"\r\n\r\n["Gain"]\r\n'
            b'--b0undary\r\nContent-Disposition: form-data; name="file"; filename="ds\x01.pdf"\r\n'
            b"Content-Type: application/pdf\r\n\r\n" + PDF + b"\r\n--b0undary--\r\n")
    response = client.post("/v1/jobs", content=body, headers={"Content-Type": "multipart/form-data; boundary=b0undary"})
    assert response.status_code == 422, response.text
    assert (response.json()["code"], response.json()["field"]) == ("invalid_characters", "filename")
    assert stored_rows() == (0, 0, 0)


def test_free_text_notes_keep_line_breaks_and_tabs(client: TestClient) -> None:
    notes = "Measured at the pin.\n\tSee figure 7."
    response = post(client, PDF, [{"name": "Supply voltage", "notes": notes}])
    assert response.status_code == 202, response.text
    assert response.json()["parameters"][0]["notes"] == notes


@pytest.mark.parametrize("path", ["/v1/jobs/a%00b", "/v1/jobs/a%0Ab/trace", "/v1/jobs/%01/cancel"])
def test_control_characters_in_a_path_id_are_422(client: TestClient, path: str) -> None:
    response = client.request("POST" if path.endswith("cancel") else "GET", path)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_characters"
    assert response.json()["field"] == "path.job_id"


def test_control_characters_in_a_query_value_are_422(client: TestClient) -> None:
    response = client.get("/v1/jobs", params={"status": "queued\x00"})
    assert response.status_code == 422, response.text
    assert (response.json()["code"], response.json()["field"]) == ("invalid_characters", "query.status")


@pytest.mark.parametrize("params", [{"offset": str(2**63)}, {"offset": "-1"}, {"limit": str(2**63)},
                                    {"limit": "0"}, {"offset": "1e3"}])
def test_paging_numbers_are_bounded_before_the_database(client: TestClient, params: dict[str, str]) -> None:
    response = client.get("/v1/jobs", params=params)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_input"


def test_largest_allowed_offset_is_an_empty_page(client: TestClient) -> None:
    from app.input_policy import MAX_OFFSET

    assert post(client, PDF).status_code == 202
    page = client.get("/v1/jobs", params={"offset": MAX_OFFSET})
    assert page.status_code == 200, page.text
    assert page.json()["items"] == [] and page.json()["total"] == 1


@pytest.mark.parametrize("raw", ['["Supply voltage",', '[{"name": "Gain"', '{"name": ', "[Gain]"])
def test_parameters_that_start_like_json_must_parse(client: TestClient, raw: str) -> None:
    response = post(client, PDF, raw)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "invalid_parameters"
    with pytest.raises(json.JSONDecodeError) as parse_error:
        json.loads(raw)
    assert body["position"] == parse_error.value.pos
    assert f"character {parse_error.value.pos}" in body["detail"]
    assert stored_rows() == (0, 0, 0)


def test_a_plain_string_is_one_parameter_name(client: TestClient) -> None:
    response = post(client, PDF, "Supply voltage; at 25 C")
    assert response.status_code == 202, response.text
    assert [p["name"] for p in response.json()["parameters"]] == ["Supply voltage; at 25 C"]
