"""Carrying out a plan against Azure DevOps, idempotently.

- create: the item's signature tag is looked up by WIQL first; found → ``existing`` (nothing is
  written), else one POST with the fields, the tags, the parent link (``Hierarchy-Reverse``) and,
  for ``both``, the ``Related`` link: a created item is complete or absent, never half-linked.
- patch: the existing story is read; if it carries this story's patch tag it was patched before
  (``existing``), else one PATCH guarded by ``test /rev`` appends the ACs not already there (or
  replaces the content), adds the delta to the description and the tags, the patch tag included.
- for a rollback (``shared.writer.rollback``) each patch records the fields it changed as they
  were (``before``) and as it left them (``after``), and every item created or modified (and every
  parent a created item was linked under) its ``rev_after``: the rev when the write ended, read
  again in one batch at its end (a child's parent link is a revision of the parent).
- types and fields follow the plan's process (shared.ado.process): a story is created as the
  process's story type; where the process has no acceptance-criteria field (Basic) the criteria
  go into the description under an "Acceptance criteria" heading, and a patch appends them there.
- a failed item (e.g. a 400 rule violation) is recorded and the rest go on; its children fail
  with the reason. Auth failures, throttling that outlasts every retry and an unreachable server
  end the write: the items not attempted are recorded as failed. Running the write again finishes
  it: what was written is found by its tags, what was not is written.

Retries. The client retries reads on 429/5xx and writes only on 429/503 (an answered 500 may have
been applied, and a blind retry of a create would make a second item). Here, a write answered
500/502/504, or one whose answer was lost, is retried after 1, 2, 4, 8, 16 s, but only after
looking again: a create whose signature is now found is done; a patch re-reads the item (its patch
tag, its rev). So 5xx on writes are retried (seed §8) without ever duplicating an item.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
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
from shared.ado.process import AGILE, Process
from shared.models import ItemType, Record, Tag, utcnow
from shared.writer import render
from shared.writer.plan import Plan, PlannedItem

log = logging.getLogger("shared.writer")

RELATED_REL = "System.LinkTypes.Related"
MAYBE_APPLIED = frozenset({500, 502, 504})
WriteStatus = Literal["created", "modified", "existing", "skipped", "blocked", "failed"]
STATUSES: tuple[str, ...] = ("created", "modified", "existing", "skipped", "blocked", "failed")


class WriteResult(Record):
    """One line of ``ado_write_results.jsonl`` (and of ``parts/writes/{write_id}.jsonl``)."""

    run_id: str
    write_id: str
    item_id: str
    type: ItemType
    title: str
    action: Literal["create", "patch", "skip", "blocked"]
    status: WriteStatus
    work_item_type: str | None = None  # as the project's process names it (Product Backlog Item)
    tag: Tag | None = None
    decision: str | None = None
    decided_by: str | None = None  # the saved review's saved_by, else the write's requester
    decided_at: datetime | None = None  # the saved review's saved_at, else the write's time
    parent_ref: str | None = None
    parent_ado_id: int | None = None
    existing_id: int | None = None
    ado_id: int | None = None
    created_ids: list[int] = []
    modified_ids: list[int] = []
    # for a rollback (absent from writes made before it existed): a patch's fields as they were
    # (None: unset) and as it left them; the item's rev when the write ended
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    rev_after: int | None = None
    # created / modified / existing: whether the project's index holds the item as ADO has it
    # after the write (shared/indexing/writes.py); None in writes made before it did
    indexed: bool | None = None
    url: str | None = None
    reason: str = ""
    error: str | None = None
    signature: str
    timestamp: datetime


class _Abort(Exception):
    """Nothing more can be written in this attempt (auth, throttling, no connection)."""


def counts(results: list[WriteResult]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for result in results:
        out[result.status] += 1
    return out


class Writer:
    def __init__(
        self,
        client: WorkItemWriter,
        *,
        run_id: str,
        write_id: str,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = utcnow,
        on_result: Callable[[WriteResult, list[WriteResult]], None] | None = None,
        max_retries: int = 5,
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.write_id = write_id
        self.sleep = sleep
        self.clock = clock
        self.on_result = on_result
        self.max_retries = max_retries
        self.ado_ids: dict[str, int] = {}  # item_id → work item id, for the children
        self.results: list[WriteResult] = []
        self._by_item: dict[str, WriteResult] = {}
        self.process: Process = AGILE  # the plan's, once run() has it

    # -- the plan ------------------------------------------------------------------------------
    def run(self, plan: Plan) -> list[WriteResult]:
        self.process = plan.process
        aborted: str | None = None
        for entry in plan.items:
            if aborted is not None and entry.action in ("create", "patch"):
                result = self._result(entry, "failed", error=f"not attempted: {aborted}")
            else:
                try:
                    result = self._write(entry)
                except _Abort as err:
                    aborted = str(err)
                    result = self._result(entry, "failed", error=aborted)
            self._record(result)
        if aborted is None:
            self._settle_revs()
        return self.results

    def _settle_revs(self) -> None:
        """``rev_after`` = each changed item's rev now the write has ended: creating a child adds
        a revision to its parent, so the rev a create answered is not the last one. One batch
        read per 200 items; on an error the revs the writes answered stay."""
        parents = {r.parent_ado_id for r in self.results if r.status == "created"}
        wanted = {
            r.ado_id: r
            for r in self.results
            if r.ado_id is not None
            and (
                r.status in ("created", "modified")
                or (r.status == "existing" and r.ado_id in parents)
            )
        }
        if not wanted:
            return
        try:
            for item in self.client.get_work_items(sorted(wanted)):
                result = wanted.get(int(item["id"]))
                if result is not None and item.get("rev") is not None:
                    result.rev_after = int(item["rev"])
        except AdoError as err:
            log.warning("reading the written items' revs again failed: %s", err)

    def _record(self, result: WriteResult) -> None:
        self.results.append(result)
        self._by_item[result.item_id] = result
        if result.ado_id is not None and result.status in ("created", "existing"):
            self.ado_ids[result.item_id] = result.ado_id
        if self.on_result is not None:
            self.on_result(result, self.results)

    def _result(self, entry: PlannedItem, status: str, **fields: Any) -> WriteResult:
        ado_id = fields.get("ado_id")
        return WriteResult(
            run_id=self.run_id,
            write_id=self.write_id,
            item_id=entry.item_id,
            type=entry.item.type,
            work_item_type=entry.ado_type,
            title=entry.item.title,
            action=entry.action,
            status=status,
            tag=entry.tag,
            decision=entry.decision,
            decided_by=entry.decided_by,
            decided_at=entry.decided_at,
            parent_ref=entry.parent_ref,
            existing_id=entry.existing_id,
            reason=entry.reason,
            signature=entry.signature,
            url=self.client.web_url(ado_id) if ado_id is not None else None,
            timestamp=self.clock(),
            **fields,
        )

    def _write(self, entry: PlannedItem) -> WriteResult:
        if entry.action == "skip":
            return self._result(entry, "skipped")
        if entry.action == "blocked":
            return self._result(entry, "blocked")
        try:
            if entry.action == "create":
                return self._create(entry)
            return self._patch(entry)
        except (AdoAuthError, AdoThrottled, AdoConnectionError) as err:
            raise _Abort(str(err)) from None
        except AdoError as err:
            log.warning("ADO write of %s failed: %s", entry.item_id, err)
            error = str(err)
            if "VS402323" in error:  # the work item type does not exist in the project
                error += (
                    f" (written as the {self.process.name} process's types: check "
                    "AZURE_DEVOPS_PROCESS, or leave it auto to detect the process)"
                )
            return self._result(entry, "failed", error=error)

    # -- create --------------------------------------------------------------------------------
    def _parent_id(self, entry: PlannedItem) -> tuple[int | None, str | None]:
        """The parent's work item id, or why there is none to link to."""
        if entry.parent_item_id:
            ado_id = self.ado_ids.get(entry.parent_item_id)
            if ado_id is None:
                parent = self._by_item.get(entry.parent_item_id)
                why = f"{parent.status}: {parent.error}" if parent and parent.error else "missing"
                return None, f"parent {entry.parent_item_id} was not written ({why})"
            return ado_id, None
        return entry.parent_work_item_id, None

    def _create(self, entry: PlannedItem) -> WriteResult:
        parent_id, problem = self._parent_id(entry)
        if problem:
            return self._result(entry, "failed", error=problem)
        found = find_written(self.client, entry)
        if found is not None:
            return self._result(entry, "existing", ado_id=found, parent_ado_id=parent_id)
        item = entry.item
        ac_field = self.process.ac_field
        fields = {
            ops.TITLE: render.title_text(item.title),
            ops.DESCRIPTION: render.description_html(
                item,
                criteria=() if ac_field else item.acceptance_criteria,
                feature=entry.feature_title,
            ),
            ops.TAGS: ops.tags_value(
                render.tags(
                    [render.PRODUCT_TAG, entry.signature_tag, f"synth-run-{self.run_id}"]
                    + ([f"synth-{entry.tag}"] if entry.tag else [])
                )
            ),
        }
        criteria = render.criteria_html(item.acceptance_criteria)
        if criteria and ac_field:
            fields[ac_field] = criteria
        extra = []
        if entry.decision == "both" and entry.existing_id is not None:
            extra.append(
                ops.relation_op(
                    RELATED_REL,
                    self.client.work_item_url(entry.existing_id),
                    {"comment": f"Backlog Synthesizer: kept both ({item.item_id})"},
                )
            )
        for attempt in range(self.max_retries + 1):
            try:
                created = self.client.create_work_item(
                    _ado_type(entry), fields, parent_id=parent_id, operations=extra
                )
                new_id = int(created["id"])
                rev_after = _rev(created)
                break
            except AdoError as err:
                if not _maybe_applied(err) or attempt == self.max_retries:
                    raise
                self._backoff(attempt, entry, err)
                found = find_written(self.client, entry)
                if found is not None:  # the answer was lost but the create happened
                    new_id, rev_after = found, None
                    break
        return self._result(
            entry,
            "created",
            ado_id=new_id,
            parent_ado_id=parent_id,
            created_ids=[new_id],
            rev_after=rev_after,
        )

    # -- patch ---------------------------------------------------------------------------------
    def _patch(self, entry: PlannedItem) -> WriteResult:
        target = entry.existing_id
        assert target is not None, "a patch always names the existing story"
        marker = entry.patch_tag
        sent: dict[str, Any] | None = None  # ``before`` of a patch that may have been applied
        for attempt in range(self.max_retries + 1):
            try:
                current = self.client.get_work_item(target)
            except AdoNotFound:
                return self._result(
                    entry, "failed", error=f"the existing work item #{target} was not found"
                )
            if _has_tag(current, marker):
                if sent is None:
                    return self._result(entry, "existing", ado_id=target)
                updated = current  # the answer was lost but this write's patch happened
                break
            operations = self.patch_operations(entry, current, marker)
            before = _field_values(current, _patched_fields(operations))
            try:
                updated = self.client.update_work_item(
                    target, operations, expected_rev=int(current["rev"])
                )
                sent = before
                break
            except AdoConflict as err:  # changed since it was read: read it again
                if attempt == self.max_retries:
                    raise
                log.info("work item #%d changed while patching; reading it again (%s)", target, err)
            except AdoError as err:
                if not _maybe_applied(err) or attempt == self.max_retries:
                    raise
                sent = before
                self._backoff(attempt, entry, err)
        assert sent is not None
        return self._result(
            entry,
            "modified",
            ado_id=target,
            modified_ids=[target],
            before=sent,
            after=_field_values(updated, list(sent)),
            rev_after=_rev(updated),
        )

    def patch_operations(
        self, entry: PlannedItem, current: dict[str, Any], marker: str
    ) -> list[dict[str, Any]]:
        """Replace: title, description and criteria. Append: the criteria not there yet, and the
        delta to the description. Where the process has no criteria field (Basic) the criteria
        are part of the description."""
        item = entry.item
        fields = current.get("fields") or {}
        ac_field = self.process.ac_field
        labels = [render.PRODUCT_TAG, marker] + ([f"synth-{entry.tag}"] if entry.tag else [])
        result = []
        if entry.patch_mode == "replace":
            result.append(ops.field_op(ops.TITLE, render.title_text(item.title)))
            description = render.description_html(
                item, criteria=() if ac_field else entry.criteria, feature=entry.feature_title
            )
            result.append(ops.field_op(ops.DESCRIPTION, description))
            if ac_field:
                result.append(ops.field_op(ac_field, render.criteria_html(entry.criteria)))
        else:
            description = str(fields.get(ops.DESCRIPTION) or "")
            existing_ac = str(fields.get(ac_field or ops.DESCRIPTION) or "")
            added = render.new_criteria(existing_ac, entry.criteria)
            delta = render.delta_html(item, entry.tag or "extend")
            if ac_field and added:
                result.append(ops.field_op(ac_field, existing_ac + render.criteria_html(added)))
            elif added:
                delta += render.criteria_section_html(added)
            result.append(ops.field_op(ops.DESCRIPTION, description + delta))
        result.append(ops.add_tags_op(render.tags(labels)))
        return result

    def _backoff(self, attempt: int, entry: PlannedItem, err: AdoError) -> None:
        delay = float(min(16, 2**attempt))
        log.warning(
            "ADO write of %s: %s; looking again and retrying in %.0f s", entry.item_id, err, delay
        )
        self.sleep(delay)


def _ado_type(entry: PlannedItem) -> str:
    assert entry.ado_type is not None, "the plan writes only items its process has a type for"
    return entry.ado_type


def find_written(client: WorkItemWriter, entry: PlannedItem) -> int | None:
    """The work item already holding this item's signature (the oldest, if several)."""
    ids = client.ids_with_tag(entry.signature_tag, [_ado_type(entry)])
    return min(ids) if ids else None


def _patched_fields(operations: list[dict[str, Any]]) -> list[str]:
    """The fields a JSON Patch sets, in order (``/fields/{name}``)."""
    names = [str(op["path"])[len("/fields/") :] for op in operations if _is_field_op(op)]
    return list(dict.fromkeys(names))


def _is_field_op(op: Mapping[str, Any]) -> bool:
    return str(op.get("path", "")).startswith("/fields/") and op.get("op") != "test"


def _field_values(item: Mapping[str, Any] | None, names: list[str]) -> dict[str, Any]:
    fields = (item or {}).get("fields") or {}
    return {name: fields.get(name) for name in names}


def _rev(item: Mapping[str, Any] | None) -> int | None:
    rev = (item or {}).get("rev")
    return int(rev) if rev is not None else None


def _has_tag(item: Mapping[str, Any], tag: str) -> bool:
    return tag.lower() in (t.lower() for t in ops.tags_of(item))


def _maybe_applied(err: AdoError) -> bool:
    """An error after which the write may have happened anyway (answer lost or server error)."""
    return isinstance(err, AdoConnectionError) or err.status in MAYBE_APPLIED


def preview(plan: Plan, client: WorkItemWriter) -> str | None:
    """Dry run against ADO (reads only): marks the items already written (``existing``, with
    their id) and the patches whose target is gone. Returns why it stopped early, if it did."""
    for entry in plan.items:
        if entry.action not in ("create", "patch"):
            continue
        entry.status = "pending"
        try:
            if entry.action == "create":
                entry.ado_id = find_written(client, entry)
                if entry.ado_id is not None:
                    entry.status = "existing"
                continue
            assert entry.existing_id is not None
            try:
                current = client.get_work_item(entry.existing_id)
            except AdoNotFound:
                entry.error = f"the existing work item #{entry.existing_id} was not found"
                continue
            if _has_tag(current, entry.patch_tag):
                entry.status, entry.ado_id = "existing", entry.existing_id
            elif entry.patch_mode == "append":
                criteria_field = plan.process.ac_field or ops.DESCRIPTION
                existing_ac = (current.get("fields") or {}).get(criteria_field)
                entry.criteria = render.new_criteria(existing_ac, entry.criteria)
        except (AdoAuthError, AdoThrottled, AdoConnectionError) as err:
            return str(err)
        except AdoError as err:
            entry.error = str(err)
    return None
