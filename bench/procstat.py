"""The few process and CPU figures bench/load.py needs, read from Linux's /proc: a stand-in for psutil, which is not
a dependency of the project. Same names and shapes as the psutil calls it replaces (``Process``, ``process_iter``,
``net_connections``, ``cpu_times``, ``cpu_count``, ``Error``, ``CONN_LISTEN``), so the benchmark uses psutil when
it is installed and this otherwise.
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

PROC = Path("/proc")
CONN_LISTEN = "LISTEN"
_TICKS = os.sysconf("SC_CLK_TCK")
_CpuTimes = namedtuple("_CpuTimes", "user system")
_Address = namedtuple("_Address", "ip port")
_Connection = namedtuple("_Connection", "laddr status pid")


class Error(Exception):
    pass


def _stat_fields(pid: int) -> list[str]:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError as exc:
        raise Error(str(exc)) from exc
    return text[text.rindex(")") + 2:].split()  # fields from the state on (field 3 of proc(5))


class Process:
    def __init__(self, pid: int) -> None:
        self.pid = pid

    def parent(self) -> Process | None:
        ppid = int(_stat_fields(self.pid)[1])
        return Process(ppid) if ppid > 0 else None

    def cmdline(self) -> list[str]:
        try:
            return (PROC / str(self.pid) / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError as exc:
            raise Error(str(exc)) from exc

    def cpu_times(self) -> _CpuTimes:
        fields = _stat_fields(self.pid)
        return _CpuTimes(int(fields[11]) / _TICKS, int(fields[12]) / _TICKS)

    def children(self, recursive: bool = False) -> list[Process]:
        by_parent: dict[int, list[int]] = {}
        for process in process_iter():
            try:
                by_parent.setdefault(int(_stat_fields(process.pid)[1]), []).append(process.pid)
            except Error:
                continue
        found, frontier = [], [self.pid]
        while frontier:
            kids = by_parent.get(frontier.pop(), [])
            found.extend(kids)
            if recursive:
                frontier.extend(kids)
        return [Process(pid) for pid in found]


def process_iter() -> list[Process]:
    return [Process(int(entry.name)) for entry in PROC.iterdir() if entry.name.isdigit()]


def net_connections(_kind: str = "tcp") -> list[_Connection]:
    """Listening TCP sockets with the process holding each."""
    listening: dict[str, int] = {}
    for table in ("tcp", "tcp6"):
        try:
            lines = (PROC / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                listening[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    connections = []
    for process in process_iter():
        try:
            for fd in (PROC / str(process.pid) / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:[") and target[8:-1] in listening:
                    connections.append(_Connection(_Address("", listening[target[8:-1]]), CONN_LISTEN, process.pid))
        except OSError:
            continue
    return connections


class _MachineTimes(tuple):
    @property
    def idle(self) -> float:
        return self[3] + self[4]  # idle and iowait


def cpu_times() -> _MachineTimes:
    fields = (PROC / "stat").read_text().splitlines()[0].split()[1:]
    times = [int(value) / _TICKS for value in fields[:8]]
    # Summing the tuple counts idle and iowait once each, as with psutil.
    return _MachineTimes(times)


def cpu_count() -> int | None:
    return os.cpu_count()
