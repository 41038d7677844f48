"""`dsx` command line: service processes, local extraction, and (via registered modules) debugging,
client, review and evaluation commands."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time
from typing import Annotated

import typer
from rich.console import Console

from app import __version__

cli = typer.Typer(name="dsx", help="Datasheet parameter extraction with a dispatch record.",
                  no_args_is_help=True, add_completion=False)
console = Console()


@cli.command()
def version() -> None:
    """Print the dsx version."""
    console.print(__version__)


@cli.command()
def migrate(
    downgrade: Annotated[str | None, typer.Option(help="Downgrade to this revision instead")] = None,
    wait: Annotated[float | None, typer.Option(
        help="Migrate nothing: wait up to this many seconds for another process to migrate to this build's head "
             "(a pod's init container); exit 1 if it does not")] = None,
) -> None:
    """Apply database migrations (upgrade to head)."""
    from app import migrate as migrations

    if wait is not None:
        if not migrations.wait_until_current(wait):
            console.print(f"the database is not at this build's migrations after {wait:g} s")
            raise typer.Exit(1)
        console.print("database is up to date")
        return

    if downgrade:
        migrations.downgrade(revision=downgrade)
    else:
        migrations.upgrade()
    console.print("database is up to date" if not downgrade else f"downgraded to {downgrade}")


@cli.command()
def worker(
    concurrency: Annotated[int, typer.Option(help="Worker processes")] = 1,
    pool: Annotated[str, typer.Option(help="Celery pool: prefork, solo, threads")] = "prefork",
) -> None:
    """Run a Celery worker that processes queued jobs (its own /metrics on DSX_WORKER_METRICS_PORT when set)."""
    from app.config import get_settings, use_host_metrics_dir

    if get_settings().worker_metrics_port and get_settings().metrics_dir is None:
        # The pool children are separate processes: without a directory the parent could serve only its own.
        use_host_metrics_dir()
    from workers.celery_app import celery_app

    celery_app.worker_main(["worker", "--loglevel=INFO", f"--concurrency={concurrency}", f"--pool={pool}",
                            "-Q", "dsx", "--without-gossip", "--without-mingle", "--without-heartbeat"])


# On the one host `dsx serve` runs on, the API answers first: the worker (and the pool and index-build children it
# starts, which inherit this) runs at a lower CPU priority, so when the cores are busy a burst of submissions or
# status reads is answered promptly and the jobs, which nobody waits on interactively, take the CPU that is left.
WORKER_NICENESS = 10


def start_at_lower_priority(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``command`` niced by :data:`WORKER_NICENESS` (relative to this process)."""
    return subprocess.Popen(command, env=env, preexec_fn=lambda: os.nice(WORKER_NICENESS))


# How long the API keeps an idle connection open. Longer than HTTP clients keep idle pooled connections (httpx: 5 s,
# uvicorn's default too), so the server never closes a connection just as a client sends its next request on it:
# that race resets the connection, and under a burst of polls it lost a few requests per hundred.
HTTP_KEEP_ALIVE_S = 75


@cli.command()
def serve(
    host: Annotated[str, typer.Option(help="Bind address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port")] = 8000,
    workers: Annotated[int, typer.Option("--workers", help="Worker processes to start beside the API")] = 1,
    api_processes: Annotated[int, typer.Option("--api-processes", min=1, help="API server processes")] = 1,
) -> None:
    """Run the API and a worker together (embedded SQLite + SQLAlchemy broker unless URLs are set)."""
    from app import migrate as migrations
    from app.config import environment_for_children, get_settings

    settings = get_settings()
    migrations.upgrade()
    env = environment_for_children()
    mode = "embedded (SQLite + SQLAlchemy broker)" if settings.is_embedded else "production URLs"
    console.print(f"dsx {__version__}: {mode}, data in {settings.data_dir.resolve()}, model {settings.model}")
    children = [
        start_at_lower_priority([sys.executable, "-m", "app.cli", "worker", "--concurrency", str(workers)], env),
        subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--host", host, "--port", str(port),
                          "--timeout-keep-alive", str(HTTP_KEEP_ALIVE_S), "--workers", str(api_processes)], env=env),
    ]
    console.print(f"API on http://{host}:{port} (OpenAPI at /docs); press Ctrl-C to stop")

    def stop(*_args: object) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    try:
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        stop()
        for child in children:
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()


def _register_subcommands() -> None:
    from dsx_client.cli import register as register_client

    from app.cli.admin import register as register_admin
    from app.cli.extract import register as register_extract
    from app.cli.extras import missing_eval_modules, unavailable
    from app.cli.tool import register as register_tool
    from app.cli.trace import register as register_trace

    missing = missing_eval_modules()
    if missing:
        register_review, register_eval = unavailable("detect", missing), unavailable("eval", missing)
    else:
        from app.cli.detect import register as register_review
        from app.cli.eval import register as register_eval

    for register in (register_extract, register_tool, register_trace, register_review, register_client,
                     register_eval, register_admin):
        register(cli)


_register_subcommands()


def main() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        cli()
    finally:
        # Once LiteLLM and the agent are loaded, the garbage collections of the interpreter's shutdown take about
        # two seconds, longer than a small extraction itself. Nothing is left to collect that matters at exit:
        # exit handlers (span export, log flush) and thread joins still run as usual.
        gc.disable()
        gc.freeze()

