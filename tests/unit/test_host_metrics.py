"""Per-host metrics: each host's multiprocess directory holds its own processes only, a starting host removes what
its dead processes left, and a worker serves its own /metrics (with dsx_build_info) on DSX_WORKER_METRICS_PORT."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from app import __version__
from app.metrics import HOST, process_identifier
from app.observability.host_metrics import host_registry, mark_process_dead, prepare_metrics_dir
from tests.support.live import free_port
from tests.support.paths import REPO_ROOT
from tests.support.pdfs import text_pdf
from tests.support.processes import dsx_process, wait_until, worker_env

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

# A process of some host: counts one flag of the given rule, prints its pid, then (if asked) waits on stdin.
WRITER = """
import os, sys
from app import metrics
metrics.observe_flags([(sys.argv[1], "warning")])
print(os.getpid(), flush=True)
if sys.argv[2] == "stay":
    sys.stdin.read()
"""


def parse(exposition: str) -> Samples:
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(exposition) for sample in family.samples}


def flag_count(samples: Samples, rule: str) -> float:
    return samples.get(("dsx_flags_total", frozenset({("rule", rule), ("severity", "warning")})), 0.0)


def writer_env(metrics_dir: Path, data_dir: Path) -> dict[str, str]:
    metrics_dir.mkdir(parents=True, exist_ok=True)
    return {**worker_env(data_dir), "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}


def write_and_exit(metrics_dir: Path, rule: str, data_dir: Path) -> int:
    """Run a process that writes one flag into ``metrics_dir`` and exits; its pid."""
    result = subprocess.run([sys.executable, "-c", WRITER, rule, "exit"], env=writer_env(metrics_dir, data_dir),
                            cwd=REPO_ROOT, check=True, capture_output=True, text=True, timeout=120)
    return int(result.stdout.split()[-1])


@contextmanager
def running_writer(metrics_dir: Path, rule: str, data_dir: Path) -> Iterator[int]:
    """A process that has written one flag into ``metrics_dir`` and is still running; its pid."""
    process = subprocess.Popen([sys.executable, "-c", WRITER, rule, "stay"], env=writer_env(metrics_dir, data_dir),
                               cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        process.communicate(input="", timeout=60)


def files_of(metrics_dir: Path, pid: int) -> list[Path]:
    return sorted(metrics_dir.glob(f"*_{process_identifier(pid)}.db"))


def test_a_starting_host_removes_its_dead_processes_files_only(tmp_path: Path) -> None:
    metrics_dir = tmp_path / "metrics"
    dead = write_and_exit(metrics_dir, "from_a_dead_process", tmp_path / "var")
    (dead_file,) = files_of(metrics_dir, dead)
    # A file another host wrote: whether its process lives cannot be checked from here.
    foreign = metrics_dir / "counter_elsewhere-7.db"
    foreign.write_bytes(dead_file.read_bytes())
    with running_writer(metrics_dir, "from_a_live_process", tmp_path / "var") as live:
        assert files_of(metrics_dir, live)
        prepare_metrics_dir(metrics_dir)
        assert not files_of(metrics_dir, dead)
        assert files_of(metrics_dir, live) and foreign.exists()
        foreign.unlink()
        samples = parse(generate_latest(host_registry(metrics_dir, None)).decode())
    assert flag_count(samples, "from_a_live_process") == 1
    assert flag_count(samples, "from_a_dead_process") == 0


def test_two_hosts_with_their_own_directories_see_only_their_own_processes(tmp_path: Path) -> None:
    first, second = tmp_path / "host-a" / "metrics", tmp_path / "host-b" / "metrics"
    for _ in range(2):
        write_and_exit(first, "seen_on_a", tmp_path / "host-a")
    write_and_exit(second, "seen_on_b", tmp_path / "host-b")
    on_a = parse(generate_latest(host_registry(first, None)).decode())
    on_b = parse(generate_latest(host_registry(second, None)).decode())
    assert (flag_count(on_a, "seen_on_a"), flag_count(on_a, "seen_on_b")) == (2, 0)
    assert (flag_count(on_b, "seen_on_a"), flag_count(on_b, "seen_on_b")) == (0, 1)


def test_a_finished_process_loses_its_live_gauges_and_keeps_its_counters(tmp_path: Path) -> None:
    pid = write_and_exit(tmp_path, "kept", tmp_path / "var")
    live_gauge = tmp_path / f"gauge_livesum_{HOST}-{pid}.db"
    live_gauge.write_bytes(b"")
    mark_process_dead(pid, tmp_path)
    assert not live_gauge.exists()
    assert files_of(tmp_path, pid)


def test_build_info_names_version_revision_and_python() -> None:
    for revision, shown in (("4f1c2e9", "4f1c2e9"), (None, "unknown")):
        samples = parse(generate_latest(host_registry(None, revision)).decode())
        labels = {"version": __version__, "revision": shown, "python_version": platform.python_version()}
        assert samples[("dsx_build_info", frozenset(labels.items()))] == 1


def scrape(url: str) -> Samples | None:
    try:
        response = httpx.get(url, timeout=5)
    except httpx.TransportError:
        return None
    return parse(response.text) if response.status_code == 200 else None


@pytest.mark.slow  # a Celery worker start and one job: about a minute on a busy machine
def test_a_worker_serves_its_own_metrics_on_its_port(dsx_env, tmp_path: Path) -> None:  # noqa: ANN001
    from app.main import create_app

    metrics_dir = tmp_path / "worker-metrics"
    stale = write_and_exit(metrics_dir, "left_by_an_earlier_run", tmp_path / "var")
    port = free_port()
    env = {**worker_env(dsx_env.data_dir), "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
           "DSX_WORKER_METRICS_PORT": str(port), "DSX_WORKER_METRICS_HOST": "127.0.0.1",
           "DSX_BUILD_REVISION": "rev-under-test"}
    url = f"http://127.0.0.1:{port}/metrics"
    with dsx_process(["worker", "--concurrency", "1"], env, tmp_path / "worker.log") as worker, \
            TestClient(create_app()) as api:
        wait_until(lambda: worker.poll() is None and scrape(url) is not None, timeout_s=120,
                   what="the worker's /metrics")
        assert not files_of(metrics_dir, stale), "the worker kept a dead process's files"
        response = api.post("/v1/jobs", files={"file": ("ds.pdf", text_pdf(["Supply voltage VDD 2.7 5.5 V"]),
                                                        "application/pdf")},
                            data={"parameters": json.dumps(["Supply voltage"])})
        assert response.status_code == 202, response.text
        job_id = response.json()["job_id"]
        job = wait_until(lambda: (j := api.get(f"/v1/jobs/{job_id}").json())["status"] not in ("queued", "running")
                         and j, timeout_s=180, what="the job to finish")
        samples = scrape(url)

    assert samples is not None
    finished = {dict(labels)["status"]: value for (name, labels), value in samples.items()
                if name == "dsx_jobs_finished_total"}
    assert finished == {job["status"]: 1}, finished
    answered = sum(value for (name, _), value in samples.items() if name == "dsx_parameter_duration_seconds_count")
    assert answered == 1
    # The submission was counted by the API process, which writes elsewhere: not this worker's sample.
    assert not [name for name, _ in samples if name == "dsx_jobs_submitted_total"]
    assert flag_count(samples, "left_by_an_earlier_run") == 0
    build = [dict(labels) for name, labels in samples if name == "dsx_build_info"]
    assert build == [{"version": __version__, "revision": "rev-under-test",
                      "python_version": platform.python_version()}]
    # The worker's directory holds its own processes' files only (its parent and pool child), none of this one's.
    assert list(metrics_dir.glob("*.db")) and not files_of(metrics_dir, os.getpid())


def test_the_api_exports_its_build_too(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from app.config import reset_settings
    from app.main import create_app

    monkeypatch.setenv("DSX_BUILD_REVISION", "api-rev")
    reset_settings()
    samples = parse(TestClient(create_app()).get("/metrics").text)
    (build,) = [dict(labels) for name, labels in samples if name == "dsx_build_info"]
    assert build["revision"] == "api-rev" and build["version"] == __version__


def test_a_worker_without_a_directory_gets_its_hosts_own(dsx_env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from app.config import get_settings, use_host_metrics_dir

    # Recorded first, so monkeypatch restores the variable that use_host_metrics_dir sets.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    path = use_host_metrics_dir()
    assert path == (dsx_env.data_dir / "metrics").resolve() and path.is_dir()
    assert get_settings().metrics_dir == path
