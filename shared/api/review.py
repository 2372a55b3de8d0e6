"""The saved review and the export over HTTP (contracts: shared/review/state.py,
shared/api/export.py), and who a request says it comes from (``requester``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from shared.api.responses import ApiResponse, answers_errors, error_response, json_response
from shared.api.runs import known_run
from shared.models import RunStatus
from shared.services import Services

PRINCIPAL_HEADER = "x-ms-client-principal-name"
NAME_LIMIT = 200
REVIEW_BODY_LIMIT = 2 * 1024 * 1024
_NAME_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def requester(headers: Mapping[str, str], params: Mapping[str, str] | None = None) -> str:
    """Who a request says it comes from, for ``saved_by`` and ``decided_by``.

    - ``x-ms-client-principal-name``: set by App Service Authentication (Easy Auth) when it is
      on, which also drops the header from outside requests. Without it, any caller holding the
      function key can send any name: then it is a label, not proof.
    - else ``"function key"`` when the request carried one (``?code=`` or ``x-functions-key``):
      neither Azure's host nor devhost tells the app which named key it was;
    - else ``"anonymous"`` (a local host without a key).
    """
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    name = " ".join(_NAME_CONTROL.sub(" ", lower.get(PRINCIPAL_HEADER, "")).split())
    if name:
        return name[:NAME_LIMIT]
    if lower.get("x-functions-key") or (params or {}).get("code"):
        return "function key"
    return "anonymous"


def _completed(svc: Services, run_id: str) -> RunStatus:
    """The run; RunNotWritable (409 ``not_completed``) until it has completed."""
    from shared.writer.runs import RunNotWritable

    run = known_run(svc, run_id)
    if run.status not in ("completed", "completed_with_errors"):
        raise RunNotWritable(
            f"run {run_id} is {run.status}; it can be reviewed once it completes",
            status=run.status,
        )
    return run


def _with_etag(response: ApiResponse, etag: str | None) -> ApiResponse:
    if etag:
        response.headers["ETag"] = etag
    return response


@answers_errors
def get_review_state(svc: Services, run_id: str) -> ApiResponse:
    """GET /api/runs/{run_id}/review-state: the saved review (version 0 when none) and its ETag."""
    from shared.review.state import load_state

    known_run(svc, run_id)
    state, etag = load_state(svc, run_id)
    return _with_etag(json_response(200, state.view(etag)), etag)


@answers_errors
def put_review_state(
    svc: Services, run_id: str, raw_body: bytes | None, if_match: str | None, by: str
) -> ApiResponse:
    """PUT /api/runs/{run_id}/review-state: save the review if ``if_match`` (the If-Match
    header; else the body's ``etag``) is the saved one's ETag (none for the first save)."""
    from pydantic import ValidationError

    from shared.indexing.pending import refresh_quietly, resolve
    from shared.review.edits import apply
    from shared.review.plan import InvalidDecisions, build_plan
    from shared.review.state import (
        SERVER_FIELDS,
        ReviewState,
        check,
        save_state,
        unquoted_statements,
    )
    from shared.writer.runs import completed_run

    _completed(svc, run_id)
    raw = raw_body or b""
    if len(raw) > REVIEW_BODY_LIMIT:
        return error_response(413, f"the review is {len(raw):,} bytes, over {REVIEW_BODY_LIMIT:,}")
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return error_response(400, "the body must be the review as JSON", problems=["not JSON"])
    if not isinstance(body, dict):
        return error_response(400, "the body must be a JSON object", problems=["not an object"])
    if body.get("run_id", run_id) != run_id:
        return error_response(
            400,
            f"this review is of run {body.get('run_id')!r}, not {run_id}",
            problems=[f"run_id: {body.get('run_id')!r} is not {run_id}"],
        )
    sent_etag = body.get("etag")
    if if_match is None and sent_etag is not None and not isinstance(sent_etag, str):
        return error_response(400, "etag must be a string", problems=["etag: not a string"])
    fields = {k: v for k, v in body.items() if k not in SERVER_FIELDS}
    fields["run_id"] = run_id
    try:
        state = ReviewState.model_validate(fields)
    except ValidationError as err:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in err.errors()
        ]
        return error_response(400, "the review is not valid", problems=problems)
    _, items, records = completed_run(svc, run_id)
    unquoted = unquoted_statements(svc, run_id)
    problems = check(state, items, unquoted)
    if not problems:
        edited, tagging, _ = apply(state, items, records, unquoted)
        tagging, _ = resolve(svc, tagging)  # as the write will see them
        try:
            build_plan(run_id, edited, tagging, state.decisions)
        except InvalidDecisions as err:
            problems = [f"decisions: {p}" for p in err.problems]
    if problems:
        return error_response(400, "the review does not fit the run", problems=problems)
    saved, etag = save_state(
        svc, run_id, state, if_match if if_match is not None else sent_etag, by
    )
    # the reviewed stories not written yet are candidates for later runs' tagging
    refresh_quietly(svc, run_id)
    return _with_etag(json_response(200, saved.view(etag)), etag)


EXPORT_FORMATS = {
    "csv": ("text/csv; charset=utf-8", "csv"),
    "md": ("text/markdown; charset=utf-8", "md"),
}


@answers_errors
def get_export(svc: Services, run_id: str, fmt: str | None) -> ApiResponse:
    """GET /api/runs/{run_id}/export?format=csv|md: the edited backlog as a file (shared/api/export.py)."""
    from shared.api.export import export_run

    known_run(svc, run_id)
    if fmt not in EXPORT_FORMATS:
        return error_response(
            400, f"format must be one of {', '.join(EXPORT_FORMATS)} (got {fmt!r})"
        )
    _completed(svc, run_id)
    data = export_run(svc, run_id, fmt)
    content_type, ext = EXPORT_FORMATS[fmt]
    return ApiResponse(
        200,
        data,
        content_type,
        {"Content-Disposition": f'attachment; filename="{run_id}.{ext}"'},
    )
