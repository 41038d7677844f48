"""Text addressed to a language model, found inside a datasheet: the signature of a prompt-injection attempt.

A datasheet describes a part; it never speaks to the software reading it. So a sentence that tells "the AI" to
ignore its instructions, a block posing as a system prompt or a chat turn, JSON shaped like a tool call, or
our own framing tags (``<parameter_request>``, ``<document>``) in the text are evidence of an attempt to
steer the extraction, whether or not the model fell for it. The defences that keep such text from changing
the tools, the budgets or the answer schema live in ``app.agent`` (untrusted-data envelope, neutralised tags,
allow-listed prompts); this module only finds the text so the review can say it was there.

Patterns are deliberately specific (each needs a phrase that has no business in component documentation);
they were checked for silence on ordinary datasheets of many vendors. The rule built on them is in
``app.detectors.document_rules``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.dispatch import semconv as sc

_TOOLS = "|".join(sorted(sc.NAVIGATION_TOOLS | {sc.SUBMIT_TOOL}))

#: (kind, pattern). Case-insensitive; ``\s`` spans line breaks, since page text wraps anywhere.
_SOURCES: tuple[tuple[str, str], ...] = (
    ("override", r"\b(?:ignore|disregard|forget|override|bypass)\b[\w\s,'-]{0,40}?\b(?:previous|prior|above|"
                 r"earlier|preceding|all|any|your|the|system)\s+(?:\w+\s+){0,2}?(?:instructions?|prompts?|rules|"
                 r"directions|guidelines|directives)\b"),
    ("new_instructions", r"\b(?:new|updated|real|actual|hidden|secret)\s+(?:system\s+)?(?:instructions?|"
                         r"system\s+prompt|directives?)\s*[:\-]"),
    ("addressed_to_model", r"\b(?:note|message|instructions?|attention|notice)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?"
                           r"(?:ai|a\.i\.|llm|language\s+model|assistant|chat\s*bot)s?\b"),
    ("addressed_to_model", r"\b(?:ai|llm|language\s+model|assistant|chat\s*bot)s?\s+(?:reading|processing|parsing|"
                           r"summari[sz]ing|extracting\s+from)\s+this\b"),
    ("role_play", r"\byou\s+are\s+(?:now\s+)?(?:an?\s+|in\s+)?(?:ai|a\.i\.|assistant|language\s+model|chat\s*bot|"
                  r"llm|maintenance\s+mode|developer\s+mode|dan)\b"),
    ("fake_system_prompt", r"(?:^|\n)\s*(?:#+\s*)?(?:system|developer)\s+(?:prompt|message|instructions?)\s*:"),
    ("fake_chat_turn", r"(?:^|[\n>])\s*(?:assistant|system|user)\s*:\s*(?:you|ignore|the\s+(?:answer|value|supply)|"
                       r"i\s+will|sure)\b"),
    ("chat_markup", r"<\|?(?:im_start|im_end|system|endoftext|start_header_id)\|?>|\[/?INST\]|<</?SYS>>"),
    ("framing_tag", r"(?:<|&lt;)\s*/?\s*(?:parameter_request|document|tool_call|tool_result|function_call|"
                    r"system)\b"),
    ("fake_tool_call", r"[\"']?(?:tool_calls|function_call)[\"']?\s*:\s*[\[{]"),
    ("fake_tool_call", rf"\b(?:{_TOOLS})\b"),
)
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _SOURCES
)

EXCERPT_CHARS = 160


@dataclass(frozen=True)
class InstructionHit:
    kind: str
    start: int
    end: int
    excerpt: str

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "excerpt": self.excerpt}


def find_instructions(text: str) -> list[InstructionHit]:
    """Every stretch of ``text`` that speaks to a model, in order, overlapping hits merged into the first."""
    if not text:
        return []
    hits: list[InstructionHit] = []
    for kind, pattern in PATTERNS:
        for match in pattern.finditer(text):
            hits.append(InstructionHit(kind, match.start(), match.end(), _excerpt(text, match.start(), match.end())))
    hits.sort(key=lambda h: (h.start, -h.end))
    merged: list[InstructionHit] = []
    for hit in hits:
        if merged and hit.start < merged[-1].end:
            continue
        merged.append(hit)
    return merged


def _excerpt(text: str, start: int, end: int) -> str:
    """The hit with some context, one line, bounded."""
    left = max(0, start - 40)
    right = min(len(text), max(end, start) + 80)
    snippet = " ".join(text[left:right].split())
    return snippet[:EXCERPT_CHARS]


def instruction_lines(text: str) -> list[str]:
    """The full lines (as printed) that hold a hit: what an answer quoting the injection would quote."""
    lines: list[str] = []
    for hit in find_instructions(text):
        begin = text.rfind("\n", 0, hit.start) + 1
        stop = text.find("\n", hit.end)
        line = text[begin: stop if stop != -1 else len(text)].strip()
        if line and line not in lines:
            lines.append(line)
    return lines
