"""The offline model: a deterministic datasheet reader served as the LiteLLM model ``offline/datasheet-reader``.

It needs no keys and no network, so a fresh install still extracts real values, and it is the cheap second
opinion a review can compare a hosted model against. ``register()`` makes it callable through
``litellm.completion`` like any provider.
"""

from __future__ import annotations

import os
import threading

PROVIDER = "offline"

_lock = threading.Lock()
_handler = None


def register() -> None:
    """Add the ``offline`` provider to LiteLLM's custom provider map (idempotent, thread-safe)."""
    global _handler
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from app.agent.offline.provider import OfflineReader

    with _lock:
        entries = [e for e in litellm.custom_provider_map if e.get("provider") == PROVIDER]
        if not entries:
            _handler = _handler or OfflineReader()
            litellm.custom_provider_map = [*litellm.custom_provider_map,
                                           {"provider": PROVIDER, "custom_handler": _handler}]
        if PROVIDER not in litellm.provider_list or PROVIDER not in getattr(litellm, "_custom_providers", []):
            litellm.utils.custom_llm_setup()
