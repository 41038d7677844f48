"""The LiteLLM custom provider that puts the reader behind the same interface as any hosted model.

It answers every completion with exactly one tool call (finish_reason ``tool_calls``) and never with text,
so the agent loop, its spans and the review rules treat it like any other model. Token usage is estimated
from the characters exchanged (about four per token) so budgets and cost accounting stay meaningful.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from litellm import CustomLLM
from litellm.types.utils import ModelResponse

from app.agent.offline.conversation import parse_conversation
from app.agent.offline.policy import Step, next_steps

MODEL_NAME = "datasheet-reader"
_CHARS_PER_TOKEN = 4


def _call_id(messages_count: int, position: int, step: Step) -> str:
    """Deterministic, and unique within a conversation (message count and position in the turn)."""
    key = f"{messages_count}:{position}:{step.name}:{json.dumps(step.arguments, sort_keys=True)}"
    return f"call_{hashlib.sha256(key.encode()).hexdigest()[:24]}"


def respond(messages: list[Any], tools: Any, model: str = f"offline/{MODEL_NAME}") -> ModelResponse:
    """The reader's reply to a conversation: an assistant message holding the tool calls of one turn."""
    conversation = parse_conversation(messages, tools)
    steps = next_steps(conversation)
    calls = [{"id": _call_id(len(messages), i, step), "type": "function",
              "function": {"name": step.name, "arguments": json.dumps(step.arguments, ensure_ascii=False)}}
             for i, step in enumerate(steps)]
    prompt_tokens = max(1, (conversation.prompt_chars + len(json.dumps(tools or [], default=str)))
                        // _CHARS_PER_TOKEN)
    completion_tokens = max(1, sum(len(c["function"]["arguments"]) + len(c["function"]["name"]) for c in calls)
                            // _CHARS_PER_TOKEN + 8 * len(calls))
    return ModelResponse(
        id=f"chatcmpl-offline-{calls[0]['id'][5:17]}",
        created=int(time.time()),
        model=model,
        object="chat.completion",
        choices=[{
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": calls,
            },
        }],
        usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
               "total_tokens": prompt_tokens + completion_tokens},
    )


class OfflineReader(CustomLLM):
    """``offline/datasheet-reader``: deterministic, local, no keys, no network."""

    def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
        optional = kwargs.get("optional_params") or {}
        return respond(messages, optional.get("tools"), model=f"offline/{model}" if "/" not in model else model)

    async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.completion(model, messages, *args, **kwargs)
