"""Review service (placeholder signature)."""

from __future__ import annotations


def review_extraction(session, *, job, parameter, extraction, index, cross_check=None):  # noqa: ANN001,ANN201
    raise NotImplementedError
