"""A burst of 300 status reads mixed with 50 submissions against a real server (uvicorn + a Celery worker on a
free loopback port): every request is answered, none with a 5xx, on the embedded default and on PostgreSQL +
Redis. Before the pools were sized to the server's threads, reads beyond the 15th connection waited 30 s for one
and failed as 500s."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.support.live import LiveServer, live_server, spec_sheet
from tests.support.services import fresh_postgres_database, redis_url

pytestmark = [pytest.mark.integration, pytest.mark.slow]

READS = 300
SUBMITS = 50
SEED_JOBS = 5
REQUEST_TIMEOUT_S = 90.0


@pytest.fixture(params=["embedded", "postgres+redis"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    with ExitStack() as stack:
        env: dict[str, str] = {}
        if request.param == "postgres+redis":
            env = {"DSX_DATABASE_URL": stack.enter_context(fresh_postgres_database()), "DSX_BROKER_URL": redis_url(),
                   "DSX_AUTH_MODE": "open", "DSX_ALLOW_OPEN_IN_PRODUCTION": "true"}
        yield stack.enter_context(live_server(tmp_path, env=env))


def _submit(client: httpx.AsyncClient, pdf: bytes, i: int):  # noqa: ANN202
    return client.post("/v1/jobs", data={"parameters": json.dumps(["Supply voltage"])},
                       files={"file": (f"burst-{i}.pdf", pdf, "application/pdf")})


async def _burst(base_url: str) -> tuple[Counter[str], list[str]]:
    pdf = spec_sheet()
    limits = httpx.Limits(max_connections=READS + SUBMITS, max_keepalive_connections=READS + SUBMITS)
    async with httpx.AsyncClient(base_url=base_url, timeout=REQUEST_TIMEOUT_S, limits=limits) as client:
        seeded = [(await _submit(client, pdf, i)) for i in range(SEED_JOBS)]
        assert all(r.status_code == 202 for r in seeded), [r.text for r in seeded]
        job_ids = [r.json()["job_id"] for r in seeded]
        requests = [client.get(f"/v1/jobs/{job_ids[i % SEED_JOBS]}") for i in range(READS)]
        requests += [_submit(client, pdf, SEED_JOBS + i) for i in range(SUBMITS)]
        answers = await asyncio.gather(*requests, return_exceptions=True)
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    for index, answer in enumerate(answers):
        kind = "GET" if index < READS else "POST"
        if isinstance(answer, BaseException):
            outcomes[f"{kind} {type(answer).__name__}"] += 1
            failures.append(f"{kind}: {answer!r}")
            continue
        outcomes[f"{kind} {answer.status_code}"] += 1
        if answer.status_code >= 500:
            failures.append(f"{kind} {answer.status_code}: {answer.text[:300]}")
    return outcomes, failures


def test_a_burst_of_reads_and_submissions_gets_no_5xx(server: LiveServer) -> None:
    outcomes, failures = asyncio.run(_burst(server.base_url))
    assert failures == [], f"{outcomes}\n" + "\n".join(failures[:10]) + "\n" + server.logs()
    assert outcomes == Counter({"GET 200": READS, "POST 202": SUBMITS}), outcomes
