"""Retention: deleting runs older than ``SYNTH_RETENTION_DAYS`` (0 or unset: off, nothing deleted).

Owns the choice of what a run's data is and the order it goes in. A run is deleted when it was
created more than N days ago and it is terminal, or when nothing has happened to it for N days
(``updated_at``): a run still being worked on is never pulled from under its handlers. What goes:
- ``transcripts/{project}/{name}``, the dropped file, but only while it still holds the bytes of
  this run (same sha256): a newer upload under the same name is another run and stays. It is the
  raw upload too, secrets included, so keeping it would defeat retention;
- ``uploads/{run_id}/`` (the raw upload);
- ``runs/{run_id}/`` with ``run.json`` last, so a purge cut short (crash, timeout) is found and
  finished by the next one instead of leaving blobs no run points to.

The vector index, the ingestion records and the blob trigger's receipts are not per run and stay.
Every step is idempotent (deleting what is gone is a no-op): the timer may run twice.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from shared import layout
from shared.ids import InvalidIdentifier, check_run_id
from shared.models import TERMINAL_STATES, RunStatus
from shared.services import Services
from shared.storage import NotFound, read_model

log = logging.getLogger(__name__)


@dataclass
class RetentionReport:
    enabled: bool
    cutoff: datetime | None = None
    examined: int = 0
    deleted_runs: list[str] = field(default_factory=list)
    deleted_blobs: int = 0
    kept_sources: int = 0  # source blobs overwritten by a newer upload since (not this run's)


def is_expired(run: RunStatus, cutoff: datetime) -> bool:
    if run.created_at >= cutoff:
        return False
    return run.status in TERMINAL_STATES or run.updated_at < cutoff


def purge_run(svc: Services, run: RunStatus, report: RetentionReport | None = None) -> int:
    """Delete one run's data (see the module docstring). Returns the number of blobs deleted."""
    store, deleted = svc.store, 0
    source = run.source_path
    if source.startswith(f"{layout.TRANSCRIPTS_CONTAINER}/"):
        try:
            same = hashlib.sha256(store.get(source)).hexdigest() == run.content_sha256
        except NotFound:
            same = None  # already gone
        if same:
            deleted += store.delete(source)
        elif same is False and report is not None:
            report.kept_sources += 1
    for path in store.list(layout.uploads_prefix(run.run_id)):
        deleted += store.delete(path)
    run_json = layout.run_json(run.run_id)
    for path in store.list(layout.run_prefix(run.run_id)):
        if path != run_json:
            deleted += store.delete(path)
    deleted += store.delete(run_json)
    return deleted


def purge_expired(
    svc: Services, *, days: int | None = None, now: Callable[[], datetime] | None = None
) -> RetentionReport:
    """Delete every expired run. ``days`` defaults to ``SYNTH_RETENTION_DAYS``; 0 does nothing."""
    days = svc.settings.retention_days if days is None else days
    if days <= 0:
        return RetentionReport(enabled=False)
    cutoff = (now or svc.clock)() - timedelta(days=days)
    report = RetentionReport(enabled=True, cutoff=cutoff)
    for run_id in svc.store.children(layout.RUNS_PREFIX):
        try:
            check_run_id(run_id)
            run = read_model(svc.store, layout.run_json(run_id), RunStatus)
        except (InvalidIdentifier, NotFound, ValueError):
            continue  # not a run, or one still being created: nothing tells its age
        report.examined += 1
        if not is_expired(run, cutoff):
            continue
        report.deleted_blobs += purge_run(svc, run, report)
        report.deleted_runs.append(run_id)
        log.info("retention: run %s (created %s) deleted", run_id, run.created_at.isoformat())
    log.info(
        "retention: %d of %d runs older than %d days deleted (%d blobs)",
        len(report.deleted_runs),
        report.examined,
        days,
        report.deleted_blobs,
    )
    return report
