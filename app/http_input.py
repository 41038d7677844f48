"""The text policy of ``app.input_policy`` bound to FastAPI: bounded row-id parameters and the app-wide
dependency that holds every request's path, query, headers and small bodies to it."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import Path, Query, Request

from app.input_policy import FORM_CONTENT_TYPES, HEADER_WHITESPACE, MAX_ROW_ID, check_nested, check_text

#: A row id in a path, bounded so that no backend is asked to compare a number it cannot hold.
RowId = Annotated[int, Path(ge=1, le=MAX_ROW_ID)]
#: The same, as an optional query value.
OptionalRowId = Annotated[int | None, Query(ge=1, le=MAX_ROW_ID)]


async def check_request_text(request: Request) -> None:
    """App-wide dependency: path parameters, query values, header values and small request bodies (JSON or
    url-encoded forms the route declares) are held to the policy before any route code runs. Multipart
    uploads are streamed under a size cap by their route, which checks their fields itself."""
    for name, value in request.path_params.items():
        if isinstance(value, str):
            check_text(f"path.{name}", value, allowed=frozenset())
    for name, value in request.query_params.multi_items():
        check_text(f"query.{name}", name, allowed=frozenset())
        check_text(f"query.{name}", value)
    for name, value in request.headers.items():
        check_text(f"header.{name}", value, allowed=HEADER_WHITESPACE)
    route = request.scope.get("route")
    if getattr(route, "body_field", None) is None:
        return
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("application/json"):
        try:
            body = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError):
            return  # malformed JSON is the route's validation error, reported with its own code
        check_nested("body", body)
    elif content_type.startswith(FORM_CONTENT_TYPES):
        for name, value in (await request.form()).multi_items():
            if isinstance(value, str):
                check_text(f"form.{name}", value)
