"""How every `dsx` command fails: one message format on stderr and one table of exit codes."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

# Exit codes shared by every command: scripts can tell "you asked wrongly" from "it did not work".
EXIT_FAILURE = 1  # the request was fine but the server or the work failed
EXIT_USAGE = 2  # bad arguments or input files: fix the command line

err_console = Console(stderr=True)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print a clear message naming the problem, and exit non-zero."""
    err_console.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)
