"""A host's copies of PDFs from a shared blob store stay within their size and age bounds, least recently used
first, without removing a copy another process of the host may be about to open."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from app.blobs import BlobNotFound, blob_store
from app.config import Settings
from app.documents import blob_cache, store
from app.documents.blob_cache import IN_USE_GRACE_S, CacheBounds

KB = 2**10
UNBOUNDED = CacheBounds(max_bytes=None, max_age_s=None)


def _digest(n: int) -> str:
    return f"{n:02x}" * 32


def _put(root: Path, n: int, size: int, used_ago_s: float) -> Path:
    path = blob_cache.fetch(root, _digest(n), lambda: b"x" * size, UNBOUNDED)
    stamp = time.time() - used_ago_s
    os.utime(path, (stamp, stamp))
    return path


def test_the_least_recently_used_copies_go_until_the_size_bound_holds(tmp_path: Path) -> None:
    old, middle, recent = (_put(tmp_path, n, 10 * KB, ago) for n, ago in ((1, 3000), (2, 2000), (3, 1000)))
    removed = blob_cache.prune(tmp_path, CacheBounds(max_bytes=25 * KB, max_age_s=None))
    assert removed == [old]
    assert middle.exists() and recent.exists()


def test_using_a_copy_makes_it_recent(tmp_path: Path) -> None:
    first, second = _put(tmp_path, 1, 10 * KB, 3000), _put(tmp_path, 2, 10 * KB, 2000)
    fetched = blob_cache.fetch(tmp_path, _digest(1), lambda: pytest.fail("a cached copy is not fetched again"),
                               UNBOUNDED)
    assert fetched == first
    assert blob_cache.prune(tmp_path, CacheBounds(max_bytes=15 * KB, max_age_s=None)) == [second]


def test_copies_unused_past_the_age_bound_go_even_under_the_size_bound(tmp_path: Path) -> None:
    stale, fresh = _put(tmp_path, 1, KB, 7200), _put(tmp_path, 2, KB, 600)
    assert blob_cache.prune(tmp_path, CacheBounds(max_bytes=None, max_age_s=3600)) == [stale]
    assert fresh.exists()


def test_a_copy_in_use_stays_over_the_bound(tmp_path: Path) -> None:
    busy = _put(tmp_path, 1, 10 * KB, IN_USE_GRACE_S / 2)
    assert blob_cache.prune(tmp_path, CacheBounds(max_bytes=KB, max_age_s=1)) == []
    assert busy.exists()


def test_a_fetch_prunes_and_keeps_what_it_fetched(tmp_path: Path) -> None:
    old = _put(tmp_path, 1, 10 * KB, 3000)
    new = blob_cache.fetch(tmp_path, _digest(2), lambda: b"y" * 10 * KB, CacheBounds(max_bytes=15 * KB, max_age_s=None))
    assert new.read_bytes() == b"y" * 10 * KB
    assert not old.exists()


def test_a_missing_blob_leaves_nothing_behind(tmp_path: Path) -> None:
    def missing() -> bytes:
        raise BlobNotFound(_digest(9))

    with pytest.raises(BlobNotFound):
        blob_cache.fetch(tmp_path, _digest(9), missing, UNBOUNDED)
    assert list(tmp_path.rglob("*")) == []


def test_the_store_keeps_this_hosts_copies_within_the_configured_bound(
        dsx_env: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.config import get_settings, reset_settings

    monkeypatch.setenv("DSX_BLOB_STORE", "database")
    monkeypatch.setenv("DSX_BLOB_CACHE_MAX_MB", "1")
    reset_settings()
    settings = get_settings()
    big = [os.urandom(700 * KB) for _ in range(2)]
    digests = [store.sha256_of(data) for data in big]
    for digest, data in zip(digests, big, strict=True):
        blob_store().put(digest, data)
    first = store.local_path(digests[0])
    stamp = time.time() - 2 * IN_USE_GRACE_S
    os.utime(first, (stamp, stamp))
    second = store.local_path(digests[1])
    assert second.read_bytes() == big[1]
    assert not first.exists()  # 1.4 MB over a 1 MB bound: the older copy went
    assert sum(p.stat().st_size for p in settings.blob_cache_dir.rglob("*.pdf")) <= 2**10 * KB
    assert store.local_path(digests[0]).read_bytes() == big[0]  # fetched again on its next use
