"""Index cache: an in-memory LRU in front of pickles on disk, both keyed by the PDF's sha256.

Disk entries live under ``Settings.index_cache_dir`` as
``<sha[:2]>/<sha>.v<INDEX_FORMAT_VERSION>-pymupdf<version>.pickle``, so a format change or another PyMuPDF (whose
text extraction the index is made of) simply misses the old files. Files are written atomically (temp file +
rename) and a file that fails to load is discarded and rebuilt. A degraded build is returned to the caller but
never cached: caching it would make a transient failure (a page MuPDF choked on) permanent for that document.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
import threading
from collections import OrderedDict
from functools import cache
from importlib.metadata import version
from pathlib import Path

from app.config import get_settings
from app.documents.index import INDEX_FORMAT_VERSION, DatasheetIndex, IndexBuildError

log = logging.getLogger(__name__)

MEMORY_SLOTS = 16

_memory: OrderedDict[str, DatasheetIndex] = OrderedDict()
_memory_lock = threading.Lock()
_build_locks: dict[str, threading.Lock] = {}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def disk_path(sha256: str, cache_dir: Path | None = None) -> Path:
    base = cache_dir if cache_dir is not None else get_settings().index_cache_dir
    return base / sha256[:2] / f"{sha256}.v{INDEX_FORMAT_VERSION}-pymupdf{_pymupdf_version()}.pickle"


@cache
def _pymupdf_version() -> str:
    """Read from the installed distribution's metadata: cheaper than importing PyMuPDF to ask it."""
    return version("pymupdf")


def open_index(path: Path, sha256: str | None = None) -> DatasheetIndex:
    """Open the index of the PDF at ``path`` from cache (memory, then disk) or build it.

    Raises ``IndexBuildError`` with a stable ``code`` for PDFs that cannot be indexed (corrupt, encrypted, no
    pages, too many pages, build over its time budget). A PDF without a text layer still opens, with
    ``text_layer == "none"``.
    """
    path = Path(path)
    if not path.is_file():
        raise IndexBuildError(f"No PDF at {path}.", code="file_not_found")
    sha = sha256 or sha256_file(path)
    index = _memory_get(sha)
    if index is not None:
        return _bind(index, path)
    with _lock_for(sha):
        index = _memory_get(sha)
        if index is not None:
            return _bind(index, path)
        index = load_from_disk(sha)
        if index is None:
            index = _build(path, sha)
            if index.degraded:
                log.warning("index of %s is degraded and will not be cached: %s", sha[:12], index.build_notes)
                return index
            _store_on_disk(index)
        _memory_put(index)
        return _bind(index, path)


def _build(path: Path, sha: str) -> DatasheetIndex:
    from app.documents.build import build_index

    settings = get_settings()
    return build_index(path, sha, timeout_s=settings.index_build_timeout_s, max_pages=settings.max_pages)


def _bind(index: DatasheetIndex, path: Path) -> DatasheetIndex:
    # The same bytes may be opened from another place (blob store, a user's file): the tools re-open ``path``
    # for drawings and rendering, so point it at a file that exists now.
    if index.path != path:
        index.path = path
    return index


def load_from_disk(sha256: str) -> DatasheetIndex | None:
    target = disk_path(sha256)
    try:
        with open(target, "rb") as handle:
            index = pickle.load(handle)
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file is a cache miss, not an error
        log.warning("discarding unreadable index cache %s: %s", target, exc)
        target.unlink(missing_ok=True)
        return None
    if (not isinstance(index, DatasheetIndex) or index.sha256 != sha256
            or index.format_version != INDEX_FORMAT_VERSION or index.degraded):
        target.unlink(missing_ok=True)
        return None
    return index


def _store_on_disk(index: DatasheetIndex) -> None:
    target = disk_path(index.sha256)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(index, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target)
    except OSError as exc:  # a read-only or full disk costs a rebuild next time, nothing more
        log.warning("could not write index cache %s: %s", target, exc)


def _memory_get(sha: str) -> DatasheetIndex | None:
    with _memory_lock:
        index = _memory.get(sha)
        if index is not None:
            _memory.move_to_end(sha)
        return index


def _memory_put(index: DatasheetIndex) -> None:
    with _memory_lock:
        _memory[index.sha256] = index
        _memory.move_to_end(index.sha256)
        while len(_memory) > MEMORY_SLOTS:
            _memory.popitem(last=False)


def _lock_for(sha: str) -> threading.Lock:
    with _memory_lock:
        return _build_locks.setdefault(sha, threading.Lock())


def clear_memory() -> None:
    """Forget in-memory indexes (tests, and benchmarks measuring the disk path)."""
    with _memory_lock:
        _memory.clear()
