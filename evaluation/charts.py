"""PNG charts of a report: the per-claim verdict grid and cost/latency per model (matplotlib, no display)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never look for a display

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

# Grid categories, worst to best; the colour of a (claim, group) square is its majority verdict over repeats.
_CATEGORIES = ("not run", "engine error", "not found", "wrong", "needles only", "exact")
_COLOURS = ("#ffffff", "#7f7f7f", "#d9d9d9", "#d62728", "#ff9f1c", "#2ca02c")


def _category(cell: dict[str, Any]) -> int:
    if cell.get("error_code"):
        return 1
    if not cell["found"]:
        return 2
    if cell["exact"]:
        return 5
    return 4 if cell["fidelity"] else 3


def verdict_grid(report: dict[str, Any], path: Path) -> Path:
    cells = report["cells"]
    claims = sorted({c["claim_id"] for c in cells})
    groups = sorted({(c["model"], c["engine"], c["arm"]) for c in cells})
    votes: dict[tuple[str, tuple[str, str, str]], list[int]] = defaultdict(list)
    for cell in cells:
        votes[(cell["claim_id"], (cell["model"], cell["engine"], cell["arm"]))].append(_category(cell))
    grid = [[0] * len(groups) for _ in claims]
    mixed = []
    for i, claim in enumerate(claims):
        for j, group in enumerate(groups):
            seen = votes.get((claim, group))
            if not seen:
                continue
            # Majority, ties resolved towards the worse verdict (a chart should not flatter a run).
            grid[i][j] = max(set(seen), key=lambda k, s=seen: (s.count(k), -k))
            if len(set(seen)) > 1:
                mixed.append((i, j, f"{seen.count(5)}/{len(seen)}"))
    height = max(3.0, 0.22 * len(claims) + 1.8)
    width = max(5.0, 1.1 * len(groups) + 4.5)
    figure, axes = plt.subplots(figsize=(width, height))
    axes.imshow(grid, cmap=ListedColormap(_COLOURS), vmin=0, vmax=len(_COLOURS) - 1, aspect="auto",
                interpolation="nearest")
    for i, j, text in mixed:
        axes.text(j, i, text, ha="center", va="center", fontsize=6)
    axes.set_yticks(range(len(claims)), claims, fontsize=6)
    axes.set_xticks(range(len(groups)), ["\n".join(g) for g in groups], fontsize=7)
    axes.set_title("Per-claim verdict (majority over repeats; mixed squares show exact/repeats)", fontsize=9)
    axes.legend(handles=[Patch(color=c, label=n) for n, c in zip(_CATEGORIES[1:], _COLOURS[1:], strict=True)],
                loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def cost_latency(report: dict[str, Any], path: Path) -> Path:
    """Latency distribution (box: quartiles, whiskers: 5th-95th percentile) and mean cost per cell, per model
    and engine over every arm."""
    latencies: dict[tuple[str, str], list[float]] = defaultdict(list)
    costs: dict[tuple[str, str], list[float]] = defaultdict(list)
    for cell in report["cells"]:
        key = (cell["model"], cell["engine"])
        if cell.get("latency_s") is not None:
            latencies[key].append(cell["latency_s"])
        costs[key].append(cell.get("cost_usd") or 0.0)
    keys = sorted(costs)
    labels = [f"{model}\n{engine}" for model, engine in keys]
    figure, (latency_axes, cost_axes) = plt.subplots(1, 2, figsize=(max(7.0, 1.6 * len(keys) + 4), 4.2))
    positions = list(range(1, len(keys) + 1))
    latency_axes.boxplot([latencies.get(k) or [0.0] for k in keys], positions=positions, whis=(5, 95),
                         showfliers=True)
    latency_axes.set_title("Latency per cell (s)", fontsize=9)
    latency_axes.set_ylim(bottom=0)
    cost_axes.bar(positions, [sum(costs[k]) / len(costs[k]) for k in keys], color="#9467bd")
    cost_axes.set_title("Mean cost per cell (USD, list price)", fontsize=9)
    cost_axes.set_ylim(bottom=0)
    for axes in (latency_axes, cost_axes):
        axes.set_xticks(positions, labels, fontsize=7, rotation=20, ha="right")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_charts(directory: Path, report: dict[str, Any]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    return [verdict_grid(report, directory / "verdict_grid.png"),
            cost_latency(report, directory / "cost_latency.png")]
