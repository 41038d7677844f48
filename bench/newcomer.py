"""A newcomer's first hour, timed: clone the repository into a temporary directory, run the README's install step,
start the server on a free port (`make serve HOST=… PORT=…`), run every README example as printed, and print the
wall time of each step.

    .venv/bin/python bench/newcomer.py [--repo PATH_OR_URL] [--keep]

The clone is of the committed state (HEAD), so commit before measuring a change.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.support.readme_examples import READMES, readme_examples  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def step(name: str, command: list[str], **kwargs: object) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    seconds = time.perf_counter() - started
    status = "ok" if done.returncode == 0 else f"exit {done.returncode}"
    print(f"{seconds:8.1f} s  {name} [{status}]", flush=True)
    if done.returncode != 0:
        print(done.stdout[-1500:], done.stderr[-1500:], sep="\n")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", default=str(REPO_ROOT))
    parser.add_argument("--keep", action="store_true", help="Keep the temporary clone")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="dsx-newcomer-"))
    clone, home = workdir / "dsx", workdir / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DSX_", "VIRTUAL_ENV"))}
    env["HOME"] = str(home)
    total = step("git clone", ["git", "clone", "--quiet", args.repo, str(clone)])
    total += step("make install (the README's install step)", ["make", "install"], cwd=clone, env=env)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen(["make", "--no-print-directory", "serve", "HOST=127.0.0.1", f"PORT={port}"], cwd=clone,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:
            try:
                if httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.perf_counter() - started > 300:
                raise SystemExit("make serve did not become ready")
            time.sleep(0.2)
        ready = time.perf_counter() - started
        print(f"{ready:8.1f} s  make serve until /readyz answers", flush=True)
        total += ready
        example_env = {**env, "DSX_SERVER": base_url, "PATH": f"{clone / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"}
        paths = tuple(clone / path.relative_to(REPO_ROOT) for path in READMES)
        for example in readme_examples(paths):
            command = (["bash", "-euo", "pipefail", "-c", example.code] if example.language == "bash"
                       else [str(clone / ".venv" / "bin" / "python"), "-c", example.code])
            total += step(f"example {example.source.replace(str(clone) + '/', '')}", command, cwd=clone,
                          env=example_env)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"{total:8.1f} s  total")


if __name__ == "__main__":
    main()
