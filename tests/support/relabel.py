"""Prometheus relabelling (the ``keep``, ``drop`` and ``replace`` actions) applied to a target's labels, so tests
can check which targets a scrape config makes of a set of discovered ones. Python's ``re`` agrees with RE2 on the
expressions our configs use; Prometheus anchors every regex, hence ``fullmatch``."""

from __future__ import annotations

import re
from typing import Any

_GROUP = re.compile(r"\$\{?(\d+)\}?")


def relabel(labels: dict[str, str], configs: list[dict[str, Any]]) -> dict[str, str] | None:
    """The target's labels after ``configs``, meta labels (``__meta_*``) dropped; ``None`` when dropped."""
    labels = dict(labels)
    for config in configs:
        action = config.get("action", "replace")
        value = config.get("separator", ";").join(labels.get(name, "") for name in config.get("source_labels", []))
        match = re.fullmatch(config.get("regex", "(.*)"), value)
        if action == "keep" and not match:
            return None
        if action == "drop" and match:
            return None
        if action == "replace" and match:
            labels[config["target_label"]] = _expand(str(config.get("replacement", "$1")), match)
        elif action not in ("keep", "drop", "replace"):
            raise ValueError(f"relabel action {action!r} is not simulated here")
    return {name: value for name, value in labels.items() if not name.startswith("__meta_")}


def _expand(replacement: str, match: re.Match[str]) -> str:
    groups = (match.group(0), *match.groups(default=""))
    return _GROUP.sub(lambda g: groups[int(g.group(1))], replacement)
