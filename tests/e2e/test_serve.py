"""The README's first command on the embedded default: `dsx serve` brings up API + worker, and a datasheet
posted over HTTP reaches a terminal state with stored results."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.support.live import free_port
from tests.support.paths import datasheet
from tests.support.processes import dsx_process, wait_until, worker_env

pytestmark = pytest.mark.e2e

TERMINAL = {"done", "needs_review", "failed", "cancelled"}


def _ready(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_dsx_serve_processes_a_posted_datasheet(tmp_path: Path) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = worker_env(tmp_path / "var")
    log = tmp_path / "serve.log"
    with dsx_process(["serve", "--port", str(port)], env, log):
        wait_until(lambda: _ready(base_url), timeout_s=90, what="dsx serve to be ready")
        pdf = datasheet("speaker_amplifier")
        response = httpx.post(
            f"{base_url}/v1/jobs",
            files={"file": (pdf.name, pdf.read_bytes(), "application/pdf")},
            data={"parameters": json.dumps(["Operating supply voltage", "Voltage gain"])},
            timeout=30,
        )
        assert response.status_code == 202, response.text
        location = response.headers["Location"]
        job = wait_until(
            lambda: (j := httpx.get(base_url + location, timeout=10).json())["status"] in TERMINAL and j,
            timeout_s=180, what="the job to finish",
        )
        trace = httpx.get(f"{base_url}{location}/trace", timeout=10)
    assert job["status"] in {"done", "needs_review"}, (job, log.read_text()[-3000:])
    results = {r["parameter"]: r for r in job["results"]}
    supply = results["Operating supply voltage"]
    assert supply["found"] and supply["source_page"] == 3
    assert (supply["values"][0]["min"], supply["values"][0]["max"]) == (4, 12)
    assert supply["grounding"][0]["outcome"] == "grounded" and supply["grounding"][0]["page"] == 3
    assert supply["grounding"][0]["boxes"], "the located quote has boxes for highlighting"
    assert supply["attributions"] and {a["category"] for a in supply["attributions"]} <= {
        "ok", "tool_output_error", "tool_selection", "condition_omission", "verification_skipped", "engine_error",
        "unclassified"}
    assert job["attribution_summary"]["job"]
    gain = results["Voltage gain"]
    assert gain["found"] and any(v.get("typical") == 26 for v in gain["values"])
    assert trace.status_code == 200
    # the data stayed under the data dir: database, broker and the content-addressed PDF
    assert (tmp_path / "var" / "dsx.db").exists() and list((tmp_path / "var" / "blobs").rglob("*.pdf"))
