"""Import every ORM module once, so metadata (Alembic, create_all) sees all tables."""

from app.auth.models import ApiKey
from app.blobs.models import BlobContent
from app.db import Base
from app.dispatch.models import SpanRecord
from app.documents.models import Blob
from app.review.models import Attribution, Decision, Flag, Grounding
from app.tables.jobs import Extraction, Job, JobParameter

__all__ = [
    "ApiKey",
    "Attribution",
    "Base",
    "Blob",
    "BlobContent",
    "Decision",
    "Extraction",
    "Flag",
    "Grounding",
    "Job",
    "JobParameter",
    "SpanRecord",
]
