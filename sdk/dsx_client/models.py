"""Typed views of the dsx API's JSON, field for field the server's OpenAPI schemas.

Response models keep unknown fields (``extra="allow"``) so an older client still round-trips what a newer
server sends; a test compares these fields with the server's OpenAPI document so the two cannot drift.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TERMINAL_STATUSES = frozenset({"done", "needs_review", "reviewed", "failed", "cancelled"})
_UNFINISHED_PARAMETER_STATUSES = frozenset({"pending", "queued", "running"})

DecisionKind = Literal["approve", "correct", "reject"]


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow")


class Parameter(BaseModel):
    """A requested parameter (server schema ``ParameterSpec``). A bare string means ``Parameter(name=...)``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    unit: str | None = None
    conditions: list[str] = Field(default_factory=list)
    notes: str | None = None


class OtherVariant(BaseModel):
    """A sibling of the matched row that was not reported: other conditions, pin configuration or grade (server
    schema ``OtherVariant``)."""

    model_config = ConfigDict(extra="allow")

    label: str
    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: str | None = None

    def __str__(self) -> str:
        numbers = " / ".join(f"{label} {getattr(self, key):g}" for key, label in (("min", "min"), ("typical", "typ"),
                             ("max", "max")) if getattr(self, key) is not None)
        return f"{self.label}: {numbers} {self.unit or ''}".strip() if numbers else self.label


class StatedValue(BaseModel):
    """A value's numbers, unit and conditions, as a reviewer states it (server schema ``CorrectedValue``)."""

    model_config = ConfigDict(extra="allow")

    min: float | None = None
    typical: float | None = None
    max: float | None = None
    unit: str | None = None
    conditions: list[str] = Field(default_factory=list)

    def __str__(self) -> str:
        parts = [f"{label} {getattr(self, key):g}" for key, label in (("min", "min"), ("typical", "typ"),
                                                                      ("max", "max")) if getattr(self, key) is not None]
        text = " / ".join(parts)
        return f"{text} {self.unit}" if self.unit else text


class Value(StatedValue):
    """One reported value (server schemas ``ValueOut`` and ``ExtractedValue``), with the sibling rows of the
    datasheet that were not reported."""

    other_variants: list[OtherVariant] = Field(default_factory=list)


class Flag(_Response):
    """A detector finding on an answer (server schema ``FlagOut``)."""

    rule: str
    severity: str
    message: str
    rule_version: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)


class Review(_Response):
    """The latest reviewer decision as shown in a job result (server schema ``DecisionOut``)."""

    decision: str
    reviewer: str
    comment: str | None = None
    correction: dict[str, Any] | None = None
    created_at: datetime


class Grounding(_Response):
    """Where a reported value's quote was re-found in the PDF (server schema ``GroundingOut``)."""

    value_index: int
    outcome: str
    method: str | None = None
    score: float | None = None
    page: int | None = None
    boxes: list[list[float]] = Field(default_factory=list)
    value_boxes: list[list[float]] = Field(default_factory=list)


class Attribution(_Response):
    """The failure-attribution rubric applied to one call (server schema ``AttributionOut``)."""

    span_id: str | None = None
    category: str
    charged_to: str
    detail: str | None = None


class Usage(_Response):
    """Tokens and cost spent on a parameter (its runs, cross-check included) or a job (server schema
    ``UsageOut``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class ParameterResult(_Response):
    parameter: str
    found: bool
    values: list[Value] = Field(default_factory=list)
    source_page: int | None = None
    quote: str | None = None
    confidence: float | None = None
    reason: str | None = None
    flags: list[Flag] = Field(default_factory=list)
    status: str = "pending"
    engine: str | None = None
    model: str | None = None
    error_code: str | None = None
    extraction_id: int | None = None
    review: Review | None = None
    grounding: list[Grounding] = Field(default_factory=list)
    attributions: list[Attribution] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    @property
    def other_variants(self) -> list[OtherVariant]:
        """Sibling rows of the matched ones that were not reported (other conditions, pin configurations or
        grades), over all values; empty when the answer had no choice to make."""
        return [variant for value in self.values for variant in value.other_variants]


class Job(_Response):
    """A job and, once it has run, its results (server schema ``JobOut``)."""

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
    parameters: list[Parameter]
    results: list[ParameterResult] = Field(default_factory=list)
    attribution_summary: dict[str, Any] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)

    @property
    def id(self) -> str:
        return self.job_id

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def progress(self) -> tuple[int, int]:
        """(parameters finished, parameters requested)."""
        finished = sum(1 for r in self.results if r.status not in _UNFINISHED_PARAMETER_STATUSES)
        return (len(self.parameters) if self.is_terminal else finished), len(self.parameters)

    @property
    def flags(self) -> list[Flag]:
        return [flag for result in self.results for flag in result.flags]


class JobPage(_Response):
    items: list[Job]
    total: int
    limit: int
    offset: int


class Correction(BaseModel):
    """The right answer, as a reviewer gives it (server schema ``ReviewCorrection``)."""

    model_config = ConfigDict(extra="forbid")

    values: list[StatedValue] = Field(min_length=1)
    source_page: int | None = Field(default=None, ge=1)
    quote: str | None = None


class DecisionRequest(BaseModel):
    """Body of a decision POST (server schema ``ReviewDecisionRequest``)."""

    model_config = ConfigDict(extra="forbid")

    decision: DecisionKind
    comment: str | None = None
    correction: Correction | None = None
    reviewer: str | None = None


class Decision(_Response):
    """A stored reviewer decision (server schema ``ReviewDecision``)."""

    id: int
    job_id: str
    extraction_id: int
    parameter: str
    decision: str
    reviewer: str
    comment: str | None = None
    correction: Correction | None = None
    created_at: datetime


class QueueItem(_Response):
    """A flagged answer waiting for (or having) a reviewer decision (server schema ``ReviewQueueItem``)."""

    extraction_id: int
    job_id: str
    parameter: str
    model: str
    found: bool
    values: list[Value] = Field(default_factory=list)
    source_page: int | None = None
    quote: str | None = None
    confidence: float | None = None
    flags: list[Flag] = Field(default_factory=list)
    created_at: datetime
    decision: Decision | None = None


class QueuePage(_Response):
    items: list[QueueItem]
    total: int
    counts_by_rule: dict[str, int] = Field(default_factory=dict)


class DecisionPage(_Response):
    items: list[Decision]
    total: int
    limit: int
    offset: int


class TreeTotals(_Response):
    """What one agent run cost (server schema ``TreeTotals``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    duration_ms: float = 0.0
    llm_calls: int = 0
    tool_calls: int = 0


class Span(_Response):
    """One call of the dispatch record (an agent run, an LLM call, a tool call) with its children
    (server schema ``SpanNode``)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None = None
    name: str
    kind: str = "INTERNAL"
    start_ns: int
    end_ns: int
    duration_ms: float
    status_code: str = "UNSET"
    status_message: str | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    events: list[dict[str, Any]] = Field(default_factory=list)
    job_id: str | None = None
    parameter_id: int | None = None
    payload: dict[str, Any] | None = None
    children: list[Span] = Field(default_factory=list)
    parameter: str | None = None  # on a root: the parameter this tree answered
    totals: TreeTotals | None = None  # on a root: tokens, cost, duration and calls of the whole tree

    def walk(self) -> list[Span]:
        """This span and every descendant, depth first."""
        found = [self]
        for child in self.children:
            found.extend(child.walk())
        return found


class Trace(_Response):
    """A job's dispatch record: one ``invoke_agent`` root per parameter and role (server schema ``JobTrace``)."""

    job_id: str
    span_count: int
    trace_ids: list[str] = Field(default_factory=list)
    roots: list[Span] = Field(default_factory=list)

    def spans(self) -> list[Span]:
        """Every span of the record, depth first."""
        return [span for root in self.roots for span in root.walk()]
