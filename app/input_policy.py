"""The one policy for text that enters the API: no control characters, and numbers the database can hold.

A NUL or another control character in a string is never meaningful in dsx data, and some stores refuse it
(PostgreSQL cannot hold NUL in text; a lone surrogate cannot be encoded as UTF-8). Such text is rejected at the
edge with 422 ``invalid_characters`` naming the field, before anything is stored, on every backend alike.

What counts as a control character: Unicode categories Cc (C0 controls, DEL, C1 controls) and Cs (lone
surrogates). Free-text fields may keep tab, line feed and carriage return (a multi-line note or review
comment); every other field is single-line, so those three are rejected there too:

- free text (tab and line breaks allowed): ``notes`` (of a requested parameter), ``comment`` (of a review
  decision), ``quote`` (of a reviewer's correction: text copied from a PDF spans lines)
- single-line: everything else — parameter names, units, conditions, ids in paths, query values, filenames,
  form fields, header values (a header may carry a tab, as HTTP allows)

Integers that reach SQL are bounded in their route declarations, so no backend is asked for a number it cannot
represent: ``limit``/``offset`` by :data:`MAX_OFFSET`, row ids in paths and queries by :data:`MAX_ROW_ID`
(``app.http_input.RowId``). The policy itself needs no web framework: the jobs domain and ``dsx extract``
apply it too; ``app.http_input`` holds what binds it to FastAPI.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

from app.errors import InvalidInput

# Well inside every backend's integer range (PostgreSQL's OFFSET is a bigint, SQLite's INTEGER 64-bit).
MAX_OFFSET = 2**31 - 1
# Integer primary keys are PostgreSQL `integer` columns: an id past this cannot exist, and asking for it is an error.
MAX_ROW_ID = 2**31 - 1

FREE_TEXT_FIELDS = frozenset({"notes", "comment", "quote"})
LINE_BREAKS_AND_TAB = frozenset("\t\n\r")
HEADER_WHITESPACE = frozenset("\t")
FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded",)


class InvalidCharacters(InvalidInput):
    code = "invalid_characters"


def first_control_character(value: str, allowed: frozenset[str] = frozenset()) -> int | None:
    """The index of the first forbidden character in ``value``, or None when it is clean."""
    for index, char in enumerate(value):
        if char in allowed:
            continue
        if unicodedata.category(char) in ("Cc", "Cs"):
            return index
    return None


def check_text(field: str, value: str, *, allowed: frozenset[str] | None = None) -> None:
    """Raise :class:`InvalidCharacters` if ``value`` holds a control character ``field`` does not allow."""
    if allowed is None:
        allowed = LINE_BREAKS_AND_TAB if _leaf_name(field) in FREE_TEXT_FIELDS else frozenset()
    index = first_control_character(value, allowed)
    if index is not None:
        raise InvalidCharacters(
            f"`{field}` contains a control character (U+{ord(value[index]):04X} at position {index}); "
            "remove it and send the request again.",
            field=field,
        )


def check_nested(field: str, value: Any) -> None:
    """Apply :func:`check_text` to every string (keys included) inside decoded JSON ``value``."""
    for path, text in _strings(field, value):
        check_text(path, text)


def _strings(path: str, value: Any) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            key_path = f"{path}.{key}" if path else str(key)
            if isinstance(key, str):
                yield key_path, key
            yield from _strings(key_path, item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(f"{path}[{index}]", item)


def _leaf_name(field: str) -> str:
    return field.rsplit(".", 1)[-1].split("[", 1)[0]
