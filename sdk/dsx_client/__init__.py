"""Typed client for the dsx datasheet-extraction service.

>>> from dsx_client import Client
>>> with Client("http://127.0.0.1:8000") as dsx:
...     job = dsx.submit("part.pdf", ["Supply voltage", "Quiescent current"])
...     for row in dsx.result(job):
...         print(row.parameter, [str(v) for v in row.values], [f.rule for f in row.flags])
"""

from dsx_client._version import __version__
from dsx_client.async_client import AsyncClient
from dsx_client.client import Client
from dsx_client.errors import (
    ApiError,
    AuthenticationError,
    ConflictError,
    CorrectionRequired,
    DsxConnectionError,
    DsxError,
    ExtractionNotFound,
    IdempotencyConflict,
    InvalidInput,
    InvalidPdf,
    InvalidTransition,
    JobFailed,
    JobNotFound,
    NotFoundError,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    UnknownModel,
    WaitTimeout,
)
from dsx_client.models import (
    Attribution,
    Correction,
    Decision,
    DecisionPage,
    Flag,
    Grounding,
    Job,
    JobPage,
    Parameter,
    ParameterResult,
    QueueItem,
    QueuePage,
    Review,
    Span,
    Trace,
    TreeTotals,
    Value,
)

__all__ = [
    "ApiError",
    "AsyncClient",
    "Attribution",
    "AuthenticationError",
    "Client",
    "ConflictError",
    "Correction",
    "CorrectionRequired",
    "Decision",
    "DecisionPage",
    "DsxConnectionError",
    "DsxError",
    "ExtractionNotFound",
    "Flag",
    "Grounding",
    "IdempotencyConflict",
    "InvalidInput",
    "InvalidPdf",
    "InvalidTransition",
    "Job",
    "JobFailed",
    "JobNotFound",
    "JobPage",
    "NotFoundError",
    "Parameter",
    "ParameterResult",
    "PayloadTooLarge",
    "PermissionDenied",
    "QueueItem",
    "QueuePage",
    "RateLimited",
    "Review",
    "ServerError",
    "ServiceUnavailable",
    "Span",
    "Trace",
    "TreeTotals",
    "UnknownModel",
    "Value",
    "WaitTimeout",
    "__version__",
]
