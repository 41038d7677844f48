"""`dsx serve` starts its worker below the API's CPU priority, so on a busy host requests are answered first."""

from __future__ import annotations

import os
import sys

from app.cli import WORKER_NICENESS, start_at_lower_priority


def test_the_worker_command_runs_niced_below_the_server() -> None:
    read_niceness = [sys.executable, "-c", "import os, sys; sys.exit(os.nice(0))"]
    child = start_at_lower_priority(read_niceness, dict(os.environ))
    assert child.wait(timeout=60) == min(os.nice(0) + WORKER_NICENESS, 19)
