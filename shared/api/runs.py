"""Runs over HTTP: upload, retry, list, status, artifacts, the backlog tree, the review bundle and
a project at a glance. Every identifier that reaches a storage path is validated first."""

from __future__ import annotations

from typing import Any

from shared import layout
from shared.api.responses import (
    ApiResponse,
    UnknownArtifact,
    answers_errors,
    error_response,
    json_response,
)
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
from shared.pipeline.runs import UnknownRun, load_run, start_run
from shared.review.tree import build_tree
from shared.services import Services
from shared.storage import NotFound, content_type_for, read_jsonl, read_model


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
    path = layout.transcript_drop(str(project), str(filename))
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

    known_run(svc, run_id)
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
    for run_id in svc.store.children(layout.RUNS_PREFIX):
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


def known_run(svc: Services, run_id: str) -> RunStatus:
    """The run; InvalidIdentifier (400) for a malformed id, UnknownRun (404) for no run."""
    check_run_id(run_id)
    return load_run(svc, run_id)


@answers_errors
def get_run(svc: Services, run_id: str) -> ApiResponse:
    return json_response(200, run_view(svc, known_run(svc, run_id)))


@answers_errors
def list_artifacts(svc: Services, run_id: str) -> ApiResponse:
    known_run(svc, run_id)
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
    known_run(svc, run_id)
    try:
        data = svc.store.get(layout.run_file(run_id, name))
    except NotFound:
        raise UnknownArtifact(f"run {run_id} has no artifact {name}") from None
    return ApiResponse(200, data, content_type_for(name))


@answers_errors
def get_backlog(svc: Services, run_id: str) -> ApiResponse:
    from shared.review.plan import InvalidDecisions
    from shared.writer.runs import RunNotWritable, reviewed_run

    run = known_run(svc, run_id)
    if run.status not in ("completed", "completed_with_errors"):
        raise RunNotWritable(
            f"run {run_id} is {run.status}; the backlog exists once it completes",
            status=run.status,
        )

    extra: dict[str, Any] = {}
    try:  # the backlog as reviewed: the saved edits applied (shared/review/state.py)
        reviewed = reviewed_run(svc, run_id)
        items, records = reviewed.items, reviewed.records
        extra["review_version"] = reviewed.state.version
    except InvalidDecisions as err:  # a saved review that no longer fits: the generated one
        items = read_jsonl(svc.store, layout.generated_backlog(run_id), GeneratedItem)
        records = read_jsonl(svc.store, layout.tagging_analysis(run_id), TaggingRecord)
        extra.update(review_version=None, review_problems=err.problems)
    tree = build_tree(items, {r.story_id: r for r in records})
    return json_response(200, {"run_id": run_id, "status": run.status, **extra, **tree})


@answers_errors
def get_review(svc: Services, run_id: str) -> ApiResponse:
    """GET /api/runs/{run_id}/review: the review page's bundle (shape in shared/api/bundle.py).
    200 for any known run; ``ready`` is false (and the backlog absent) until it completes."""
    from shared.api.bundle import build_bundle
    from shared.writer.runs import latest_write

    run = known_run(svc, run_id)
    bundle = build_bundle(svc, run, run_view(svc, run), lambda: latest_write(svc, run_id))
    return json_response(200, bundle)


@answers_errors
def get_project(svc: Services, project: str) -> ApiResponse:
    """GET /api/projects/{project}: its runs and what each wrote, its index, the last sync and
    its pending stories (shape in shared/indexing/project.py); 400 for an invalid name."""
    from shared.indexing.project import project_view

    check_project(project)
    return json_response(200, project_view(svc, project))
