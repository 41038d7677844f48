"""Liveness and readiness: readiness checks the database and the broker for real."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from app.db import get_engine
from app.jobs.queue import broker_ready

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
def readyz() -> JSONResponse:
    checks: dict[str, str] = {}
    try:
        with get_engine().connect() as connection:
            connection.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001
        checks["database"] = f"error: {exc.__class__.__name__}"
    ok, detail = broker_ready()
    checks["broker"] = "ok" if ok else f"error: {detail[:200]}"
    ready = all(v == "ok" for v in checks.values())
    headers = {} if ready else {"Retry-After": "5"}
    return JSONResponse({"status": "ready" if ready else "unavailable", "checks": checks},
                        status_code=200 if ready else 503, headers=headers)
