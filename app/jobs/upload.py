"""Multipart upload with the size cap enforced while the body streams in (never buffered past the cap)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.types import Message

from app.errors import InvalidInput, PayloadTooLarge
from app.input_policy import check_text

# Room for the multipart envelope and the small text fields beside the file.
FORM_OVERHEAD_BYTES = 256 * 1024


@dataclass
class JobUpload:
    data: bytes
    filename: str | None
    parameters: str | None
    engine: str | None
    model: str | None


def _capped_receive(request: Request, limit: int):  # noqa: ANN202
    received = 0

    async def receive() -> Message:
        nonlocal received
        message = await request.receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise PayloadTooLarge(f"The upload exceeds the {limit - FORM_OVERHEAD_BYTES}-byte limit.")
        return message

    return receive


async def read_job_upload(request: Request, max_bytes: int) -> JobUpload:
    limit = max_bytes + FORM_OVERHEAD_BYTES
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"The upload exceeds the {max_bytes}-byte limit.")
    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("multipart/form-data"):
        raise InvalidInput("Send multipart/form-data with a `file` part and a `parameters` field.",
                           code="invalid_content_type")
    capped = Request(request.scope, receive=_capped_receive(request, limit))
    form = await capped.form(max_files=1, max_fields=16)
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidInput("The `file` part (the PDF) is missing.", code="missing_file")
        data = await upload.read()
        if len(data) > max_bytes:
            raise PayloadTooLarge(f"The file exceeds the {max_bytes}-byte limit.")

        def text(name: str) -> str | None:
            value = form.get(name)
            return value if isinstance(value, str) and value != "" else None

        fields = JobUpload(data=data, filename=upload.filename, parameters=text("parameters"),
                           engine=text("engine"), model=text("model"))
        for name in ("filename", "engine", "model"):  # `parameters` is checked item by item once decoded
            if (value := getattr(fields, name)) is not None:
                check_text(name, value)
        return fields
    finally:
        await form.close()
