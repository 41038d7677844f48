"""Spawning dsx processes (workers, servers) for tests, always bounded in time and cleaned up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.paths import REPO_ROOT


@contextmanager
def dsx_process(args: list[str], env: dict[str, str], log_path: Path) -> Iterator[subprocess.Popen]:
    """Run ``python -m app.cli ARGS`` in its own process group; SIGTERM then SIGKILL the group on exit."""
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "app.cli", *args], cwd=REPO_ROOT, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            yield process
        finally:
            stop_group(process)


def stop_group(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def worker_env(data_dir: Path, database_url: str | None = None, broker_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSX_") or k.startswith("DSX_TEST_")}
    env["DSX_DATA_DIR"] = str(data_dir)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    if database_url:
        env["DSX_DATABASE_URL"] = database_url
    if broker_url:
        env["DSX_BROKER_URL"] = broker_url
    return env


def wait_until(predicate: Callable[[], object], timeout_s: float, interval_s: float = 0.5, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s:.0f}s waiting for {what}")


@contextmanager
def api_process(env: dict[str, str], port: int, log_path: Path) -> Iterator[str]:
    """The API alone (uvicorn) on 127.0.0.1:``port`` in its own process group; yields its base URL once
    ``/readyz`` answers."""
    import httpx

    base = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
                                    "--port", str(port)], cwd=REPO_ROOT, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            def ready() -> bool:
                if process.poll() is not None:
                    raise RuntimeError(f"the API exited during start-up; see {log_path}")
                try:
                    return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
                except httpx.TransportError:
                    return False

            wait_until(ready, timeout_s=120, interval_s=0.3, what="the API to be ready")
            yield base
        finally:
            stop_group(process)
