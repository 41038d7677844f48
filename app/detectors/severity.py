"""How serious a detector finding is; warning and above send an answer to review."""

from __future__ import annotations

import enum


class Severity(enum.StrEnum):
    info = "info"
    warning = "warning"
    error = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]
