"""`dsx extract --json` wall time against the job's own time (created → finished, as the job records it).

What is left is the command's start-up and shutdown: imports, migrations, the index child. Goal: wall time at most
twice the job's time plus one second.

    .venv/bin/python bench/extract.py [--repeats 3] [--pdf examples/sample-datasheet.pdf] [-p NAME ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DSX = REPO_ROOT / ".venv" / "bin" / "dsx"


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def run_once(pdf: Path, parameters: list[str], data_dir: Path) -> tuple[float, float, str]:
    command = [str(DSX), "extract", str(pdf), "--json", "--data-dir", str(data_dir)]
    for name in parameters:
        command += ["-p", name]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 3):
        raise SystemExit(f"dsx extract exited {done.returncode}: {done.stderr[-2000:]}")
    result = json.loads(done.stdout)
    return wall, _seconds(result["created_at"], result["finished_at"] or result["updated_at"]), result["status"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, default=REPO_ROOT / "examples" / "sample-datasheet.pdf")
    parser.add_argument("-p", "--parameter", action="append", dest="parameters")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    parameters = args.parameters or ["Dropout voltage", "Quiescent current"]
    with tempfile.TemporaryDirectory(prefix="dsx-extract-bench-") as tmp:
        rows = []
        for attempt in range(1, args.repeats + 1):
            # The first run of a data dir also creates the database and builds the index: a cold start.
            wall, job, status = run_once(args.pdf, parameters, Path(tmp))
            rows.append((wall, job))
            print(f"run {attempt}{' (cold)' if attempt == 1 else ''}: wall {wall:.2f} s, job {job:.2f} s, "
                  f"overhead {wall - job:.2f} s, status {status}")
    wall = statistics.median(r[0] for r in rows)
    job = statistics.median(r[1] for r in rows)
    goal = 2 * job + 1
    print(f"median over {len(rows)} runs of {args.pdf.name} ({len(parameters)} parameters): wall {wall:.2f} s, "
          f"job {job:.2f} s, ratio {wall / job if job else float('inf'):.1f}x; goal <= 2x + 1 s = {goal:.2f} s: "
          f"{'met' if wall <= goal else 'missed'}")


if __name__ == "__main__":
    main()
