"""Private Redis and PostgreSQL servers that a test may stop and start at will.

The machine's shared servers on the default ports serve everyone's tests, so a test that restarts its backing
services runs its own: ``redis-server`` on a free loopback port (no persistence, like a cache that lost its
memory), and a PostgreSQL cluster made with ``initdb`` in a temporary directory, listening on a free loopback
port with its socket in that directory. Every wait is bounded; both are stopped (and the cluster deleted) on
exit. PostgreSQL refuses to run as root, so as root the cluster belongs to the ``postgres`` user.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from tests.support.live import free_port
from tests.support.prerequisites import missing_prerequisite

START_TIMEOUT_S = 60.0


def _wait(predicate, timeout_s: float, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise TimeoutError(f"timed out after {timeout_s:.0f}s waiting for {what}")


@dataclass
class RedisServer:
    port: int
    workdir: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = (self.workdir / "redis.log").open("ab")
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _wait(self.ping, START_TIMEOUT_S, f"redis on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.5).ping())
        except redis.RedisError:
            return False


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        missing_prerequisite("redis-server is not installed (Debian: apt-get install -y redis-server)")
    workdir = Path(tempfile.mkdtemp(prefix="dsx-redis-"))
    server = RedisServer(port=free_port(), workdir=workdir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class PostgresCluster:
    port: int
    root: Path
    bindir: Path
    as_postgres: bool

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = START_TIMEOUT_S) -> None:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL)

    def init(self) -> None:
        self._run("initdb", "-D", str(self.datadir), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.datadir), "-o", options, "-l", str(self.root / "postgres.log"),
                  "-w", "-t", str(int(START_TIMEOUT_S)), "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.datadir), "-m", mode, "-w", "-t", "60", "stop")

    def running(self) -> bool:
        return (self.datadir / "postmaster.pid").exists()


@contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not binaries:
        missing_prerequisite("PostgreSQL server binaries (initdb) are not installed")
    as_postgres = os.geteuid() == 0
    root = Path(tempfile.mkdtemp(prefix="dsx-pg-"))
    if as_postgres:
        shutil.chown(root, user="postgres", group="postgres")
    cluster = PostgresCluster(port=free_port(), root=root, bindir=Path(binaries[-1]).parent, as_postgres=as_postgres)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        if cluster.running():
            with suppress(subprocess.SubprocessError, OSError):
                cluster.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)
