"""A project's Azure DevOps backlog in the index, item by item, exactly as the loader puts it there.

What the loader, the writer (after a write and a rollback) and the sync share:

- which work items belong in the index: the configured types (``Epic``, ``Feature`` and
  ``User Story`` stand for the process's levels, shared/ado/process.py), read from REST JSON
  (``from_rest``), named as the generated backlog names them (``normalize_types``);
- ``reindex``: read some items from Azure DevOps again and index them (``index_work_items``: an
  unchanged item is not embedded again, an older revision never replaces a newer one); items ADO
  no longer has leave the index;
- ``index_lease``: one sync or load of a project's backlog at a time
  (``ingestion/ado/{project}/index.lock``); a write's index update waits for it;
- ``write_ado_vectors``: ``ingestion/ado/{project}/ado_vectors.jsonl`` (the review page reads the
  existing items from it) rewritten from the index.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from shared import layout
from shared.ado.ports import WorkItemReader
from shared.ado.process import Process, normalize_types
from shared.indexing.indexer import (
    ADO_PREFIX,
    LoadSummary,
    Outcome,
    ado_vector_id,
    index_work_items,
    list_ids,
    work_item_lines,
)
from shared.indexing.workitems import parse_records
from shared.models import WorkItem
from shared.services import Services
from shared.storage import dump_jsonl
from shared.storage.leases import LEASE_SECONDS, LeaseBusy, held_lease

log = logging.getLogger("shared.indexing")

BUG = "Bug"


class IndexBusy(LeaseBusy):
    """A sync or a load of the project's backlog holds the index lease."""


def index_lease(svc: Services, project: str, *, wait: float = 0.0) -> AbstractContextManager[None]:
    """Hold ``ingestion/ado/{project}/index.lock`` for the block (renewed); IndexBusy when a sync
    or a load of the project holds it for longer than ``wait`` seconds."""
    return held_lease(
        svc.store,
        layout.index_lock(project),
        f"a sync or load of project {project}'s backlog is in progress; try again when it has "
        "finished",
        LEASE_SECONDS,
        error=IndexBusy,
        wait=wait,
    )


def configured_types(
    settings: Any, include_bugs: bool = False, types: Sequence[str] = ()
) -> list[str]:
    """The types to load as configured (``types`` or the settings' ``work_item_types``), Bug
    added with ``include_bugs``; Epic, Feature and User Story stand for the process's levels."""
    chosen = list(types) or list(settings.pipeline.external_loaders.ado.work_item_types)
    if include_bugs and BUG not in chosen:
        chosen.append(BUG)
    return chosen


def select_types(items: list[WorkItem], types: Sequence[str]) -> list[WorkItem]:
    """The items of ``types`` (ADO names, any case)."""
    wanted = {t.lower() for t in types}
    kept = [i for i in items if i.work_item_type.lower() in wanted]
    other = Counter(i.work_item_type for i in items if i.work_item_type.lower() not in wanted)
    if other:
        log.info("left out work items of other types: %s", dict(other))
    return kept


def parse_rest(raw: list[dict[str, Any]]) -> tuple[list[WorkItem], list[dict[str, Any]]]:
    """REST items (``workitemsbatch``) as WorkItems, and one error per item that cannot be read
    (``work_item_id`` and ``error``)."""
    items, errors = parse_records(raw)
    for error in errors:
        error["error"] = f"work item {error.get('work_item_id', '?')}: {error['error']}"
        error.pop("record", None)
    return items, errors


def backlog_items(
    raw: list[dict[str, Any]], process: Process, types: Sequence[str]
) -> tuple[list[WorkItem], list[dict[str, Any]]]:
    """The REST items that belong in the index (the process's ``types``), normalized as the
    loader normalizes them; and the errors of those that cannot be read."""
    items, errors = parse_rest(raw)
    return normalize_types(select_types(items, process.ado_types(types)), process), errors


def write_ado_vectors(svc: Services, project: str) -> None:
    """``ingestion/ado/{project}/ado_vectors.jsonl`` from the index as it is now."""
    svc.store.put(
        layout.ado_vectors(project),
        dump_jsonl(work_item_lines(svc.index, project)),
        "application/x-ndjson",
    )


@dataclass
class Reindexed:
    """What ``reindex`` did: each item's outcome (``added``, ``updated``, ``unchanged``,
    ``stale``), the items no longer in ADO (``removed`` from the index when they were there),
    those of other types (``other``: not the index's), and the unreadable ones."""

    outcomes: dict[int, Outcome] = field(default_factory=dict)
    removed: list[int] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    other: list[int] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    summary: LoadSummary = field(default_factory=LoadSummary)

    @property
    def indexed(self) -> set[int]:
        """The ids the index holds as ADO has them now (or a newer revision)."""
        return set(self.outcomes)


def reindex(
    svc: Services,
    project: str,
    client: WorkItemReader,
    process: Process,
    ids: Iterable[int],
    *,
    types: Sequence[str] | None = None,
) -> Reindexed:
    """Read the work items ``ids`` from ADO (one batch per 200) and index those that belong in
    the index as the loader would; items ADO no longer has are deleted from the index. Items of
    other types are left alone (the loader does not index them either). AdoError propagates."""
    wanted = sorted({int(i) for i in ids})
    done = Reindexed()
    if not wanted:
        return done
    raw = list(client.get_work_items(wanted))
    found = {int(r["id"]) for r in raw if r.get("id") is not None}
    items, done.errors = backlog_items(raw, process, types or configured_types(svc.settings))
    kept = {i.work_item_id for i in items}
    unreadable = {int(e["work_item_id"]) for e in done.errors if "work_item_id" in e}
    done.other = sorted(found - kept - unreadable)
    done.missing = sorted(set(wanted) - found)
    done.summary = index_work_items(
        svc.embedder, svc.index, project, items, prune=False, outcomes=done.outcomes
    )
    if done.missing:
        present = set(list_ids(svc.index, project, ADO_PREFIX))
        gone = [ado_vector_id(i) for i in done.missing if ado_vector_id(i) in present]
        if gone:
            done.summary.deleted += svc.index.delete(project, gone)
            done.removed = sorted(int(v[len(ADO_PREFIX) :]) for v in gone)
    return done


def remove(svc: Services, project: str, ids: Iterable[int]) -> list[int]:
    """Delete the ``ado-`` vectors of ``ids`` from the project's index; the ids it held."""
    wanted = {ado_vector_id(int(i)) for i in ids}
    if not wanted:
        return []
    present = wanted & set(list_ids(svc.index, project, ADO_PREFIX))
    if present:
        svc.index.delete(project, sorted(present))
    return sorted(int(v[len(ADO_PREFIX) :]) for v in present)
