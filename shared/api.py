"""The HTTP API as plain functions (function_app.py only adapts requests and responses).

Every identifier that reaches a storage path is validated first: a malformed run id or artifact name
is a 400, an unknown run a 404, always with a JSON body that says what was wrong.

Errors are answered in one place: a handler raises, and ``api_errors()`` (one table) says which
exception type becomes which status, with a stable ``code`` and the message, as
``{"error": message, "code": code, ...}``; every public handler answers through it
(``answers_errors``). An exception the table does not name is a bug and propagates (the host
answers 500). Only a malformed request body is answered where it is read.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ParamSpec
from urllib.parse import quote

from shared import __version__, layout
from shared.backlog_tree import build_tree
from shared.errors import ConfigurationError, SynthesizerError
from shared.ids import (
    InvalidIdentifier,
    check_artifact_name,
    check_project,
    check_run_id,
    check_upload_name,
)
from shared.models import (
    TERMINAL_STATES,
    ErrorRecord,
    GeneratedItem,
    RunStatus,
    TaggingRecord,
)
from shared.pipeline.runs import TRANSCRIPTS_CONTAINER, UnknownRun, load_run, start_run
from shared.services import Services
from shared.storage import NotFound, content_type_for, read_jsonl, read_model

if TYPE_CHECKING:
    from shared.ado.ports import WorkItemWriter
    from shared.review_state import ReviewState

P = ParamSpec("P")


@dataclass
class ApiResponse:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body)


def json_response(status: int, payload: Any) -> ApiResponse:
    return ApiResponse(status, json.dumps(payload, indent=2, default=str).encode())


def error_response(code: int, message: str, **extra: Any) -> ApiResponse:
    return json_response(code, {"error": message, **extra})


# ------------------------------------------------------------------------------------------------
# errors: the one table from exception types to answers


class UnknownArtifact(SynthesizerError, LookupError):
    """The run has no artifact of that name."""


@dataclass(frozen=True)
class ApiError:
    """How an exception type is answered: ``status``, a stable ``code``, the message (``str(err)``
    unless ``message`` says otherwise), ``extra`` fields of the JSON body and ``headers``."""

    status: int
    code: str
    message: Callable[[Any], str] = str
    extra: Callable[[Any], dict[str, Any]] = lambda err: {}
    headers: Callable[[Any], dict[str, str]] = lambda err: {}


def _run_status(err: Any) -> dict[str, Any]:
    return {"status": err.status} if getattr(err, "status", None) else {}


@functools.cache
def api_errors() -> tuple[tuple[type[BaseException], ApiError], ...]:
    """Every exception a handler answers, with its answer; the first type that matches wins.
    Imported on first use: the writer and the ADO client are not loaded by a status call."""
    from shared.ado.errors import AdoError
    from shared.ado.process import ProcessError
    from shared.pipeline.runs import RunNotRetryable, UploadMissing
    from shared.review_state import StaleReview
    from shared.writer.plan import InvalidDecisions
    from shared.writer.rollback import NothingToRollBack, UnknownWrite
    from shared.writer.runs import EmptyBacklogRefused, RunNotWritable, WriteInProgress

    return (
        (InvalidIdentifier, ApiError(400, "invalid_identifier")),
        (
            InvalidDecisions,
            ApiError(400, "invalid_decisions", extra=lambda err: {"problems": err.problems}),
        ),
        (UnknownRun, ApiError(404, "unknown_run", lambda err: f"run {err} not found")),
        (UnknownArtifact, ApiError(404, "unknown_artifact")),
        (UnknownWrite, ApiError(404, "unknown_write")),
        (RunNotWritable, ApiError(409, "not_completed", extra=_run_status)),
        (
            RunNotRetryable,
            ApiError(409, "not_retryable", extra=lambda err: {"status": err.run.status}),
        ),
        (UploadMissing, ApiError(409, "upload_missing", extra=_run_status)),
        (EmptyBacklogRefused, ApiError(409, "empty_index")),
        (WriteInProgress, ApiError(409, "write_in_progress")),
        (NothingToRollBack, ApiError(409, "nothing_to_roll_back")),
        (
            StaleReview,
            ApiError(
                409,
                "stale_review",
                lambda err: _stale_message(err.current, sent=err.sent),
                extra=lambda err: {"current": err.current.view(err.etag), "etag": err.etag},
                headers=lambda err: {"ETag": err.etag} if err.etag else {},
            ),
        ),
        (AdoError, ApiError(502, "ado_error", lambda err: f"Azure DevOps: {err}")),
        (ProcessError, ApiError(503, "ado_process", lambda err: f"Azure DevOps: {err}")),
        (ConfigurationError, ApiError(503, "not_configured")),
    )


def error_for(err: BaseException) -> ApiResponse | None:
    """The answer to ``err`` from ``api_errors()``; None when the table does not name it."""
    for kind, answer in api_errors():
        if isinstance(err, kind):
            body = {"error": answer.message(err), "code": answer.code, **answer.extra(err)}
            response = json_response(answer.status, body)
            response.headers.update(answer.headers(err))
            return response
    return None


def answers_errors(handler: Callable[P, ApiResponse]) -> Callable[P, ApiResponse]:
    """``handler`` with every exception of ``api_errors()`` answered as the table says."""

    @functools.wraps(handler)
    def answer(*args: P.args, **kwargs: P.kwargs) -> ApiResponse:
        try:
            return handler(*args, **kwargs)
        except SynthesizerError as err:
            response = error_for(err)
            if response is None:
                raise
            return response

    return answer


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


# ------------------------------------------------------------------------------------------------
# runs


def run_view(svc: Services, run: RunStatus) -> dict[str, Any]:
    """run.json plus live progress derived from the parts present (nothing is counted twice)."""
    view = run.model_dump(mode="json")
    run_id = run.run_id
    if run.status in TERMINAL_STATES and run.phase == "done":
        view["completed_segments"] = run.segment_count or 0
        view["tagged_stories"] = run.story_count or 0
    else:
        view["completed_segments"] = len(svc.store.list(layout.generated_parts_prefix(run_id)))
        view["tagged_stories"] = len(svc.store.list(layout.tag_parts_prefix(run_id)))
    errors = []
    for path in svc.store.list(layout.error_parts_prefix(run_id))[:50]:
        try:
            err = read_model(svc.store, path, ErrorRecord)
        except NotFound:
            continue
        errors.append(
            {
                "phase": err.phase,
                "unit_id": err.unit_id,
                "message": err.message,
                "outcome": err.outcome,
            }
        )
    view["errors"] = errors
    view["error_count"] = max(run.error_count, len(errors))
    return view


@answers_errors
def create_run(
    svc: Services, project: str | None, filename: str | None, data: bytes
) -> ApiResponse:
    """POST /api/runs: store the upload where a blob drop would land, then start the same way."""
    check_project(project or "")
    check_upload_name(filename or "")
    limit = svc.settings.pipeline.limits.max_upload_bytes
    if len(data) > limit:
        return error_response(
            413,
            f"the upload is {len(data):,} bytes, over the limit of {limit:,} bytes",
            limit_bytes=limit,
        )
    path = f"{TRANSCRIPTS_CONTAINER}/{project}/{filename}"
    # the blob version this upload made: its blob trigger, which fires too, then finds the run it
    # started by that ETag; the same bytes posted again after a failure are a new version (on
    # Azure storage; the local folder store's ETag is a content hash) and so a new attempt
    etag = svc.store.put(path, data)
    run = start_run(svc, path, data, etag=etag)
    view = run_view(svc, run)
    view["status_url"] = f"/api/runs/{run.run_id}"
    if run.status == "failed":
        return json_response(422, view)
    return json_response(202, view)


@answers_errors
def retry_run(svc: Services, run_id: str) -> ApiResponse:
    """POST /api/runs/{run_id}/retry: run a failed or completed_with_errors run again from its
    stored upload with the current settings (shared/pipeline/runs.py ``retry_run``).

    202 with the new attempt (``retry_of``, ``attempt``, ``status_url``); 422 when the new attempt
    was refused at start (its ``failure_reason`` says why, as for POST /api/runs); 200 with the
    existing attempt when the run was already run again (a duplicated or repeated request: never a
    second attempt); 409 when the run is queued, running or completed, or its upload is gone;
    404 unknown run; 400 malformed id."""
    from shared.pipeline.runs import retry_run as retry

    _load(svc, run_id)
    run, created = retry(svc, run_id)  # UnknownRun too when purged between the two reads
    view = run_view(svc, run)
    view["status_url"] = f"/api/runs/{run.run_id}"
    view["started"] = created
    if not created:
        return json_response(200, view)
    return json_response(422 if run.status == "failed" else 202, view)


@answers_errors
def list_runs(svc: Services, project: str | None = None, limit: int | str = 50) -> ApiResponse:
    """GET /api/runs[?project=P][&limit=N]: the latest runs first (``limit`` as sent: 400 when it
    is no integer)."""
    try:
        count = max(1, min(int(limit), 500))
    except ValueError:
        return error_response(400, "limit must be an integer")
    if project:
        check_project(project)
    runs = []
    for run_id in svc.store.children("runs/"):
        try:
            check_run_id(run_id)
            run = load_run(svc, run_id)
        except (InvalidIdentifier, UnknownRun):
            continue
        if project and run.project != project:
            continue
        runs.append(run)
    runs.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)
    return json_response(
        200,
        {
            "runs": [
                r.model_dump(
                    mode="json",
                    include={
                        "run_id",
                        "project",
                        "source_name",
                        "status",
                        "phase",
                        "engine",
                        "created_at",
                        "completed_at",
                        "segment_count",
                        "story_count",
                        "error_count",
                        "failure_reason",
                        "attempt",
                        "retry_of",
                        "retried_by",
                    },
                )
                for r in runs[:count]
            ]
        },
    )


def _load(svc: Services, run_id: str) -> RunStatus:
    """The run; InvalidIdentifier (400) for a malformed id, UnknownRun (404) for no run."""
    check_run_id(run_id)
    return load_run(svc, run_id)


@answers_errors
def get_run(svc: Services, run_id: str) -> ApiResponse:
    return json_response(200, run_view(svc, _load(svc, run_id)))


@answers_errors
def list_artifacts(svc: Services, run_id: str) -> ApiResponse:
    _load(svc, run_id)
    present = set(svc.store.children(layout.run_prefix(run_id)))
    names = [n for n in layout.FINAL_ARTIFACTS if n in present]
    names += sorted(n for n in present - set(names) if "." in n and not n.endswith(".lease"))
    return json_response(
        200,
        {
            "run_id": run_id,
            "artifacts": [{"name": n, "url": f"/api/runs/{run_id}/artifacts/{n}"} for n in names],
        },
    )


@answers_errors
def get_artifact(svc: Services, run_id: str, name: str) -> ApiResponse:
    check_run_id(run_id)
    check_artifact_name(name)
    _load(svc, run_id)
    try:
        data = svc.store.get(layout.run_file(run_id, name))
    except NotFound:
        raise UnknownArtifact(f"run {run_id} has no artifact {name}") from None
    return ApiResponse(200, data, content_type_for(name))


@answers_errors
def get_backlog(svc: Services, run_id: str) -> ApiResponse:
    from shared.writer.plan import InvalidDecisions
    from shared.writer.runs import RunNotWritable, reviewed_run

    run = _load(svc, run_id)
    if run.status not in ("completed", "completed_with_errors"):
        raise RunNotWritable(
            f"run {run_id} is {run.status}; the backlog exists once it completes",
            status=run.status,
        )

    extra: dict[str, Any] = {}
    try:  # the backlog as reviewed: the saved edits applied (shared/review_state.py)
        reviewed = reviewed_run(svc, run_id)
        items, records = reviewed.items, reviewed.records
        extra["review_version"] = reviewed.state.version
    except InvalidDecisions as err:  # a saved review that no longer fits: the generated one
        items = read_jsonl(
            svc.store, layout.run_file(run_id, "generated_backlog.jsonl"), GeneratedItem
        )
        records = read_jsonl(
            svc.store, layout.run_file(run_id, "tagging_analysis.jsonl"), TaggingRecord
        )
        extra.update(review_version=None, review_problems=err.problems)
    tree = build_tree(items, {r.story_id: r for r in records})
    return json_response(200, {"run_id": run_id, "status": run.status, **extra, **tree})


@answers_errors
def get_review(svc: Services, run_id: str) -> ApiResponse:
    """GET /api/runs/{run_id}/review: the review page's bundle (shape in shared/review.py).
    200 for any known run; ``ready`` is false (and the backlog absent) until it completes."""
    from shared.review import build_bundle
    from shared.writer.runs import latest_write

    run = _load(svc, run_id)
    bundle = build_bundle(svc, run, run_view(svc, run), lambda: latest_write(svc, run_id))
    return json_response(200, bundle)


@answers_errors
def get_project(svc: Services, project: str) -> ApiResponse:
    """GET /api/projects/{project}: its runs and what each wrote, its index, the last sync and
    its pending stories (shape in shared/indexing/project.py); 400 for an invalid name."""
    from shared.indexing.project import project_view

    check_project(project)
    return json_response(200, project_view(svc, project))


# ------------------------------------------------------------------------------------------------
# ADO write and retag (request and response shapes: shared/writer/__init__.py)

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
    run with its saved review applied. ``requester`` (shared.api.requester): who asks."""
    from shared.writer.runs import write_run as write

    _load(svc, run_id)
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

    _load(svc, run_id)
    return json_response(200, latest_write(svc, run_id))


ROLLBACK_BODY_KEYS = ("write_id", "dry_run")


@answers_errors
def rollback_run(
    svc: Services, run_id: str, raw_body: bytes | None, *, ado_client: WorkItemWriter | None = None
) -> ApiResponse:
    """POST /api/runs/{run_id}/rollback: what undoing a write would do (``dry_run``, the default,
    as for a write) or the rollback; the latest write unless ``write_id`` names another."""
    from shared.writer.rollback import rollback_run as rollback

    _load(svc, run_id)
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

    _load(svc, run_id)
    return json_response(200, retag(svc, run_id))


# ------------------------------------------------------------------------------------------------
# the saved review and the export (contracts: shared/review_state.py, shared/export.py)

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

    run = _load(svc, run_id)
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
    from shared.review_state import load_state

    _load(svc, run_id)
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
    from shared.review_state import SERVER_FIELDS, ReviewState, apply, check, save_state
    from shared.writer.plan import InvalidDecisions, build_plan
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
    problems = check(state, items)
    if not problems:
        edited, tagging, _ = apply(state, items, records)
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


def _stale_message(current: ReviewState, *, sent: bool) -> str:
    head = "someone else saved this review since you loaded it"
    if current.version == 0:
        return head + " or removed it: there is no saved review now; save without an ETag"
    who = f"version {current.version}, saved by {current.saved_by}"
    if current.saved_at is not None:
        who += f" at {current.saved_at:%Y-%m-%d %H:%M:%S} UTC"
    if not sent:
        return f"{head} ({who}): load it and save your changes on it, with its ETag"
    return f"{head} ({who}): load it again, redo your changes on it and save"


EXPORT_FORMATS = {
    "csv": ("text/csv; charset=utf-8", "csv"),
    "md": ("text/markdown; charset=utf-8", "md"),
}


@answers_errors
def get_export(svc: Services, run_id: str, fmt: str | None) -> ApiResponse:
    """GET /api/runs/{run_id}/export?format=csv|md: the edited backlog as a file (shared/export)."""
    from shared.export import export_run

    _load(svc, run_id)
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
