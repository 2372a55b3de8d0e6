"""``GET /api/health``: the shallow check, and the deep one behind the function key."""

from __future__ import annotations

import json
from collections.abc import Mapping
from urllib.parse import quote

from shared import __version__
from shared.api.responses import ApiResponse, error_response, json_response
from shared.services import Services


def health(svc: Services) -> ApiResponse:
    settings = svc.settings
    return json_response(
        200,
        {
            "status": "ok",
            "version": __version__,
            "engine": settings.resolved_engine(),
            "embedder": settings.resolved_embedder(),
            "vector_store": settings.resolved_vector_store(),
            "storage": settings.resolved_storage_backend(),
        },
    )


DEEP_HEALTH_ROUTE = "health/deep"


def wants_deep(params: Mapping[str, str]) -> bool:
    """``?deep=1`` (or true, yes, on)."""
    return str(params.get("deep", "")).strip().lower() in ("1", "true", "yes", "on")


def health_request(params: Mapping[str, str], headers: Mapping[str, str]) -> ApiResponse | None:
    """What the anonymous ``GET /api/health`` answers to ``?deep=1`` (None: the shallow check).

    The anonymous function cannot tell a valid key from a wrong one (the host checks keys only for
    function-level routes), so it never runs the deep check itself: without a key it refuses (401);
    with one it redirects (307, same method, the query kept) to ``/api/health/deep``, the
    function-level route where the host checks the key."""
    if not wants_deep(params):
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    if not (params.get("code") or lower.get("x-functions-key")):
        return error_response(
            401,
            "the deep health check needs a function key: GET /api/health/deep (or "
            "/api/health?deep=1) with the x-functions-key header or ?code=",
        )
    query = "&".join(f"{quote(k)}={quote(v)}" for k, v in params.items())
    location = "health/deep" + (f"?{query}" if query else "")
    return ApiResponse(
        307,
        json.dumps({"location": location}).encode(),
        headers={"Location": location},
    )


def deep_health(svc: Services) -> ApiResponse:
    """GET /api/health/deep: every dependency probed (shared/health.py); 503 when one fails."""
    from shared.health import deep_health as probe

    status, body = probe(svc)
    return json_response(status, body)
