"""Rolling back a run's write (``python -m shared.cli rollback`` and ``POST .../rollback``): which
write, the leases, the records; the undoing itself, and its rules, are ``shared.writer.revert``.

``rollback_run`` undoes one write of a run, the latest unless ``write_id`` names another. It holds
the same two leases as a write (the run's, the ADO write's; shared/writer/runs.py), so it never
runs beside a write, a retag or another rollback. Its records go to
``runs/{run_id}/parts/rollbacks/{rollback_id}.jsonl`` (one line per item the write changed),
rewritten after each item it changes and at its end. A dry run reads only, takes no lease and
stores nothing; without a client it lists the write's items from its records, unchecked.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

from shared import layout
from shared.ado.errors import AdoError
from shared.ado.ports import WorkItemWriter
from shared.ado.process import AGILE, Process, ProcessError
from shared.errors import ConfigurationError, SynthesizerError
from shared.ids import InvalidIdentifier
from shared.indexing.writes import after_rollback
from shared.pipeline.runs import load_run
from shared.services import Services
from shared.storage import NotFound, dump_jsonl, read_jsonl
from shared.writer.execute import WriteResult
from shared.writer.revert import Rollback, RollbackRecord, counts
from shared.writer.runs import ado_write_locks, project_process, write_ids

log = logging.getLogger("shared.writer")

WRITE_ID_RE = re.compile(r"^w-[0-9]{4}-[0-9]{8}T[0-9]{6}Z$")


class NothingToRollBack(SynthesizerError, RuntimeError):
    """The run has no write."""


class UnknownWrite(SynthesizerError, LookupError):
    """``write_id`` is not a write of the run."""


def check_write_id(value: str) -> str:
    if not isinstance(value, str) or not WRITE_ID_RE.fullmatch(value):
        raise InvalidIdentifier(f"invalid write_id {value!r}: expected w-NNNN-YYYYMMDDTHHMMSSZ")
    return value


def rollback_ids(svc: Services, run_id: str) -> list[str]:
    return [layout.unit_of(p) for p in svc.store.list(layout.rollback_prefix(run_id))]


def new_rollback_id(svc: Services, run_id: str) -> str:
    """The run's n-th rollback and its time: ``rb-0001-20260101T120000Z`` (taken under the lease)."""
    n = len(rollback_ids(svc, run_id)) + 1
    return f"rb-{n:04d}-" + svc.clock().strftime("%Y%m%dT%H%M%SZ")


def _write_results(svc: Services, run_id: str, write_id: str) -> list[WriteResult]:
    return read_jsonl(svc.store, layout.write_results_part(run_id, write_id), WriteResult)


def _rollback_records(svc: Services, run_id: str) -> list[RollbackRecord]:
    out: list[RollbackRecord] = []
    for rollback_id in rollback_ids(svc, run_id):
        try:
            out += read_jsonl(svc.store, layout.rollback_part(run_id, rollback_id), RollbackRecord)
        except NotFound:
            continue
    return out


def _marks(
    svc: Services, run_id: str, write_id: str, writes: list[str]
) -> tuple[dict[int, int], dict[int, int]]:
    """The last rev our own work left on each item: the write's, a later write's of the run (it
    may have linked children under the item), an earlier rollback's revert; and the revs the
    earlier rollbacks of this write left after reverting."""
    left: dict[int, int] = {}
    for later in writes[writes.index(write_id) :]:
        for result in _write_results(svc, run_id, later):
            if result.ado_id is not None and result.rev_after is not None:
                left[result.ado_id] = max(left.get(result.ado_id, 0), result.rev_after)
    reverted: dict[int, int] = {}
    for record in _rollback_records(svc, run_id):
        if record.status == "reverted" and record.ado_id is not None and record.rev_after:
            left[record.ado_id] = max(left.get(record.ado_id, 0), record.rev_after)
            if record.write_id == write_id:
                reverted[record.ado_id] = max(reverted.get(record.ado_id, 0), record.rev_after)
    return left, reverted


def rollback_body(
    run_id: str,
    write_id: str,
    rollback_id: str | None,
    records: list[RollbackRecord],
    *,
    dry_run: bool,
    checked: bool,
    ado_error: str | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "run_id": run_id,
        "write_id": write_id,
        "rollback_id": rollback_id,
        "dry_run": dry_run,
        "checked_against_ado": checked and ado_error is None,
        "results": [r.model_dump(mode="json") for r in records],
        "counts": counts(records),
        "deleted_ids": [r.ado_id for r in records if r.status == "deleted"],
        "reverted_ids": [r.ado_id for r in records if r.status == "reverted"],
    }
    if ado_error:
        body["ado_error"] = ado_error
    return body


def rollback_run(
    svc: Services,
    run_id: str,
    client: WorkItemWriter | None,
    *,
    write_id: str | None = None,
    dry_run: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Roll back one write of a run (the latest by default), or say what that would do
    (``dry_run``); the response body of POST .../rollback.

    ``client`` (an AdoClient) may be None for a dry run: it then lists the write's items from its
    records, unchecked. Raises UnknownRun, InvalidIdentifier (a malformed ``write_id``),
    NothingToRollBack (the run was never written), UnknownWrite, WriteInProgress, and ValueError
    when a rollback has no client.
    """
    run = load_run(svc, run_id)
    if write_id is not None:
        check_write_id(write_id)

    def target() -> tuple[str, list[str]]:
        writes = write_ids(svc, run_id)
        if not writes:
            raise NothingToRollBack(f"run {run_id} has no write to roll back")
        chosen = write_id or writes[-1]
        if chosen not in writes:
            raise UnknownWrite(f"run {run_id} has no write {chosen}; its writes: {writes}")
        return chosen, writes

    if dry_run:
        chosen, writes = target()
        left, reverted = _marks(svc, run_id, chosen, writes)
        rollback = Rollback(
            client,
            _write_results(svc, run_id, chosen),
            run_id=run_id,
            write_id=chosen,
            rollback_id=None,
            dry_run=True,
            left_revs=left,
            reverted_revs=reverted,
            clock=svc.clock,
        )
        records = rollback.run()
        return rollback_body(
            run_id,
            chosen,
            None,
            records,
            dry_run=True,
            checked=client is not None,
            ado_error=rollback.ado_error,
        )
    if client is None:
        raise ConfigurationError("rolling back a write needs a client (AZURE_DEVOPS_* settings)")
    rollback_id = ""  # set under the leases

    def flush(records: list[RollbackRecord]) -> None:
        svc.store.put(
            layout.rollback_part(run_id, rollback_id), dump_jsonl(records), "application/x-ndjson"
        )

    def on_record(record: RollbackRecord, records: list[RollbackRecord]) -> None:
        if record.status in ("deleted", "reverted"):
            flush(records)

    with ado_write_locks(svc, run_id):
        chosen, writes = target()
        left, reverted = _marks(svc, run_id, chosen, writes)
        rollback_id = new_rollback_id(svc, run_id)
        rollback = Rollback(
            client,
            _write_results(svc, run_id, chosen),
            run_id=run_id,
            write_id=chosen,
            rollback_id=rollback_id,
            dry_run=False,
            left_revs=left,
            reverted_revs=reverted,
            sleep=sleep,
            clock=svc.clock,
            on_record=on_record,
        )
        index_update: dict[str, Any] | None = None
        try:
            records = rollback.run()
            index_update = after_rollback(
                svc, run_id, run.project, client, _process(svc, client), records
            )
        finally:
            flush(rollback.records)
    log.info("rollback %s of write %s of run %s: %s", rollback_id, chosen, run_id, counts(records))
    body = rollback_body(
        run_id,
        chosen,
        rollback_id,
        records,
        dry_run=False,
        checked=True,
        ado_error=rollback.ado_error,
    )
    body["index_update"] = index_update
    return body


def _process(svc: Services, client: WorkItemWriter) -> Process:
    """The project's process for reading items back into the index (AGILE when it cannot be
    told: the rollback itself does not depend on it)."""
    try:
        return project_process(svc.settings, client) or AGILE
    except (AdoError, ProcessError) as err:
        log.warning("the project's process could not be told (%s): indexed as agile", err)
        return AGILE
