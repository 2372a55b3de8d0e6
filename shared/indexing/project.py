"""A project at a glance: ``GET /api/projects/{project}`` and the review page's project section.

    {"project": "rc",
     "runs": [{"run_id", "source_name", "status", "created_at", "completed_at", "story_count",
               "attempt", "retried_by",
               "write": {"write_id", "writes", "counts", "indexed": n,   # the latest write
                         "created_ids", "modified_ids"} | null,   # by all its writes, less what
                                                    # a rollback undid (null: never written)
               "pending": n}],                      # its stories pending in the index
                                                    # (newest run first, at most 100)
     "index": {"ado_items": n, "pending_stories": n, "architecture_chunks": n,
               "error": "…" | null},                # the index could not be read
     "sync": {"watermark", "last_sync_id", "last_status", "last_error",
              "last_completed_sync_id", "last_completed_at",
              "last_report": {"listed", "added", "updated", "deleted", "unchanged", …}} | null,
     "pending": [{"run_id", "story_id", "title", "source_name"}]}

Nothing is changed by reading it; a project with no runs and nothing indexed is an empty view
(200), not an error.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any

from shared import layout
from shared.ids import InvalidIdentifier, check_run_id
from shared.indexing import pending, sync
from shared.indexing.indexer import ADO_PREFIX, ARCH_PREFIX, list_ids
from shared.models import RunStatus
from shared.services import Services
from shared.storage import NotFound, read_model

log = logging.getLogger("shared.indexing")

MAX_RUNS = 100


def _runs(svc: Services, project: str) -> list[RunStatus]:
    runs = []
    for run_id in svc.store.children(layout.RUNS_PREFIX):
        try:
            check_run_id(run_id)
            run = read_model(svc.store, layout.run_json(run_id), RunStatus)
        except (InvalidIdentifier, NotFound, ValueError):
            continue
        if run.project == project:
            runs.append(run)
    runs.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)
    return runs[:MAX_RUNS]


def _lines(svc: Services, path: str) -> list[dict[str, Any]]:
    try:
        text = svc.store.get(path).decode("utf-8")
    except NotFound:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _write(svc: Services, run_id: str) -> dict[str, Any] | None:
    """The latest write (its id and counts) and what all the run's writes put in ADO: the items
    created and patched, less those a rollback deleted or reverted."""
    latest = _lines(svc, layout.ado_write_results(run_id))
    if not latest:
        return None
    created: list[int] = []
    modified: list[int] = []
    for path in svc.store.list(layout.write_results_prefix(run_id)):
        for r in _lines(svc, path):
            created += [i for i in r.get("created_ids") or [] if i not in created]
            modified += [i for i in r.get("modified_ids") or [] if i not in modified]
    for path in svc.store.list(layout.rollback_prefix(run_id)):
        for r in _lines(svc, path):
            if r.get("status") == "deleted" and r.get("ado_id") in created:
                created.remove(r["ado_id"])
            if r.get("status") == "reverted" and r.get("ado_id") in modified:
                modified.remove(r["ado_id"])
    return {
        "write_id": latest[0].get("write_id"),
        "writes": len(svc.store.list(layout.write_results_prefix(run_id))),
        "counts": dict(Counter(str(r.get("status")) for r in latest)),
        "created_ids": created,
        "modified_ids": modified,
        "indexed": sum(1 for r in latest if r.get("indexed")),
    }


def _index(svc: Services, project: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        ids = list_ids(svc.index, project, "")
        stories = pending.project_pending(svc, project)
    except Exception as err:  # noqa: BLE001 - the view shows what it can
        log.warning("project %s: the index could not be read: %s", project, err)
        error = str(err)
        return {
            "ado_items": None,
            "pending_stories": None,
            "architecture_chunks": None,
            "error": error,
        }, []
    return {
        "ado_items": sum(1 for i in ids if i.startswith(ADO_PREFIX)),
        "pending_stories": sum(1 for i in ids if i.startswith(pending.PREFIX)),
        "architecture_chunks": sum(1 for i in ids if i.startswith(ARCH_PREFIX)),
        "error": None,
    }, stories


def _sync(svc: Services, project: str) -> dict[str, Any] | None:
    state = sync.load_state(svc, project)
    if state.last_sync_id is None:
        return None
    view = state.model_dump(mode="json", exclude={"project", "updated_at"})
    report = sync.load_report(svc, project, state.last_sync_id)
    view["last_report"] = report.counts() if report is not None else None
    return view


def project_view(svc: Services, project: str) -> dict[str, Any]:
    """The view above (the caller has checked ``project``)."""
    index, stories = _index(svc, project)
    per_run = Counter(str(s["run_id"]) for s in stories)
    runs = [
        {
            **run.model_dump(
                mode="json",
                include={
                    "run_id",
                    "source_name",
                    "status",
                    "created_at",
                    "completed_at",
                    "story_count",
                    "attempt",
                    "retried_by",
                },
            ),
            "write": _write(svc, run.run_id),
            "pending": per_run.get(run.run_id, 0),
        }
        for run in _runs(svc, project)
    ]
    return {
        "project": project,
        "runs": runs,
        "index": index,
        "sync": _sync(svc, project),
        "pending": stories,
    }
