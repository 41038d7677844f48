"""``dsx extract``: one extraction in-process, no server, through the same pipeline the service runs.

It keeps its own embedded store (``~/.cache/dsx/extract`` unless ``--data-dir`` says otherwise), so its jobs
never show up in a server's ``dsx jobs``. Start-up stays light: the pipeline is imported only once the
arguments are known to be good.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from dsx_client.exits import EXIT_FAILURE, err_console, exit_with_status, fail
from rich.console import Console
from rich.markup import escape
from rich.table import Table

DEFAULT_DATA_DIR = Path("~/.cache/dsx/extract")

console = Console()


def use_private_store(data_dir: Path) -> None:
    """Point this process at an embedded store of its own (SQLite + SQLAlchemy broker under ``data_dir``),
    whatever database the environment names for a server. The upload is checked in-process (this is the caller's
    own file); its index is built in a child while this process loads the pipeline (``app.flows.local``)."""
    os.environ["DSX_DATA_DIR"] = str(data_dir.expanduser().resolve())
    for name in ("DSX_DATABASE_URL", "DSX_BROKER_URL"):
        os.environ.pop(name, None)
    os.environ["DSX_ADMISSION_SANDBOX"] = "false"
    os.environ["DSX_INDEX_SANDBOX"] = "false"
    from app.config import reset_settings

    reset_settings()


def extract(
    pdf: Annotated[Path, typer.Argument(help="Datasheet PDF")],
    parameter: Annotated[list[str], typer.Option("--parameter", "-p", help="Parameter name (repeatable)")],
    model: Annotated[str | None, typer.Option(help="Model alias (default: DSX_MODEL or the offline reader)")] = None,
    engine: Annotated[str, typer.Option(help="auto | agentic | single-pass")] = "auto",
    data_dir: Annotated[Path, typer.Option(help="Where this command keeps its own database, blobs and index "
                                           "cache (not the server's)")] = DEFAULT_DATA_DIR,
    as_json: Annotated[bool, typer.Option("--json", help="Print the job result as JSON, without progress")] = False,
) -> None:
    """Extract parameters from a PDF in-process, through the same pipeline the service runs.

    Exits 0 when done and unflagged, 3 when an answer needs review, 1 when the job failed, 2 on bad usage.

    Example: dsx extract examples/sample-datasheet.pdf -p "Dropout voltage" -p "Quiescent current"
    """
    if not pdf.is_file():
        fail(f"no such file: {pdf}")
    use_private_store(data_dir)
    from app.errors import DsxError
    from app.flows.local import extract_local

    show_progress = not as_json and console.is_terminal
    try:
        if show_progress:
            result = _extract_with_progress(pdf, parameter, model=model, engine=engine)
        else:
            result = extract_local(pdf, parameter, model=model, engine=engine)
    except DsxError as exc:
        fail(f"{exc.detail} [{exc.code}]", EXIT_FAILURE if exc.status >= 500 else 2)
    if as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print_results(result)
    exit_with_status(result["status"])


def _extract_with_progress(pdf: Path, parameters: list[str], *, model: str | None, engine: str) -> dict:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from app.flows.local import extract_local

    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("parameters"), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task(f"extracting from {pdf.name}", total=len(parameters))
        return extract_local(pdf, parameters, model=model, engine=engine,
                             on_progress=lambda done, total: progress.update(task, completed=done, total=total))


def print_results(result: dict) -> None:
    table = Table(title=f"job {result['job_id']}: {result['status']}")
    for column in ("parameter", "value", "unit", "conditions", "page", "conf.", "flags"):
        table.add_column(column)
    for row in result["results"]:
        values = row.get("values") or []
        if row.get("found") and values:
            value = "; ".join(_format_value(v) for v in values)
            unit = ", ".join(sorted({v.get("unit") or "" for v in values}))
            conditions = "; ".join(", ".join(v.get("conditions") or []) for v in values)
        else:
            value, unit, conditions = f"[dim]not found: {escape(row.get('reason') or '')}[/]", "", ""
        flags = ", ".join(f"{f['rule']}({f['severity']})" for f in row.get("flags") or [])
        confidence = row.get("confidence")
        table.add_row(escape(row["parameter"]), value, escape(unit), escape(conditions),
                      str(row.get("source_page") or ""), f"{confidence:.2f}" if confidence is not None else "",
                      f"[yellow]{escape(flags)}[/]" if flags else "")
    console.print(table)
    for row in result["results"]:
        variants = [variant for value in row.get("values") or [] for variant in value.get("other_variants") or []]
        if variants:
            described = "; ".join(_format_variant(v) for v in variants)
            console.print(f"  [cyan]other variants[/] {escape(row['parameter'])}: {escape(described)}")


def _format_value(value: dict) -> str:
    parts = [f"{label} {value[key]:g}" for key, label in (("min", "min"), ("typical", "typ"), ("max", "max"))
             if value.get(key) is not None]
    return " / ".join(parts)


def _format_variant(variant: dict) -> str:
    numbers = _format_value(variant)
    return f"{variant['label']}: {numbers} {variant.get('unit') or ''}".strip() if numbers else variant["label"]


def register(app: typer.Typer) -> None:
    """Add ``extract`` to ``app``."""
    app.command()(extract)
