"""Contract types shared by every layer: what is asked, what a value is, and which engines exist.

Pure pydantic and stdlib, so the API, the agent, the detectors and review can all speak them without
importing one another.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Engine(StrEnum):
    """How a parameter is answered: ``auto`` lets ``route()`` choose between the other two."""

    AUTO = "auto"
    AGENTIC = "agentic"
    SINGLE_PASS = "single-pass"


ENGINE_NAMES: tuple[str, ...] = tuple(engine.value for engine in Engine)


class ParameterRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    unit: str | None = None
    conditions: list[str] = Field(default_factory=list)
    notes: str | None = None


MAX_OTHER_VARIANTS = 10


# A sibling of the matched row that the answer did not report: the same quantity under other conditions, for another
# pin configuration or another grade, listed so that a reader knows a choice was made. No docstring and few
# descriptions on purpose: this schema is part of the submit tool the model sees, which must stay compact.
class OtherVariant(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(max_length=200)  # what sets it apart, as printed: conditions, pin configuration, grade
    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: str | None = None

    @field_validator("label")
    @classmethod
    def _named(cls, label: str) -> str:
        if not label.strip():
            raise ValueError("a variant needs a label saying what sets it apart")
        return label.strip()


class CorrectedValue(BaseModel):
    """A value as a reviewer states it: the numbers, their unit and conditions."""

    model_config = ConfigDict(extra="forbid")

    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: str | None = None
    conditions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _at_least_one_number(self) -> CorrectedValue:
        if self.min is None and self.typical is None and self.max is None:
            raise ValueError("a value needs at least one of min, typical, max")
        return self


class ExtractedValue(CorrectedValue):
    """A value as an engine submits it: a reviewer's fields, plus the sibling rows it chose not to report."""

    other_variants: list[OtherVariant] = Field(
        default_factory=list, max_length=MAX_OTHER_VARIANTS,
        description="Unreported sibling rows: other conditions, pin configurations, grades")


class FlagOut(BaseModel):
    rule: str
    severity: str
    message: str
    rule_version: str | None = None
    evidence: dict = Field(default_factory=dict)


class ValueOut(BaseModel):
    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: str | None = None
    conditions: list[str] = Field(default_factory=list)
    other_variants: list[OtherVariant] = Field(default_factory=list)
