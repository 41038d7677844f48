"""How every `dsx` command ends: one table of exit codes and one failure format on stderr.

Scripts can tell a clean result from a flagged one, and "you asked wrongly" from "it did not work":

| code | meaning |
|---|---|
| 0 | done, and no answer was flagged (or every flagged answer has a reviewer's decision: reviewed) |
| 1 | failed: the server, the job or the work failed (or the job was cancelled) |
| 2 | usage: bad arguments or input files; fix the command line |
| 3 | needs review: the job finished but at least one answer carries a flag of severity warning or above |
"""

from __future__ import annotations

from enum import IntEnum
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    NEEDS_REVIEW = 3


EXIT_FAILURE = ExitCode.FAILED
EXIT_USAGE = ExitCode.USAGE

# A reviewed job had flags, and a reviewer has decided every one of them: it ends like a clean one.
_BY_STATUS = {"done": ExitCode.OK, "reviewed": ExitCode.OK, "needs_review": ExitCode.NEEDS_REVIEW,
              "failed": ExitCode.FAILED, "cancelled": ExitCode.FAILED}

err_console = Console(stderr=True)


def exit_code_for_status(status: str) -> ExitCode:
    """The exit code of a command that ends on a job in ``status``; a job still queued or running is 0
    (it was submitted without waiting, or shown as it stands)."""
    return _BY_STATUS.get(status, ExitCode.OK)


def exit_with_status(status: str) -> None:
    """End the command with the exit code of a job in ``status`` (returns normally for 0)."""
    code = exit_code_for_status(status)
    if code != ExitCode.OK:
        raise typer.Exit(int(code))


def fail(message: str, code: int = ExitCode.USAGE) -> NoReturn:
    """Print a clear message naming the problem, and exit non-zero."""
    err_console.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(int(code))
