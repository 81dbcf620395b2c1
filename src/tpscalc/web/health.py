"""`/healthz`: a cheap liveness answer for load balancers and uptime probes."""
from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(include_in_schema=False)


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """200 with {"status": "ok"} while the process serves requests."""
    return {"status": "ok"}
