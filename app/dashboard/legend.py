"""The words the dashboard uses for span outcomes and failure attribution, and the legend that explains them.

The stored labels (``ok``, ``unclassified`` …) stay machine-readable; reviewers read these sentences instead."""

from __future__ import annotations

from typing import Any

# Outcome of one call in the dispatch record (dsx.tool.outcome / dsx.llm.outcome).
SPAN_OUTCOMES: dict[str, str] = {
    "ok": "the tool ran and returned content",
    "empty": "the tool ran but returned nothing",
    "error": "the call failed (see its error code)",
    "tool_call": "the model answered with a tool call, as required",
    "text_only": "the model replied in prose without calling a tool",
}

# Attribution category -> (short chip text, explanation). Who a category is charged to is said in words too.
ATTRIBUTIONS: dict[str, tuple[str, str]] = {
    "ok": ("no fault", "nothing in this call explains a wrong answer"),
    "tool_output_error": ("tool failed", "a tool errored or returned no content for reasons of its own"),
    "tool_selection": ("tool misused", "arguments the tool rejected, a malformed submission, or an answer "
                       "submitted without navigating the document"),
    "condition_omission": ("conditions missing", "the answer lacks the operating conditions that were requested"),
    "verification_skipped": ("not cross-checked", "the answer was submitted without a cross-check call"),
    "engine_error": ("engine failed", "the provider failed, replied without the required tool call, or the run "
                     "ended without an answer"),
    "unclassified": ("unexplained", "the answer failed grounding but no call explains why (e.g. tools that "
                     "worked but served other content)"),
}
CHARGED_TO: dict[str, str] = {"none": "nobody", "tool": "the tool", "reasoning": "the model's reasoning",
                              "engine": "the engine", "unknown": "cause unknown"}


def attribution_text(attribution: Any) -> str:
    """Chip text of an attribution: "tool misused · the model's reasoning" instead of "tool_selection → reasoning"."""
    get = attribution.get if isinstance(attribution, dict) else lambda k: getattr(attribution, k, None)
    category, charged = str(get("category")), str(get("charged_to"))
    short = ATTRIBUTIONS.get(category, (category.replace("_", " "), ""))[0]
    return short if charged == "none" else f"{short} · {CHARGED_TO.get(charged, charged)}"


def attribution_title(attribution: Any) -> str:
    get = attribution.get if isinstance(attribution, dict) else lambda k: getattr(attribution, k, None)
    explanation = ATTRIBUTIONS.get(str(get("category")), ("", ""))[1]
    detail = get("detail") or ""
    return f"{explanation}. {detail}".strip(". ").strip() if detail else explanation
