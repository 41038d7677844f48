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
    groups = [g for g in report["summary"]["groups"]]
    labels = [f"{g['model']}\n{g['engine']} · {g['arm']}" for g in groups]
    figure, (latency_axes, cost_axes) = plt.subplots(1, 2, figsize=(max(7.0, 1.4 * len(groups) + 3), 4.2))
    positions = range(len(groups))
    medians = [g["latency_s_median"] or 0.0 for g in groups]
    p90s = [g["latency_s_p90"] or 0.0 for g in groups]
    latency_axes.bar(positions, medians, color="#1f77b4", label="median")
    latency_axes.errorbar(positions, medians, yerr=[[0] * len(groups), [max(p - m, 0.0) for p, m in
                                                                       zip(p90s, medians, strict=True)]],
                          fmt="none", ecolor="black", capsize=3, label="to p90")
    latency_axes.set_title("Latency per cell (s)", fontsize=9)
    latency_axes.legend(fontsize=7, frameon=False)
    cost_axes.bar(positions, [g["cost_usd_per_cell"] for g in groups], color="#9467bd")
    cost_axes.set_title("Cost per cell (USD, list price)", fontsize=9)
    for axes in (latency_axes, cost_axes):
        axes.set_xticks(list(positions), labels, fontsize=7, rotation=30, ha="right")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_charts(directory: Path, report: dict[str, Any]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    return [verdict_grid(report, directory / "verdict_grid.png"),
            cost_latency(report, directory / "cost_latency.png")]
