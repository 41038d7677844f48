"""Decoding the ``parameters`` form field of a job submission.

Two spellings are accepted: a JSON array (of names or ``{name, unit?, conditions?, notes?}`` objects), and, as a
convenience for form posts, one plain parameter name. A value that starts like JSON (``[`` or ``{``) is always
read as JSON, so a truncated array — what ``curl -F 'parameters=["A"; "B"]'`` sends, because curl ends a ``-F``
value at ``;`` — is rejected with the parse error's position instead of becoming one parameter named ``["A"``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from app.errors import InvalidInput
from app.input_policy import check_nested, check_text

JSON_OPENERS = ("[", "{")


def decode_parameters(raw: str) -> Any:
    """The parsed JSON value for JSON-like input, else ``[raw]`` (one plain name)."""
    if not raw.lstrip().startswith(JSON_OPENERS):
        return [raw]
    try:
        # strict=False lets a control character inside a string through the parser, so the text policy below
        # names the field that holds it rather than reporting a parse error at some offset.
        return json.loads(raw, strict=False)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"`parameters` looks like JSON but does not parse: {exc.msg} at line {exc.lineno}, column {exc.colno} "
            f"(character {exc.pos}). If you used curl -F, quote the whole value: a ';' ends a -F value.",
            code="invalid_parameters", position=exc.pos, line=exc.lineno, column=exc.colno,
        ) from exc


def check_parameter_text(items: Sequence[Any]) -> None:
    """Hold every string of the requested parameters to the input policy, naming the field."""
    for position, item in enumerate(items):
        if isinstance(item, str):
            check_text(f"parameters[{position}].name", item)
        else:
            check_nested(f"parameters[{position}]", item)
