"""The ADO write, its rollback and the retag over HTTP (request and response shapes:
shared/writer/__init__.py). A write and a rollback are dry runs unless the body says otherwise."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from shared.api.responses import ApiResponse, answers_errors, error_response, json_response
from shared.api.runs import known_run
from shared.errors import ConfigurationError
from shared.services import Services

if TYPE_CHECKING:
    from shared.ado.ports import WorkItemWriter


WRITE_BODY_KEYS = ("dry_run", "decisions", "allow_empty_backlog")


def _write_body(raw: bytes | None) -> dict[str, Any] | ApiResponse:
    if not raw or not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return error_response(400, 'the body must be JSON: {"dry_run": bool, "decisions": {}}')
    if not isinstance(body, dict):
        return error_response(400, "the body must be a JSON object")
    unknown = sorted(set(body) - set(WRITE_BODY_KEYS))
    if unknown:
        return error_response(400, f"unknown keys {unknown}; expected {list(WRITE_BODY_KEYS)}")
    if not isinstance(body.get("dry_run", True), bool):
        return error_response(400, "dry_run must be true or false")
    if not isinstance(body.get("allow_empty_backlog", False), bool):
        return error_response(400, "allow_empty_backlog must be true or false")
    if body.get("decisions") is not None and not isinstance(body["decisions"], dict):
        return error_response(400, "decisions must be an object {story_id: decision}")
    return body


@answers_errors
def write_run(
    svc: Services,
    run_id: str,
    raw_body: bytes | None,
    *,
    ado_client: WorkItemWriter | None = None,
    requester: str | None = None,
) -> ApiResponse:
    """POST /api/runs/{run_id}/write: the plan (``dry_run``, the default) or the write, of the
    run with its saved review applied. ``requester`` (shared.api.review.requester): who asks."""
    from shared.writer.runs import write_run as write

    known_run(svc, run_id)
    body = _write_body(raw_body)
    if isinstance(body, ApiResponse):
        return body
    dry_run = body.get("dry_run", True)
    client = ado_client if ado_client is not None else _ado_client(svc, dry_run=dry_run)
    try:
        return json_response(
            200,
            write(
                svc,
                run_id,
                client,
                decisions=body.get("decisions"),
                dry_run=dry_run,
                allow_empty_backlog=body.get("allow_empty_backlog", False),
                requester=requester,
            ),
        )
    finally:
        if client is not None and ado_client is None:
            client.close()


def _ado_client(svc: Services, *, dry_run: bool) -> Any:
    """The ADO client from the settings; None when ADO is not configured and this is a dry run
    (the plan is then made from the run's files), else ConfigurationError (503)."""
    from shared.ado.client import AdoClient

    try:
        return AdoClient.from_settings(svc.settings)
    except ConfigurationError:
        if not dry_run:
            raise
        return None


@answers_errors
def get_write(svc: Services, run_id: str) -> ApiResponse:
    """GET /api/runs/{run_id}/write: the latest write's results (empty if never written)."""
    from shared.writer.runs import latest_write

    known_run(svc, run_id)
    return json_response(200, latest_write(svc, run_id))


ROLLBACK_BODY_KEYS = ("write_id", "dry_run")


@answers_errors
def rollback_run(
    svc: Services, run_id: str, raw_body: bytes | None, *, ado_client: WorkItemWriter | None = None
) -> ApiResponse:
    """POST /api/runs/{run_id}/rollback: what undoing a write would do (``dry_run``, the default,
    as for a write) or the rollback; the latest write unless ``write_id`` names another."""
    from shared.writer.rollback import rollback_run as rollback

    known_run(svc, run_id)
    body: Any = {}
    if raw_body and raw_body.strip():
        try:
            body = json.loads(raw_body)
        except (ValueError, UnicodeDecodeError):
            return error_response(
                400, 'the body must be JSON: {"write_id": "w-…", "dry_run": bool}'
            )
    if not isinstance(body, dict):
        return error_response(400, "the body must be a JSON object")
    unknown = sorted(set(body) - set(ROLLBACK_BODY_KEYS))
    if unknown:
        return error_response(400, f"unknown keys {unknown}; expected {list(ROLLBACK_BODY_KEYS)}")
    dry_run = body.get("dry_run", True)
    if not isinstance(dry_run, bool):
        return error_response(400, "dry_run must be true or false")
    write_id = body.get("write_id")
    if write_id is not None and not isinstance(write_id, str):
        return error_response(400, "write_id must be a string such as w-0001-20260101T120000Z")
    client = ado_client if ado_client is not None else _ado_client(svc, dry_run=dry_run)
    try:
        return json_response(200, rollback(svc, run_id, client, write_id=write_id, dry_run=dry_run))
    finally:
        if client is not None and ado_client is None:
            client.close()


@answers_errors
def retag_run(svc: Services, run_id: str) -> ApiResponse:
    """POST /api/runs/{run_id}/retag: tag the run's stories again against the current index."""
    from shared.writer.retag import retag_run as retag

    known_run(svc, run_id)
    return json_response(200, retag(svc, run_id))
