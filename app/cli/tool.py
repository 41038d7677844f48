"""CLI commands of this domain, registered on the main `dsx` app.

``dsx tool PDF TOOL --args JSON`` runs one document tool and prints the tool-result message exactly as the
model would receive it, which makes the tool surface debuggable without an LLM in the loop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""

    @app.command("tool")
    def tool(
        pdf: Annotated[Path, typer.Argument(help="The datasheet PDF")],
        name: Annotated[str, typer.Argument(help="Tool: build_datasheet, get_section_text, search_text, "
                                            "extract_table_markdown or inspect_page")],
        args: Annotated[str, typer.Option("--args", help='Tool arguments as a JSON object, e.g. \'{"page": 3}\'')]
        = "{}",
        pretty: Annotated[bool, typer.Option(help="Indent the JSON (the model receives it compact)")] = False,
    ) -> None:
        """Run a document tool on PDF and print the tool-result message the model would receive."""
        # Imported here: the document layer (PyMuPDF, layout models) is the heaviest import of the CLI.
        from app.documents.cache import open_index
        from app.documents.index import IndexBuildError
        from app.documents.tools import DocumentTools, envelope_json, error

        try:
            arguments = json.loads(args)
        except json.JSONDecodeError as exc:
            typer.echo(f"error: --args is not valid JSON: {exc}", err=True)
            raise typer.Exit(2) from exc
        try:
            index = open_index(pdf)
        except IndexBuildError as exc:
            typer.echo(f"error: cannot index {pdf}: {exc} ({exc.code})", err=True)
            raise typer.Exit(2) from exc
        tools = DocumentTools(index)
        result = tools.call(name, arguments) if isinstance(arguments, dict) else error(
            "invalid_argument", "Tool arguments must be a JSON object.")
        text = envelope_json(name, result)
        if pretty:
            text = json.dumps(json.loads(text), ensure_ascii=False, indent=2)
        typer.echo(text)
