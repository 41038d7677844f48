"""The SDK against a live dsx (uvicorn + Celery worker subprocesses, embedded SQLite, offline model)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from dsx_client import (
    AsyncClient,
    Client,
    Correction,
    CorrectionRequired,
    DsxConnectionError,
    ExtractionNotFound,
    IdempotencyConflict,
    InvalidPdf,
    InvalidTransition,
    Job,
    JobNotFound,
    Parameter,
    QueueItem,
    ServiceUnavailable,
    UnknownModel,
)
from sqlalchemy import func, select

from app.tables.jobs import Job as JobRow
from tests.support.live import LiveServer, free_port, live_server, seed_flagged_extraction, spec_sheet
from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.e2e

PIPELINE_TIMEOUT_S = 90.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("sdk")) as live:
        yield live


@pytest.fixture
def client(server: LiveServer) -> Iterator[Client]:
    with Client(server.base_url, timeout=20, backoff=0.05) as dsx:
        yield dsx


def discard(client: Client, *jobs: Job) -> None:
    """Cancel jobs a test does not need processed, so the one worker's queue stays short for those that do."""
    for job in jobs:
        with contextlib.suppress(InvalidTransition):
            client.cancel(job)


def jobs_named(server: LiveServer, filename: str) -> int:
    with server.session() as session:
        return int(session.scalar(select(func.count()).select_from(JobRow).where(JobRow.filename == filename)) or 0)


class DropFirstResponse(httpx.BaseTransport):
    """Sends every request to the server for real, but loses the response of the first ``method`` request whose
    path ends with ``suffix``, the way a connection reset after the server committed would: the client sees a
    network error."""

    def __init__(self, method: str = "POST", suffix: str = "/v1/jobs") -> None:
        self.inner = httpx.HTTPTransport()
        self.method, self.suffix = method, suffix
        self.matching: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method == self.method and request.url.path.endswith(self.suffix):
            self.matching.append(request)
            if len(self.matching) == 1:
                response.read()
                response.close()
                raise httpx.ReadError("connection reset by peer", request=request)
        return response

    def close(self) -> None:
        self.inner.close()


def test_submit_get_and_list(client: Client, server: LiveServer, tmp_path: Path) -> None:
    path = tmp_path / "xr1234.pdf"
    path.write_bytes(spec_sheet("list"))

    job = client.submit(path, ["Supply voltage", {"name": "Quiescent current", "unit": "uA"},
                               Parameter(name="Operating temperature", conditions=["ambient"])], engine="agentic")

    assert isinstance(job, Job)
    assert job.status in {"queued", "running", "done", "needs_review", "failed"}
    assert job.filename == "xr1234.pdf" and job.engine == "agentic" and job.model == "offline/datasheet-reader"
    assert [(p.name, p.unit, p.conditions) for p in job.parameters] == [
        ("Supply voltage", None, []), ("Quiescent current", "uA", []), ("Operating temperature", None, ["ambient"])]
    assert client.get(job).job_id == job.job_id == client.get(job.job_id).id
    listed = client.list_jobs(limit=500)
    assert job.job_id in {j.job_id for j in listed.items}
    assert listed.total >= 1 and listed.limit == 500
    assert jobs_named(server, "xr1234.pdf") == 1
    cancelled = client.cancel(job)
    assert (cancelled.job_id, cancelled.status) == (job.job_id, "cancelled")
    assert client.get(job).status == "cancelled"


def test_upload_from_bytes_and_from_a_file_object(client: Client, tmp_path: Path) -> None:
    data = spec_sheet("sources")
    from_bytes = client.submit(data, "Supply voltage", filename="from-bytes.pdf")
    path = tmp_path / "from-file.pdf"
    path.write_bytes(data)
    with path.open("rb") as handle:
        from_file = client.submit(handle, ["Supply voltage"])
    assert from_bytes.filename == "from-bytes.pdf" and from_file.filename == "from-file.pdf"
    assert from_bytes.document_sha256 == from_file.document_sha256
    discard(client, from_bytes, from_file)
    with pytest.raises(TypeError):
        client.submit(io.StringIO("not bytes"), ["x"])  # type: ignore[arg-type]


def test_a_submit_whose_response_is_lost_is_retried_without_creating_a_second_job(server: LiveServer) -> None:
    transport = DropFirstResponse("POST", "/v1/jobs")
    name = f"lost-response-{uuid.uuid4().hex[:8]}.pdf"
    with Client(server.base_url, transport=transport, backoff=0.05) as dsx:
        job = dsx.submit(spec_sheet(name), ["Supply voltage"], filename=name)
        discard(dsx, job)

    assert len(transport.matching) == 2  # the first reached the server and stored the job; its answer was lost
    keys = {r.headers["Idempotency-Key"] for r in transport.matching}
    assert len(keys) == 1 and next(iter(keys))
    assert jobs_named(server, name) == 1
    with server.session() as session:
        stored = session.scalar(select(JobRow).where(JobRow.filename == name))
        assert stored is not None and stored.id == job.job_id


def test_a_decision_whose_response_is_lost_is_stored_once(server: LiveServer) -> None:
    with server.session() as session:
        extraction = seed_flagged_extraction(session, parameter="Output current")
        extraction_id, job_id = extraction.id, extraction.job_id
    transport = DropFirstResponse("POST", "/decision")
    with Client(server.base_url, transport=transport, backoff=0.05) as dsx:
        stored = dsx.decide(extraction_id, "reject", comment="other variant", reviewer="ada")
        audit = dsx.reviews(job=job_id)
    assert len(transport.matching) == 2
    assert [d.id for d in audit.items] == [stored.id]


def test_a_given_idempotency_key_replays_and_conflicts_on_another_body(client: Client, server: LiveServer) -> None:
    key = uuid.uuid4().hex
    name = f"keyed-{key[:8]}.pdf"
    pdf = spec_sheet(key)
    first = client.submit(pdf, ["Supply voltage"], idempotency_key=key, filename=name)
    again = client.submit(pdf, ["Supply voltage"], idempotency_key=key, filename=name)
    assert again.job_id == first.job_id
    discard(client, first)
    assert jobs_named(server, name) == 1
    with pytest.raises(IdempotencyConflict) as caught:
        client.submit(pdf, ["Quiescent current"], idempotency_key=key, filename=name)
    assert caught.value.status == 409 and caught.value.code == "idempotency_conflict"


def test_problem_details_become_typed_errors(client: Client) -> None:
    with pytest.raises(JobNotFound) as missing:
        client.get("0" * 32)
    assert (missing.value.status, missing.value.code) == (404, "job_not_found")
    with pytest.raises(InvalidPdf) as not_pdf:
        client.submit(b"hello, not a pdf", ["Supply voltage"])
    assert (not_pdf.value.status, not_pdf.value.code) == (422, "not_a_pdf")
    with pytest.raises(UnknownModel):
        client.submit(spec_sheet("model"), ["Supply voltage"], model="no-such-model")
    with pytest.raises(ExtractionNotFound):
        client.decide(987_654, "approve")


class FailingFirst(httpx.BaseTransport):
    """Answers the first ``failures`` requests with a 503 problem detail, then forwards to the server."""

    def __init__(self, failures: int) -> None:
        self.inner = httpx.HTTPTransport()
        self.failures = failures
        self.seen = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen += 1
        if self.seen <= self.failures:
            return httpx.Response(503, headers={"Retry-After": "0", "Content-Type": "application/problem+json"},
                                  json={"status": 503, "code": "broker_unavailable", "detail": "queue down",
                                        "title": "A backing service is unavailable"})
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_5xx_answers_are_retried_then_surface_as_typed_errors(server: LiveServer) -> None:
    transport = FailingFirst(failures=2)
    with Client(server.base_url, transport=transport, retries=3, backoff=0.01) as dsx:
        assert dsx.list_jobs(limit=1).limit == 1
    assert transport.seen == 3

    always = FailingFirst(failures=100)
    with Client(server.base_url, transport=always, retries=2, backoff=0.01) as dsx, \
            pytest.raises(ServiceUnavailable) as caught:
        dsx.list_jobs()
    assert always.seen == 3
    assert (caught.value.code, caught.value.detail) == ("broker_unavailable", "queue down")


def test_an_unreachable_server_raises_a_connection_error_after_retries() -> None:
    with Client(f"http://127.0.0.1:{free_port()}", retries=2, backoff=0.01) as dsx, \
            pytest.raises(DsxConnectionError):
        dsx.list_jobs()


def test_review_queue_and_decisions(client: Client, server: LiveServer) -> None:
    with server.session() as session:
        flagged = seed_flagged_extraction(session, parameter="Supply voltage",
                                          flags=[("tool_bypass", "warning"), ("quote_not_found", "error")])
        job_id = flagged.job_id
        job_row = session.get(JobRow, job_id)
        second = seed_flagged_extraction(session, job=job_row, parameter="Quiescent current",
                                         flags=[("verification_skipped", "warning")])
        third = seed_flagged_extraction(session, job=job_row, parameter="Gain", flags=[("tool_bypass", "error")])
        ids = (flagged.id, second.id, third.id)

    page = client.queue(job=job_id)
    assert [i.extraction_id for i in page.items] == list(ids)
    assert all(isinstance(i, QueueItem) for i in page.items)
    assert page.counts_by_rule == {"tool_bypass": 2, "quote_not_found": 1, "verification_skipped": 1}
    first = page.items[0]
    assert [f.rule for f in first.flags] == ["quote_not_found", "tool_bypass"]
    assert (first.values[0].min, first.values[0].max, first.values[0].unit) == (2.7, 5.5, "V")
    assert client.queue(job=job_id, rule="verification_skipped").total == 1

    approved = client.decide(first, "approve", comment="matches p.3", reviewer="ada")
    assert (approved.decision, approved.reviewer, approved.extraction_id) == ("approve", "ada", first.extraction_id)
    with pytest.raises(CorrectionRequired) as caught:
        client.decide(second.id, "correct")
    assert caught.value.code == "correction_required"
    corrected = client.decide(page.items[1], "correct", correction=Correction.model_validate(
        {"values": [{"typical": 150, "unit": "uA", "conditions": ["VDD = 5 V"]}], "source_page": 3,
         "quote": "Quiescent current IQ 120 150 uA"}))
    assert corrected.correction is not None and corrected.correction.values[0].typical == 150
    rejected = client.decide(third.id, "reject", comment="not in this datasheet")

    assert client.queue(job=job_id).total == 0
    assert client.queue(job=job_id, status="decided").total == 3
    assert client.item(first).decision.decision == "approve"
    audit = client.reviews(job=job_id)
    assert [d.id for d in audit.items] == [rejected.id, corrected.id, approved.id]

    job = client.get(job_id)
    assert job.status == "reviewed"  # every flagged answer has a decision
    assert job.is_terminal
    assert [r.review.decision for r in job.results] == ["approve", "correct", "reject"]

    claims = yaml.safe_load(client.corrections_yaml(job=job_id))["claims"]
    assert [(c["parameter"], c["kind"], c["typical"], c["unit"], c["page"]) for c in claims] == [
        ("Quiescent current", "typical", 150, "uA", 3)]


def test_wait_reports_progress_and_returns_the_finished_job(client: Client) -> None:
    job = client.submit(spec_sheet("wait"), ["Supply voltage", "Quiescent current", "Operating temperature"])
    snapshots: list[Job] = []

    finished = client.wait(job, PIPELINE_TIMEOUT_S, poll_interval=0.2, max_poll_interval=1.0,
                           on_progress=snapshots.append)

    assert finished.is_terminal and finished.job_id == job.job_id
    assert snapshots[-1] is finished
    done_counts = [s.progress[0] for s in snapshots]
    assert done_counts == sorted(done_counts) and done_counts[-1] == 3
    assert finished.status in {"done", "needs_review"}, (finished.failure_code, finished.failure_detail)
    assert all(r.status == "done" for r in finished.results)


@pytest.fixture(scope="module")
def extracted(server: LiveServer) -> Job:
    """One job processed by the real pipeline, shared by the tests that only read its outcome."""
    with Client(server.base_url) as dsx:
        return dsx.submit(spec_sheet("extracted"), ["Supply voltage", "Quiescent current"])


def test_result_gives_the_extracted_values(client: Client, extracted: Job) -> None:
    results = client.result(extracted, PIPELINE_TIMEOUT_S)

    by_name = {r.parameter: r for r in results}
    voltage = by_name["Supply voltage"]
    assert voltage.found, voltage.reason
    assert any((v.min, v.max) == (2.7, 5.5) for v in voltage.values), voltage.values
    assert voltage.source_page == 1 and voltage.extraction_id is not None
    current = by_name["Quiescent current"]
    assert current.found and any((v.typical, v.max) == (150, 220) for v in current.values), current.values


def test_trace_returns_the_dispatch_record_as_a_tree(client: Client, extracted: Job) -> None:
    job = client.wait(extracted, PIPELINE_TIMEOUT_S)

    record = client.trace(job, payload=False)

    assert record.job_id == job.job_id and record.span_count == len(record.spans()) > 0
    roots = [r for r in record.roots if r.name == "invoke_agent"]
    assert len(roots) >= 2  # one agent run per parameter (and role)
    assert all(span.payload in (None, {}) for span in record.spans())
    names = [span.name for span in roots[0].walk()]
    assert any(name.startswith("chat ") for name in names)
    assert any(name.startswith("execute_tool ") for name in names)
    with_payload = client.trace(job)
    assert any(span.payload for span in with_payload.spans())


def test_async_client_submits_retries_and_waits(server: LiveServer) -> None:
    class DropFirstAsync(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport()
            self.submits = 0

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await self.inner.handle_async_request(request)
            if request.method == "POST" and request.url.path == "/v1/jobs":
                self.submits += 1
                if self.submits == 1:
                    await response.aread()
                    await response.aclose()
                    raise httpx.RemoteProtocolError("server disconnected", request=request)
            return response

    name = f"async-{uuid.uuid4().hex[:8]}.pdf"
    transport = DropFirstAsync()
    seen: list[str] = []

    async def scenario() -> Job:
        async with AsyncClient(server.base_url, transport=transport, backoff=0.05) as dsx:
            job = await dsx.submit(spec_sheet(name), ["Supply voltage"], filename=name)
            assert (await dsx.get(job)).job_id == job.job_id
            assert job.job_id in {j.job_id for j in (await dsx.list_jobs(limit=500)).items}

            async def note(snapshot: Job) -> None:
                seen.append(snapshot.status)

            return await dsx.wait(job, PIPELINE_TIMEOUT_S, poll_interval=0.2, on_progress=note)

    finished = asyncio.run(scenario())
    assert transport.submits == 2 and jobs_named(server, name) == 1
    assert finished.is_terminal and seen[-1] == finished.status
    assert finished.status in {"done", "needs_review"}, (finished.failure_code, finished.failure_detail)


def test_async_review_calls(server: LiveServer) -> None:
    with server.session() as session:
        extraction_id = seed_flagged_extraction(session, parameter="Output current").id

    async def scenario() -> None:
        async with AsyncClient(server.base_url) as dsx:
            item = await dsx.item(extraction_id)
            assert item.parameter == "Output current" and item.decision is None
            stored = await dsx.decide(item, "reject", reviewer="bo")
            assert (stored.decision, stored.reviewer) == ("reject", "bo")
            assert (await dsx.queue(status="decided", job=item.job_id)).items[0].decision.id == stored.id

    asyncio.run(scenario())


@pytest.mark.slow
def test_a_real_datasheet_end_to_end(client: Client, datasheets_dir: Path) -> None:
    pdf = datasheets_dir / "speaker_amplifier.pdf"
    job = client.wait(client.submit(pdf, ["Supply voltage", "Quiescent current"]), 300)
    assert job.status in {"done", "needs_review"}, (job.failure_code, job.failure_detail)
    assert all(r.extraction_id is not None for r in job.results)
    assert client.trace(job, payload=False).span_count > 0


def test_the_readme_example_runs(server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).resolve().parents[2] / "sdk" / "README.md").read_text()
    example = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert len([line for line in example.splitlines() if line.strip()]) <= 12  # "a dozen lines"
    monkeypatch.chdir(REPO_ROOT)  # the example reads examples/sample-datasheet.pdf, as a reader at the root would
    monkeypatch.setenv("DSX_SERVER", server.base_url)
    with server.session() as session:
        seed_flagged_extraction(session, parameter="Readme item")

    exec(compile(example.replace("timeout=600", f"timeout={PIPELINE_TIMEOUT_S}"),  # noqa: S102 - our own README
                 "README.md", "exec"), {})

    out = capsys.readouterr().out
    assert "Dropout voltage" in out and "not reported:" in out and "calls recorded" in out
    assert "queued" in out or "running" in out or "done" in out
