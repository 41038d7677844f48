"""The agent's tool surface: JSON schemas for the model, argument validation, and the tool runner.

Each tool's arguments are a pydantic model; the JSON schema offered to the model is generated from it
(refs inlined, titles dropped: some OpenAI-compatible backends reject ``$ref`` and the study saw one
choke on a large schema), so the schema and the validation can never disagree. Arguments that do not
parse or validate are answered with a structured tool error the model can correct, never an exception.

The tool runner is the seam the evaluation harness uses: anything with ``execute(name, args) ->
ToolResult`` can stand in for ``DocumentToolRunner`` (empty outputs, a decoy datasheet, extra tools).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.agent.schemas import SubmittedExtraction
from app.dispatch import semconv
from app.documents.index import DatasheetIndex

log = logging.getLogger(__name__)

ToolOutcome = Literal["ok", "error", "empty"]


# --- Argument models of the five document tools -------------------------------------------------------------

class _Args(BaseModel):
    # Unknown keys are ignored rather than refused: models often add harmless extras, and the tool surface
    # (what the tool can do) is fixed by the schema whatever they send.
    model_config = ConfigDict(extra="ignore")


class BuildDatasheetArgs(_Args):
    pass


class GetSectionTextArgs(_Args):
    section: str | None = Field(default=None, description="Section title or number from the table of contents")
    start_page: int | None = Field(default=None, ge=1, description="First page (1-based) when no section is given")
    end_page: int | None = Field(default=None, ge=1, description="Last page, inclusive")
    max_chars: int = Field(default=8000, ge=200, le=20000)
    cursor: str | None = Field(default=None, description="next_cursor of a truncated previous call")


class SearchTextArgs(_Args):
    query: str | list[str] = Field(description="Words or phrases to find; a list searches each")
    max_hits: int = Field(default=10, ge=1, le=25)
    page: int | None = Field(default=None, ge=1, description="Restrict to one page")


class ExtractTableMarkdownArgs(_Args):
    page: int = Field(ge=1)
    table: int | None = Field(default=None, ge=0, description="Index of one table on the page; all when omitted")


class InspectPageArgs(_Args):
    page: int = Field(ge=1)
    region: list[float] | None = Field(default=None, min_length=4, max_length=4,
                                       description="[x0, y0, x1, y1] in PDF points")
    dpi: int = Field(default=72, ge=36, le=150)


# --- Specs ---------------------------------------------------------------------------------------------------

def _compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with ``$defs`` references inlined, titles dropped, and ``anyOf [X, null]`` of optional
    fields reduced to ``X`` (optional already means "may be omitted"): smaller and more portable."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(defs[node["$ref"].rsplit("/", 1)[-1]])
            options = node.get("anyOf")
            if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
                merged = {k: v for k, v in node.items() if k != "anyOf"}
                merged.update(next(o for o in options if o != {"type": "null"}))
                if merged.get("default", 0) is None:
                    del merged["default"]
                return walk(merged)
            return {k: walk(v) for k, v in node.items() if k not in ("title", "$defs")}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    compact = walk(schema)
    compact.pop("description", None)  # the tool description speaks to the model; a docstring would not
    return compact


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model. ``args_model`` validates arguments (None: any JSON object)."""

    name: str
    description: str
    args_model: type[BaseModel] | None = None
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    @classmethod
    def from_model(cls, name: str, description: str, args_model: type[BaseModel]) -> ToolSpec:
        schema = _compact_schema(args_model.model_json_schema())
        schema.setdefault("properties", {})
        return cls(name=name, description=description, args_model=args_model, parameters=schema)

    def openai_tool(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


BUILD_DATASHEET = ToolSpec.from_model(
    "build_datasheet",
    "Open the datasheet: title, part numbers, page count, table of contents with page ranges, pages with "
    "tables. Call first.",
    BuildDatasheetArgs,
)
GET_SECTION_TEXT = ToolSpec.from_model(
    "get_section_text",
    "Text of a section (by title or number) or a page range, with '--- page N ---' markers. Long text is cut "
    "and returns next_cursor.",
    GetSectionTextArgs,
)
SEARCH_TEXT = ToolSpec.from_model(
    "search_text",
    "Find words or phrases; ranked hits with page, matching line, context and section. Use it to locate and "
    "to cross-check a value.",
    SearchTextArgs,
)
EXTRACT_TABLE_MARKDOWN = ToolSpec.from_model(
    "extract_table_markdown",
    "Tables of a page as Markdown, with header rows and continuation notes. Read values with their column "
    "(min/typ/max), unit and conditions.",
    ExtractTableMarkdownArgs,
)
INSPECT_PAGE = ToolSpec.from_model(
    "inspect_page",
    "Layout blocks and a rendered image of a page (or a region): for figures, footnotes and pages without "
    "a text layer.",
    InspectPageArgs,
)
SUBMIT_EXTRACTION = ToolSpec.from_model(
    semconv.SUBMIT_TOOL,
    "Submit the answer; the only way to answer, and it ends the extraction. found=true needs values (each "
    "with min/typical/max as printed, unit, conditions), source_page and quote: the verbatim document text "
    "the value was read from. found=false needs a reason. confidence is 0..1.",
    SubmittedExtraction,
)

DOCUMENT_TOOLS: tuple[ToolSpec, ...] = (
    BUILD_DATASHEET, GET_SECTION_TEXT, SEARCH_TEXT, EXTRACT_TABLE_MARKDOWN, INSPECT_PAGE,
)


def tool_surface_version(specs: tuple[ToolSpec, ...] | list[ToolSpec]) -> str:
    """A short digest of the offered tools: tool-call counts are a property of (model, tool surface), so
    every run records which surface it saw and a changed schema is a new version by construction."""
    body = json.dumps([s.openai_tool() for s in specs], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()[:12]


# --- Arguments -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParsedArguments:
    """Arguments of one tool call: ``value`` when valid, else a structured ``error``."""

    raw: str
    value: dict[str, Any] | None = None
    model: BaseModel | None = None
    error: dict[str, Any] | None = None


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:8]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def parse_arguments(spec: ToolSpec, raw: str | dict[str, Any] | None) -> ParsedArguments:
    """Decode and validate a tool call's arguments against ``spec``."""
    if isinstance(raw, dict):
        text, decoded = json.dumps(raw), raw
    else:
        text = raw or ""
        try:
            decoded = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            return ParsedArguments(text, error={
                "code": "invalid_arguments",
                "message": f"Arguments are not valid JSON ({exc.msg} at position {exc.pos}). Send one JSON "
                           f"object matching the {spec.name} schema.",
            })
    if not isinstance(decoded, dict):
        return ParsedArguments(text, error={"code": "invalid_arguments",
                                            "message": "Arguments must be a JSON object."})
    if spec.args_model is None:
        return ParsedArguments(text, value=decoded)
    try:
        model = spec.args_model.model_validate(decoded)
    except ValidationError as exc:
        return ParsedArguments(text, error={"code": "invalid_arguments", "message": _validation_message(exc)})
    return ParsedArguments(text, value=model.model_dump(exclude_none=True), model=model)


# --- Results ---------------------------------------------------------------------------------------------------

def _envelope(name: str, result: dict[str, Any]) -> dict[str, Any]:
    """The untrusted-data envelope of a tool result (the documents package owns the canonical builder)."""
    try:
        from app.documents.tools import envelope
    except ImportError:
        envelope = None
    if envelope is not None:
        built = envelope(name, result)
        return json.loads(built) if isinstance(built, str) else dict(built)
    status = "error" if isinstance(result, dict) and "error" in result else "ok"
    return {"tool": name, "status": status, "untrusted_document_data": True, "result": result}


# Per document tool, the keys that carry document content: the result is "empty" when all of them are.
_CONTENT_KEYS = {
    "build_datasheet": ("page_count", "toc", "title"),
    "get_section_text": ("text",),
    "search_text": ("hits",),
    "extract_table_markdown": ("tables",),
    "inspect_page": ("blocks", "image"),
}


def _blank(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, dict | list | tuple):
        return not value or all(_blank(v) for v in (value.values() if isinstance(value, dict) else value))
    return value is None or value == 0 or value is False


def is_empty_result(name: str, result: dict[str, Any]) -> bool:
    """True when a successful result carries no document content (no hits, no text, no tables...)."""
    keys = _CONTENT_KEYS.get(name)
    if keys is None:
        return _blank(result)
    return all(_blank(result.get(k)) for k in keys)


@dataclass
class ToolResult:
    """What one tool call returned: a result dict, or ``{"error": {"code", "message"}}``."""

    name: str
    result: dict[str, Any]

    @classmethod
    def failure(cls, name: str, code: str, message: str) -> ToolResult:
        return cls(name, {"error": {"code": code, "message": message}})

    @property
    def error(self) -> dict[str, Any] | None:
        error = self.result.get("error") if isinstance(self.result, dict) else None
        return error if isinstance(error, dict) else ({"code": "tool_error", "message": str(error)} if error else None)

    @property
    def error_code(self) -> str | None:
        return str(self.error.get("code") or "tool_error") if self.error else None

    @property
    def outcome(self) -> ToolOutcome:
        if self.error:
            return "error"
        return "empty" if is_empty_result(self.name, self.result) else "ok"

    def envelope(self) -> dict[str, Any]:
        return _envelope(self.name, self.result)

    def content(self) -> str:
        """The tool message content: the JSON envelope marking the result as untrusted document data."""
        return json.dumps(self.envelope(), ensure_ascii=False, default=str)


class ToolRunner(Protocol):
    def execute(self, name: str, args: dict[str, Any]) -> ToolResult: ...


class DocumentToolRunner:
    """Executes the five document tools over one datasheet. Never raises: a failing tool is a tool error
    (charged to the tool by attribution), not a crashed run."""

    def __init__(self, index: DatasheetIndex, tools: Any = None) -> None:
        if tools is None:
            from app.documents.tools import DocumentTools

            tools = DocumentTools(index)
        self.index = index
        self.tools = tools

    def execute(self, name: str, args: dict[str, Any]) -> ToolResult:
        if name not in semconv.NAVIGATION_TOOLS:
            return ToolResult.failure(name, "unknown_tool", f"No document tool named {name!r}.")
        method = getattr(self.tools, name)
        try:
            result = method(**args)
        except Exception as exc:  # noqa: BLE001 - see the class docstring
            log.exception("tool %s failed", name)
            return ToolResult.failure(name, "tool_failed", f"{type(exc).__name__}: {exc}")
        if not isinstance(result, dict):
            return ToolResult.failure(name, "tool_failed", f"tool returned {type(result).__name__}, not an object")
        return ToolResult(name, result)
