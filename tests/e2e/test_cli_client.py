"""The client-side `dsx` commands against a live dsx (uvicorn + Celery worker subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from app.cli import cli
from app.dispatch.models import SpanRecord
from app.tables.jobs import Job as JobRow
from tests.support.live import LiveServer, free_port, live_server, seed_flagged_extraction, spec_sheet
from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.e2e

PIPELINE_TIMEOUT_S = 90


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("cli")) as live:
        yield live


@pytest.fixture
def dsx(server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - an invoker
    """Run `dsx ARGS` in-process against the live server, isolated from the developer's settings."""
    from dsx_client import cli as client_cli

    runner = CliRunner()
    # Rich sizes tables from the terminal it first saw; pin a wide one so assertions see whole cells.
    for console in (client_cli.console, client_cli.err_console):
        monkeypatch.setattr(console, "_width", 220)
        monkeypatch.setattr(console, "_height", 50)

    def invoke(*args: str, env: dict[str, str | None] | None = None, server_option: bool = True) -> Result:
        base: dict[str, str | None] = {"DSX_SERVER": None, "DSX_API_KEY": None, "COLUMNS": "220",
                                       "DSX_CLIENT_CONFIG": str(tmp_path / "absent.toml")}
        base.update(env or {})
        argv = [*args, "--server", server.base_url] if server_option else list(args)
        return runner.invoke(cli, argv, env=base)

    return invoke


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    path = tmp_path / "xr1234.pdf"
    path.write_bytes(spec_sheet(tmp_path.name))
    return path


def as_json(result: Result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_submit_without_waiting_then_jobs_and_result(dsx, pdf: Path) -> None:  # noqa: ANN001
    submitted = as_json(dsx("submit", str(pdf), "-p", "Supply voltage", "-p",
                            '{"name": "Quiescent current", "unit": "uA"}', "--engine", "agentic", "--no-wait",
                            "--json"))
    assert submitted["filename"] == "xr1234.pdf" and submitted["engine"] == "agentic"
    assert [p["name"] for p in submitted["parameters"]] == ["Supply voltage", "Quiescent current"]
    assert submitted["parameters"][1]["unit"] == "uA"

    listed = as_json(dsx("jobs", "--json", "--limit", "500"))
    assert submitted["job_id"] in {job["job_id"] for job in listed["items"]}
    fetched = as_json(dsx("result", submitted["job_id"], "--json"))
    assert fetched["job_id"] == submitted["job_id"]

    table = dsx("jobs")
    assert table.exit_code == 0 and submitted["job_id"] in table.stdout and "xr1234.pdf" in table.stdout


def test_submit_rejects_what_the_server_rejects(dsx, tmp_path: Path) -> None:  # noqa: ANN001
    not_pdf = tmp_path / "notes.pdf"
    not_pdf.write_text("just text")
    result = dsx("submit", str(not_pdf), "-p", "Supply voltage")
    assert result.exit_code == 1
    assert "not_a_pdf" in result.stderr and "HTTP 422" in result.stderr
    missing = dsx("submit", str(tmp_path / "nope.pdf"), "-p", "x")
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    bad_json = dsx("submit", str(not_pdf), "-p", "{not json")
    assert bad_json.exit_code == 2 and "JSON" in bad_json.stderr


def test_submit_waits_with_progress_and_prints_the_results(dsx, pdf: Path) -> None:  # noqa: ANN001
    result = dsx("submit", str(pdf), "-p", "Supply voltage", "-p", "Quiescent current", "--timeout",
                 str(PIPELINE_TIMEOUT_S))
    assert result.exit_code == 0, result.output
    assert "Supply voltage" in result.stdout and "Quiescent current" in result.stdout
    assert "min 2.7" in result.stdout and "max 5.5" in result.stdout and "typ 150" in result.stdout

    data = as_json(dsx("submit", str(pdf), "-p", "Supply voltage", "--json", "--timeout", str(PIPELINE_TIMEOUT_S)))
    assert data["status"] in {"done", "needs_review"}
    assert data["results"][0]["found"] is True


def test_server_and_key_come_from_option_environment_or_config_file(dsx, server: LiveServer,
                                                                     tmp_path: Path) -> None:  # noqa: ANN001
    dead = f"http://127.0.0.1:{free_port()}"
    assert dsx("jobs", "--json", env={"DSX_SERVER": server.base_url}, server_option=False).exit_code == 0
    # The option wins over the environment.
    assert dsx("jobs", "--json", env={"DSX_SERVER": dead}).exit_code == 0

    config = tmp_path / "config.toml"
    config.write_text(f'server = "{server.base_url}"\napi_key = "from-file"\n')
    assert dsx("jobs", "--json", env={"DSX_CLIENT_CONFIG": str(config)}, server_option=False).exit_code == 0
    # The environment wins over the file.
    unreachable = dsx("jobs", env={"DSX_CLIENT_CONFIG": str(config), "DSX_SERVER": dead}, server_option=False)
    assert unreachable.exit_code == 1 and "cannot reach the dsx server" in unreachable.stderr
    assert dead in unreachable.stderr

    config.write_text("server = [unclosed")
    broken = dsx("jobs", env={"DSX_CLIENT_CONFIG": str(config)}, server_option=False)
    assert broken.exit_code == 1 and "not valid TOML" in broken.stderr


def test_api_errors_are_reported_in_one_line(dsx) -> None:  # noqa: ANN001
    result = dsx("result", "0" * 32)
    assert result.exit_code == 1
    assert "job_not_found" in result.stderr and "HTTP 404" in result.stderr
    assert "Traceback" not in result.output


def test_result_table_shows_values_flags_and_decisions(dsx, server: LiveServer) -> None:  # noqa: ANN001
    with server.session() as session:
        extraction = seed_flagged_extraction(session, parameter="Supply voltage",
                                             flags=[("quote_not_found", "error")], filename="lm-ish.pdf")
        job_id, extraction_id = extraction.job_id, extraction.id
    assert dsx("review", "approve", str(extraction_id), "--reviewer", "ada").exit_code == 0

    result = dsx("result", job_id)

    # Its one flag is decided, so the job reports reviewed and ends like a clean one: scripts can tell it apart
    # from needs_review (exit 3).
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"job {job_id}: reviewed" in out and "lm-ish.pdf" in out
    assert "Supply voltage" in out and "min 2.7 / max 5.5" in out
    assert "quote_not_found raised on Supply voltage" in out  # the flag's sentence under the table
    assert "approve (ada)" in out


def test_review_from_the_terminal(dsx, server: LiveServer, tmp_path: Path) -> None:  # noqa: ANN001
    with server.session() as session:
        first = seed_flagged_extraction(session, parameter="Supply voltage",
                                        flags=[("tool_bypass", "warning")], quote="VDD 2.7 to 5.5 V")
        job = session.get(JobRow, first.job_id)
        second = seed_flagged_extraction(session, job=job, parameter="Quiescent current",
                                         flags=[("verification_skipped", "warning")])
        third = seed_flagged_extraction(session, job=job, parameter="Gain", flags=[("tool_bypass", "error")])
        job_id, ids = job.id, (first.id, second.id, third.id)

    listed = as_json(dsx("review", "--job", job_id, "--json"))
    assert [i["extraction_id"] for i in listed["items"]] == list(ids)
    assert listed["counts_by_rule"] == {"tool_bypass": 2, "verification_skipped": 1}
    table = dsx("review", "--job", job_id)
    assert table.exit_code == 0 and "review queue (open): 3 of 3" in table.stdout
    assert "tool_bypass 2" in table.stdout
    newest = as_json(dsx("review", "--job", job_id, "--newest", "--since", "1h", "--json"))
    assert [i["extraction_id"] for i in newest["items"]] == list(reversed(ids))
    assert as_json(dsx("review", "--job", job_id, "--since", "2999-01-01T00:00", "--json"))["total"] == 0
    bad_since = dsx("review", "--since", "last tuesday")
    assert bad_since.exit_code == 2 and "neither an age like 24h" in bad_since.output

    shown = dsx("review", "show", str(ids[0]))
    assert shown.exit_code == 0
    assert "VDD 2.7 to 5.5 V" in shown.stdout and "tool_bypass raised on Supply voltage" in shown.stdout
    assert "00000000000000aa" in shown.stdout  # the evidence span ids

    approved = as_json(dsx("review", "approve", str(ids[0]), "-m", "checked", "--reviewer", "ada", "--json"))
    assert (approved["decision"], approved["reviewer"], approved["comment"]) == ("approve", "ada", "checked")

    no_values = dsx("review", "correct", str(ids[1]))
    assert no_values.exit_code == 2 and "--typical" in no_values.stderr
    corrected = as_json(dsx("review", "correct", str(ids[1]), "--typical", "150", "--unit", "µA",
                            "--condition", "VDD = 5 V", "--page", "2", "--quote", "IQ 150 µA", "--json"))
    assert corrected["correction"]["values"] == [
        {"min": None, "typical": 150.0, "max": None, "unit": "µA", "conditions": ["VDD = 5 V"]}]
    assert corrected["correction"]["source_page"] == 2

    rejected = dsx("review", "reject", str(ids[2]), "-m", "wrong part")
    assert rejected.exit_code == 0 and f"rejected item {ids[2]}" in rejected.stdout

    assert as_json(dsx("review", "--job", job_id, "--json"))["total"] == 0
    assert as_json(dsx("review", "--job", job_id, "--status", "decided", "--json"))["total"] == 3
    history = as_json(dsx("review", "history", "--job", job_id, "--json"))
    assert [d["decision"] for d in history["items"]] == ["reject", "correct", "approve"]

    out = tmp_path / "claims.yaml"
    assert dsx("review", "corrections", "--job", job_id, "-o", str(out)).exit_code == 0
    claims = yaml.safe_load(out.read_text())["claims"]
    assert [(c["parameter"], c["typical"], c["unit"], c["needles"]) for c in claims] == [
        ("Quiescent current", 150.0, "uA", ["150"])]
    assert as_json(dsx("review", "corrections", "--job", job_id, "--json"))["claims"] == claims


def _span(job_id: str, span_id: str, name: str, parent: str | None, start: int, parameter_id: int | None = None,
          **extra: object) -> SpanRecord:
    return SpanRecord(trace_id="ab" * 16, span_id=span_id, parent_span_id=parent, name=name, kind="INTERNAL",
                      start_ns=start, end_ns=start + 2_000_000, duration_ms=2.0, job_id=job_id,
                      parameter_id=parameter_id,
                      status_code=str(extra.pop("status_code", "OK")), status_message=extra.pop("status_message", None),
                      attributes=dict(extra.pop("attributes", {})), payload={"input": {"q": "VDD"}, "output": "x" * 50})


def test_trace_shows_the_dispatch_record_as_a_tree(dsx, server: LiveServer) -> None:  # noqa: ANN001
    with server.session() as session:
        seeded = seed_flagged_extraction(session)
        job_id = seeded.job_id
        now = time.time_ns()
        session.add_all([
            _span(job_id, "1" * 16, "invoke_agent", None, now, parameter_id=seeded.parameter_id,
                  attributes={"gen_ai.operation.name": "invoke_agent", "dsx.role": "primary",
                              "dsx.engine": "agentic", "dsx.outcome": "submitted"}),
            _span(job_id, "2" * 16, "chat offline/datasheet-reader", "1" * 16, now + 1,
                  attributes={"gen_ai.operation.name": "chat", "dsx.llm.outcome": "tool_call",
                              "gen_ai.usage.input_tokens": 812, "gen_ai.usage.output_tokens": 40,
                              "dsx.llm.cost_usd": 0.0125}),
            _span(job_id, "3" * 16, "execute_tool search_text", "1" * 16, now + 2,
                  attributes={"gen_ai.operation.name": "execute_tool", "dsx.tool.outcome": "ok"}),
            _span(job_id, "4" * 16, "execute_tool get_section_text", "1" * 16, now + 3, status_code="ERROR",
                  status_message="no such section",
                  attributes={"gen_ai.operation.name": "execute_tool", "dsx.tool.outcome": "error",
                              "dsx.tool.error_code": "section_not_found"}),
        ])

    tree = dsx("trace", job_id)
    assert tree.exit_code == 0, tree.output
    lines = tree.stdout.splitlines()
    assert f"job {job_id}: 4 spans in 1 traces" in lines[0]
    agent = next(i for i, line in enumerate(lines) if "invoke_agent" in line)
    assert "outcome=submitted" in lines[agent] and "role=primary" in lines[agent]
    children = lines[agent + 1:agent + 4]
    assert [("chat" in c, "search_text" in c, "get_section_text" in c) for c in children] == [
        (True, False, False), (False, True, False), (False, False, True)]
    depth = lines[agent].index("invoke_agent")
    assert all(c.index(name) > depth for c, name in zip(children, ("chat", "execute_tool", "execute_tool"),
                                                          strict=True))  # drawn one level deeper
    assert "input_tokens=812" in children[0]
    assert "error_code=section_not_found" in children[2] and "no such section" in children[2]

    record = as_json(dsx("trace", job_id, "--json"))
    assert record["span_count"] == 4
    assert [c["name"] for c in record["roots"][0]["children"]] == [
        "chat offline/datasheet-reader", "execute_tool search_text", "execute_tool get_section_text"]
    assert record["roots"][0].get("payload") in (None, {})  # left out unless asked for
    full = as_json(dsx("trace", job_id, "--json", "--payload"))
    assert full["roots"][0]["children"][0]["payload"]["input"] == {"q": "VDD"}


def test_trace_labels_each_tree_with_its_parameter_and_totals(dsx, server: LiveServer) -> None:  # noqa: ANN001
    with server.session() as session:
        first = seed_flagged_extraction(session, parameter="Supply voltage")
        job = session.get(JobRow, first.job_id)
        second = seed_flagged_extraction(session, parameter="Quiescent current", job=job)
        now = time.time_ns()
        for offset, extraction in enumerate((first, second)):
            root = f"{offset + 5:x}" * 16
            session.add_all([
                _span(job.id, root, "invoke_agent", None, now + 10 * offset, parameter_id=extraction.parameter_id,
                      attributes={"gen_ai.operation.name": "invoke_agent"}),
                _span(job.id, f"{offset + 7:x}" * 16, "chat offline/datasheet-reader", root, now + 10 * offset + 1,
                      parameter_id=extraction.parameter_id,
                      attributes={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 100 * (offset + 1),
                                  "gen_ai.usage.output_tokens": 7, "dsx.llm.cost_usd": 0.5}),
            ])

    tree = dsx("trace", job.id)
    assert tree.exit_code == 0, tree.output
    headings = [line for line in tree.stdout.splitlines() if "LLM calls" in line]
    assert len(headings) == 2
    assert "Supply voltage" in headings[0] and "100 in / 7 out tokens" in headings[0] and "$0.5000" in headings[0]
    assert "Quiescent current" in headings[1] and "200 in / 7 out tokens" in headings[1]

    only = as_json(dsx("trace", job.id, "--json", "--parameter", "quiescent current"))
    assert [(r["parameter"], r["totals"]["input_tokens"], r["totals"]["llm_calls"]) for r in only["roots"]] == [
        ("Quiescent current", 200, 1)]
    unknown = dsx("trace", job.id, "--parameter", "Gain")
    assert unknown.exit_code == 1 and "parameter_not_found" in unknown.stderr


def test_the_installed_command_line(server: LiveServer) -> None:
    env = {**server.env, "DSX_SERVER": server.base_url, "DSX_CLIENT_CONFIG": "/nonexistent/config.toml"}
    done = subprocess.run([sys.executable, "-m", "app.cli", "jobs", "--json", "--limit", "1"], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    page = json.loads(done.stdout)
    assert set(page) == {"items", "total", "limit", "offset"} and page["limit"] == 1
