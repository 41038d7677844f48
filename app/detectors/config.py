"""Rule settings: which rules run, at what severity, with which options.

Defaults live with each rule (``app.detectors.rules``); operators override them with ``DSX_REVIEW_RULES``, a JSON
object keyed by rule name, e.g. ``{"reasoning_dropped": {"enabled": false},
"verification_skipped": {"severity": "info"}, "disagrees_with_reader": {"rel_tol": 0.02}}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.config import get_settings
from app.detectors.severity import Severity


@dataclass(frozen=True)
class RuleOverride:
    enabled: bool = True
    severity: Severity | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RuleSettings:
    overrides: Mapping[str, RuleOverride] = field(default_factory=dict)

    def override(self, rule: str) -> RuleOverride:
        return self.overrides.get(rule, RuleOverride())

    def enabled(self, rule: str) -> bool:
        return self.override(rule).enabled

    def severity(self, rule: str, default: Severity) -> Severity:
        return self.override(rule).severity or default

    def option(self, rule: str, name: str, default: Any) -> Any:
        return self.override(rule).options.get(name, default)

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> RuleSettings:
        overrides: dict[str, RuleOverride] = {}
        for rule, spec in (raw or {}).items():
            if not isinstance(spec, Mapping):
                raise ValueError(f"review rule setting for {rule!r} must be an object")
            options = {k: v for k, v in spec.items() if k not in ("enabled", "severity")}
            severity = Severity(spec["severity"]) if spec.get("severity") else None
            overrides[str(rule)] = RuleOverride(bool(spec.get("enabled", True)), severity, options)
        return cls(overrides)


def rule_settings() -> RuleSettings:
    """The rule settings in force (from ``Settings.review_rules``)."""
    return RuleSettings.from_mapping(getattr(get_settings(), "review_rules", None))
