"""Engines (placeholder signature)."""

from __future__ import annotations

from app.agent.registry import ModelConfig
from app.agent.schemas import EngineOutcome, ParameterRequest, RunContext
from app.documents.index import DatasheetIndex


def run_parameter(*, index: DatasheetIndex, request: ParameterRequest, model: ModelConfig, engine: str,
                  context: RunContext) -> EngineOutcome:
    raise NotImplementedError
