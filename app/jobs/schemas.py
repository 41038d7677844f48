"""API models for jobs. The job result shape is shared by the API, the SDK and `dsx extract --json`.

``FlagOut`` and ``ValueOut`` are shared contracts (``app.contracts``), reused by the review queue."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.contracts import ENGINE_NAMES, FlagOut, ValueOut

EngineChoice = Literal[ENGINE_NAMES]  # type: ignore[valid-type]


class ParameterSpec(BaseModel):
    """One requested parameter. A bare string in the request means ``{"name": string}``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    unit: str | None = None
    conditions: list[str] = Field(default_factory=list)
    notes: str | None = None

    @field_validator("name")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()


class GroundingOut(BaseModel):
    """Where a reported value's quote was re-found in the PDF (boxes in PDF points, for highlighting)."""

    value_index: int
    outcome: str
    method: str | None = None
    score: float | None = None
    page: int | None = None
    boxes: list[list[float]] = Field(default_factory=list)
    # The boxes of the reported number itself (its cell), inside the located passage ``boxes``.
    value_boxes: list[list[float]] = Field(default_factory=list)


class AttributionOut(BaseModel):
    """The failure-attribution rubric applied to one call of the run."""

    span_id: str | None = None
    category: str
    charged_to: str
    detail: str | None = None


class UsageOut(BaseModel):
    """Tokens and cost spent: the model calls of every run for a parameter (cross-check included), or a job's
    sum. Cost is what the provider or gateway reported (``x-litellm-response-cost``) or LiteLLM's price map; 0
    when neither knows."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class DecisionOut(BaseModel):
    decision: str
    reviewer: str
    comment: str | None = None
    correction: dict | None = None
    created_at: datetime


class ParameterResult(BaseModel):
    parameter: str
    found: bool
    values: list[ValueOut] = Field(default_factory=list)
    source_page: int | None = None
    quote: str | None = None
    confidence: float | None = None
    reason: str | None = None
    flags: list[FlagOut] = Field(default_factory=list)
    status: str = "pending"
    engine: str | None = None
    model: str | None = None
    error_code: str | None = None
    extraction_id: int | None = None
    review: DecisionOut | None = None
    grounding: list[GroundingOut] = Field(default_factory=list)
    attributions: list[AttributionOut] = Field(default_factory=list)
    usage: UsageOut = Field(default_factory=UsageOut)


class JobOut(BaseModel):
    job_id: str
    status: str
    engine: str
    model: str
    filename: str
    document_sha256: str
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    failure_code: str | None = None
    failure_detail: str | None = None
    parameters: list[ParameterSpec]
    results: list[ParameterResult] = Field(default_factory=list)
    attribution_summary: dict = Field(default_factory=dict)
    usage: UsageOut = Field(default_factory=UsageOut)


class JobPage(BaseModel):
    items: list[JobOut]
    total: int
    limit: int
    offset: int
