"""The index follows the ADO writer: after a write, and after its rollback.

After a write (shared/writer/runs.write_run), every item it created, patched or found already
written, every existing parent a created item was linked under and every existing story a
``both`` decision linked to (each gained a revision) is read again from Azure DevOps in one batch
and indexed exactly as the loader indexes it (shared/indexing/backlog.reindex: the loader's
normalization, ``work_item_hash``, rev; an unchanged item is not embedded again), in the
configured embedder and vector store; ``ingestion/ado/{project}/ado_vectors.jsonl`` is rewritten.
So the next run of the project is tagged against what the last write created, without a load.
Each result records ``indexed``; the write's answer carries ``index_update``:

    {"status": "updated" | "deferred" | "failed", "project": "…",
     "indexed_ids": [..],          # held by the index as ADO has them now
     "added": n, "updated": n, "unchanged": n, "embedded": n,
     "removed_ids": [..],          # gone from ADO: gone from the index
     "error": "…" | null,          # why it was deferred or failed
     "pending": {...}}             # the run's pending stories after it (shared/indexing/pending)

A failure here never fails the write (ADO has the items): ``failed`` or ``deferred`` (a sync or a
load of the project held the index lease for a minute) says why, every result says
``indexed: false``, and writing the run again (which creates nothing: every item is found
``existing``) or the next sync (shared/indexing/sync.py) indexes them. Idempotent like the write.

After a rollback (shared/writer/rollback.rollback_run): the items it deleted (and those already
gone) leave the index; every other item of the write is read again and indexed as ADO has it now
(a reverted patch, an item left alone because a person changed it). Each record says ``index``:
``removed``, ``updated`` or ``failed``. The run's stories are pending again where they were.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from shared.ado.ports import WorkItemReader
from shared.ado.process import Process
from shared.indexing import pending
from shared.indexing.backlog import IndexBusy, index_lease, reindex, remove, write_ado_vectors
from shared.services import Services
from shared.storage.leases import LEASE_SECONDS

log = logging.getLogger("shared.indexing")

WRITTEN = ("created", "modified", "existing")
# how long a write's (or rollback's) index update waits for a sync or load of the project
INDEX_WAIT_SECONDS: float = LEASE_SECONDS
REMOVED = ("deleted", "already_gone")


def touched_ids(results: Iterable[Any]) -> set[int]:
    """The ADO items a write's results changed or hold (module docstring)."""
    ids: set[int] = set()
    for r in results:
        if r.status not in WRITTEN or r.ado_id is None:
            continue
        ids.add(int(r.ado_id))
        if r.status == "created" and r.parent_ado_id is not None:
            ids.add(int(r.parent_ado_id))  # linking a child is a revision of its parent
        if r.status == "created" and r.decision == "both" and r.existing_id is not None:
            ids.add(int(r.existing_id))  # so is the Related link's other end
    return ids


def _reindex(
    svc: Services,
    project: str,
    client: WorkItemReader,
    process: Process,
    ids: set[int],
    drop: Iterable[int] = (),
    wait: float | None = None,
) -> tuple[dict[str, Any], set[int], set[int]]:
    """(the summary, the ids the index holds now, the ids it no longer holds)."""
    summary: dict[str, Any] = {
        "status": "updated",
        "project": project,
        "indexed_ids": [],
        "added": 0,
        "updated": 0,
        "unchanged": 0,
        "embedded": 0,
        "removed_ids": [],
        "error": None,
    }
    indexed: set[int] = set()
    removed: set[int] = set()
    try:
        with index_lease(svc, project, wait=INDEX_WAIT_SECONDS if wait is None else wait):
            removed.update(remove(svc, project, drop))
            done = reindex(svc, project, client, process, ids - set(drop))
            removed.update(done.removed)
            write_ado_vectors(svc, project)
        indexed = done.indexed
        outcomes = list(done.outcomes.values())
        summary.update(
            indexed_ids=sorted(indexed),
            added=outcomes.count("added"),
            updated=outcomes.count("updated"),
            unchanged=outcomes.count("unchanged") + outcomes.count("stale"),
            embedded=done.summary.embedded,
            removed_ids=sorted(removed),
        )
    except IndexBusy as err:
        summary.update(status="deferred", error=f"{err}; the next sync indexes these items")
    except Exception as err:  # noqa: BLE001 - ADO has the items: the write or rollback stands
        log.warning("the index of %s was not updated: %s", project, err)
        summary.update(status="failed", error=str(err))
    return summary, indexed, removed


def after_write(
    svc: Services,
    run_id: str,
    project: str,
    client: WorkItemReader,
    process: Process,
    results: list[Any],
    *,
    wait: float | None = None,
) -> dict[str, Any]:
    """Index what the write changed and set each result's ``indexed``; ``index_update``."""
    summary, indexed, _ = _reindex(svc, project, client, process, touched_ids(results), wait=wait)
    for r in results:
        if r.status in WRITTEN and r.ado_id is not None:
            r.indexed = int(r.ado_id) in indexed
    summary["pending"] = pending.refresh_quietly(svc, run_id)
    log.info("index of %s after the write of %s: %s", project, run_id, summary["status"])
    return summary


def after_rollback(
    svc: Services,
    run_id: str,
    project: str,
    client: WorkItemReader,
    process: Process,
    records: list[Any],
    *,
    wait: float | None = None,
) -> dict[str, Any]:
    """Remove what the rollback deleted, index the rest again, set each record's ``index``."""
    drop = {int(r.ado_id) for r in records if r.status in REMOVED and r.ado_id is not None}
    rest = {int(r.ado_id) for r in records if r.ado_id is not None} - drop
    summary, indexed, removed = _reindex(svc, project, client, process, rest, drop, wait=wait)
    for r in records:
        if r.ado_id is None:
            continue
        if summary["status"] != "updated":
            r.index = "failed"
        elif int(r.ado_id) in drop or int(r.ado_id) in removed:
            r.index = "removed"
        elif int(r.ado_id) in indexed:
            r.index = "updated"
    summary["pending"] = pending.refresh_quietly(svc, run_id)
    return summary
