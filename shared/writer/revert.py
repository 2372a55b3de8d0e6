"""Undoing an ADO write: what it created is deleted, what it patched is put back.

``Rollback`` undoes one write (for a run: ``shared.writer.rollback.rollback_run``, the latest
write unless ``write_id`` names another), from its records in
``runs/{run_id}/parts/writes/{write_id}.jsonl``:

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

Leases and records (a rollback takes the write's leases; its records are
``runs/{run_id}/parts/rollbacks/{rollback_id}.jsonl``): shared/writer/rollback.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

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
from shared.models import Record, utcnow
from shared.writer.execute import WriteResult, _maybe_applied

log = logging.getLogger("shared.writer")

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


class _Abort(Exception):
    """Nothing more can be done in this attempt (auth, throttling, no connection)."""


def counts(records: Iterable[RollbackRecord]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for record in records:
        out[record.status] += 1
    return out


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
            return self._gone(result, target)
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
                return self._gone(result, target)
            except AdoError as err:
                self._retry_or_raise(err, attempt, result)
                try:
                    again = client.get_work_item(target)
                except AdoNotFound:
                    return self._gone(result, target)
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
            return self._gone(result, target)
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
                return self._gone(result, target)
            except AdoError as err:
                self._retry_or_raise(err, attempt, result)
                try:
                    client.get_work_item(target)
                except AdoNotFound:  # the answer was lost, the delete happened
                    return self._record_for(result, "delete", "deleted")
                except _ABORT as read_err:
                    raise _Abort(str(read_err)) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _gone(self, result: WriteResult, target: int) -> RollbackRecord:
        """The work item is not there any more: nothing to undo."""
        return self._record_for(
            result, "none", "already_gone", reason=f"work item #{target} no longer exists"
        )

    def _retry_or_raise(self, err: AdoError, attempt: int, result: WriteResult) -> None:
        """Back off before another attempt when the failed call may have been applied and
        attempts are left; otherwise raise (``_Abort`` for auth, throttling, no connection)."""
        if not _maybe_applied(err) or attempt == self.max_retries:
            if isinstance(err, _ABORT):
                raise _Abort(str(err)) from None
            raise err
        self._backoff(attempt, result, err)

    def _backoff(self, attempt: int, result: WriteResult, err: AdoError) -> None:
        delay = float(min(16, 2**attempt))
        log.warning(
            "rolling back %s: %s; looking again and retrying in %.0f s", result.item_id, err, delay
        )
        self.sleep(delay)
