"""API-side metrics: HTTP requests by route template and status class, problems by code, upload check durations.

The main scenario runs a real app in a separate process in multiprocess mode (as uvicorn runs it in production,
with PROMETHEUS_MULTIPROC_DIR set before anything is imported) and reads what its own /metrics exposes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from app import metrics
from app.api.metrics import HttpMetricsMiddleware
from app.api.problems import install_handlers
from app.config import reset_settings
from app.errors import InvalidPdf
from tests.support.paths import REPO_ROOT

RANDOM_PATHS = 100
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

API_SCRIPT = """
import json, sys, uuid
from fastapi.testclient import TestClient
from app import migrate
from app.main import create_app
from tests.support.pdfs import encrypted_pdf, text_pdf

migrate.upgrade()
parameters = {"parameters": json.dumps(["Supply voltage"])}
statuses = {}
with TestClient(create_app()) as client:
    def note(name, response):
        statuses[name] = [response.status_code, response.headers.get("content-type", "")]

    note("list", client.get("/v1/jobs"))
    note("missing_job", client.get(f"/v1/jobs/{uuid.uuid4()}"))
    note("not_a_pdf", client.post("/v1/jobs", data=parameters,
                                  files={"file": ("notes.pdf", b"just some text", "application/pdf")}))
    note("encrypted", client.post("/v1/jobs", data=parameters,
                                  files={"file": ("locked.pdf", encrypted_pdf(), "application/pdf")}))
    note("admitted", client.post("/v1/jobs", data=parameters,
                                 files={"file": ("ds.pdf", text_pdf(["Supply voltage VDD 2.7 5.5 V"]),
                                                 "application/pdf")}))
    note("static", client.get("/review/static/review.css"))
    for _ in range(int(sys.argv[1])):
        client.get(f"/{uuid.uuid4().hex}/{uuid.uuid4().hex[:8]}")
    client.get("/metrics")
    exposition = client.get("/metrics").text
print(json.dumps({"statuses": statuses, "exposition": exposition}))
"""


def parse(exposition: str) -> Samples:
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(exposition) for sample in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def label_values(samples: Samples, name: str, label: str) -> set[str]:
    return {dict(labels)[label] for sample_name, labels in samples if sample_name == name}


@pytest.fixture(scope="module")
def api_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict, Samples, Path]]:
    """The statuses the API answered and its final /metrics, from one process in multiprocess mode."""
    root = tmp_path_factory.mktemp("api-metrics")
    metrics_dir = root / "metrics"
    metrics_dir.mkdir()
    env = {key: text for key, text in os.environ.items()
           if not (key.startswith("DSX_") and key != "DSX_SHARED_DIR" and not key.startswith("DSX_TEST_"))}
    env.update({"PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "DSX_DATA_DIR": str(root / "var")})
    result = subprocess.run([sys.executable, "-c", API_SCRIPT, str(RANDOM_PATHS)], env=env, cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    output = json.loads(result.stdout.strip().splitlines()[-1])
    yield output["statuses"], parse(output["exposition"]), metrics_dir


def test_the_scenario_got_the_answers_it_is_about(api_run) -> None:  # noqa: ANN001
    statuses, _, metrics_dir = api_run
    assert statuses["list"][0] == 200
    assert statuses["missing_job"] == [404, "application/problem+json"]
    assert statuses["not_a_pdf"] == [422, "application/problem+json"]
    assert statuses["encrypted"] == [422, "application/problem+json"]
    assert statuses["admitted"][0] == 202
    assert statuses["static"][0] == 200
    # The samples came through the multiprocess files, not an in-memory registry.
    assert any(metrics_dir.glob("counter_*.db")) and any(metrics_dir.glob("histogram_*.db"))


def test_requests_are_counted_by_route_template_and_status_class(api_run) -> None:  # noqa: ANN001
    _, samples, _ = api_run
    requests = "dsx_http_requests_total"
    assert value(samples, requests, method="GET", route="/v1/jobs", status_class="2xx") == 1
    assert value(samples, requests, method="GET", route="/v1/jobs/{job_id}", status_class="4xx") == 1
    assert value(samples, requests, method="POST", route="/v1/jobs", status_class="4xx") == 2
    assert value(samples, requests, method="POST", route="/v1/jobs", status_class="2xx") == 1
    assert value(samples, requests, method="GET", route="/review/static/{path}", status_class="2xx") == 1
    assert value(samples, "dsx_http_request_duration_seconds_count", method="POST", route="/v1/jobs") == 3
    assert value(samples, "dsx_http_request_duration_seconds_sum", method="POST", route="/v1/jobs") > 0
    # Raw paths never become labels, and the scrapes of /metrics are not counted.
    routes = label_values(samples, requests, "route")
    assert not any("/v1/jobs/" in route and "{" not in route for route in routes), routes
    assert "/metrics" not in routes


def test_problems_are_counted_by_code_and_status(api_run) -> None:  # noqa: ANN001
    _, samples, _ = api_run
    assert value(samples, "dsx_api_problems_total", code="not_found", status="404") == RANDOM_PATHS
    assert value(samples, "dsx_api_problems_total", code="job_not_found", status="404") == 1
    assert value(samples, "dsx_api_problems_total", code="not_a_pdf", status="422") == 1
    assert value(samples, "dsx_api_problems_total", code="encrypted_pdf", status="422") == 1
    # The refusals an alert watches are exposed at zero before the first one happens.
    for code in metrics.UPLOAD_CHECK_FAILURE_CODES:
        assert (("dsx_api_problems_total", frozenset({("code", code), ("status", "422")})) in samples), code
        assert value(samples, "dsx_api_problems_total", code=code, status="422") == 0


def test_upload_checks_are_timed_by_outcome(api_run) -> None:  # noqa: ANN001
    _, samples, _ = api_run
    count = "dsx_upload_check_duration_seconds_count"
    assert value(samples, count, outcome="not_a_pdf") == 1
    assert value(samples, count, outcome="encrypted_pdf") == 1  # refused by MuPDF in a check child
    assert value(samples, count, outcome="admitted") == 1
    assert value(samples, "dsx_upload_check_duration_seconds_sum", outcome="admitted") > 0
    assert label_values(samples, count, "outcome") == {"not_a_pdf", "encrypted_pdf", "admitted"}


def test_random_paths_all_land_in_other(api_run) -> None:  # noqa: ANN001
    _, samples, _ = api_run
    assert value(samples, "dsx_http_requests_total", method="GET", route="other", status_class="4xx") \
        == RANDOM_PATHS
    from app.main import create_app

    templates = {getattr(route, "path_format", None) for route in create_app().routes} | {
        "/v1/jobs", "/v1/jobs/{job_id}", "/review/static/{path}"}
    for name in ("dsx_http_requests_total", "dsx_http_request_duration_seconds_count"):
        assert label_values(samples, name, "route") <= templates | {"other"}
    series = [labels for name, labels in samples if name == "dsx_http_requests_total"]
    assert len(series) < 10, series


# --- In this process: what the scenario above cannot provoke ----------------------------------------------

def current(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def failing_app() -> TestClient:
    app = FastAPI()
    install_handlers(app)
    app.add_middleware(HttpMetricsMiddleware)

    @app.get("/boom/{item}")
    def boom(item: str) -> None:
        raise RuntimeError(f"broken {item}")

    @app.get("/refuse")
    def refuse() -> None:
        raise InvalidPdf("no", code="Not An Identifier!")

    return TestClient(app, raise_server_exceptions=False)


def test_an_unhandled_exception_counts_as_a_5xx_of_its_route(failing_app: TestClient) -> None:
    labels = {"method": "GET", "route": "/boom/{item}", "status_class": "5xx"}
    before = current("dsx_http_requests_total", **labels)
    assert failing_app.get("/boom/1").status_code == 500
    assert failing_app.get("/boom/2").status_code == 500
    assert current("dsx_http_requests_total", **labels) == before + 2


def test_a_problem_code_that_is_not_an_identifier_is_counted_as_other(failing_app: TestClient) -> None:
    before = current("dsx_api_problems_total", code="other", status="422")
    response = failing_app.get("/refuse")
    assert response.status_code == 422 and response.json()["code"] == "Not An Identifier!"
    assert current("dsx_api_problems_total", code="other", status="422") == before + 1
    assert current("dsx_api_problems_total", code="Not An Identifier!", status="422") == 0


def test_an_unexpected_error_in_the_upload_check_is_timed_as_error() -> None:
    before = current("dsx_upload_check_duration_seconds_count", outcome="error")
    with pytest.raises(RuntimeError), metrics.timed_upload_check():
        raise RuntimeError("The upload check pool is closed.")
    assert current("dsx_upload_check_duration_seconds_count", outcome="error") == before + 1


def test_a_check_in_the_api_process_is_timed_by_its_refusal_code(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from app.jobs.admission import admit_pdf
    from tests.support.hostile_pdfs import corrupt_pdf

    monkeypatch.setenv("DSX_ADMISSION_SANDBOX", "false")
    reset_settings()
    before = current("dsx_upload_check_duration_seconds_count", outcome="corrupt_pdf")
    with pytest.raises(InvalidPdf) as refused:
        admit_pdf(corrupt_pdf(), max_bytes=1 << 20, max_pages=10)
    assert refused.value.code == "corrupt_pdf"
    assert current("dsx_upload_check_duration_seconds_count", outcome="corrupt_pdf") == before + 1
