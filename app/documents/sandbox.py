"""Index builds in a child process under a wall-clock limit and an address-space limit.

Why a child: MuPDF is C code parsing files anyone may upload. A crafted or merely broken PDF can loop for
minutes, allocate gigabytes or take the interpreter down with a segfault. Inside the worker that would stall or
kill every job the worker holds (and the sweeper thread living in it); inside a child it costs the child, and
the job fails with a typed code instead:

* ``index_timeout``: the build outran ``index_build_timeout_s`` (the child stops itself between pages) or the
  child stopped answering (killed after ``index_build_kill_after_s``, or by its CPU-time limit);
* ``index_memory_exceeded``: the build hit the ``RLIMIT_AS`` cap of ``index_build_memory_mb``;
* ``index_build_crashed``: the child died on a signal (a MuPDF crash);
* the codes of ``IndexBuildError`` itself (``corrupt_pdf``, ``encrypted_pdf``, ``empty_pdf``, ...).

The child builds through the ordinary cache, so a good index lands on disk and every later open is a plain
cache load that parses no PDF. It also scans the PDF for JavaScript (``app.documents.hazards``) while it has it
open. It reports through files in a scratch directory under the data directory (``tmp/index-build-*``), never
through stdout, where MuPDF prints its warnings. Linux kills the child when its worker dies.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.config import get_settings
from app.documents import hazards
from app.documents.cache import disk_path, load_from_disk, open_index, sha256_file
from app.documents.index import DatasheetIndex, IndexBuildError

log = logging.getLogger(__name__)

OUTCOME_FILE = "outcome.json"
INDEX_FILE = "index.pickle"
STDERR_FILE = "stderr.txt"
SCRATCH_PREFIX = "index-build-"
EXIT_OK, EXIT_TYPED_ERROR, EXIT_OUT_OF_MEMORY, EXIT_ORPHANED = 0, 2, 3, 4
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
# How an allocation failure reads in a page's build note: Python's, or MuPDF's own ("calloc (4104 x 1 bytes) failed").
_OUT_OF_MEMORY = re.compile(r"MemoryError|\b(?:m|c|re)alloc\b.*\bfailed|out of memory", re.IGNORECASE)
# CPU seconds the child may use beyond the wall-clock build budget before the kernel stops it (SIGXCPU).
CPU_SLACK_S = 30


def open_index_limited(path: Path, sha256: str | None = None, *, in_child: bool | None = None) -> DatasheetIndex:
    """``open_index`` for untrusted PDFs: a cached index is loaded in-process, a missing one is built in a
    limited child (``in_child``, by default the ``index_sandbox`` setting). Raises ``IndexBuildError`` with a
    stable code for every way the build can fail."""
    path = Path(path)
    if not (get_settings().index_sandbox if in_child is None else in_child):
        return open_index(path, sha256)
    if not path.is_file():
        raise IndexBuildError(f"No PDF at {path}.", code="file_not_found")
    sha = sha256 or sha256_file(path)
    if disk_path(sha).is_file():
        index = load_from_disk(sha)
        if index is not None:
            index.path = path
            return index
    return _build_in_child(path, sha)


def _build_in_child(path: Path, sha: str) -> DatasheetIndex:
    settings = get_settings()
    kill_after = settings.index_build_kill_after_s or settings.index_build_timeout_s + 30.0
    with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX, dir=_scratch_dir(kill_after)) as tmp:
        workdir = Path(tmp)
        command = [sys.executable, "-m", "app.documents.sandbox", str(path.resolve()), sha, str(workdir),
                   str(os.getpid())]
        try:
            with (workdir / STDERR_FILE).open("wb") as stderr:
                completed = subprocess.run(command, env=_child_env(), stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=stderr, timeout=kill_after,
                                           check=False)
        except subprocess.TimeoutExpired as exc:  # subprocess.run has SIGKILLed the child already
            raise IndexBuildError(f"Indexing was stopped after {kill_after:g}s without finishing.",
                                  code="index_timeout") from exc
        return _collect(completed.returncode, workdir, path, sha)


def _scratch_dir(kill_after: float) -> Path:
    """Where build children report: under the data directory, where a worker killed mid-build (which cannot
    clean up after itself) leaves its directory; directories older than any build could run are removed here."""
    base = get_settings().data_dir / "tmp"
    base.mkdir(parents=True, exist_ok=True)
    cutoff = time.time() - max(3600.0, 2 * kill_after)
    for entry in base.glob(f"{SCRATCH_PREFIX}*"):
        try:
            if entry.stat().st_mtime < cutoff:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue
    return base


def _collect(returncode: int, workdir: Path, path: Path, sha: str) -> DatasheetIndex:
    outcome = _read_json(workdir / OUTCOME_FILE)
    if returncode == EXIT_OK and outcome.get("status") == "ok":
        index = _load_result(workdir, sha)
        index.path = path
        hazards.seed(index, hazards.JavaScriptScan.from_dict(outcome.get("javascript") or {}))
        return index
    if returncode == EXIT_TYPED_ERROR and outcome.get("code"):
        raise IndexBuildError(str(outcome.get("message") or "The PDF could not be indexed."),
                              code=str(outcome["code"]))
    if returncode == EXIT_OUT_OF_MEMORY:
        limit = get_settings().index_build_memory_mb
        raise IndexBuildError(f"Indexing needed more than its {limit} MB memory allowance.",
                              code="index_memory_exceeded")
    if returncode == -signal.SIGXCPU:
        raise IndexBuildError("Indexing used up its CPU-time limit.", code="index_timeout")
    tail = _tail(workdir / STDERR_FILE)
    how = f"signal {_signal_name(-returncode)}" if returncode < 0 else f"exit status {returncode}"
    log.warning("index build of %s died (%s): %s", sha[:12], how, tail)
    raise IndexBuildError(f"The PDF parser stopped abnormally ({how}).", code="index_build_crashed")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _load_result(workdir: Path, sha: str) -> DatasheetIndex:
    shipped = workdir / INDEX_FILE
    if shipped.is_file():
        with shipped.open("rb") as handle:
            index = pickle.load(handle)  # written by our own child from our own code: trusted
        if isinstance(index, DatasheetIndex):
            return index
    index = load_from_disk(sha)
    if index is None:
        raise IndexBuildError("The index was built but could not be read back.", code="index_build_crashed")
    return index


def _child_env() -> dict[str, str]:
    """The worker's environment with the resolved settings the child must agree on pinned."""
    settings = get_settings()
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    env["DSX_DATA_DIR"] = str(settings.data_dir.resolve())
    env["DSX_INDEX_BUILD_TIMEOUT_S"] = repr(settings.index_build_timeout_s)
    env["DSX_INDEX_BUILD_MEMORY_MB"] = str(settings.index_build_memory_mb)
    env["DSX_MAX_PAGES"] = str(settings.max_pages)
    return env


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _tail(path: Path, limit: int = 2000) -> str:
    try:
        return path.read_bytes()[-limit:].decode("utf-8", "replace")
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------------------
# The child side.


def address_space_bytes(field: str = "VmSize") -> int | None:
    """This process's virtual size now (``VmSize``) or at its peak (``VmPeak``), from Linux ``/proc``; None where
    it cannot be read."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _hit_memory_cap(index: DatasheetIndex) -> bool:
    """Whether pages the builder skipped as unreadable were in fact victims of the memory cap: their note names
    an allocation failure, or the process grew to the cap (C extensions report a failed allocation in their own
    words)."""
    if not index.degraded:
        return False
    if any(_OUT_OF_MEMORY.search(note) for note in index.build_notes):
        return True
    cap = resource.getrlimit(resource.RLIMIT_AS)[0]
    peak = address_space_bytes("VmPeak")
    return cap != resource.RLIM_INFINITY and peak is not None and peak >= 0.9 * cap


def _limit_resources(memory_mb: int, timeout_s: float) -> None:
    """Cap what the build may add to the address space (on top of the interpreter and libraries already
    mapped, which differ between installs), its CPU time, and core dumps."""
    if memory_mb > 0:
        cap = (address_space_bytes() or 0) + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    cpu = int(timeout_s) + CPU_SLACK_S
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a MuPDF crash must not leave a core file behind


def _write_outcome(workdir: Path, outcome: dict[str, Any]) -> None:
    target = workdir / OUTCOME_FILE
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(outcome))
    os.replace(tmp, target)


def die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this child when the worker that started it dies (a SIGKILLed worker must not leave
    a build running on its own); elsewhere the build's own time limits still end it."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(EXIT_ORPHANED)


def child_main(pdf: Path, sha: str, workdir: Path, parent: int | None = None) -> int:
    """Build (and cache) the index of ``pdf``; report through files in ``workdir``. Returns the exit status."""
    if parent is not None:
        die_with_parent(parent)
    settings = get_settings()
    # Load the build's own code first: the memory cap is for the document, not for importing libraries.
    import app.documents.build  # noqa: F401
    import app.documents.search  # noqa: F401

    _limit_resources(settings.index_build_memory_mb, settings.index_build_timeout_s)
    try:
        index = open_index(pdf, sha)
        if _hit_memory_cap(index):
            # The builder survives a page it cannot read (and marks the index degraded); a page that ran out of
            # memory is not a damaged page but this limit, and a silently partial index would hide it.
            raise MemoryError
        scan = hazards.scan_javascript(pdf)
        if not disk_path(sha).is_file():  # degraded builds are never cached: hand this one over directly
            with (workdir / INDEX_FILE).open("wb") as handle:
                pickle.dump(index, handle, protocol=pickle.HIGHEST_PROTOCOL)
        _write_outcome(workdir, {"status": "ok", "degraded": index.degraded, "javascript": scan.to_dict()})
        return EXIT_OK
    except IndexBuildError as exc:
        _write_outcome(workdir, {"status": "error", "code": exc.code, "message": str(exc)})
        return EXIT_TYPED_ERROR
    except MemoryError:
        return EXIT_OUT_OF_MEMORY


if __name__ == "__main__":
    try:
        sys.exit(child_main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]),
                            int(sys.argv[4]) if len(sys.argv) > 4 else None))
    except MemoryError:  # raised while importing or unwinding, before child_main could report it
        os._exit(EXIT_OUT_OF_MEMORY)
