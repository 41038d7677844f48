"""Benchmark of the upload check: in a pool child (what POST /v1/jobs does) against in-process (the peer).

Run from the repository root:  .venv/bin/python bench/admission.py [--runs 20] [--workers 2]

Every shared datasheet is checked ``--runs`` times each way, the two interleaved so they share the machine's noise,
after one untimed round that warms both (MuPDF's font cache, the children's first pages). Prints p50/p99 per check
for both, and the p50/p99 of the per-check difference (goal: p50 < 5 ms added).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHARED = Path(os.environ.get("DSX_SHARED_DIR", REPO.parent / "shared"))
DATASHEETS = SHARED / "datasheets"
MAX_PAGES = 2000


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    from app.documents.validate import inspect_pdf
    from app.jobs.admission import AdmissionPool

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-mb", type=int, default=768)
    args = parser.parse_args()

    files = [(p.name, p.read_bytes()) for p in sorted(DATASHEETS.glob("*.pdf"))]
    if not files:
        sys.exit(f"no datasheets under {DATASHEETS}")
    pool = AdmissionPool(workers=args.workers, memory_mb=args.memory_mb)
    started = time.perf_counter()
    pool.start()
    print(f"pool start ({args.workers} children): {(time.perf_counter() - started) * 1e3:.0f} ms")
    try:
        for _, data in files:  # warm-up, untimed; also checks both ways agree
            assert pool.check(data, MAX_PAGES, timeout_s=60) == inspect_pdf(data, MAX_PAGES)
        in_process: list[float] = []
        in_child: list[float] = []
        for _ in range(args.runs):
            for _, data in files:
                t0 = time.perf_counter()
                inspect_pdf(data, MAX_PAGES)
                t1 = time.perf_counter()
                pool.check(data, MAX_PAGES, timeout_s=60)
                t2 = time.perf_counter()
                in_process.append((t1 - t0) * 1e3)
                in_child.append((t2 - t1) * 1e3)
    finally:
        pool.close()

    added = [child - local for child, local in zip(in_child, in_process, strict=True)]
    print(f"{len(files)} datasheets x {args.runs} runs, ms per check")
    print(f"{'':12} {'p50':>8} {'p99':>8}")
    for name, values in (("in-process", in_process), ("pool child", in_child), ("added", added)):
        print(f"{name:12} {statistics.median(values):8.2f} {percentile(values, 0.99):8.2f}")
    verdict = "met" if statistics.median(added) < 5.0 else "MISSED"
    print(f"goal p50 added < 5 ms: {verdict}")


if __name__ == "__main__":
    main()
