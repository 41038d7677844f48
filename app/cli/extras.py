"""Commands that need the ``eval`` extra (``pip install 'dsx[eval]'``) are mounted only when it is installed;
otherwise a stand-in says what is missing, so a service install runs without the evaluation harness."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import typer
from dsx_client.exits import EXIT_FAILURE, fail

# The evaluation package and the third-party modules of the `eval` extra in pyproject.toml.
EVAL_MODULES = ("evaluation", "scipy", "matplotlib")


def missing_eval_modules() -> list[str]:
    """The modules of the eval extra this interpreter cannot find (found without importing them)."""
    return [name for name in EVAL_MODULES if importlib.util.find_spec(name) is None]


def unavailable(command: str, missing: list[str]) -> Callable[[typer.Typer], None]:
    """A registration that mounts ``command`` as a stand-in failing with an install hint."""

    def register(app: typer.Typer) -> None:
        @app.command(command, help="Needs the eval extra: pip install 'dsx[eval]'.",
                     context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
        def stand_in(ctx: typer.Context) -> None:
            fail(f"`dsx {command}` needs the eval extra, which is not installed (missing: {', '.join(missing)}); "
                 "install it with: pip install 'dsx[eval]'", EXIT_FAILURE)

    return register
