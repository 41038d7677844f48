"""`dsx eval` and `dsx detect` need the eval extra; without it they fail with an install hint, the rest works.

Run in a fresh interpreter where scipy cannot be imported (a ``None`` entry in ``sys.modules`` is what the import
system reports as "not installed"), since this test process has everything installed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from dsx_client.exits import EXIT_FAILURE

from tests.support.paths import REPO_ROOT

WITHOUT_SCIPY = """
import sys
sys.modules["scipy"] = None
from app.cli import main
sys.argv = ["dsx", *sys.argv[1:]]
main()
"""


def dsx_without_scipy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_SCIPY, *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("args", [["eval", "run", "--claims", "claims.yaml"], ["detect", "--trace", "trace.jsonl"]])
def test_a_command_of_the_eval_extra_names_what_is_missing_and_how_to_install_it(args: list[str]) -> None:
    done = dsx_without_scipy(*args)
    assert done.returncode == EXIT_FAILURE
    message = " ".join(done.stderr.split())
    assert f"dsx {args[0]}" in message and "scipy" in message and "pip install 'dsx[eval]'" in message


def test_the_other_commands_work_without_the_eval_extra() -> None:
    done = dsx_without_scipy("version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
