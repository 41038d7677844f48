"""The LLM gateway (a LiteLLM proxy) as dsx uses it: whose key a call carries, what it tells the gateway about
the call, what the gateway says its aliases can do, and what it reports back about the call.

* Keys: each tenant's own virtual key (``DSX_GATEWAY_KEYS`` / ``DSX_GATEWAY_KEYS_FILE``), else dsx's
  ``DSX_GATEWAY_KEY``, so the gateway's budgets and spend logs are per tenant.
* Request: ``user`` = tenant; ``metadata.tags`` (bounded values the gateway aggregates spend by) and
  ``metadata.spend_logs_metadata`` (job and parameter ids, per spend-log row): the fields the proxy reads from
  the request body.
* Model info: the proxy's ``/model/info`` (cached for ``DSX_GATEWAY_MODEL_INFO_TTL_S``). An alias such as
  ``gpt-4o-group`` is unknown to LiteLLM's local model map; without this, tool choice and context limits of
  gateway models fell back to defaults.
* Response headers (``x-litellm-*``): the deployment that answered, the model group, fallbacks and retries the
  gateway attempted, its cost and overhead.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from app.agent.registry import ModelConfig
from app.config import get_settings
from app.dispatch import semconv

log = logging.getLogger(__name__)

MODEL_INFO_PATH = "/model/info"
MODEL_INFO_TIMEOUT_S = 5.0
MODEL_INFO_RETRY_AFTER_FAILURE_S = 30.0  # a gateway that failed to answer is asked again after this long
SERVICE_TAG = "dsx"

# x-litellm-* response header -> dispatch record attribute (semconv), and how to read its value.
_HEADERS: dict[str, tuple[str, type]] = {
    "x-litellm-model-id": (semconv.DSX_GATEWAY_MODEL_ID, str),
    "x-litellm-model-group": (semconv.DSX_GATEWAY_MODEL_GROUP, str),
    "x-litellm-model-api-base": (semconv.DSX_GATEWAY_API_BASE, str),
    "x-litellm-attempted-fallbacks": (semconv.DSX_GATEWAY_ATTEMPTED_FALLBACKS, int),
    "x-litellm-attempted-retries": (semconv.DSX_GATEWAY_ATTEMPTED_RETRIES, int),
    "x-litellm-response-cost": (semconv.DSX_GATEWAY_RESPONSE_COST, float),
    "x-litellm-call-id": (semconv.DSX_GATEWAY_CALL_ID, str),
    "x-litellm-overhead-duration-ms": (semconv.DSX_GATEWAY_OVERHEAD_MS, float),
    "x-litellm-response-duration-ms": (semconv.DSX_GATEWAY_RESPONSE_MS, float),
}
# LiteLLM's client hands provider response headers back with this prefix.
_PROVIDER_PREFIX = "llm_provider-"


def routes_through_gateway(model: ModelConfig) -> bool:
    """Whether calls for ``model`` go to the gateway as ``litellm_proxy/ALIAS`` (a gateway is configured and the
    models file gives no provider parameters of its own for this alias)."""
    return bool(get_settings().gateway_url) and not model.is_offline and set(model.litellm_params) <= {"model"}


# --- Keys ----------------------------------------------------------------------------------------------------

def _keys_file(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise RuntimeError(f"DSX_GATEWAY_KEYS_FILE {path} cannot be read: {exc}") from exc
    if not isinstance(data, Mapping) or not all(isinstance(v, str) for v in data.values()):
        raise RuntimeError(f"DSX_GATEWAY_KEYS_FILE {path} must map tenant names to key strings")
    return {str(k): v for k, v in data.items()}


def key_for(tenant: str | None) -> str | None:
    """The gateway key a call for ``tenant`` carries: the tenant's own, else dsx's ``DSX_GATEWAY_KEY``."""
    settings = get_settings()
    keys = {**_keys_file(settings.gateway_keys_file), **settings.gateway_keys}
    if tenant is not None and tenant in keys:
        return keys[tenant]
    return settings.gateway_key


# --- What each call tells the gateway -------------------------------------------------------------------------

def request_fields(identity: Mapping[str, Any]) -> dict[str, Any]:
    """``user`` and ``extra_body.metadata`` of one call, from the run's span identity attributes."""
    # The detectors judge every answer after the run: the gateway's spend rows say which rules did.
    rule_set = identity.get(semconv.DSX_RULE_SET_VERSION)
    tenant = identity.get(semconv.DSX_TENANT)
    engine = identity.get(semconv.DSX_ENGINE)
    tags = [SERVICE_TAG]
    tags += [f"{name}:{value}" for name, value in (("tenant", tenant), ("engine", engine), ("rules", rule_set),
                                                     ("role", identity.get(semconv.DSX_ROLE))) if value]
    spend = {"job_id": identity.get(semconv.DSX_JOB_ID), "parameter_id": identity.get(semconv.DSX_PARAMETER_ID),
             "engine": engine, "rule_set_version": rule_set, "tenant": tenant, "model_alias":
             identity.get(semconv.DSX_MODEL_ALIAS)}
    fields: dict[str, Any] = {"extra_body": {"metadata": {
        "tags": tags, "spend_logs_metadata": {k: v for k, v in spend.items() if v is not None}}}}
    if tenant:
        fields["user"] = str(tenant)
    return fields


# --- What the gateway says its aliases can do -------------------------------------------------------------

@dataclass
class _Cached:
    fetched_at: float
    models: dict[str, dict[str, Any]]
    ttl_s: float


_cache: dict[tuple[str, str | None], _Cached] = {}
_cache_lock = threading.Lock()


def _fetch_model_info(url: str, key: str | None) -> dict[str, dict[str, Any]]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = httpx.get(url.rstrip("/") + MODEL_INFO_PATH, headers=headers, timeout=MODEL_INFO_TIMEOUT_S)
    response.raise_for_status()
    models: dict[str, dict[str, Any]] = {}
    for entry in response.json().get("data") or []:
        name = entry.get("model_name")
        if not name or name in models:  # several deployments of one group: the first describes the group
            continue
        info = {k: v for k, v in (entry.get("model_info") or {}).items() if v is not None}
        backing = (entry.get("litellm_params") or {}).get("model")
        if backing:
            info["litellm_model"] = backing
        models[name] = info
    return models


def model_info(alias: str) -> dict[str, Any]:
    """What the gateway reports about ``alias`` (LiteLLM ``model_info`` keys, plus ``litellm_model``: the backing
    model of its first deployment); empty when the gateway does not know it or cannot be reached."""
    settings = get_settings()
    if not settings.gateway_url:
        return {}
    cache_key = (settings.gateway_url, settings.gateway_key)
    with _cache_lock:
        cached = _cache.get(cache_key)
        if cached is None or time.monotonic() - cached.fetched_at > cached.ttl_s:
            try:
                cached = _Cached(time.monotonic(), _fetch_model_info(*cache_key), settings.gateway_model_info_ttl_s)
            except (httpx.HTTPError, ValueError) as exc:
                log.warning("gateway model info from %s failed (%s); capabilities fall back to the models file "
                            "and defaults", settings.gateway_url, exc)
                cached = _Cached(time.monotonic(), {}, MODEL_INFO_RETRY_AFTER_FAILURE_S)
            _cache[cache_key] = cached
    return dict(cached.models.get(alias, {}))


def forget_model_info() -> None:
    """Drop the cached model info (tests, or after the gateway's model list changed)."""
    with _cache_lock:
        _cache.clear()


# --- What the gateway reports back ----------------------------------------------------------------------------

def response_attributes(headers: Mapping[str, Any] | None) -> dict[str, Any]:
    """The gateway's ``x-litellm-*`` response headers as dispatch-record attributes (absent ones left out)."""
    found: dict[str, Any] = {}
    for raw_name, value in (headers or {}).items():
        name = str(raw_name).lower()
        name = name.removeprefix(_PROVIDER_PREFIX)
        if name not in _HEADERS or value in (None, ""):
            continue
        attribute, kind = _HEADERS[name]
        try:
            found[attribute] = kind(float(value)) if kind is int else kind(value)
        except (TypeError, ValueError):
            continue
    return found

