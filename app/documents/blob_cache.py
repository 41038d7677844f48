"""This host's copies of PDFs kept in a shared blob store, bounded in size and age (least recently used first).

A worker (or an API replica rendering pages) fetches a PDF from the shared store on first use and keeps it under
``<data dir>/blob-cache``, because the index build and the page renderer need a file. Without a bound the copies
grow with every document the host has ever seen until the pod's volume is full.

Each use stamps the copy's modification time, so "least recently used" does not depend on how the filesystem is
mounted (``relatime``/``noatime`` make the access time an unreliable clock). After each fetch the directory is
pruned: copies unused for longer than the age bound go, then the least recently used until the total fits the size
bound. A copy used within the last ``IN_USE_GRACE_S`` is never removed, even over the bound: another process of
this host may have just been handed its path and not opened it yet. An open file survives its removal on POSIX,
so a reader that already opened a copy is never cut off.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.blobs.local import write_atomically
from app.config import Settings

log = logging.getLogger(__name__)

IN_USE_GRACE_S = 60.0
SUFFIX = ".pdf"


@dataclass(frozen=True)
class CacheBounds:
    max_bytes: int | None  # None: no size bound
    max_age_s: float | None  # None: no age bound


def bounds_from(settings: Settings) -> CacheBounds:
    return CacheBounds(max_bytes=settings.blob_cache_max_mb * 1024 * 1024 or None,
                       max_age_s=settings.blob_cache_max_age_s or None)


def cached_path(root: Path, sha256: str) -> Path:
    return root / sha256[:2] / f"{sha256}{SUFFIX}"


def fetch(root: Path, sha256: str, read: Callable[[], bytes], bounds: CacheBounds) -> Path:
    """The cached copy of ``sha256``, fetched with ``read`` when this host has none (``read`` may raise; nothing
    is then cached). Marks the copy as just used; prunes the cache after a fetch."""
    path = cached_path(root, sha256)
    if _touch(path):
        return path
    write_atomically(path, read())
    _touch(path)
    prune(root, bounds)
    return path


def prune(root: Path, bounds: CacheBounds, now: float | None = None) -> list[Path]:
    """Remove copies past the age bound, then the least recently used until the size bound holds. Returns the
    removed paths. Copies used within ``IN_USE_GRACE_S`` stay."""
    now = time.time() if now is None else now
    entries = sorted(_entries(root), key=lambda entry: entry[1])  # least recently used first
    total = sum(size for _, _, size in entries)
    removed: list[Path] = []
    for path, last_used, size in entries:
        idle = now - last_used
        if idle < IN_USE_GRACE_S:
            break  # sorted by last use: every later copy is in use too
        too_old = bounds.max_age_s is not None and idle > bounds.max_age_s
        too_big = bounds.max_bytes is not None and total > bounds.max_bytes
        if not (too_old or too_big):
            break  # newer copies are neither older nor needed to shrink a total that only fell
        with contextlib.suppress(FileNotFoundError):  # another process of this host pruned it first
            path.unlink()
            removed.append(path)
        total -= size
    if removed:
        log.info("blob cache: removed %d copies, %d bytes kept", len(removed), total)
    return removed


def _entries(root: Path) -> list[tuple[Path, float, int]]:
    found = []
    for path in root.glob(f"*/*{SUFFIX}"):
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        found.append((path, stat.st_mtime, stat.st_size))
    return found


def _touch(path: Path) -> bool:
    """Stamp ``path`` as used now; False if it does not exist."""
    try:
        os.utime(path)
    except FileNotFoundError:
        return False
    return True
