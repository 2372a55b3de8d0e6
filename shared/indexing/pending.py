"""Pending stories: stories of a project's completed runs, reviewed but not yet written to Azure
DevOps, kept in the project's index so that later runs are tagged against them too.

A need discussed on Monday and again on Thursday: Monday's run is reviewed but not written yet, so
the index's ADO backlog does not hold it; its stories are in the index as pending stories, and
Thursday's story is tagged ``duplicate`` / ``extend`` (or ``conflict``) of Monday's, naming
Monday's run. When Monday's run is written, its stories leave (the written items enter the index
as ADO items, shared/indexing/writes.py); Thursday's write then acts against the item Monday's
write created or patched (``resolve``), or, while Monday's is still not written, skips a
duplicate and holds the other tags for a decision (shared/review/plan.py).

Which runs (``SYNTH_PENDING_STORIES``): ``reviewed`` (the default): a completed run once its
review is saved (``runs/{run_id}/review.json``: every change on the review page saves it);
``completed``: every completed run, from its finalize on; ``off``: none (and tagging looks at
none). Which stories: the reviewed backlog's user stories (edits applied; merged ones and open
questions are not stories any more) whose write would create or patch something or is held for
a decision (the plan's ``create``, ``patch`` or ``blocked``: not one decided ``skip`` or
``keep_existing``, nor a duplicate the write skips), and that the run's latest write did not
write or skip (a rolled-back item counts as not written).

Records: vector id ``pending-{run_id}-{story_id}``, the story's text embedded as an existing
story's is (title + description + criteria), metadata ``source_type: pending_story``,
``work_item_type: User Story``, ``run_id``, ``story_id``, ``candidate_id`` (the negative id
tagging gives it, see shared.models.PendingRef), ``project``, ``title``, ``description``,
``acceptance_criteria``, ``source_name``, ``text_hash`` and ``embedding_model`` (an unchanged story
is not embedded again). ``refresh`` makes a run's records match what is pending now; it is
idempotent, and called when a review is saved, after a write, a rollback and a retag, and (with
``completed``) at finalize. Retrieval for generation never sees them (its filter is
``source_type: ado_backlog``); tagging asks for them separately (shared/retrieval/search.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shared import layout
from shared.ids import InvalidIdentifier, check_run_id
from shared.indexing.indexer import fetch_records, list_ids
from shared.models import GeneratedItem, PendingRef, RunStatus, TaggingRecord, story_text
from shared.services import Services
from shared.storage import NotFound, read_jsonl, read_model
from shared.vectorstore import VectorRecord

log = logging.getLogger("shared.indexing")

PREFIX = "pending-"
SOURCE_TYPE = "pending_story"
WRITTEN = frozenset({"created", "modified", "existing", "skipped"})
UNDONE = frozenset({"deleted", "reverted", "already_gone", "already_reverted"})
COMPLETED = ("completed", "completed_with_errors")


def vector_id(run_id: str, story_id: str) -> str:
    return f"{PREFIX}{run_id}-{story_id}"


def candidate_id(run_id: str, story_id: str) -> int:
    """The negative id tagging gives a pending story (ADO ids are positive): 28 bits of a hash
    of (run, story), the same every time."""
    digest = hashlib.sha256(f"{run_id}/{story_id}".encode()).hexdigest()
    return -(int(digest[:7], 16) + 1)


def mode(settings: Any) -> str:
    return str(getattr(settings, "pending_stories", "reviewed") or "reviewed")


@dataclass
class PendingUpdate:
    """What ``refresh`` changed for one run: story ids upserted (``embedded``: those embedded),
    kept as they were, removed."""

    run_id: str
    upserted: list[str] = field(default_factory=list)
    embedded: int = 0
    kept: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "upserted": self.upserted,
            "embedded": self.embedded,
            "kept": self.kept,
            "removed": self.removed,
        }


# ------------------------------------------------------------------------------------------------
# what a run has written


def _read_results(svc: Services, path: str) -> list[dict[str, Any]]:
    try:
        text = svc.store.get(path).decode("utf-8")
    except NotFound:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def written(svc: Services, run_id: str) -> dict[str, int | None]:
    """The run's stories its latest write wrote or skipped (story id → the ADO item that holds
    it now: created, found existing, patched, or the existing one a skip names; None when a
    skip names none). Items a rollback of that write undid are not written."""
    results = _read_results(svc, layout.ado_write_results(run_id))
    if not results:
        return {}
    write_id = results[0].get("write_id")
    undone: set[str] = set()
    for path in svc.store.list(layout.rollback_prefix(run_id)):
        for record in _read_results(svc, path):
            if record.get("write_id") == write_id and record.get("status") in UNDONE:
                undone.add(str(record.get("item_id")))
    out: dict[str, int | None] = {}
    for r in results:
        item_id = str(r.get("item_id"))
        if r.get("type") != "User Story" or r.get("status") not in WRITTEN or item_id in undone:
            continue
        target = r.get("ado_id") if r.get("status") != "skipped" else r.get("existing_id")
        out[item_id] = int(target) if target is not None else None
    return out


# ------------------------------------------------------------------------------------------------
# which stories are pending


def _completed(svc: Services, run_id: str) -> RunStatus | None:
    try:
        check_run_id(run_id)
        run = read_model(svc.store, layout.run_json(run_id), RunStatus)
    except (InvalidIdentifier, NotFound):
        return None
    return run if run.status in COMPLETED else None


def pending_stories(svc: Services, run: RunStatus) -> list[GeneratedItem]:
    """The run's pending stories now (module docstring); [] when the setting or the run's
    review says none."""
    from shared.review.edits import apply
    from shared.review.plan import InvalidDecisions, build_plan
    from shared.review.state import check, load_state

    chosen = mode(svc.settings)
    if chosen == "off":
        return []
    state, _ = load_state(svc, run.run_id)
    if chosen == "reviewed" and state.version == 0:
        return []
    try:
        items = read_jsonl(svc.store, layout.generated_backlog(run.run_id), GeneratedItem)
        records = read_jsonl(svc.store, layout.tagging_analysis(run.run_id), TaggingRecord)
    except NotFound:
        return []
    if check(state, items):
        return []  # a saved review that no longer fits is not applied anywhere
    items, records, _ = apply(state, items, records)
    try:
        plan = build_plan(run.run_id, items, records, state.decisions)
    except InvalidDecisions:
        return []
    done = written(svc, run.run_id)
    return [
        entry.item
        for entry in plan.items
        if entry.item.type == "User Story"
        and entry.action in ("create", "patch", "blocked")
        and entry.item_id not in done
    ]


def _metadata(run: RunStatus, story: GeneratedItem, model: str | None) -> dict[str, Any]:
    text = story_text(story.title, story.description, story.acceptance_criteria)
    meta: dict[str, Any] = {
        "source_type": SOURCE_TYPE,
        "work_item_type": "User Story",
        "project": run.project,
        "run_id": run.run_id,
        "story_id": story.item_id,
        "candidate_id": candidate_id(run.run_id, story.item_id),
        "source_name": run.source_name,
        "title": story.title,
        "description": story.description[:2000],
        "acceptance_criteria": story.acceptance_criteria[:20],
        "state": "pending",
        "text_hash": hashlib.sha256(text.encode()).hexdigest(),
    }
    if model:
        meta["embedding_model"] = model
    return meta


def refresh(svc: Services, run_id: str) -> PendingUpdate:
    """Make the run's pending records in its project's index what is pending now: upsert the
    pending stories (embedding only new or changed texts), delete the rest. Idempotent."""
    update = PendingUpdate(run_id)
    run = _completed(svc, run_id)
    if run is None:
        return update  # nothing was ever added for a run that has not completed
    stories = pending_stories(svc, run)
    project = run.project
    index = svc.index
    stored_ids = list_ids(index, project, f"{PREFIX}{run_id}-")
    wanted = {vector_id(run_id, s.item_id): s for s in stories}
    stored = fetch_records(index, project, sorted(set(stored_ids) & set(wanted)))
    model = getattr(svc.embedder, "model_name", None)
    todo: list[tuple[str, GeneratedItem, dict[str, Any]]] = []
    refreshed: list[VectorRecord] = []
    for vid, story in wanted.items():
        meta = _metadata(run, story, model)
        old = stored.get(vid)
        if old is not None and old.metadata.get("text_hash") == meta["text_hash"]:
            if old.metadata.get("embedding_model") == model:
                if old.metadata != meta:
                    refreshed.append(VectorRecord(vid, old.values, meta))
                    update.upserted.append(story.item_id)
                else:
                    update.kept.append(story.item_id)
                continue
        todo.append((vid, story, meta))
    if todo:
        texts = [story_text(s.title, s.description, s.acceptance_criteria) for _, s, _ in todo]
        vectors = svc.embedder.embed(texts)
        refreshed.extend(
            VectorRecord(vid, vec.tolist(), meta)
            for (vid, _, meta), vec in zip(todo, vectors, strict=True)
        )
        update.embedded = len(todo)
        update.upserted.extend(s.item_id for _, s, _ in todo)
    if refreshed:
        index.upsert(project, refreshed)
    gone = sorted(set(stored_ids) - set(wanted))
    if gone:
        index.delete(project, gone)
        update.removed = [v[len(vector_id(run_id, "")) :] for v in gone]
    if update.upserted or update.removed:
        log.info(
            "pending stories of %s in %s: %d upserted, %d removed",
            run_id,
            project,
            len(update.upserted),
            len(update.removed),
        )
    return update


def refresh_quietly(svc: Services, run_id: str) -> dict[str, Any]:
    """``refresh`` for the callers whose own work must not fail with it (a saved review, a
    write): the update, or ``{"run_id", "error"}``."""
    try:
        return refresh(svc, run_id).as_dict()
    except Exception as err:  # noqa: BLE001 - logged and reported; the caller's work stands
        log.warning("pending stories of %s not refreshed: %s", run_id, err)
        return {"run_id": run_id, "error": str(err)}


def project_pending(svc: Services, project: str) -> list[dict[str, Any]]:
    """Every pending story of the project the index holds: run id, story id, title, source."""
    index = svc.index
    ids = list_ids(index, project, PREFIX)
    out = [
        {
            "run_id": rec.metadata.get("run_id"),
            "story_id": rec.metadata.get("story_id"),
            "title": rec.metadata.get("title"),
            "source_name": rec.metadata.get("source_name"),
        }
        for rec in fetch_records(index, project, ids).values()
    ]
    return sorted(out, key=lambda p: (str(p["run_id"]), str(p["story_id"])))


# ------------------------------------------------------------------------------------------------
# tagging's references to pending stories, at write time


def resolve(
    svc: Services, records: Iterable[TaggingRecord]
) -> tuple[list[TaggingRecord], dict[int, PendingRef]]:
    """The records with each pending story that has been written since replaced by the ADO item
    that holds it now (in ``related_story_ids`` and ``similarity_scores``); and the references
    still pending, by candidate id."""
    cache: dict[str, dict[str, int | None]] = {}
    out: list[TaggingRecord] = []
    unresolved: dict[int, PendingRef] = {}
    for record in records:
        if not record.pending_refs:
            out.append(record)
            continue
        mapping: dict[int, int] = {}
        left: list[PendingRef] = []
        for ref in record.pending_refs:
            if ref.run_id not in cache:
                cache[ref.run_id] = written(svc, ref.run_id)
            target = cache[ref.run_id].get(ref.story_id)
            if target is not None:
                mapping[ref.candidate_id] = target
            else:
                left.append(ref)
                unresolved[ref.candidate_id] = ref
        out.append(_renamed(record, mapping, left) if mapping else record)
    return out, unresolved


def _renamed(
    record: TaggingRecord, mapping: Mapping[int, int], left: list[PendingRef]
) -> TaggingRecord:
    related = list(dict.fromkeys(mapping.get(i, i) for i in record.related_story_ids))
    scores = [
        s.model_copy(update={"work_item_id": mapping.get(s.work_item_id, s.work_item_id)})
        for s in record.similarity_scores
    ]
    return record.model_copy(
        update={"related_story_ids": related, "similarity_scores": scores, "pending_refs": left}
    )
