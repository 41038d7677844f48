"""Fault-injection arms: the same engine run with one condition planted, to measure what the detectors see.

An arm changes only what production lets vary: the phases (which tools are offered), the tool runner (what a tool
call returns) and, for the single-pass engine, the document put in the prompt. The model, the loop, the spans
and the detectors are the production ones.

=================  =========================================================  ==========================
arm                planted condition                                           engines
=================  =========================================================  ==========================
clean              nothing (false-positive baseline)                           agentic, single-pass
no-navigation      the five navigation tools are withheld: submit only         agentic
no-crosscheck      ``search_text`` and ``extract_table_markdown`` withheld      agentic
null-tool          every tool answers, with its content emptied                agentic
closed-book        no document by any route: no tools, blank document          agentic, single-pass
wrong-content      every tool (or the single-pass document) from a decoy PDF   agentic, single-pass
=================  =========================================================  ==========================

For the agentic engine no-navigation and closed-book offer the same tool surface (every document tool is a
navigation tool); closed-book additionally blanks the index handed to the engine, so nothing of the document
(title, page count, text) can reach the model through any other route, and it also exists for single-pass.
Detectors always review against the *intended* datasheet, which is what makes the decoy arm detectable at all.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pymupdf

from app.agent.phases import Phase, extraction_phase, without_tools
from app.agent.tools import DocumentToolRunner, ToolResult, ToolRunner
from app.detectors.record import RunRecord, records_from_spans
from app.dispatch import semconv as sc
from app.documents.index import DatasheetIndex, PageInfo
from app.errors import InvalidInput

AGENTIC = "agentic"
SINGLE_PASS = "single-pass"
ENGINES = (AGENTIC, SINGLE_PASS)


@dataclass(frozen=True)
class Arm:
    name: str
    planted: str
    engines: tuple[str, ...]
    # Detector rules expected to flag an answer produced under this arm (empty: none should fire).
    expected_rules: dict[str, tuple[str, ...]] = field(default_factory=dict)
    needs_decoy: bool = False

    def expected_for(self, engine: str) -> tuple[str, ...]:
        return self.expected_rules.get(engine, ())


_GROUNDING = ("quote_not_found", "value_not_in_quote")

ARMS: dict[str, Arm] = {arm.name: arm for arm in (
    Arm("clean", "nothing planted", ENGINES),
    Arm("no-navigation", "navigation tools withheld", (AGENTIC,), {AGENTIC: ("tool_bypass",)}),
    Arm("no-crosscheck", "cross-check tools withheld", (AGENTIC,), {AGENTIC: ("verification_skipped",)}),
    Arm("null-tool", "every tool output emptied", (AGENTIC,), {AGENTIC: ("tool_read_failure",)}),
    Arm("closed-book", "no document by any route", ENGINES,
        {AGENTIC: ("tool_bypass",), SINGLE_PASS: _GROUNDING}),
    Arm("wrong-content", "every tool served from a decoy datasheet", ENGINES,
        {AGENTIC: _GROUNDING, SINGLE_PASS: _GROUNDING}, needs_decoy=True),
)}


def get_arm(name: str) -> Arm:
    try:
        return ARMS[name]
    except KeyError:
        raise InvalidInput(f"Unknown arm {name!r}; use one of {', '.join(ARMS)}.", code="unknown_arm") from None


# --- Tool runners ---------------------------------------------------------------------------------------------


class CountingToolRunner:
    """Counts the calls an arm served, so the archive can show the planted condition really applied."""

    def __init__(self, inner: ToolRunner):
        self.inner = inner
        self.served: list[str] = []

    def execute(self, name: str, args: dict[str, Any]) -> ToolResult:
        self.served.append(name)
        return self.inner.execute(name, args)


def emptied(result: Mapping[str, Any]) -> dict[str, Any]:
    """A tool result with every value blanked and its keys kept (strings "", lists and objects empty, numbers 0,
    flags false): the tool still *answers*, with nothing in it, not even a page count."""

    def blank(value: Any) -> Any:
        if isinstance(value, str):
            return ""
        if isinstance(value, list | tuple):
            return []
        if isinstance(value, Mapping):
            return {}
        if isinstance(value, bool):
            return False
        if isinstance(value, int | float):
            return type(value)(0)
        return None

    return {key: blank(value) for key, value in result.items()}


class NullToolRunner:
    """Executes the real tool, then returns its result emptied (errors pass through unchanged)."""

    def __init__(self, inner: ToolRunner):
        self.inner = inner

    def execute(self, name: str, args: dict[str, Any]) -> ToolResult:
        result = self.inner.execute(name, args)
        if result.error:
            return result
        return ToolResult(name, emptied(result.result))


def blank_index(index: DatasheetIndex, scratch: Path) -> DatasheetIndex:
    """The same page count and geometry with every text removed: a document that says nothing.

    The index points at a blank PDF of the same page sizes, because a single-pass prompt may carry the file
    itself (a native PDF block, or rendered pages) rather than its text.
    """
    path = scratch / f"blank-{index.sha256[:16]}.pdf"
    if not path.is_file():
        scratch.mkdir(parents=True, exist_ok=True)
        document = pymupdf.open()
        for page in index.pages:
            document.new_page(width=page.width, height=page.height)
        document.save(path)
        document.close()
    pages = [PageInfo(number=p.number, width=p.width, height=p.height, text="", words=[]) for p in index.pages]
    return replace(index, sha256=hashlib.sha256(path.read_bytes()).hexdigest(), path=path, title="",
                   part_numbers=[], pages=pages, toc=[], toc_source="none", toc_quality=0.0, text_layer="none",
                   table_pages=[])


# --- Set-up ----------------------------------------------------------------------------------------------------


@dataclass
class ArmSetup:
    """What the runner hands the engine for one cell. ``None`` phases/tool runner mean the production ones."""

    engine_index: DatasheetIndex
    phases: list[Phase] | None
    tool_runner: CountingToolRunner | None


def setup(arm: Arm, engine: str, index: DatasheetIndex, decoy: DatasheetIndex | None, scratch: Path) -> ArmSetup:
    """Phases, tool runner and engine-side index for one cell; ``scratch`` holds generated blank documents."""
    if engine not in arm.engines:
        raise InvalidInput(f"Arm {arm.name!r} does not apply to the {engine} engine.", code="arm_not_applicable")
    if arm.needs_decoy and decoy is None:
        raise InvalidInput(f"Arm {arm.name!r} needs a decoy datasheet (--decoy PDF).", code="decoy_required")
    if arm.name == "clean":
        return ArmSetup(index, None, None)
    if arm.name == "closed-book":
        phases = [without_tools(extraction_phase(), sc.NAVIGATION_TOOLS)] if engine == AGENTIC else None
        return ArmSetup(blank_index(index, scratch), phases, None)
    if arm.name == "wrong-content":
        assert decoy is not None
        if engine == SINGLE_PASS:
            return ArmSetup(decoy, None, None)
        return ArmSetup(index, None, CountingToolRunner(DocumentToolRunner(decoy)))
    if arm.name == "no-navigation":
        return ArmSetup(index, [without_tools(extraction_phase(), sc.NAVIGATION_TOOLS)], None)
    if arm.name == "no-crosscheck":
        return ArmSetup(index, [without_tools(extraction_phase(), sc.CROSS_CHECK_TOOLS)], None)
    if arm.name == "null-tool":
        return ArmSetup(index, None, CountingToolRunner(NullToolRunner(DocumentToolRunner(index))))
    raise InvalidInput(f"Arm {arm.name!r} has no set-up.", code="unknown_arm")


# --- Did the arm plant its condition? -----------------------------------------------------------------------------


def planted(arm: Arm, engine: str, record: RunRecord | None, served: list[str] | None) -> dict[str, Any]:
    """Check, from the run's own dispatch record, that the condition the arm claims was really in force.

    Independent of the detectors: this reads tool names and outcomes only, so a report can tell "the detector
    missed it" apart from "the fault was never planted".
    """
    if arm.name == "clean":
        return {"ok": True, "detail": "nothing planted"}
    if record is None:
        return {"ok": False, "detail": "no dispatch record"}
    document_calls = [c for c in record.calls_before_answer() if c.kind == "tool" and c.tool in sc.NAVIGATION_TOOLS]
    counts = dict(sorted(Counter(str(c.tool) for c in document_calls).items()))
    if engine == SINGLE_PASS:
        return {"ok": not document_calls, "detail": "document replaced in the prompt", "tool_counts": counts}
    if arm.name in ("no-navigation", "closed-book"):
        ok = not document_calls
        return {"ok": ok, "detail": "no navigation call" if ok else "navigation calls were executed",
                "tool_counts": counts}
    if arm.name == "no-crosscheck":
        crossed = [c for c in document_calls if c.tool in sc.CROSS_CHECK_TOOLS and c.outcome == "ok"]
        return {"ok": not crossed, "detail": "no successful cross-check call" if not crossed
                else "a cross-check tool returned content", "tool_counts": counts}
    served = served or []
    if arm.name == "null-tool":
        with_content = [c for c in document_calls if c.outcome == "ok"]
        ok = not with_content
        return {"ok": ok, "detail": f"{len(served)} call(s) served emptied; {len(with_content)} returned content",
                "tool_counts": counts}
    if arm.name == "wrong-content":
        # Calls refused by the loop (invalid arguments) never reach a tool runner; all others must have.
        executed = [c for c in document_calls if c.outcome != "error"]
        ok = len(served) >= len(executed)
        return {"ok": ok, "detail": f"{len(served)} call(s) served from the decoy, {len(executed)} executed",
                "tool_counts": counts}
    return {"ok": False, "detail": f"unknown arm {arm.name}"}


def planted_in_cell(cell: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`planted` for an archived cell, from its stored trace: re-checkable offline like the grades."""
    arm = ARMS.get(str(cell.get("arm")))
    if arm is None:
        return {"ok": False, "detail": f"unknown arm {cell.get('arm')}"}
    if arm.needs_decoy and cell.get("decoy_sha256") and cell.get("decoy_sha256") == cell.get("document_sha256"):
        # Serving the intended datasheet "as a decoy" plants nothing; such cells must not count as detections.
        return {"ok": False, "detail": "the decoy is the intended datasheet"}
    records = records_from_spans(cell.get("trace") or [], root_span_id=cell.get("root_span_id"))
    engine = str(cell.get("engine_used") or cell.get("engine"))
    return planted(arm, engine, records[0] if records else None, cell.get("arm_served"))
