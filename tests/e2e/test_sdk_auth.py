"""The SDK and the CLI against a live dsx that requires API keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dsx_client import AuthenticationError, Client, JobNotFound, PermissionDenied
from typer.testing import CliRunner

from app.auth.keys import create_key
from app.cli import cli
from tests.support.live import LiveServer, live_server, seed_flagged_extraction
from tests.support.pdfs import text_pdf

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    # No worker: these tests are about who may call what, not about processing.
    with live_server(tmp_path_factory.mktemp("keys"), worker=False, env={"DSX_AUTH_MODE": "keys"}) as server:
        with server.session() as session:
            keys = {
                "acme": create_key(session, tenant="acme", roles=["submitter", "reviewer"], name="rita@acme").key,
                "acme-submitter": create_key(session, tenant="acme", roles=["submitter"], name="sam@acme").key,
                "globex": create_key(session, tenant="globex", roles=["submitter", "reviewer"], name="gil").key,
            }
        yield server, keys


def test_calls_without_a_valid_key_raise_authentication_errors(keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, _ = keyed
    for key in (None, "dsx_not-a-real-key"):
        with Client(server.base_url, api_key=key) as dsx, pytest.raises(AuthenticationError) as caught:
            dsx.list_jobs()
        assert caught.value.status == 401


def test_roles_and_tenants_are_enforced_through_the_sdk(keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, keys = keyed
    with Client(server.base_url, api_key=keys["acme"]) as acme, \
            Client(server.base_url, api_key=keys["globex"]) as globex, \
            Client(server.base_url, api_key=keys["acme-submitter"]) as submitter:
        job = acme.submit(text_pdf(["Supply voltage VDD 2.7 5.5 V"]), ["Supply voltage"])
        assert submitter.get(job).job_id == job.job_id  # same tenant
        with pytest.raises(JobNotFound):
            globex.get(job)  # another tenant's job does not exist for it
        assert job.job_id not in {j.job_id for j in globex.list_jobs(limit=500).items}
        with pytest.raises(PermissionDenied) as caught:
            submitter.queue()
        assert caught.value.status == 403


def test_decisions_are_signed_by_the_key(keyed: tuple[LiveServer, dict[str, str]], tmp_path: Path) -> None:
    server, keys = keyed
    with server.session() as session:
        extraction = seed_flagged_extraction(session, tenant="acme", parameter="Gain")
        extraction_id, job_id = extraction.id, extraction.job_id

    with Client(server.base_url, api_key=keys["acme"]) as acme:
        stored = acme.decide(extraction_id, "approve", reviewer="not-me")
    assert stored.reviewer == "rita@acme"

    runner = CliRunner()
    env = {"DSX_SERVER": server.base_url, "DSX_API_KEY": keys["globex"], "COLUMNS": "200",
           "DSX_CLIENT_CONFIG": str(tmp_path / "absent.toml")}
    foreign = runner.invoke(cli, ["review", "reject", str(extraction_id)], env=env)
    assert foreign.exit_code == 1 and "extraction_not_found" in foreign.stderr
    config = tmp_path / "config.toml"
    config.write_text(f'api_key = "{keys["acme"]}"\n')
    history = runner.invoke(cli, ["review", "history", "--job", job_id, "--json"],
                            env={**env, "DSX_API_KEY": None, "DSX_CLIENT_CONFIG": str(config)})
    assert history.exit_code == 0, history.output
    assert '"reviewer": "rita@acme"' in history.stdout
