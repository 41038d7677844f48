"""Every README, SDK README and command-line help example runs, exactly as printed, against a server started the
way the README starts it (`make serve HOST=… PORT=…`, on a free port and a throwaway data dir)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.live import free_port
from tests.support.paths import REPO_ROOT
from tests.support.processes import stop_group, wait_until, worker_env
from tests.support.readme_examples import Example, help_examples, readme_examples

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

EXAMPLES = readme_examples() + help_examples()
EXAMPLE_TIMEOUT_S = 600


def _ready(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def newcomer_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """`make serve` on a free port; the environment of a newcomer's second terminal pointing at it."""
    home = tmp_path_factory.mktemp("home")
    port = free_port()
    env = worker_env(home / "var")
    env["HOME"] = str(home)  # ~/.cache/dsx/extract and ~/.config/dsx of this test only
    log = (home / "serve.log").open("wb")
    server = subprocess.Popen(["make", "--no-print-directory", "serve", "HOST=127.0.0.1", f"PORT={port}"],
                              cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _ready(base_url) or server.poll() is not None, timeout_s=180, what="make serve")
        assert server.poll() is None, (home / "serve.log").read_text()
        yield {**env, "DSX_SERVER": base_url, "PATH": f"{REPO_ROOT / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"}
    finally:
        stop_group(server)
        log.close()


def test_there_are_examples_from_every_source() -> None:
    sources = {example.source.split(":")[0] for example in EXAMPLES}
    assert {"README.md", "sdk/README.md"} <= sources
    assert any(source.startswith("dsx ") for source in sources)
    assert all("../shared" not in example.code for example in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.name for example in EXAMPLES])
def test_example_runs_as_printed(example: Example, newcomer_env: dict[str, str], tmp_path: Path) -> None:
    command = (["bash", "-euo", "pipefail", "-c", example.code] if example.language == "bash"
               else [sys.executable, "-c", example.code])
    done = subprocess.run(command, cwd=REPO_ROOT, env=newcomer_env, capture_output=True, text=True,
                          timeout=EXAMPLE_TIMEOUT_S)
    output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{example.name} exited {done.returncode}\n{output}"
    assert done.stdout.strip(), f"{example.name} printed nothing"
