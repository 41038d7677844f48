"""The examples a newcomer copies: fenced ``bash`` and ``python`` blocks of the READMEs, and the ``Example:`` lines
of the command-line help, exactly as printed. Shared by the README test and the newcomer benchmark."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import REPO_ROOT

READMES = (REPO_ROOT / "README.md", REPO_ROOT / "sdk" / "README.md")
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Blocks that install or start things: the newcomer runs them once, by hand (or the benchmark does), not per test.
# Deployment blocks (``docker …``) need a container engine, which a newcomer's first hour (and CI) does not have.
_SETUP = re.compile(r"^\s*(make\b|pip install|docker\b)", re.MULTILINE)


@dataclass(frozen=True)
class Example:
    source: str  # README path and line, or the command whose help printed it
    language: str  # bash | python
    code: str

    @property
    def name(self) -> str:
        return f"{self.source} ({self.language})"


def readme_examples(paths: tuple[Path, ...] = READMES) -> list[Example]:
    """Every runnable fenced block, set-up and deployment blocks (``make …``, ``pip install …``, ``docker …``) left
    out."""
    found: list[Example] = []
    for path in paths:
        text = path.read_text()
        for match in _FENCE.finditer(text):
            language, code = match[1], match[2]
            if language not in ("bash", "python") or _SETUP.search(code):
                continue
            line = text.count("\n", 0, match.start()) + 1
            shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
            found.append(Example(f"{shown}:{line}", language, code))
    return found


def help_examples() -> list[Example]:
    """``Example: …`` lines of every `dsx` command's help, as `dsx COMMAND --help` prints them."""
    import typer

    from app.cli import cli

    found: list[Example] = []
    group = typer.main.get_command(cli)
    for name, command in sorted(group.commands.items()):  # type: ignore[attr-defined]
        for line in (command.help or "").splitlines():
            if line.strip().startswith("Example: "):
                found.append(Example(f"dsx {name} --help", "bash", ".venv/bin/" + line.strip()[len("Example: "):]))
    return found
