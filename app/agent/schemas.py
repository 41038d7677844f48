"""The contract between a job and an engine: what is asked, and what may be answered.

``ParameterRequest`` (defined in ``app.contracts``) is the allow-list: these four fields are everything about a
job that can reach a model. ``SubmittedExtraction`` is the argument schema of the ``submit_extraction`` tool,
the only way an engine answers. ``EngineOutcome`` is what an engine hands back to the extraction flow.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.contracts import ExtractedValue, ParameterRequest

__all__ = ["EngineOutcome", "ExtractedValue", "ParameterRequest", "RunContext", "SubmittedExtraction"]


class SubmittedExtraction(BaseModel):
    """Arguments of `submit_extraction`. ``quote`` is verbatim document text the value was read from."""

    model_config = ConfigDict(extra="forbid")

    found: bool
    values: list[ExtractedValue] = Field(default_factory=list)
    source_page: int | None = Field(default=None, ge=1)
    quote: str | None = None
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    reason: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SubmittedExtraction:
        if self.found and not self.values:
            raise ValueError("found=true needs at least one value")
        if not self.found and not (self.reason and self.reason.strip()):
            raise ValueError("found=false needs a reason")
        return self


class EngineOutcome(BaseModel):
    """An engine's result for one parameter: a submitted extraction, or a typed engine error."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    extraction: SubmittedExtraction | None = None
    error_code: str | None = None  # submit_not_called | budget_exhausted | provider_error | timeout | ...
    error_detail: str | None = None
    engine: str  # agentic | single-pass
    model: str
    trace_id: str | None = None
    root_span_id: str | None = None
    cost_usd: float = 0.0
    duration_ms: float = 0.0
    extra: dict[str, Any] = Field(default_factory=dict)


class RunContext(BaseModel):
    """Identifiers attached to every span of one parameter's run (never sent to the model)."""

    job_id: str | None = None
    parameter_id: int | None = None
    tenant: str = "default"
    role: str = "primary"  # primary | cross_check
    rule_set_version: str | None = None  # the detector rules that will judge the answer (gateway spend rows)
