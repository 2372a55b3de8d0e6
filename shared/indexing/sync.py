"""Incremental sync: the project's index follows what changed in Azure DevOps since the last sync.

``python -m shared.cli sync --project P`` and the ``sync`` timer of function_app.py (only with
``SYNTH_SYNC_SCHEDULE``; it syncs ``SYNTH_SYNC_PROJECT``, by default ``AZURE_DEVOPS_PROJECT``) run
``sync_project``:

1. **Changed items.** WIQL for the project's backlog types (the loader's: Epic, Feature and the
   process's story type as configured) with ``[System.ChangedDate] >= watermark - 5 minutes``,
   asked with ``timePrecision=true`` (without it WIQL compares dates by day). The overlap covers
   the second-rounding of the literal and a change committed with a ChangedDate a little before
   the previous listing ran; what it lists again is recognized and left alone (same
   ``work_item_hash``: not embedded; an older ``rev`` than the indexed one: not written). With
   no watermark yet (the first sync, or ``--full``), every item is listed.
2. **Re-index only what changed**, ``BATCH`` items at a time: read (``workitemsbatch``),
   normalized and indexed exactly as the loader does (shared/indexing/backlog): an item new to
   the index is ``added``, one whose text, state, parent or type changed is ``updated`` (embedded
   again), the rest ``unchanged``. Closed and removed items stay in the index with their state,
   as the loader keeps them.
3. **Deletions.** The ids of every backlog item of the project (WIQL, ids only) against the
   index's ``ado-`` ids: an indexed item ADO no longer lists (deleted, moved to another project or
   another type) is ``deleted`` from the index. A listing that is empty while the index is not
   is refused (a wrong project or a permission problem must not empty the index).
4. ``ado_vectors.jsonl`` is rewritten, the report written, and the **watermark** advanced to the
   ``asOf`` of step 1's WIQL answer (ADO's clock when it listed; anything changed later is
   listed next time). Only a completed sync advances it: a sync that stops (ADO unreachable, the
   embedder failing, the process killed) keeps the old watermark, and the next one lists the same
   changes again; what the stopped one already indexed is then ``unchanged`` (not embedded
   twice). Items that cannot be read are ``errors`` in the report and keep their last vectors.

One at a time per project: a sync holds ``ingestion/ado/{project}/index.lock`` (a load holds it
too; a write's index update waits for it): a second sync gets IndexBusy (the CLI exits 2, the
timer skips that turn). Records: ``ingestion/ado/{project}/sync.json`` (the watermark, the last
sync and its outcome) and one report per sync, ``ingestion/ado/{project}/syncs/{sync_id}.json``:

    {"sync_id": "sync-0003-20260101T120000Z", "project", "status": "completed" | "failed" |
     "running", "full": false, "process": "agile", "started_at", "finished_at",
     "watermark_from": "…Z" | null, "watermark_to": "…Z" | null, "listed": 12,
     "added": [ids], "updated": [ids], "deleted": [ids], "unchanged": [ids], "stale": [ids],
     "embedded": 3, "errors": [{"work_item_id", "error"}], "error": "…" | null}
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from shared import layout
from shared.ado import ops
from shared.ado import process as processes
from shared.ado.ports import BacklogSource
from shared.ado.process import Process
from shared.ids import check_project
from shared.indexing.backlog import (
    backlog_items,
    configured_types,
    index_lease,
    write_ado_vectors,
)
from shared.indexing.indexer import (
    ADO_PREFIX,
    LoaderError,
    Outcome,
    fetch_metadata,
    index_work_items,
    list_ids,
)
from shared.services import Services
from shared.storage import NotFound, dump_model, read_model
from shared.vectorstore import check_index

log = logging.getLogger("shared.indexing")

OVERLAP = timedelta(minutes=5)
BATCH = 200


class SyncState(BaseModel):
    """``ingestion/ado/{project}/sync.json``."""

    project: str
    watermark: str | None = None  # ADO's asOf when the last completed sync listed its changes
    last_sync_id: str | None = None
    last_status: str | None = None
    last_error: str | None = None
    last_completed_sync_id: str | None = None
    last_completed_at: datetime | None = None
    updated_at: datetime | None = None


class SyncReport(BaseModel):
    """``ingestion/ado/{project}/syncs/{sync_id}.json`` (module docstring)."""

    sync_id: str
    project: str
    status: Literal["running", "completed", "failed"] = "running"
    full: bool = False
    process: str | None = None
    started_at: datetime
    finished_at: datetime | None = None
    watermark_from: str | None = None
    watermark_to: str | None = None
    listed: int = 0
    added: list[int] = Field(default_factory=list)
    updated: list[int] = Field(default_factory=list)
    deleted: list[int] = Field(default_factory=list)
    unchanged: list[int] = Field(default_factory=list)
    stale: list[int] = Field(default_factory=list)
    embedded: int = 0
    errors: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None

    def counts(self) -> dict[str, int]:
        return {
            "listed": self.listed,
            "added": len(self.added),
            "updated": len(self.updated),
            "deleted": len(self.deleted),
            "unchanged": len(self.unchanged),
            "stale": len(self.stale),
            "embedded": self.embedded,
            "errors": len(self.errors),
        }


def load_state(svc: Services, project: str) -> SyncState:
    try:
        return read_model(svc.store, layout.sync_state(project), SyncState)
    except NotFound:
        return SyncState(project=project)


def report_ids(svc: Services, project: str) -> list[str]:
    return [layout.unit_of(p) for p in svc.store.list(layout.sync_reports_prefix(project))]


def load_report(svc: Services, project: str, sync_id: str) -> SyncReport | None:
    try:
        return read_model(svc.store, layout.sync_report(project, sync_id), SyncReport)
    except NotFound:
        return None


def _parse(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _batches(ids: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(ids), max(1, size)):
        yield list(ids[start : start + max(1, size)])


def sync_project(
    svc: Services,
    project: str,
    client: BacklogSource | None = None,
    *,
    full: bool = False,
    process: Process | None = None,
    batch_size: int = BATCH,
    allow_empty: bool = False,
) -> SyncReport:
    """Bring ``project``'s index up to date with ADO (module docstring); the report. Raises
    IndexBusy (a sync or load of the project is running), ConfigurationError, and, after
    recording the failed sync, whatever stopped it (AdoError, ProcessError, DimensionMismatch,
    LoaderError, an embedder error)."""
    check_project(project)
    own = client is None
    if client is None:
        from shared.ado.client import AdoClient

        client = AdoClient.from_settings(svc.settings)
    try:
        with index_lease(svc, project):
            return _sync(svc, project, client, full, process, batch_size, allow_empty)
    finally:
        if own:
            client.close()


def _sync(
    svc: Services,
    project: str,
    client: BacklogSource,
    full: bool,
    process: Process | None,
    batch_size: int,
    allow_empty: bool,
) -> SyncReport:
    state = load_state(svc, project)
    now = svc.clock()
    sync_id = f"sync-{len(report_ids(svc, project)) + 1:04d}-" + now.strftime("%Y%m%dT%H%M%SZ")
    since = None if full else _parse(state.watermark)
    report = SyncReport(
        sync_id=sync_id,
        project=project,
        full=since is None,
        started_at=now,
        watermark_from=None if since is None else state.watermark,
    )
    _save(svc, report)
    try:
        _steps(svc, project, client, report, since, process, batch_size, allow_empty)
    except BaseException as err:
        report.status, report.error = "failed", str(err) or type(err).__name__
        log.warning("sync %s of %s failed: %s", sync_id, project, report.error)
        raise
    else:
        report.status = "completed"
    finally:
        report.finished_at = svc.clock()
        _save(svc, report)
        _record(svc, state, report)
    log.info("sync %s of %s: %s", sync_id, project, report.counts())
    return report


def _steps(
    svc: Services,
    project: str,
    client: BacklogSource,
    report: SyncReport,
    since: datetime | None,
    process: Process | None,
    batch_size: int,
    allow_empty: bool,
) -> None:
    settings = svc.settings
    process = process or processes.configured(settings) or processes.detect(client)
    report.process = process.name
    configured = configured_types(settings)
    types = process.ado_types(configured)
    check_index(svc.index, project, svc.embedder)
    # 1. what changed since the watermark (or everything)
    conditions = [] if since is None else [ops.changed_since(since - OVERLAP)]
    changed = client.listing(types, conditions=conditions, time_precision=since is not None)
    report.listed = len(changed.ids)
    # 2. re-index it, a batch at a time (what a stopped sync did stays done)
    latest: datetime | None = None
    for chunk in _batches(changed.ids, batch_size):
        items, errors = backlog_items(list(client.get_work_items(chunk)), process, configured)
        outcomes: dict[int, Outcome] = {}
        summary = index_work_items(
            svc.embedder, svc.index, project, items, prune=False, outcomes=outcomes
        )
        report.embedded += summary.embedded
        report.errors.extend(errors)
        for work_item_id, outcome in sorted(outcomes.items()):
            getattr(report, outcome).append(work_item_id)
        for item in items:
            if item.updated_at and (latest is None or item.updated_at > latest):
                latest = item.updated_at
        _save(svc, report)
    # 3. what ADO no longer lists leaves the index
    listing = changed if since is None else client.listing(types)
    report.deleted = _prune(svc, project, set(listing.ids), _parse(listing.as_of), allow_empty)
    write_ado_vectors(svc, project)
    # 4. the watermark: ADO's clock when step 1 listed (else the newest change it saw)
    mark = _parse(changed.as_of) or latest or since
    report.watermark_to = _iso(mark) if mark else None


def _prune(
    svc: Services, project: str, present: set[int], as_of: datetime | None, allow_empty: bool
) -> list[int]:
    indexed = list_ids(svc.index, project, ADO_PREFIX)
    gone = [vid for vid in indexed if int(vid[len(ADO_PREFIX) :]) not in present]
    if not gone:
        return []
    if not present and not allow_empty:
        raise LoaderError(
            f"Azure DevOps lists no backlog items for project {project!r}, and the sync would "
            f"delete all {len(gone)} indexed items; check AZURE_DEVOPS_PROJECT and the PAT's "
            "permissions (or load with --allow-empty to clear the index)"
        )
    if as_of is not None:  # indexed after the listing ran (never under the lease; be safe)
        meta = fetch_metadata(svc.index, project, gone)
        gone = [v for v in gone if not _newer(meta.get(v, {}).get("updated_at"), as_of)]
    if gone:
        svc.index.delete(project, gone)
    return sorted(int(v[len(ADO_PREFIX) :]) for v in gone)


def _newer(value: Any, as_of: datetime) -> bool:
    when = _parse(value) if isinstance(value, str) else None
    return when is not None and when > as_of


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _save(svc: Services, report: SyncReport) -> None:
    svc.store.put(layout.sync_report(report.project, report.sync_id), dump_model(report))


def _record(svc: Services, state: SyncState, report: SyncReport) -> None:
    """The state after a sync: the watermark moves only when it completed."""
    update: dict[str, Any] = {
        "last_sync_id": report.sync_id,
        "last_status": report.status,
        "last_error": report.error,
        "updated_at": svc.clock(),
    }
    if report.status == "completed":
        update.update(
            watermark=report.watermark_to or state.watermark,
            last_completed_sync_id=report.sync_id,
            last_completed_at=report.finished_at,
        )
    svc.store.put(layout.sync_state(report.project), dump_model(state.model_copy(update=update)))


def scheduled_project(settings: Any) -> str | None:
    """The namespace the timer syncs: SYNTH_SYNC_PROJECT, else AZURE_DEVOPS_PROJECT when it is a
    valid namespace; None when neither names one."""
    from shared.ids import InvalidIdentifier

    for value in (settings.sync_project, settings.azure_devops_project):
        if value:
            try:
                return check_project(value)
            except InvalidIdentifier:
                log.warning("the sync cannot use %r as a project namespace", value)
    return None


def scheduled_sync(svc: Services) -> SyncReport | None:
    """The timer's turn (function_app.py): sync the configured project; nothing when ADO or the
    project is not configured, or a sync or load of it is running (logged). A failed sync is
    recorded in its report and logged; the next turn resumes from the same watermark."""
    from shared.errors import ConfigurationError
    from shared.indexing.backlog import IndexBusy

    project = scheduled_project(svc.settings)
    if project is None:
        log.warning("sync: set SYNTH_SYNC_PROJECT (or AZURE_DEVOPS_PROJECT) to sync a project")
        return None
    try:
        return sync_project(svc, project)
    except (ConfigurationError, IndexBusy) as err:
        log.warning("sync of %s skipped: %s", project, err)
        return None
    except Exception:
        log.exception("sync of %s failed; the next turn resumes from its watermark", project)
        return load_report(svc, project, load_state(svc, project).last_sync_id or "")
