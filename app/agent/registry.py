"""Model aliases: the offline reader, entries of the LiteLLM-style ``model_list`` file, the default.

A job may name an alias from ``DSX_MODELS_FILE`` or the offline model; with a gateway configured
(``DSX_GATEWAY_URL``) any model name is passed through to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.config import OFFLINE_MODEL, get_settings
from app.errors import InvalidInput


@dataclass(frozen=True)
class ModelConfig:
    alias: str
    litellm_params: dict[str, Any] = field(default_factory=dict)
    model_info: dict[str, Any] = field(default_factory=dict)

    @property
    def litellm_model(self) -> str:
        return str(self.litellm_params.get("model", self.alias))

    @property
    def is_offline(self) -> bool:
        return self.litellm_model == OFFLINE_MODEL


def _load_models_file(path: Path | None) -> dict[str, ModelConfig]:
    if path is None or not Path(path).exists():
        return {}
    data = yaml.safe_load(Path(path).read_text()) or {}
    models: dict[str, ModelConfig] = {}
    for entry in data.get("model_list", []):
        alias = entry["model_name"]
        models[alias] = ModelConfig(
            alias=alias,
            litellm_params=dict(entry.get("litellm_params", {})),
            model_info=dict(entry.get("model_info", {})),
        )
    return models


def known_models() -> dict[str, ModelConfig]:
    settings = get_settings()
    models = {OFFLINE_MODEL: ModelConfig(alias=OFFLINE_MODEL, litellm_params={"model": OFFLINE_MODEL})}
    models.update(_load_models_file(settings.models_file))
    return models


def default_model() -> str:
    return get_settings().model


def resolve_model(name: str | None) -> ModelConfig:
    """The configuration for ``name`` (or the default), or ``unknown_model``."""
    alias = (name or default_model()).strip()
    models = known_models()
    if alias in models:
        return models[alias]
    settings = get_settings()
    if settings.gateway_url:
        return ModelConfig(alias=alias, litellm_params={"model": alias})
    if alias == settings.model:
        # DSX_MODEL may name a plain LiteLLM model string (e.g. "openai/gpt-4o") without a models file.
        return ModelConfig(alias=alias, litellm_params={"model": alias})
    raise InvalidInput(
        f"Unknown model {alias!r}. Known: {', '.join(sorted(models))}.", code="unknown_model"
    )
