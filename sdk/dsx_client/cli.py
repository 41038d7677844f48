"""The dsx client command line: talk to a running dsx server through this SDK.

Installed on its own as ``dsx-client`` (``pip install ./sdk``); the server package's ``dsx`` mounts the same
commands.

`submit`, `jobs`, `result`, `trace` and the `review` group. Every command takes `--json` for scripts (JSON on
stdout, nothing else there) and `--server`/`--api-key`, which default to ``DSX_SERVER``/``DSX_API_KEY`` and then
to the config file (``~/.config/dsx/config.toml``: ``server = "..."``, ``api_key = "..."``).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.tree import Tree

from dsx_client.exits import EXIT_FAILURE, EXIT_USAGE, err_console, exit_with_status, fail

DEFAULT_SERVER = "http://127.0.0.1:8000"
CONFIG_HINT = "~/.config/dsx/config.toml"

console = Console()

ServerOption = Annotated[str | None, typer.Option(
    "--server", help="dsx server URL (default: DSX_SERVER, then the config file, then http://127.0.0.1:8000)")]
KeyOption = Annotated[str | None, typer.Option(
    "--api-key", help="API key (default: DSX_API_KEY, then the config file)")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (for scripts) instead of tables")]


# --- connection -------------------------------------------------------------------------------------------


def client_config(server: str | None, api_key: str | None) -> tuple[str, str | None]:
    """The server URL and key to use: command-line option, then environment, then config file, then default."""
    path = Path(os.environ.get("DSX_CLIENT_CONFIG") or CONFIG_HINT).expanduser()
    from_file: dict[str, Any] = {}
    if path.is_file():
        try:
            from_file = tomllib.loads(path.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            fail(f"config file {path} is not valid TOML: {exc}", EXIT_FAILURE)
    url = server or os.environ.get("DSX_SERVER") or from_file.get("server") or DEFAULT_SERVER
    key = api_key or os.environ.get("DSX_API_KEY") or from_file.get("api_key")
    return str(url), (str(key) if key else None)


@contextmanager
def connect(server: str | None, api_key: str | None) -> Iterator[Any]:
    """A `dsx_client.Client`; SDK errors become one clear line on stderr and exit status 1."""
    from dsx_client import ApiError, Client, DsxConnectionError, DsxError

    url, key = client_config(server, api_key)
    try:
        with Client(url, key) as client:
            yield client
    except ApiError as exc:
        fail(f"{exc.detail} [{exc.code}, HTTP {exc.status}]", EXIT_FAILURE)
    except DsxConnectionError as exc:
        fail(f"cannot reach the dsx server at {url} ({exc.__cause__!r}); set --server, DSX_SERVER or {CONFIG_HINT}",
             EXIT_FAILURE)
    except DsxError as exc:
        fail(str(exc), EXIT_FAILURE)


def _print_json(data: BaseModel | list[BaseModel] | dict | str) -> None:
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    elif isinstance(data, list):
        data = [item.model_dump(mode="json") for item in data]
    print(json.dumps(data, indent=2, ensure_ascii=False))


# --- rendering --------------------------------------------------------------------------------------------

_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
_STATUS_STYLE = {"done": "green", "needs_review": "yellow", "reviewed": "cyan", "failed": "red", "cancelled": "dim",
                 "running": "cyan", "queued": "cyan"}


def _status(status: str) -> str:
    return f"[{_STATUS_STYLE.get(status, 'white')}]{status}[/]"


def _flag_labels(flags: list[Any]) -> str:
    return ", ".join(f"[{_SEVERITY_STYLE.get(f.severity, 'white')}]{escape(f.rule)}[/]" for f in flags)


def _values(values: list[Any]) -> tuple[str, str, str]:
    """(numbers, units, conditions) of a list of reported values, one line per value."""
    numbers = "\n".join(str(v.model_copy(update={"unit": None})) for v in values)
    units = "\n".join(v.unit or "" for v in values)
    conditions = "\n".join(", ".join(v.conditions) for v in values)
    return escape(numbers), escape(units), escape(conditions)


def _cost(usd: float) -> str:
    return f"${usd:.4f}"


def print_job(job: Any) -> None:
    """Results table of a job, flag messages underneath."""
    done, total = job.progress
    title = f"job {job.job_id}: {_status(job.status)} — {escape(job.filename)} ({escape(job.model)})"
    table = Table(title=title, title_justify="left")
    for column in ("parameter", "value", "unit", "conditions", "page", "conf.", "flags", "review", "cost"):
        table.add_column(column, overflow="fold")
    for row in job.results:
        if row.found and row.values:
            value, unit, conditions = _values(row.values)
        else:
            reason = row.reason or row.error_code or ("pending" if row.status == "pending" else "")
            value, unit, conditions = f"[dim]not found{': ' + escape(reason) if reason else ''}[/]", "", ""
        review = ""
        if row.review is not None:
            review = f"{row.review.decision} ({escape(row.review.reviewer)})"
        table.add_row(escape(row.parameter), value, unit, conditions, str(row.source_page or ""),
                      f"{row.confidence:.2f}" if row.confidence is not None else "", _flag_labels(row.flags), review,
                      _cost(row.usage.cost_usd))
    console.print(table)
    console.print(f"usage: {job.usage.input_tokens} input + {job.usage.output_tokens} output tokens, "
                  f"{_cost(job.usage.cost_usd)}")
    for row in job.results:
        if row.other_variants:
            variants = "; ".join(str(v) for v in row.other_variants)
            console.print(f"  [cyan]other variants[/] {escape(row.parameter)}: {escape(variants)}")
    for row in job.results:
        for flag in row.flags:
            style = _SEVERITY_STYLE.get(flag.severity, "white")
            console.print(f"  [{style}]{flag.severity}[/] {escape(row.parameter)} · {escape(flag.rule)}: "
                          f"{escape(flag.message)}")
    if job.failure_code:
        console.print(f"[red]failed: {escape(job.failure_detail or '')} [{escape(job.failure_code)}][/]")
    elif not job.is_terminal:
        console.print(f"[cyan]still {job.status}: {done}/{total} parameters finished[/]")


# Span names and attributes of the dispatch record (OpenTelemetry GenAI conventions plus dsx.*) shown per kind.
_AGENT_KEYS = ("dsx.role", "dsx.engine", "dsx.model_alias", "dsx.outcome", "dsx.turns")
_CHAT_KEYS = ("dsx.llm.outcome", "dsx.llm.tool_call_count", "dsx.http.status_code", "gen_ai.usage.input_tokens",
              "gen_ai.usage.output_tokens", "dsx.llm.error_type")
_TOOL_KEYS = ("dsx.tool.outcome", "dsx.tool.error_code", "dsx.tool.output_chars")
_ROUTE_KEYS = ("dsx.route.engine", "dsx.route.reason")


def _span_label(span: Any) -> str:
    attributes = span.attributes or {}
    details: list[str] = []
    operation = attributes.get("gen_ai.operation.name")
    if span.name == "invoke_agent" or operation == "invoke_agent":
        keys = _AGENT_KEYS
    elif operation == "chat" or span.name.startswith("chat"):
        keys = _CHAT_KEYS
    elif operation == "execute_tool" or span.name.startswith("execute_tool"):
        keys = _TOOL_KEYS
    else:
        keys = _ROUTE_KEYS
    for key in keys:
        if attributes.get(key) not in (None, ""):
            details.append(f"{key.rsplit('.', 1)[-1]}={attributes[key]}")
    failed = span.status_code == "ERROR"
    name = f"[bold red]{escape(span.name)}[/]" if failed else f"[bold]{escape(span.name)}[/]"
    label = f"{name} [dim]{span.duration_ms:.0f} ms[/]"
    if details:
        label += " " + escape(" ".join(details))
    if failed and span.status_message:
        label += f" [red]{escape(span.status_message)}[/]"
    return label


def print_trace(trace: Any) -> None:
    tree = Tree(f"[bold]job {trace.job_id}[/]: {trace.span_count} spans in {len(trace.trace_ids)} traces")

    def add(node: Tree, span: Any) -> None:
        branch = node.add(_span_label(span))
        for child in span.children:
            add(branch, child)

    for root in trace.roots:
        add(tree.add(_tree_label(root)) if root.parameter or root.totals else tree, root)
    console.print(tree)


def _tree_label(root: Any) -> str:
    """The heading of one agent run: its parameter, then what it cost."""
    label = f"[bold cyan]{escape(root.parameter or 'no parameter')}[/]"
    totals = root.totals
    if totals is not None:
        label += (f" [dim]{totals.duration_ms / 1000:.1f} s · {totals.llm_calls} LLM calls · "
                  f"{totals.tool_calls} tool calls · {totals.input_tokens} in / {totals.output_tokens} out tokens · "
                  f"${totals.cost_usd:.4f}[/]")
    return label


# --- jobs -------------------------------------------------------------------------------------------------


def _parameter(text: str) -> str | dict[str, Any]:
    """`-p NAME`, or `-p '{"name": ..., "unit": ..., "conditions": [...]}'` for the full request."""
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            fail(f"parameter {text!r} looks like JSON but is not: {exc}", EXIT_USAGE)
        if not isinstance(value, dict):
            fail(f"parameter {text!r} must be a name or a JSON object", EXIT_USAGE)
        return value
    return text


def submit(
    pdf: Annotated[Path, typer.Argument(help="Datasheet PDF")],
    parameter: Annotated[list[str], typer.Option("--parameter", "-p",
                                                 help='Parameter name, or a JSON object {"name", "unit", '
                                                      '"conditions", "notes"} (repeatable)')],
    engine: Annotated[str | None, typer.Option(help="auto | agentic | single-pass (default: the server's)")] = None,
    model: Annotated[str | None, typer.Option(help="Model alias (default: the server's)")] = None,
    idempotency_key: Annotated[str | None, typer.Option(
        help="Reuse to make a re-run return the same job (default: a fresh key)")] = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait for the results")] = True,
    timeout: Annotated[float, typer.Option(help="Seconds to wait before giving up (the job keeps running)")] = 900,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Submit a datasheet to a dsx server, show progress, then the results with their flags.

    Exits 0 when the job is done and unflagged, 3 when it needs review, 1 when it failed, 2 on bad usage.

    Example: dsx submit examples/sample-datasheet.pdf -p "Dropout voltage" -p "Quiescent current"
    """
    if not pdf.is_file():
        fail(f"no such file: {pdf}", EXIT_USAGE)
    parameters = [_parameter(p) for p in parameter]
    with connect(server, api_key) as client:
        from dsx_client import WaitTimeout

        job = client.submit(pdf, parameters, engine=engine, model=model, idempotency_key=idempotency_key)
        if wait:
            try:
                job = _wait_with_progress(client, job, timeout, show=not as_json)
            except WaitTimeout as exc:
                if as_json:
                    _print_json(exc.job)
                fail(f"{exc}; follow it with `dsx result {exc.job.job_id}`", EXIT_FAILURE)
        if as_json:
            _print_json(job)
        elif wait:
            print_job(job)
        else:
            console.print(f"job {job.job_id}: {_status(job.status)} ({len(job.parameters)} parameters)")
    exit_with_status(job.status)


def _wait_with_progress(client: Any, job: Any, timeout: float, *, show: bool) -> Any:
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("parameters"), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True, disable=not show) as progress:
        task = progress.add_task(f"job {job.job_id[:8]} {job.status}", total=len(job.parameters))

        def update(snapshot: Any) -> None:
            done, total = snapshot.progress
            progress.update(task, completed=done, total=total,
                            description=f"job {snapshot.job_id[:8]} {snapshot.status}")

        return client.wait(job, timeout, on_progress=update)


def jobs(
    status: Annotated[str | None, typer.Option(help="Only jobs in this status")] = None,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 20,
    offset: Annotated[int, typer.Option(min=0)] = 0,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """List recent jobs on the server, newest first."""
    with connect(server, api_key) as client:
        page = client.list_jobs(status=status, limit=limit, offset=offset)
    if as_json:
        _print_json(page)
        return
    table = Table(title=f"jobs {offset + 1 if page.items else 0}–{offset + len(page.items)} of {page.total}",
                  title_justify="left")
    for column in ("job", "status", "file", "model", "engine", "params", "flags", "created"):
        table.add_column(column, overflow="fold")
    for job in page.items:
        done, total = job.progress
        table.add_row(job.job_id, _status(job.status), escape(job.filename), escape(job.model), job.engine,
                      f"{done}/{total}", str(len(job.flags)) if job.flags else "",
                      job.created_at.strftime("%Y-%m-%d %H:%M:%S"))
    console.print(table)


def result(
    job_id: Annotated[str, typer.Argument(metavar="JOB", help="Job id")],
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until the job has finished")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait")] = 900,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a job's results (values, pages, confidence, flags and review decisions).

    Exits 0 when the job is done and unflagged, 3 when it needs review, 1 when it failed."""
    with connect(server, api_key) as client:
        from dsx_client import WaitTimeout

        job = client.get(job_id)
        if wait:
            try:
                job = _wait_with_progress(client, job, timeout, show=not as_json)
            except WaitTimeout as exc:
                job = exc.job
    if as_json:
        _print_json(job)
    else:
        print_job(job)
    exit_with_status(job.status)


def trace(
    job_id: Annotated[str, typer.Argument(metavar="JOB", help="Job id")],
    payload: Annotated[bool, typer.Option("--payload/--no-payload",
                                          help="Include full LLM/tool inputs and outputs (JSON only)")] = False,
    parameter: Annotated[str | None, typer.Option("--parameter", "-p",
                                                  help="Only the agent runs of this requested parameter")] = None,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a job's dispatch record: one tree per parameter (with its tokens, cost and duration), under it the
    agent run, its LLM calls and tool calls."""
    with connect(server, api_key) as client:
        record = client.trace(job_id, payload=payload and as_json, parameter=parameter)
    if as_json:
        _print_json(record)
    elif not record.roots:
        console.print(f"job {job_id}: no spans recorded (yet)")
    else:
        print_trace(record)


# --- review -----------------------------------------------------------------------------------------------

review_app = typer.Typer(help="Review queue: list flagged answers, then approve, correct or reject them.",
                         invoke_without_command=True, no_args_is_help=False)


_AGE = re.compile(r"(\d+)\s*([mhdw])")
_AGE_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _moment(text: str) -> datetime:
    """``--since``: an age before now (``24h``) or an ISO 8601 moment (UTC when it names no zone)."""
    age = _AGE.fullmatch(text.strip().lower())
    if age:
        return datetime.now(UTC) - timedelta(**{_AGE_UNITS[age[2]]: int(age[1])})
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise typer.BadParameter(f"{text!r} is neither an age like 24h or 7d nor an ISO 8601 moment",
                                 param_hint="--since") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@review_app.callback()
def review_queue(
    ctx: typer.Context,
    status: Annotated[str, typer.Option(help="open | decided | all")] = "open",
    rule: Annotated[str | None, typer.Option(help="Only items flagged by this rule")] = None,
    model: Annotated[str | None, typer.Option(help="Only answers of this model")] = None,
    job: Annotated[str | None, typer.Option(help="Only this job")] = None,
    since: Annotated[str | None, typer.Option(help="Only items this recent: an age (30m, 24h, 7d, 2w) or an "
                                              "ISO 8601 moment")] = None,
    newest: Annotated[bool, typer.Option("--newest", help="Newest first instead of oldest first")] = False,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 20,
    offset: Annotated[int, typer.Option(min=0)] = 0,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Without a subcommand: list the queue (oldest first)."""
    if ctx.invoked_subcommand is not None:
        return
    cutoff = _moment(since) if since is not None else None
    with connect(server, api_key) as client:
        page = client.queue(status=status, rule=rule, model=model, job=job, since=cutoff, newest_first=newest,
                            limit=limit, offset=offset)
    if as_json:
        _print_json(page)
        return
    table = Table(title=f"review queue ({status}): {len(page.items)} of {page.total}", title_justify="left")
    for column in ("item", "job", "parameter", "value", "page", "flags", "decision"):
        table.add_column(column, overflow="fold")
    for item in page.items:
        value = _values(item.values)[0] if item.found else "[dim]not found[/]"
        unit = " ".join(sorted({v.unit for v in item.values if v.unit}))
        decision = f"{item.decision.decision} ({escape(item.decision.reviewer)})" if item.decision else ""
        table.add_row(str(item.extraction_id), item.job_id[:8], escape(item.parameter),
                      f"{value} {escape(unit)}".strip(), str(item.source_page or ""), _flag_labels(item.flags),
                      decision)
    console.print(table)
    if page.counts_by_rule:
        counts = ", ".join(f"{escape(r)} {n}" for r, n in sorted(page.counts_by_rule.items()))
        console.print(f"by rule: {counts}")
    if page.items and status == "open":
        console.print("[dim]dsx review show ITEM · approve ITEM · reject ITEM · correct ITEM --typical 3.3 --unit V[/]")


@review_app.command("show")
def review_show(
    item: Annotated[int, typer.Argument(metavar="ITEM", help="Item (extraction) id")],
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """One item in full: values, quote, every flag with its evidence, the decision."""
    with connect(server, api_key) as client:
        entry = client.item(item)
    if as_json:
        _print_json(entry)
        return
    console.print(f"[bold]item {entry.extraction_id}[/] · job {entry.job_id} · {escape(entry.parameter)} · "
                  f"{escape(entry.model)}")
    if entry.found:
        for value in entry.values:
            conditions = f" ({escape(', '.join(value.conditions))})" if value.conditions else ""
            console.print(f"  value: {escape(str(value))}{conditions}")
    else:
        console.print("  [dim]not found[/]")
    console.print(f"  page: {entry.source_page or '-'} · confidence: "
                  f"{entry.confidence if entry.confidence is not None else '-'}")
    if entry.quote:
        console.print(f"  quote: “{escape(entry.quote)}”")
    for flag in entry.flags:
        style = _SEVERITY_STYLE.get(flag.severity, "white")
        spans = ", ".join(flag.evidence.get("span_ids", []) or [])
        console.print(f"  [{style}]{flag.severity}[/] {escape(flag.rule)} (v{flag.rule_version or '?'}): "
                      f"{escape(flag.message)}" + (f" [dim]spans {spans}[/]" if spans else ""))
    if entry.decision:
        d = entry.decision
        console.print(f"  decision: {d.decision} by {escape(d.reviewer)} at {d.created_at:%Y-%m-%d %H:%M}"
                      + (f" — {escape(d.comment)}" if d.comment else ""))


CommentOption = Annotated[str | None, typer.Option("--comment", "-m", help="Why (kept in the audit list)")]
ReviewerOption = Annotated[str | None, typer.Option(help="Your name (ignored when the server uses API keys)")]


def _decide(server: str | None, api_key: str | None, item: int, decision: str, *, comment: str | None,
            reviewer: str | None, correction: dict[str, Any] | None, as_json: bool) -> None:
    with connect(server, api_key) as client:
        from dsx_client import CorrectionRequired

        try:
            stored = client.decide(item, decision, comment=comment, reviewer=reviewer, correction=correction)
        except CorrectionRequired as exc:
            fail(f"{exc.detail} Give --min/--typical/--max (and --unit) or --value.", EXIT_USAGE)
    if as_json:
        _print_json(stored)
        return
    past = {"approve": "approved", "correct": "corrected", "reject": "rejected"}[decision]
    console.print(f"{past} item {stored.extraction_id} ({escape(stored.parameter)}, job {stored.job_id}) "
                  f"as {escape(stored.reviewer)}")


@review_app.command("approve")
def review_approve(
    item: Annotated[int, typer.Argument(metavar="ITEM", help="Item (extraction) id")],
    comment: CommentOption = None,
    reviewer: ReviewerOption = None,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """The answer is right as extracted."""
    _decide(server, api_key, item, "approve", comment=comment, reviewer=reviewer, correction=None, as_json=as_json)


@review_app.command("reject")
def review_reject(
    item: Annotated[int, typer.Argument(metavar="ITEM", help="Item (extraction) id")],
    comment: CommentOption = None,
    reviewer: ReviewerOption = None,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """The answer is wrong and there is no right value to give (e.g. not in the datasheet)."""
    _decide(server, api_key, item, "reject", comment=comment, reviewer=reviewer, correction=None, as_json=as_json)


@review_app.command("correct")
def review_correct(
    item: Annotated[int, typer.Argument(metavar="ITEM", help="Item (extraction) id")],
    minimum: Annotated[float | None, typer.Option("--min", help="Corrected minimum")] = None,
    typical: Annotated[float | None, typer.Option("--typical", "--typ", help="Corrected typical value")] = None,
    maximum: Annotated[float | None, typer.Option("--max", help="Corrected maximum")] = None,
    unit: Annotated[str | None, typer.Option(help="Unit of the corrected value")] = None,
    condition: Annotated[list[str] | None, typer.Option("--condition", help="Condition (repeatable)")] = None,
    value: Annotated[list[str] | None, typer.Option(
        "--value", help='Whole value as JSON {"min","typical","max","unit","conditions"} (repeatable)')] = None,
    page: Annotated[int | None, typer.Option(min=1, help="Page the right value is on")] = None,
    quote: Annotated[str | None, typer.Option(help="Verbatim datasheet text of the right value")] = None,
    comment: CommentOption = None,
    reviewer: ReviewerOption = None,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """The answer is wrong; record the right value (it becomes a gold claim for evaluation)."""
    values: list[dict[str, Any]] = []
    for text in value or []:
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            fail(f"--value {text!r} is not JSON: {exc}", EXIT_USAGE)
        if not isinstance(parsed, dict):
            fail(f"--value {text!r} must be a JSON object", EXIT_USAGE)
        values.append(parsed)
    if any(v is not None for v in (minimum, typical, maximum)):
        values.append({"min": minimum, "typical": typical, "max": maximum, "unit": unit,
                       "conditions": list(condition or [])})
    correction = {"values": values, "source_page": page, "quote": quote} if values else None
    try:
        _decide(server, api_key, item, "correct", comment=comment, reviewer=reviewer, correction=correction,
                as_json=as_json)
    except ValueError as exc:  # the SDK validates the correction before sending it
        fail(f"invalid correction: {exc}", EXIT_USAGE)


@review_app.command("history")
def review_history(
    job: Annotated[str | None, typer.Option(help="Only this job")] = None,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 20,
    offset: Annotated[int, typer.Option(min=0)] = 0,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """The audit list of decisions, newest first."""
    with connect(server, api_key) as client:
        page = client.reviews(job=job, limit=limit, offset=offset)
    if as_json:
        _print_json(page)
        return
    table = Table(title=f"decisions: {len(page.items)} of {page.total}", title_justify="left")
    for column in ("when", "item", "job", "parameter", "decision", "reviewer", "correction", "comment"):
        table.add_column(column, overflow="fold")
    for d in page.items:
        corrected = "; ".join(str(v) for v in d.correction.values) if d.correction else ""
        table.add_row(d.created_at.strftime("%Y-%m-%d %H:%M"), str(d.extraction_id), d.job_id[:8],
                      escape(d.parameter), d.decision, escape(d.reviewer), escape(corrected), escape(d.comment or ""))
    console.print(table)


@review_app.command("corrections")
def review_corrections(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout")] = None,
    job: Annotated[str | None, typer.Option(help="Only this job")] = None,
    server: ServerOption = None,
    api_key: KeyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Export corrections as gold claims (the evaluation set's YAML format; JSON with --json)."""
    import yaml

    with connect(server, api_key) as client:
        body = client.corrections_yaml(job=job)
    if as_json:
        body = json.dumps(yaml.safe_load(body), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        print(body, end="")
    else:
        output.write_text(body)
        err_console.print(f"wrote {output}")


app = typer.Typer(name="dsx-client", help="Client for a dsx server: submit datasheets, read results and "
                  "traces, work the review queue.", no_args_is_help=True, add_completion=False)


def register(app: typer.Typer) -> None:
    """Add the client commands and the `review` group to ``app``."""
    app.command()(submit)
    app.command()(jobs)
    app.command()(result)
    app.command()(trace)
    app.add_typer(review_app, name="review")


register(app)


def main() -> None:
    app()
