"""Rolling back an ADO write: what it created is deleted, what it patched is put back.

``rollback_run`` undoes one write of a run (the latest unless ``write_id`` names another), from
its records in ``runs/{run_id}/parts/writes/{write_id}.jsonl``:

- every item the write **patched** (status ``modified``) gets back, field by field, the values
  the write recorded before patching (``before``: the description, the acceptance criteria, the
  tags, the title of a ``replace``; a field that was unset is emptied). One PATCH guarded by
  ``test /rev``. Patches go first, while the items the write created (and their links) are
  still there.
- every item the write **created** is deleted (``DELETE .../workitems/{id}``, never
  ``destroy``: the item goes to ADO's recycle bin and can be restored from there), children
  before parents: in the reverse order of the write, which wrote epics, then features, then
  stories. The ``Related`` link of a ``both`` decision and the parent links live on the created
  item and go with it.
- an item **changed in ADO since the write** is left alone and reported
  (``changed_since_write``): its rev is above the rev the write left (``rev_after``; a later
  write of the run or an earlier rollback that changed it moves that mark), or a field differs
  from what the write set (``after``). A created item that still has children this rollback
  does not delete (a person added one, or the child was kept) is ``kept``, so nothing is
  orphaned.
- **idempotent**: an item already deleted is ``already_gone`` (a read or a DELETE answering
  404), a patch whose fields already hold their old values is ``already_reverted``; a second
  rollback of the same write changes nothing.
- a write recorded before rollbacks existed has no ``before`` / ``rev_after``: its patches are
  reported ``failed`` ("cannot revert: the write recorded no previous values") and its created
  items too (their revision cannot be checked); nothing of it is changed.

The current state of every item comes from one batch read (``workitemsbatch``, 200 ids a
request) before anything is changed, so what one step changes cannot make a later check wrong.
Retries are the client's (429/503, Retry-After); a PATCH or DELETE answered 500/502/504 or lost
is retried after looking again, as the write does. Auth failures, throttling that outlasts
every retry and an unreachable server stop the rollback: the items not attempted are
``failed``, and running it again finishes it.

Leases and records: a rollback holds the same two leases as a write (the run's, the ADO
write's; shared/writer/runs.py), so it never runs beside a write, a retag or another rollback.
Its records go to ``runs/{run_id}/parts/rollbacks/{rollback_id}.jsonl`` (one line per item the
write changed), rewritten after each item it changes and at its end. A dry run reads only,
takes no lease and stores nothing.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

from shared import layout
from shared.ado import ops
from shared.ado.errors import (
    AdoAuthError,
    AdoConflict,
    AdoConnectionError,
    AdoError,
    AdoNotFound,
    AdoThrottled,
)
from shared.ado.ports import WorkItemWriter
from shared.ado.process import AGILE, Process, ProcessError
from shared.errors import ConfigurationError, SynthesizerError
from shared.ids import InvalidIdentifier
from shared.indexing.writes import after_rollback
from shared.models import Record, utcnow
from shared.pipeline.runs import load_run
from shared.services import Services
from shared.storage import NotFound, dump_jsonl, read_jsonl
from shared.writer.execute import WriteResult, _maybe_applied
from shared.writer.runs import ado_write_locks, project_process, write_ids

log = logging.getLogger("shared.writer")

WRITE_ID_RE = re.compile(r"^w-[0-9]{4}-[0-9]{8}T[0-9]{6}Z$")
RollbackAction = Literal["delete", "revert", "none"]
RollbackStatus = Literal[
    "pending",
    "deleted",
    "reverted",
    "changed_since_write",
    "already_gone",
    "already_reverted",
    "kept",
    "failed",
]
STATUSES: tuple[str, ...] = (
    "pending",
    "deleted",
    "reverted",
    "changed_since_write",
    "already_gone",
    "already_reverted",
    "kept",
    "failed",
)
NO_BEFORE = "cannot revert: the write recorded no previous values"
NO_REV = "cannot delete: the write recorded no rev, so a change made since cannot be ruled out"
_ABORT = (AdoAuthError, AdoThrottled, AdoConnectionError)


class RollbackRecord(Record):
    """One line of ``parts/rollbacks/{rollback_id}.jsonl``: one item the write changed."""

    run_id: str
    rollback_id: str | None  # None in a dry run
    write_id: str
    item_id: str
    type: str
    title: str
    ado_id: int | None = None
    action: RollbackAction
    status: RollbackStatus
    fields_reverted: list[str] = []
    reason: str = ""
    error: str | None = None
    rev_after: int | None = None  # a revert: the item's rev after it
    # the project's index after the rollback (shared/indexing/writes.py): the item left it
    # (removed), holds it as ADO has it now (updated), or could not be updated (failed)
    index: Literal["removed", "updated", "failed"] | None = None
    timestamp: datetime


class NothingToRollBack(SynthesizerError, RuntimeError):
    """The run has no write."""


class UnknownWrite(SynthesizerError, LookupError):
    """``write_id`` is not a write of the run."""


class _Abort(Exception):
    """Nothing more can be done in this attempt (auth, throttling, no connection)."""


def check_write_id(value: str) -> str:
    if not isinstance(value, str) or not WRITE_ID_RE.fullmatch(value):
        raise InvalidIdentifier(f"invalid write_id {value!r}: expected w-NNNN-YYYYMMDDTHHMMSSZ")
    return value


def counts(records: Iterable[RollbackRecord]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for record in records:
        out[record.status] += 1
    return out


def rollback_ids(svc: Services, run_id: str) -> list[str]:
    return [layout.unit_of(p) for p in svc.store.list(layout.rollback_prefix(run_id))]


def new_rollback_id(svc: Services, run_id: str) -> str:
    """The run's n-th rollback and its time: ``rb-0001-20260101T120000Z`` (taken under the lease)."""
    n = len(rollback_ids(svc, run_id)) + 1
    return f"rb-{n:04d}-" + svc.clock().strftime("%Y%m%dT%H%M%SZ")


# ------------------------------------------------------------------------------------------------
# comparing field values


def _tag_set(value: Any) -> set[str]:
    return {t.strip().lower() for t in str(value or "").split(";") if t.strip()}


def same_value(field: str, a: Any, b: Any) -> bool:
    """Equal as ADO keeps them: tags as a set (ADO may reorder them), unset equals empty."""
    if field == ops.TAGS:
        return _tag_set(a) == _tag_set(b)
    return ("" if a is None else a) == ("" if b is None else b)


def _differing(item: Mapping[str, Any], values: Mapping[str, Any]) -> list[str]:
    fields = item.get("fields") or {}
    return [f for f, v in values.items() if not same_value(f, fields.get(f), v)]


def _rev(item: Mapping[str, Any] | None) -> int | None:
    rev = (item or {}).get("rev")
    return int(rev) if rev is not None else None


# ------------------------------------------------------------------------------------------------
# the rollback


class Rollback:
    """Undo one write's results against ADO (``client`` None: a dry run from the files alone)."""

    def __init__(
        self,
        client: WorkItemWriter | None,
        results: list[WriteResult],
        *,
        run_id: str,
        write_id: str,
        rollback_id: str | None,
        dry_run: bool,
        left_revs: Mapping[int, int] | None = None,
        reverted_revs: Mapping[int, int] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = utcnow,
        on_record: Callable[[RollbackRecord, list[RollbackRecord]], None] | None = None,
        max_retries: int = 5,
    ) -> None:
        self.client = client
        self.results = results
        self.run_id = run_id
        self.write_id = write_id
        self.rollback_id = rollback_id
        self.dry_run = dry_run
        self.left_revs = dict(left_revs or {})  # ado id → the last rev our own writes left
        self.reverted_revs = dict(reverted_revs or {})  # ado id → rev after an earlier revert
        self.sleep = sleep
        self.clock = clock
        self.on_record = on_record
        self.max_retries = max_retries
        self.records: list[RollbackRecord] = []
        self.ado_error: str | None = None

    def run(self) -> list[RollbackRecord]:
        reverts = [r for r in self.results if r.status == "modified" and r.ado_id is not None]
        # the write went parents first (epics, features, stories): children are deleted first
        deletes = [
            r for r in reversed(self.results) if r.status == "created" and r.ado_id is not None
        ]
        current: dict[int, dict[str, Any]] | None = None
        if self.client is not None:
            ids = sorted({int(r.ado_id) for r in reverts + deletes if r.ado_id is not None})
            try:
                current = {int(i["id"]): i for i in self.client.get_work_items(ids)} if ids else {}
            except AdoError as err:
                self.ado_error = str(err)
        removed: set[int] = set()
        for result in reverts + deletes:
            if self.client is not None and current is None:
                record = self._record_for(result, "none", "failed", error=self.ado_error)
            elif self.ado_error is not None:
                record = self._record_for(
                    result, "none", "failed", error=f"not attempted: {self.ado_error}"
                )
            else:
                item = None if current is None else current.get(int(result.ado_id or 0))
                try:
                    if result.status == "modified":
                        record = self._revert(result, item, checked=current is not None)
                    else:
                        record = self._delete(result, item, removed, checked=current is not None)
                except _Abort as err:
                    self.ado_error = str(err)
                    record = self._record_for(result, "none", "failed", error=self.ado_error)
                except AdoError as err:
                    log.warning("rolling back %s failed: %s", result.item_id, err)
                    action = "revert" if result.status == "modified" else "delete"
                    record = self._record_for(result, action, "failed", error=str(err))
            if record.action == "delete" and record.status in ("deleted", "pending"):
                removed.add(int(result.ado_id or 0))
            if record.status == "already_gone":
                removed.add(int(result.ado_id or 0))
            self._keep(record)
        return self.records

    def _ado(self) -> WorkItemWriter:
        """The client: only a rollback checked against ADO, which has one, changes items."""
        if self.client is None:
            raise AssertionError("a rollback without a client changes nothing in ADO")
        return self.client

    def _keep(self, record: RollbackRecord) -> None:
        self.records.append(record)
        if self.on_record is not None:
            self.on_record(record, self.records)

    def _record_for(
        self, result: WriteResult, action: str, status: str, **fields: Any
    ) -> RollbackRecord:
        return RollbackRecord(
            run_id=self.run_id,
            rollback_id=self.rollback_id,
            write_id=self.write_id,
            item_id=result.item_id,
            type=str(result.type),
            title=result.title,
            ado_id=result.ado_id,
            action=action,
            status=status,
            timestamp=self.clock(),
            **fields,
        )

    def _changed(self, result: WriteResult, item: Mapping[str, Any]) -> list[str]:
        """Why the item no longer is as the write left it (empty: it is)."""
        reasons = []
        left = max(
            (r for r in (result.rev_after, self.left_revs.get(int(result.ado_id or 0))) if r),
            default=None,
        )
        rev = _rev(item)
        if left is not None and rev is not None and rev > left:
            reasons.append(f"rev {rev} in ADO, the write left rev {left}")
        if result.after:
            for name in _differing(item, result.after):
                reasons.append(f"{name} is not what the write set")
        return reasons

    # -- revert a patch ------------------------------------------------------------------------
    def _revert(
        self, result: WriteResult, item: dict[str, Any] | None, *, checked: bool
    ) -> RollbackRecord:
        target = int(result.ado_id or 0)
        if result.before is None:
            return self._record_for(result, "none", "failed", reason=NO_BEFORE)
        before = dict(result.before)
        if not checked:
            return self._record_for(
                result,
                "revert",
                "pending",
                fields_reverted=list(before),
                reason="not checked against Azure DevOps",
            )
        if item is None:
            return self._record_for(
                result, "none", "already_gone", reason=f"work item #{target} no longer exists"
            )
        differing = _differing(item, before)
        if not differing or self.reverted_revs.get(target) == _rev(item):
            return self._record_for(
                result, "none", "already_reverted", reason="its fields hold their old values"
            )
        changed = self._changed(result, item)
        if changed:
            return self._record_for(
                result, "none", "changed_since_write", reason="; ".join(changed)
            )
        if self.dry_run:
            return self._record_for(result, "revert", "pending", fields_reverted=differing)
        operations = [
            ops.field_op(name, "" if before[name] is None else before[name], "replace")
            for name in differing
        ]
        rev = int(item["rev"])
        client = self._ado()
        for attempt in range(self.max_retries + 1):
            try:
                updated = client.update_work_item(target, operations, expected_rev=rev)
                return self._record_for(
                    result,
                    "revert",
                    "reverted",
                    fields_reverted=differing,
                    rev_after=_rev(updated),
                )
            except AdoConflict:
                return self._record_for(
                    result,
                    "none",
                    "changed_since_write",
                    reason=f"work item #{target} changed while it was being rolled back",
                )
            except AdoNotFound:
                return self._record_for(
                    result, "none", "already_gone", reason=f"work item #{target} no longer exists"
                )
            except AdoError as err:
                if not _maybe_applied(err) or attempt == self.max_retries:
                    if isinstance(err, _ABORT):
                        raise _Abort(str(err)) from None
                    raise
                self._backoff(attempt, result, err)
                try:
                    again = client.get_work_item(target)
                except AdoNotFound:
                    return self._record_for(
                        result,
                        "none",
                        "already_gone",
                        reason=f"work item #{target} no longer exists",
                    )
                except _ABORT as read_err:
                    raise _Abort(str(read_err)) from None
                if not _differing(again, before):  # the answer was lost, the revert happened
                    return self._record_for(
                        result,
                        "revert",
                        "reverted",
                        fields_reverted=differing,
                        rev_after=_rev(again),
                    )
                if _rev(again) != rev:
                    return self._record_for(
                        result,
                        "none",
                        "changed_since_write",
                        reason=f"work item #{target} changed while it was being rolled back",
                    )
        raise AssertionError("unreachable")  # pragma: no cover

    # -- delete a created item -----------------------------------------------------------------
    def _delete(
        self,
        result: WriteResult,
        item: dict[str, Any] | None,
        removed: set[int],
        *,
        checked: bool,
    ) -> RollbackRecord:
        target = int(result.ado_id or 0)
        if not checked:
            return self._record_for(
                result, "delete", "pending", reason="not checked against Azure DevOps"
            )
        if item is None:
            return self._record_for(
                result, "none", "already_gone", reason=f"work item #{target} no longer exists"
            )
        if result.rev_after is None and target not in self.left_revs:
            return self._record_for(result, "none", "failed", reason=NO_REV)
        changed = self._changed(result, item)
        if changed:
            return self._record_for(
                result, "none", "changed_since_write", reason="; ".join(changed)
            )
        staying = [c for c in ops.child_ids_of(item) if c not in removed]
        if staying:
            return self._record_for(
                result,
                "none",
                "kept",
                reason="its child work items stay: " + ", ".join(f"#{c}" for c in staying),
            )
        if self.dry_run:
            return self._record_for(result, "delete", "pending")
        client = self._ado()
        for attempt in range(self.max_retries + 1):
            try:
                client.delete_item(target)
                return self._record_for(result, "delete", "deleted")
            except AdoNotFound:
                return self._record_for(
                    result, "none", "already_gone", reason=f"work item #{target} no longer exists"
                )
            except AdoError as err:
                if not _maybe_applied(err) or attempt == self.max_retries:
                    if isinstance(err, _ABORT):
                        raise _Abort(str(err)) from None
                    raise
                self._backoff(attempt, result, err)
                try:
                    client.get_work_item(target)
                except AdoNotFound:  # the answer was lost, the delete happened
                    return self._record_for(result, "delete", "deleted")
                except _ABORT as read_err:
                    raise _Abort(str(read_err)) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, attempt: int, result: WriteResult, err: AdoError) -> None:
        delay = float(min(16, 2**attempt))
        log.warning(
            "rolling back %s: %s; looking again and retrying in %.0f s", result.item_id, err, delay
        )
        self.sleep(delay)


# ------------------------------------------------------------------------------------------------
# a run's rollback (the CLI and the HTTP API)


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


# ------------------------------------------------------------------------------------------------
# the command line's table

_COLUMNS = (("status", 20), ("action", 8), ("type", 10), ("item_id", 15), ("ado", 7))


def render_rollback(body: dict[str, Any], title_width: int = 40) -> str:
    """A rollback (or its dry run) as a table, then the counts."""
    head = (
        f"dry run of the rollback of write {body['write_id']} of {body['run_id']}"
        + ("" if body.get("checked_against_ado") else " (not checked against Azure DevOps)")
        if body.get("dry_run")
        else f"rollback {body.get('rollback_id')} of write {body['write_id']} of {body['run_id']}"
    )
    lines = [head, ""]
    header = "".join(name.upper().ljust(width) for name, width in _COLUMNS)
    lines.append(header + "TITLE".ljust(title_width + 2) + "NOTE")
    for row in body.get("results") or []:
        cells = {
            "status": row.get("status") or "",
            "action": row.get("action") or "",
            "type": "Story" if row.get("type") == "User Story" else row.get("type", ""),
            "item_id": row.get("item_id", ""),
            "ado": f"#{row['ado_id']}" if row.get("ado_id") else "-",
        }
        line = "".join(_cut(cells[name], width - 1).ljust(width) for name, width in _COLUMNS)
        note = row.get("error") or row.get("reason") or ""
        if row.get("fields_reverted"):
            note = (note + "; " if note else "") + "fields: " + ", ".join(row["fields_reverted"])
        lines.append(line + _cut(row.get("title", ""), title_width).ljust(title_width + 2) + note)
    lines.append("")
    lines.append(", ".join(f"{k}: {v}" for k, v in (body.get("counts") or {}).items() if v))
    if body.get("ado_error"):
        lines.append(f"Azure DevOps stopped the rollback: {body['ado_error']}")
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"
