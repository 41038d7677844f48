"""This host's metrics: its multiprocess directory, what one scrape of it reads, and a worker's own endpoint.

Multiprocess mode stays within one host's process group (the API's uvicorn processes, or a Celery worker's parent
and pool children): each host has its own directory and its own ``/metrics``, and Prometheus discovers and scrapes
every host (deploy/prometheus). A directory shared between hosts would make each of them report the others' sums.

Files of finished processes are kept while the host runs, so counters never go backwards; a process that starts
the host (the API, a worker) removes the files its host's dead processes left behind, since their counts belong
to an earlier run that Prometheus has already seen end.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from wsgiref.simple_server import WSGIServer

from prometheus_client import REGISTRY, CollectorRegistry, multiprocess, start_http_server
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from app.metrics import HOST, BuildInfo, file_owner, process_identifier

log = logging.getLogger(__name__)


def remove_stale_files(directory: Path) -> list[Path]:
    """Remove the multiprocess files of this host's processes that are no longer running; return them.

    Files of live processes stay. Files written by another host are left alone (their owners cannot be checked
    from here) and logged: the directory is meant to be this host's only.
    """
    removed: list[Path] = []
    foreign: set[str] = set()
    for path in directory.glob("*.db"):
        owner = file_owner(path.name)
        if owner is None:
            continue
        host, pid = owner
        if host != HOST:
            foreign.add(host)
        elif not _is_running(pid):
            path.unlink(missing_ok=True)
            removed.append(path)
    if foreign:
        log.warning("metrics directory %s also holds files of other hosts (%s): give each host its own",
                    directory, ", ".join(sorted(foreign)))
    return removed


def prepare_metrics_dir(directory: Path) -> None:
    """Create the directory if needed and clear what this host's dead processes left in it."""
    directory.mkdir(parents=True, exist_ok=True)
    removed = remove_stale_files(directory)
    if removed:
        log.info("removed %d metrics files of finished processes from %s", len(removed), directory)


def mark_process_dead(pid: int, directory: Path) -> None:
    """Forget a finished process's live gauges (prometheus-client keeps its counters and histograms)."""
    # The library formats its argument into the file name, which carries our identifier rather than the bare pid.
    multiprocess.mark_process_dead(process_identifier(pid), str(directory))  # type: ignore[arg-type]


def _is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class _ProcessRegistry(Collector):
    """This process's own registry, for the single-process case (no multiprocess directory configured)."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def host_registry(metrics_dir: Path | None, revision: str | None) -> CollectorRegistry:
    """What one scrape of this host reads: every process's samples from the host's directory (or this process's
    own registry when there is none), and ``dsx_build_info``."""
    registry = CollectorRegistry(auto_describe=False)
    if metrics_dir is not None:
        multiprocess.MultiProcessCollector(registry, path=str(metrics_dir))
    else:
        registry.register(_ProcessRegistry())
    registry.register(BuildInfo(revision))
    return registry


@dataclass
class MetricsServer:
    server: WSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def serve_metrics(host: str, port: int, registry: CollectorRegistry) -> MetricsServer:
    """Serve ``registry`` at ``http://host:port/metrics`` from a background thread of this process."""
    server, thread = start_http_server(port, addr=host, registry=registry)
    return MetricsServer(server, thread)
