"""Phases as data: which tools a model is offered, and which submit tool closes the phase.

The loop offers a phase's tools plus its submit tool and nothing else; the next phase opens only after
the submit was accepted (the two-pass freeze: the extraction is frozen before any later tool, such as a
measurement oracle, can be seen). Production runs one extraction phase; evaluation builds others from
these same pieces, e.g. ``without_tools(extraction_phase(), {"search_text"})`` or a second ``Phase``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from app.agent.tools import DOCUMENT_TOOLS, SUBMIT_EXTRACTION, ToolSpec

EXTRACTION = "extraction"


@dataclass(frozen=True)
class Phase:
    """``opening`` is the user message that opens this phase when it is not the first."""

    name: str
    tools: tuple[ToolSpec, ...]
    submit: ToolSpec
    opening: str | None = None

    @property
    def offered(self) -> tuple[ToolSpec, ...]:
        return (*self.tools, self.submit)

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.offered)

    def spec(self, name: str) -> ToolSpec | None:
        return next((t for t in self.offered if t.name == name), None)


def extraction_phase() -> Phase:
    """The production phase: the five document tools, answered through ``submit_extraction``."""
    return Phase(name=EXTRACTION, tools=DOCUMENT_TOOLS, submit=SUBMIT_EXTRACTION)


def production_phases() -> list[Phase]:
    return [extraction_phase()]


def without_tools(phase: Phase, names: set[str] | frozenset[str]) -> Phase:
    """``phase`` with some tools withheld (the submit tool always stays)."""
    return replace(phase, tools=tuple(t for t in phase.tools if t.name not in names))


def single_pass(phases: list[Phase]) -> list[Phase]:
    """The single-pass form: the document is in the prompt, so the first phase offers only its submit tool.
    Later phases keep their tools (they open after the extraction is frozen)."""
    first, *rest = phases
    return [replace(first, tools=()), *rest]
