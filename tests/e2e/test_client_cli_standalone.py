"""`pip install ./sdk` alone gives a working `dsx-client`: a fresh venv without the server package talks to a
live server."""

from __future__ import annotations

import json
import subprocess
import venv
from pathlib import Path

import pytest

from tests.support.live import live_server
from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.slow


def test_client_cli_runs_from_a_venv_with_only_the_sdk(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(REPO_ROOT / "sdk")], check=True, timeout=600)
    server_package = subprocess.run([python, "-c", "import app.cli"], capture_output=True, cwd=tmp_path)
    assert server_package.returncode != 0, "the venv must not see the server package"

    with live_server(tmp_path, worker=False) as server:
        listed = subprocess.run([env_dir / "bin" / "dsx-client", "jobs", "--json", "--server", server.base_url],
                                capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert listed.returncode == 0, listed.stderr
        assert json.loads(listed.stdout)["total"] == 0

    usage = subprocess.run([env_dir / "bin" / "dsx-client", "submit", str(tmp_path / "missing.pdf"), "-p", "x"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert usage.returncode == 2 and "no such file" in usage.stderr
