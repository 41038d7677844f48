"""Load: 500 jobs submitted concurrently to a running stack, every one followed to a terminal state.

Starts ``dsx serve`` (the API plus a Celery worker) on a free loopback port with its own data directory: the
embedded default (SQLite + SQLAlchemy broker) unless ``--postgres``/``--redis`` are given (a throwaway database
is created on that server and dropped afterwards; the Redis database, which must be the benchmark's own, is
emptied before each stack starts). The model is the offline reader, the document one small synthetic datasheet,
one parameter per job, so the figures are the service's own cost (admission, queueing, database, index cache,
agent loop, review), not a provider's.

Reported: submit and completion throughput, p50/p99 latency of the enqueue call (POST /v1/jobs) and of the
status call (GET /v1/jobs/{id}) with ``/healthz`` measured in the same rounds as the peer (the bare HTTP round
trip on the same loaded server), the terminal states, and whether anything was lost: every accepted job must
reach a terminal state and the job listing must hold exactly the accepted jobs. Bounded by ``--timeout``.

Admission (validation, storage, enqueue) runs in a thread pool, off the event loop, so many uploads in flight
queue for database connections instead of stalling the API; ``--concurrency 40`` completes on 2 cores.

The client shares those 2 cores with the stack, so it is kept cheap, and its CPU is measured and printed with the
rest: every submission sends the same multipart body (the parameters and the PDF), encoded once, and each request
in flight has a connection of its own on a client of its own (httpx's pool looks at each of its connections for
every request, which made a 40-connection client cost more CPU per POST than the API).

Before the burst, ``--single-requests`` (20) rounds of one POST, one GET of that job and one /healthz, each alone in
flight: a request's own latency, with nothing queued ahead of it. After the burst, the API's CPU per POST, the rate
one API process could reach with a core to itself, and Little's law for the burst: with N requests in flight each
waits for the ones ahead of it, so the POST p50 is about N / the rate (100 ms at 40 in flight takes 400 POST/s).
The burst's CPU is split per POST by who spent it: the API, the workers, Postgres and Redis (all of their
processes), this benchmark's own client and other work on the machine; the same split per status read closes the
read storm's figures. ``--api-processes`` runs that many API server processes (``dsx serve --api-processes``).
``--repo`` measures another checkout's server (say, the main branch) with this benchmark, for a before/after pair.

Then, while the workers are still busy with those jobs, a read storm: ``--read-storm`` (500) status reads sent at
once with a /healthz per ten in the same burst — the errors (transport errors and 5xx; the goal is none) and the
p99 of each, with their ratio. Over the submissions and over the storm the CPU use of the API process, of the rest
of the stack (workers, their children) and of the whole machine is measured, and the line ends with what that says
limits the figure: the machine's cores, the API's single event loop, or waiting (database locks, broker, PDF check).

    .venv/bin/python bench/load.py [--jobs 500] [--concurrency 40] [--workers 2] [--api-processes 1]
                                   [--single-requests 20] [--read-storm 500]
                                   [--postgres postgresql+psycopg://postgres@127.0.0.1:5432/postgres]
                                   [--redis redis://127.0.0.1:6379/13] [--json out.json]

``--tenants 2``: fairness between tenants (app/jobs/fairness.py). Tenant B submits one job of ``--b-parameters``
parameters on an idle stack, then tenant A floods ``--flood-parameters`` parameters (jobs of 100) and B submits the
same job again once A holds the workers; the flood is cancelled and the stack left to idle before the next of
``--rounds`` rounds. Printed: per round, B's time to its first answered parameter and to done, unloaded and under
the flood, and their ratio; then the median ratio and the worst round (the goal is B done within 2x of unloaded).
Each round pairs its two runs closely in time, so a change in the machine's load between rounds does not skew a
ratio, and prints the cores busy outside the stack's processes during each run (other users of the machine,
Postgres, Redis): a round's outlier there is the machine's, not the scheduler's. ``--fifo`` runs the same with fair
scheduling off, as the peer (use a smaller flood: B then waits for A's jobs ahead of it).

``--scaling 1,2,4``: jobs/s end to end for each worker count (a fresh stack each, ``--jobs`` jobs, no read
storm), the ratio to one worker, the CPU use over the run (API, workers, whole machine) and what that says
limits the row: the cores, the API's event loop, or waiting (database, broker) when workers are added without
gain. Meant for ``--postgres`` + ``--redis``; on a 2-core machine the ceiling is the CPU, shared by the API, the
workers, Postgres and Redis, so more than two worker processes mostly queue for it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pymupdf

REPO = Path(__file__).resolve().parents[1]
TERMINAL = {"done", "needs_review", "failed", "cancelled"}
PARAMETERS = json.dumps([{"name": "Supply voltage", "unit": "V"}])
STORM_TIMEOUT_S = 180.0


def datasheet() -> bytes:
    """One page with a small characteristics table (cells in columns, as printed)."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((50, 60), "LD1117 Low-Dropout Regulator", fontsize=12)
    page.insert_text((50, 80), "6 Electrical Characteristics", fontsize=10)
    rows = [("Parameter", "Symbol", "Min", "Typ", "Max", "Unit"), ("Supply voltage", "VIN", "2.7", "3.3", "15", "V"),
            ("Quiescent current", "IQ", "", "5", "10", "mA"), ("Dropout voltage", "VDO", "", "1.1", "1.3", "V")]
    for r, row in enumerate(rows):
        for x, cell in zip((50, 170, 230, 270, 310, 350), row, strict=True):
            if cell:
                page.insert_text((x, 110 + 14 * r), cell, fontsize=9)
    data = doc.tobytes()
    doc.close()
    return data


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


@contextmanager
def throwaway_database(server_url: str) -> Iterator[str]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    base = make_url(server_url)
    admin = create_engine(base.set(database="postgres"), isolation_level="AUTOCOMMIT")
    name = f"dsx_load_{uuid.uuid4().hex[:10]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def stack(args: argparse.Namespace, data_dir: Path) -> Iterator[str]:
    """``dsx serve`` on a free port; yields its base URL once /readyz answers and the worker is ready (its
    start-up is not measured as queueing); stops its process group."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSX_") and k != "PROMETHEUS_MULTIPROC_DIR"}
    env.update({"DSX_DATA_DIR": str(data_dir), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(args.repo),
                "DSX_AUTH_MODE": "keys" if args.tenants > 1 else "open",
                "DSX_RATE_LIMIT_PER_MINUTE": "0", "PYTHONUNBUFFERED": "1",
                "DSX_FAIR_SCHEDULING": "false" if args.fifo else "true"})
    if args.database_url:
        env.update({"DSX_DATABASE_URL": args.database_url, "DSX_ALLOW_OPEN_IN_PRODUCTION": "true"})
    if args.redis:
        env["DSX_BROKER_URL"] = args.redis
    if args.redis:
        # Wake-ups left by an earlier stack name jobs of a dropped database: a worker working through them first
        # would be measured as slow.
        import redis

        redis.Redis.from_url(args.redis).flushdb()
    log = (data_dir / "serve.log").open("wb")
    command = [sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--workers", str(args.workers)]
    if args.api_processes > 1:
        command += ["--api-processes", str(args.api_processes)]
    process = subprocess.Popen(command, cwd=args.repo, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"dsx serve exited during start-up; see {data_dir / 'serve.log'}")
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("dsx serve not ready after 120 s")
            time.sleep(0.3)
        while b" ready." not in (data_dir / "serve.log").read_bytes():  # the worker, not only the API
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"the worker did not get ready; see {data_dir / 'serve.log'}")
            time.sleep(0.3)
        args.keys = {tenant: issue_key(env, tenant, args.repo) for tenant in ("A", "B")} if args.tenants > 1 else {}
        yield base
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        log.close()


def encoded_submission(pdf: bytes, filename: str = "datasheet.pdf") -> tuple[bytes, dict[str, str]]:
    """The multipart body of a submission (``PARAMETERS`` and the PDF) and its content type, encoded once by httpx
    with a fixed boundary: every submission of a burst sends these same bytes, so the client does not spend CPU
    encoding the PDF again for each one (the server parses what it always did)."""
    request = httpx.Request("POST", "http://127.0.0.1/v1/jobs", data={"parameters": PARAMETERS},
                            files={"file": (filename, pdf, "application/pdf")},
                            headers={"Content-Type": "multipart/form-data; boundary=dsx-bench-load-boundary"})
    return request.read(), {"Content-Type": request.headers["Content-Type"]}


class Lanes:
    """``count`` clients of one connection each, one lent to each request in flight, so at most ``count`` requests
    are in flight on ``count`` connections (what one client of ``count`` connections behind a semaphore of
    ``count`` did). One client per connection because httpx's pool looks at every connection it holds (a
    ``poll`` and a ``getpeername`` on each socket) for every request it assigns: with 40 connections in one pool
    the client spent more CPU per request than the API serving it, on the same cores."""

    def __init__(self, base: str, count: int, timeout: float) -> None:
        # Plain HTTP on loopback: the TLS context is never used, but building one per client reads the CA bundle.
        context = ssl.create_default_context()
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        self.clients = [httpx.AsyncClient(base_url=base, timeout=timeout, limits=one, verify=context)
                        for _ in range(count)]
        self.free: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for client in self.clients:
            self.free.put_nowait(client)

    @asynccontextmanager
    async def lane(self) -> AsyncIterator[httpx.AsyncClient]:
        """A client to send one request on; waits while every lane is busy (first come, first served)."""
        client = await self.free.get()
        try:
            yield client
        finally:
            self.free.put_nowait(client)

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


async def timed(client: httpx.AsyncClient, method: str, url: str, **kwargs: Any) -> tuple[httpx.Response | None, float]:
    started = time.perf_counter()
    try:
        response = await client.request(method, url, **kwargs)
    except httpx.HTTPError:
        response = None
    return response, time.perf_counter() - started


async def run_load(base: str, args: argparse.Namespace) -> dict[str, Any]:
    pdf = datasheet()
    body, headers = encoded_submission(pdf)
    post_s: list[float] = []
    get_s: list[float] = []
    health_s: list[float] = []
    refused: Counter[str] = Counter()
    accepted: dict[str, float] = {}
    finished: dict[str, tuple[str, float]] = {}
    deadline = time.monotonic() + args.timeout

    lanes = Lanes(base, args.concurrency, timeout=60)
    try:
        async def submit() -> None:
            async with lanes.lane() as client:
                response, seconds = await timed(client, "POST", "/v1/jobs", content=body, headers=headers)
            post_s.append(seconds)
            if response is not None and response.status_code == 202:
                accepted[response.json()["job_id"]] = time.monotonic()
            else:
                refused[str(response.status_code if response is not None else "transport error")] += 1

        async def status(job_id: str) -> None:
            async with lanes.lane() as client:
                response, seconds = await timed(client, "GET", f"/v1/jobs/{job_id}")
            get_s.append(seconds)
            if response is not None and response.status_code == 200:
                state = response.json()["status"]
                if state in TERMINAL:
                    finished[job_id] = (state, time.monotonic())

        async def health() -> None:
            async with lanes.lane() as client:
                response, seconds = await timed(client, "GET", "/healthz")
            if response is not None and response.status_code == 200:
                health_s.append(seconds)

        single = await one_at_a_time(lanes.clients[0], body, headers, args.single_requests)
        accepted.update(dict.fromkeys(single.pop("job_ids"), time.monotonic()))
        started = time.monotonic()
        submit_meter = CpuMeter(base, args.api_processes)
        run_meter = CpuMeter(base, args.api_processes)
        await asyncio.gather(*(submit() for _ in range(args.jobs)), *(health() for _ in range(args.jobs // 10)))
        submitted = time.monotonic()
        submit_cpu = submit_meter.stop()
        storm = (await read_storm(base, list(accepted), args.read_storm, args.api_processes)
                 if args.read_storm and accepted else None)
        while len(finished) < len(accepted) and time.monotonic() < deadline:
            pending = [j for j in accepted if j not in finished]
            await asyncio.gather(*(status(j) for j in pending), *(health() for _ in range(max(1, len(pending) // 10))))
            if len(finished) < len(accepted):
                await asyncio.sleep(args.poll_interval)
        ended = max((t for _, t in finished.values()), default=time.monotonic())
        run_cpu = run_meter.stop()
        response, _ = await timed(lanes.clients[0], "GET", "/v1/jobs", params={"limit": 1})
        listing = response.json() if response is not None and response.status_code == 200 else {}
    finally:
        await lanes.aclose()

    states = Counter(state for state, _ in finished.values())
    lost = sorted(set(accepted) - set(finished))
    return {
        "jobs": args.jobs, "concurrency": args.concurrency, "workers": args.workers,
        "backend": ("postgres" if args.database_url else "sqlite") + "+" + ("redis" if args.redis else "sqla"),
        "accepted": len(accepted), "refused": dict(refused), "terminal": len(finished), "states": dict(states),
        "not_terminal_by_deadline": len(lost), "listed": listing.get("total"),
        "nothing_lost": not lost and listing.get("total") == len(accepted),
        "submit_seconds": round(submitted - started, 2), "total_seconds": round(ended - started, 2),
        "submit_per_s": round((len(accepted) - single["post_ms"]["n"]) / max(submitted - started, 1e-9), 1),
        "completed_per_s": round(len(finished) / max(ended - started, 1e-9), 2),
        "post_ms": _summary(post_s), "get_ms": _summary(get_s), "healthz_ms": _summary(health_s),
        "post_p50_vs_healthz": _ratio(post_s, health_s), "get_p50_vs_healthz": _ratio(get_s, health_s),
        "read_storm": storm, "submit_cpu": submit_cpu, "run_cpu": run_cpu, "single": single,
        # The API's CPU per request of the burst (its /healthz peers, one per ten POSTs, are cheap beside them).
        "api_cpu_ms_per_post": round(1000 * submit_cpu["api_cpu_s"] / max(len(post_s), 1), 1),
        "cpu_ms_per_post": cpu_split_ms(submit_cpu, len(post_s)),
    }


async def one_at_a_time(client: httpx.AsyncClient, body: bytes, headers: dict[str, str],
                        count: int) -> dict[str, Any]:
    """``count`` rounds of one POST, one GET of that job and one /healthz, each request alone in flight, before
    the burst: what one request costs with nothing queued ahead of it on the server (the machine may still be busy
    with other work). The jobs are followed to a terminal state with the others (``job_ids``)."""
    post_s: list[float] = []
    get_s: list[float] = []
    health_s: list[float] = []
    job_ids: list[str] = []
    for _ in range(count):
        response, seconds = await timed(client, "POST", "/v1/jobs", content=body, headers=headers)
        if response is None or response.status_code != 202:
            raise RuntimeError(f"a single submission failed: {response.text if response is not None else 'no answer'}")
        post_s.append(seconds)
        job_ids.append(response.json()["job_id"])
        get_s.append((await timed(client, "GET", f"/v1/jobs/{job_ids[-1]}"))[1])
        health_s.append((await timed(client, "GET", "/healthz"))[1])
    return {"post_ms": _summary(post_s), "get_ms": _summary(get_s), "healthz_ms": _summary(health_s),
            "job_ids": job_ids}


def issue_key(env: dict[str, str], tenant: str, repo: Path = REPO) -> str:
    output = subprocess.run([sys.executable, "-m", "app.cli", "admin", "create-key", "--tenant", tenant,
                             "--role", "submitter", "--name", f"bench-{tenant}", "--json"], cwd=repo, env=env,
                            capture_output=True, text=True, check=True).stdout
    return json.loads(output.strip().splitlines()[-1])["key"]


FLOOD_JOB_PARAMETERS = 100  # the per-job cap (DSX_MAX_PARAMETERS)
SETTLE_S = 5.0
B_NAMES = ["Supply voltage", "Quiescent current", "Dropout voltage"]


def _parameters(count: int) -> str:
    return json.dumps([{"name": B_NAMES[i % len(B_NAMES)], "notes": f"row {i}"} for i in range(count)])


async def time_one_job(client: httpx.AsyncClient, key: str, pdf: bytes, parameters: int) -> dict[str, float]:
    """Submit one job as the key's tenant; seconds to its first answered parameter and to a terminal state."""
    headers = {"Authorization": f"Bearer {key}"}
    meter = CpuMeter(str(client.base_url).rstrip("/"))
    started = time.monotonic()
    response = await client.post("/v1/jobs", headers=headers, data={"parameters": _parameters(parameters)},
                                 files={"file": ("b.pdf", pdf, "application/pdf")})
    response.raise_for_status()
    job_id = response.json()["job_id"]
    first = None
    while True:
        job = (await client.get(f"/v1/jobs/{job_id}", headers=headers)).json()
        now = time.monotonic() - started
        if first is None and any(r["status"] == "done" for r in job["results"]):
            first = now
        if job["status"] in TERMINAL:
            cpu = meter.stop()
            # Cores busy outside this stack's processes: other users of the machine, and Postgres and Redis.
            outside = max(0.0, cpu["machine_cores_busy"] - cpu["api"] - cpu["rest_of_stack"])
            return {"first_result_s": round(first if first is not None else now, 3), "done_s": round(now, 3),
                    "status": job["status"], "cores_busy_outside_stack": round(outside, 2)}
        # B's job of a few parameters takes a few tenths of a second: a coarser poll would be most of what it measures.
        await asyncio.sleep(0.02)


async def run_tenants(base: str, args: argparse.Namespace) -> dict[str, Any]:
    pdf = datasheet()
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        # Warm-up, one job per worker process at once so that each takes one: the index of the datasheet and
        # each process's first-use costs (imports, unit registries: seconds) are then paid before any round.
        await asyncio.gather(*(time_one_job(client, args.keys["B"], pdf, 1) for _ in range(args.workers)))
        rounds = []
        for _ in range(args.rounds):
            unloaded = await time_one_job(client, args.keys["B"], pdf, args.b_parameters)
            flooded, flood_size = await time_under_flood(client, args, pdf)
            rounds.append({"unloaded": unloaded, "flooded": flooded,
                           "done_ratio": round(flooded["done_s"] / unloaded["done_s"], 2),
                           "first_result_ratio": round(flooded["first_result_s"] / unloaded["first_result_s"], 2)})
    return {"workers": args.workers, "flood_parameters": flood_size, "b_parameters": args.b_parameters,
            "rounds": rounds, "done_ratio": round(statistics.median(r["done_ratio"] for r in rounds), 2),
            "first_result_ratio": round(statistics.median(r["first_result_ratio"] for r in rounds), 2),
            "worst_done_ratio": max(r["done_ratio"] for r in rounds)}


async def time_under_flood(client: httpx.AsyncClient, args: argparse.Namespace,
                           pdf: bytes) -> tuple[dict[str, float], int]:
    """Tenant A floods; once A holds the workers, time B's job; then cancel the flood and wait for the stack to
    be idle again (so the next round's unloaded run is unloaded). Returns B's timings and the flood's size."""
    flood_headers = {"Authorization": f"Bearer {args.keys['A']}"}
    sizes = [FLOOD_JOB_PARAMETERS] * (args.flood_parameters // FLOOD_JOB_PARAMETERS)
    flood_ids = []
    for size in sizes:
        response = await client.post("/v1/jobs", headers=flood_headers, data={"parameters": _parameters(size)},
                                     files={"file": ("a.pdf", pdf, "application/pdf")})
        response.raise_for_status()
        flood_ids.append(response.json()["job_id"])

    async def count(status: str) -> int:
        page = (await client.get("/v1/jobs", headers=flood_headers, params={"status": status, "limit": 1})).json()
        return int(page["total"])

    deadline = time.monotonic() + 60
    while await count("running") < min(args.workers, len(flood_ids)) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    flooded = await time_one_job(client, args.keys["B"], pdf, args.b_parameters)
    for job_id in flood_ids:  # the flood has made its point; do not wait for it
        await client.post(f"/v1/jobs/{job_id}/cancel", headers=flood_headers)
    deadline = time.monotonic() + 120
    while (await count("running") or await count("queued")) and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    await asyncio.sleep(SETTLE_S)  # the cancelled jobs' wake-ups drain from the broker
    return flooded, sum(sizes)


async def read_storm(base: str, job_ids: list[str], reads: int, api_processes: int = 1) -> dict[str, Any]:
    """``reads`` status GETs sent at once (no client-side gate) with one /healthz per ten of them in the same
    burst, while the workers are busy with the submitted jobs: how many fail (transport error or 5xx), and the
    p99 of each, so the ratio compares them under the same load. The server's CPU use over the burst is kept
    (see :class:`CpuMeter`) to say what limits the figure."""
    checks = max(1, reads // 10)
    get_s: list[float] = []
    health_s: list[float] = []
    errors: Counter[str] = Counter()

    # Patient: on a shared 2-core machine the last of 500 reads can take a minute, and the figure is what the server
    # answers, not how long a client is willing to wait.
    # One connection per request of the burst, each on a client of its own (see Lanes), made before it starts.
    lanes = Lanes(base, reads + checks, timeout=STORM_TIMEOUT_S)
    try:
        async def one(path: str, into: list[float]) -> None:
            async with lanes.lane() as client:
                response, seconds = await timed(client, "GET", path)
            if response is None or response.status_code >= 500:
                errors[str(response.status_code) if response is not None else "transport error"] += 1
            else:
                into.append(seconds)

        meter = CpuMeter(base, api_processes)
        await asyncio.gather(*(one(f"/v1/jobs/{job_ids[i % len(job_ids)]}", get_s) for i in range(reads)),
                             *(one("/healthz", health_s) for _ in range(checks)))
        cpu = meter.stop()
    finally:
        await lanes.aclose()
    get_p99, health_p99 = percentile(get_s, 99), percentile(health_s, 99)
    return {"reads": reads, "errors": sum(errors.values()), "error_kinds": dict(errors),
            "get_ms": _summary(get_s), "healthz_ms": _summary(health_s),
            "get_p99_vs_healthz_p99": round(get_p99 / health_p99, 2) if get_s and health_s else float("nan"),
            "cpu": cpu, "cpu_ms_per_read": cpu_split_ms(cpu, reads + checks)}


def _psutil() -> Any:
    import psutil  # the eval extra's; imported here so that --help works without it

    return psutil


class CpuMeter:
    """CPU seconds per wall second, from creation to :meth:`stop`, of the API (the process listening on ``base``'s
    port and its descendants: the server processes when there are several, the PDF-check children), of everything
    else in its process group (the workers and their children), and of the whole machine (in cores): near 1.0 per
    API server process means their event loops (and GILs) are the limit; a machine near its core count means the
    cores are, and then the share our stack got of them says how much went to other work on the machine."""

    def __init__(self, base: str, api_processes: int = 1) -> None:
        psutil = _psutil()

        port = int(base.rsplit(":", 1)[1])
        self.api_processes = api_processes
        listener = next((psutil.Process(c.pid) for c in psutil.net_connections("tcp")
                         if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN and c.pid), None)
        if listener is not None:
            while (parent := listener.parent()) is not None and _in_group(parent, os.getpgid(listener.pid)) \
                    and "uvicorn" in " ".join(parent.cmdline()):
                listener = parent  # several server processes share the socket their supervisor opened
        self.api = listener
        self.group = os.getpgid(self.api.pid) if self.api is not None else None
        self.others = self._others()
        self.started = time.monotonic()
        self.api_before, self.others_before = self._per_pid(self._api()), self._per_pid(self.others)
        self.services_before = {name: self._per_pid(self._service(name)) for name in SERVICES}
        self.client_before = self._per_pid([psutil.Process()])
        self.machine_before = psutil.cpu_times()

    def _api(self) -> list[Any]:
        if self.api is None:
            return []
        psutil = _psutil()

        try:
            return [self.api, *self.api.children(recursive=True)]
        except psutil.Error:
            return [self.api]

    def _others(self) -> list[Any]:
        psutil = _psutil()

        api_pids = {p.pid for p in self._api()}
        return [p for p in psutil.process_iter()
                if self.group is not None and p.pid not in api_pids and _in_group(p, self.group)]

    @staticmethod
    def _service(name: str) -> list[Any]:
        """Every process of a server (Postgres: its postmaster and each connection's backend, whichever database
        it serves, so other users of the same server count here too)."""
        psutil = _psutil()

        found = []
        for process in psutil.process_iter(["name"]):
            if process.info["name"] in SERVICES[name]:
                found.append(process)
        return found

    @staticmethod
    def _per_pid(processes: list[Any]) -> dict[int, float]:
        psutil = _psutil()

        seconds: dict[int, float] = {}
        for process in processes:
            try:
                times = process.cpu_times()
                seconds[process.pid] = times.user + times.system
            except psutil.Error:
                pass
        return seconds

    @staticmethod
    def _gained(before: dict[int, float], now: dict[int, float]) -> float:
        # Per process: one that ended meanwhile is missed rather than subtracted; one started since counts whole.
        return sum(seconds - before.get(pid, 0.0) for pid, seconds in now.items())

    def stop(self) -> dict[str, float]:
        psutil = _psutil()

        wall = max(time.monotonic() - self.started, 1e-9)
        after = psutil.cpu_times()
        busy = (sum(after) - after.idle) - (sum(self.machine_before) - self.machine_before.idle)
        api_cpu_s = self._gained(self.api_before, self._per_pid(self._api()))
        rest = self._gained(self.others_before, self._per_pid(self._others()))
        services = {name: self._gained(self.services_before[name], self._per_pid(self._service(name)))
                    for name in SERVICES}
        client = self._gained(self.client_before, self._per_pid([psutil.Process()]))
        # CPU seconds over the measurement, by who spent them: the shares a figure is divided into per request.
        seconds = {"api": api_cpu_s, "workers": rest, **services, "bench_client": client}
        seconds["other_work"] = max(0.0, busy - sum(seconds.values()))
        return {"api": round(api_cpu_s / wall, 2), "api_cpu_s": round(api_cpu_s, 3),
                "api_processes": float(self.api_processes),
                "rest_of_stack": round(rest / wall, 2),
                "machine_cores_busy": round(busy / wall, 2), "cores": float(psutil.cpu_count() or 0),
                "cpu_s_by_component": {name: round(value, 3) for name, value in seconds.items()}}


#: The servers a stack uses, by process name; their CPU is measured beside the stack's own.
SERVICES = {"postgres": ("postgres",), "redis": ("redis-server",)}
#: How the CPU split of a figure names each share.
COMPONENT_LABELS = {"api": "API", "workers": "workers (running accepted jobs)", "postgres": "Postgres",
                    "redis": "Redis", "bench_client": "this benchmark's client",
                    "other_work": "other work on the machine"}


def cpu_split_ms(cpu: dict[str, Any], requests: int) -> dict[str, float]:
    """Milliseconds of CPU per request, by who spent them, over a measurement of ``requests`` requests."""
    return {name: round(1000 * seconds / max(requests, 1), 1) for name, seconds in cpu["cpu_s_by_component"].items()}


def describe_split(split: dict[str, float]) -> str:
    total = sum(split.values())
    return "  ".join(f"{COMPONENT_LABELS[name]} {ms}" for name, ms in split.items()) + f"  (total {total:.1f})"


def _in_group(process: Any, group: int) -> bool:
    try:
        return os.getpgid(process.pid) == group
    except (ProcessLookupError, PermissionError):
        return False


def _summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": round(1000 * percentile(values, 50), 1),
            "p99": round(1000 * percentile(values, 99), 1),
            "mean": round(1000 * statistics.fmean(values), 1) if values else float("nan")}


def _ratio(values: list[float], peer: list[float]) -> float:
    return round(percentile(values, 50) / percentile(peer, 50), 2) if values and peer else float("nan")


def print_read_storm(storm: dict[str, Any]) -> None:
    get, health, cpu = storm["get_ms"], storm["healthz_ms"], storm["cpu"]
    print(f"  read storm: {storm['reads']} status reads at once, workers busy: errors {storm['errors']} "
          f"{storm['error_kinds'] or ''}")
    print(f"    GET /v1/jobs/{{id}} p50 {get['p50']} ms  p99 {get['p99']} ms   GET /healthz p50 {health['p50']} ms  "
          f"p99 {health['p99']} ms   status p99 = {storm['get_p99_vs_healthz_p99']}x /healthz p99")
    print(f"    CPU over the burst (CPU-s per s): API {cpu['api']}  rest of the stack {cpu['rest_of_stack']}  "
          f"machine {cpu['machine_cores_busy']} of {cpu['cores']:.0f} cores "
          f"-> {limiting_resource(cpu)}")
    print(f"    CPU per request of the burst (ms; reads and their /healthz peers): "
          f"{describe_split(storm['cpu_ms_per_read'])}")


def limiting_resource(cpu: dict[str, float]) -> str:
    """Name what bounded a figure, from the CPU use measured over it."""
    if cpu["cores"] and cpu["machine_cores_busy"] >= 0.9 * cpu["cores"]:
        ours = cpu["api"] + cpu["rest_of_stack"]
        return (f"the machine's cores are saturated (API, workers and database share them; this stack's API and "
                f"workers got {ours:.2f} of {cpu['machine_cores_busy']:.2f} busy cores, the database, Redis and any "
                f"other work on the machine the rest)")
    if cpu["api"] >= 0.85 * cpu.get("api_processes", 1):
        return "the API is CPU-bound (each server process has one event loop and one GIL for its requests)"
    return "neither the cores nor the API's CPU: waiting (database locks, the broker, the PDF check) limits it"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=40, help="requests in flight at once")
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument("--api-processes", type=int, default=1, help="API server processes (dsx serve)")
    parser.add_argument("--postgres", help="a PostgreSQL server URL; a throwaway database is made on it")
    parser.add_argument("--redis", help="a Redis URL for the broker: a database of the benchmark's own, emptied "
                                        "before each stack starts")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before unfinished jobs count as lost")
    parser.add_argument("--poll-interval", type=float, default=1.0)
    parser.add_argument("--single-requests", type=int, default=20, metavar="N",
                        help="before the burst, N rounds of one POST, one GET and one /healthz, one at a time")
    parser.add_argument("--read-storm", type=int, default=500, metavar="N",
                        help="after the submissions, N status reads at once while the workers are busy (0: skip)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--log", type=Path, help="keep the server's log here")
    parser.add_argument("--tenants", type=int, default=1, choices=(1, 2),
                        help="2: measure tenant B's latency under tenant A's flood instead")
    parser.add_argument("--flood-parameters", type=int, default=1000)
    parser.add_argument("--b-parameters", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3,
                        help="--tenants: unloaded/flooded pairs; the median ratio is reported (the machine's load "
                             "drifts between two single runs)")
    parser.add_argument("--fifo", action="store_true",
                        help="switch fair scheduling off (the peer: one first-come queue for every tenant)")
    parser.add_argument("--scaling", help="comma-separated worker counts, e.g. 1,2,4: jobs/s for each")
    parser.add_argument("--repo", type=Path, default=REPO,
                        help="the checkout whose `dsx serve` is measured (default: this one), so that a change and "
                             "its baseline run back to back under the same benchmark")
    args = parser.parse_args()
    args.database_url = None
    # A SIGTERM (a CI timeout, a Ctrl-C from a wrapper) must still stop the stack this benchmark started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.tenants > 1:
        return report_tenants(with_stack(args, run_tenants), args)
    if args.scaling:
        return report_scaling(args)

    with tempfile.TemporaryDirectory(prefix="dsx-bench-load-") as tmp:
        data_dir = Path(tmp)
        try:
            if args.postgres:
                with throwaway_database(args.postgres) as url:
                    args.database_url = url
                    with stack(args, data_dir) as base:
                        figures = asyncio.run(run_load(base, args))
            else:
                with stack(args, data_dir) as base:
                    figures = asyncio.run(run_load(base, args))
        finally:
            if args.log and (data_dir / "serve.log").exists():
                args.log.write_bytes((data_dir / "serve.log").read_bytes())

    print(f"load: {figures['jobs']} jobs, {figures['concurrency']} in flight, {figures['workers']} worker(s), "
          f"{args.api_processes} API process(es), {figures['backend']}, offline model")
    print(f"  accepted {figures['accepted']}  refused {figures['refused'] or 0}  terminal {figures['terminal']}  "
          f"states {figures['states']}  listed {figures['listed']}  nothing lost: {figures['nothing_lost']}")
    print(f"  submit: {figures['submit_seconds']} s ({figures['submit_per_s']} jobs/s accepted in the burst)   "
          f"all terminal after {figures['total_seconds']} s ({figures['completed_per_s']} jobs/s end to end)")
    rows = (("POST /v1/jobs", "post_ms", "post_p50_vs_healthz"), ("GET /v1/jobs/{id}", "get_ms", "get_p50_vs_healthz"),
            ("GET /healthz", "healthz_ms", None))
    for label, key, ratio in rows:
        s = figures[key]
        extra = f"   p50 = {figures[ratio]}x /healthz" if ratio else "   (peer: bare round trip, same rounds)"
        print(f"  {label:<18} n={s['n']:<5} p50 {s['p50']:>8} ms  p99 {s['p99']:>8} ms{extra}")
    single = figures["single"]
    print(f"  one at a time ({single['post_ms']['n']} rounds, nothing queued ahead): POST p50 "
          f"{single['post_ms']['p50']} ms   GET /v1/jobs/{{id}} p50 {single['get_ms']['p50']} ms   GET /healthz p50 "
          f"{single['healthz_ms']['p50']} ms")
    cpu = figures["submit_cpu"]
    print(f"  CPU over the submissions (CPU-s per s): API {cpu['api']}  rest of the stack {cpu['rest_of_stack']}  "
          f"machine {cpu['machine_cores_busy']} of {cpu['cores']:.0f} cores -> POST latency and enqueue rate: "
          f"{limiting_resource(cpu)}")
    per_post = figures["api_cpu_ms_per_post"]
    print(f"  API CPU per POST {per_post} ms: the API accepts at most ~"
          f"{1000 / per_post if per_post else float('nan'):.0f} POST/s per core it gets (at most one core per API "
          f"process: one GIL each). With "
          f"{figures['concurrency']} in flight a POST waits for the ones ahead of it (Little's law: latency = in "
          f"flight / rate), so its p50 is ~{figures['concurrency']} / {figures['submit_per_s']} jobs/s = "
          f"{1000 * figures['concurrency'] / max(figures['submit_per_s'], 1e-9):.0f} ms; p50 <= 100 ms at "
          f"{figures['concurrency']} in flight would take {figures['concurrency'] * 10} POST/s")
    split = figures["cpu_ms_per_post"]
    ours = sum(split.values()) - split["other_work"]
    print(f"  CPU per POST of the burst (ms, its /healthz peers included): {describe_split(split)}; with the "
          f"machine to itself, this stack and its client would take {ours:.1f} ms of CPU per POST: at most "
          f"~{1000 * cpu['cores'] / max(ours, 1e-9):.0f} POST/s on {cpu['cores']:.0f} cores")
    if figures["read_storm"]:
        print_read_storm(figures["read_storm"])
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0 if figures["nothing_lost"] else 1


def with_stack(args: argparse.Namespace, measure: Any) -> dict[str, Any]:
    """Run ``measure(base, args)`` against a fresh stack (a throwaway database when ``--postgres``)."""
    with tempfile.TemporaryDirectory(prefix="dsx-bench-load-") as tmp:
        data_dir = Path(tmp)
        try:
            if args.postgres:
                with throwaway_database(args.postgres) as url:
                    args.database_url = url
                    with stack(args, data_dir) as base:
                        return asyncio.run(measure(base, args))
            with stack(args, data_dir) as base:
                return asyncio.run(measure(base, args))
        finally:
            if args.log and (data_dir / "serve.log").exists():
                args.log.write_bytes((data_dir / "serve.log").read_bytes())


def report_tenants(figures: dict[str, Any], args: argparse.Namespace) -> int:
    print(f"fairness: tenant A floods {figures['flood_parameters']} parameters, tenant B submits one job of "
          f"{figures['b_parameters']}; {figures['workers']} worker(s), offline model, "
          f"{'first come first served (--fifo)' if args.fifo else 'fair scheduling'}, {len(figures['rounds'])} "
          f"round(s)")
    for number, row in enumerate(figures["rounds"], 1):
        unloaded, flooded = row["unloaded"], row["flooded"]
        print(f"  round {number}: B unloaded first result {unloaded['first_result_s']:>6.3f} s  done "
              f"{unloaded['done_s']:>6.3f} s   under flood first result {flooded['first_result_s']:>6.3f} s  done "
              f"{flooded['done_s']:>6.3f} s   ratio done {row['done_ratio']}x   cores busy outside the stack "
              f"{unloaded['cores_busy_outside_stack']} / {flooded['cores_busy_outside_stack']}")
    print(f"  ratio (flood / unloaded, median of rounds): first result {figures['first_result_ratio']}x   "
          f"done {figures['done_ratio']}x   worst round done {figures['worst_done_ratio']}x   (goal: done within 2x)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0 if all(r["flooded"]["status"] in ("done", "needs_review") for r in figures["rounds"]) else 1


def report_scaling(args: argparse.Namespace) -> int:
    args.read_storm = 0  # jobs/s end to end only: a burst of reads would take CPU from the workers being measured
    rows = []
    for workers in (int(n) for n in args.scaling.split(",")):
        args.workers = workers
        figures = with_stack(args, run_load)
        rows.append(figures)
    base_rate = rows[0]["completed_per_s"]
    print(f"scaling: {args.jobs} jobs end to end, {rows[0]['backend']}, offline model, {os.cpu_count()} CPU(s)")
    for figures in rows:
        cpu = figures["run_cpu"]
        print(f"  {figures['workers']} worker process(es): {figures['completed_per_s']:>6.2f} jobs/s   "
              f"x{figures['completed_per_s'] / base_rate:.2f} of one   nothing lost: {figures['nothing_lost']}   "
              f"CPU-s per s: API {cpu['api']}  workers and the rest {cpu['rest_of_stack']}  machine "
              f"{cpu['machine_cores_busy']} of {cpu['cores']:.0f} cores -> {scaling_limit(figures, base_rate)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0 if all(f["nothing_lost"] for f in rows) else 1


def scaling_limit(figures: dict[str, Any], base_rate: float) -> str:
    """What bounded one row of the scaling table, from its CPU use and how its rate compares with one worker's."""
    cpu = figures["run_cpu"]
    outside = max(0.0, cpu["machine_cores_busy"] - cpu["api"] - cpu["rest_of_stack"])
    if cpu["cores"] and cpu["machine_cores_busy"] >= 0.9 * cpu["cores"] and outside >= cpu["cores"] / 2:
        return (f"the machine's cores, {outside:.1f} of them busy outside this stack (Postgres, Redis, other "
                "users): the figure is the share left to dsx")
    if figures["workers"] > 1 and cpu["cores"] and cpu["machine_cores_busy"] >= 0.9 * cpu["cores"]:
        return ("the machine's cores: API, workers, Postgres and Redis share them, so added workers wait for CPU, "
                "not for jobs")
    if cpu["api"] >= 0.85:
        return "the API process (one event loop) feeding and answering the workers"
    if figures["workers"] > 1 and figures["completed_per_s"] < 1.2 * base_rate:
        return "waiting, not CPU: the database (row locks, the claim queries) or the broker serialise the workers"
    return limiting_resource(cpu)


if __name__ == "__main__":
    sys.exit(main())
