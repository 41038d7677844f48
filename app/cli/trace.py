"""CLI commands of this domain, registered on the main `dsx` app."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
