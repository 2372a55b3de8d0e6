"""The write plan (dry run): what writing a completed run would do to Azure DevOps, item by item.

Pure: built from the run's ``generated_backlog.jsonl`` and ``tagging_analysis.jsonl`` and the
reviewer's decisions, with no I/O. Rules:

- stories act per tag with the default decision ``accept``: ``new`` → create; ``extend`` / ``gap``
  → patch the existing story the tagging names (append the new ACs, add the delta to the
  description, add tags); ``duplicate`` → skip; ``conflict`` → blocked until decided; a story
  without a tagging record → blocked (retag the run).
- a story whose tagging ``needs_review`` (low confidence, a contradiction cue, an LLM answer the
  scores contradict) is ``blocked`` and shown as ``needs_decision`` until the reviewer names a
  decision for it (``accept`` included); a conflict needs one of the decisions below.
- decisions per story id: ``skip``; ``keep_existing`` (write nothing); ``replace`` (patch the
  existing story with the generated title, description and ACs); ``both`` (create the story and
  link it to the existing one, ``System.LinkTypes.Related``). The last three need an existing
  story (the tagging's first related id, else the generation's extends / AC-delta target).
- a story whose counterpart is a **pending story** (a story of another run of the project,
  reviewed but not yet written: a negative related id, ``TaggingRecord.pending_refs``; the
  references to stories written since are resolved to their ADO items before planning,
  shared/indexing/pending.resolve) has nothing in ADO to patch or link: a ``duplicate`` is
  skipped (that run's write writes it); ``extend``, ``gap`` and ``conflict`` are blocked until the
  reviewer decides ``accept`` (create it as a new story) or ``skip``, or that run is written and
  this one is planned again. ``keep_existing``, ``replace`` and ``both`` need an ADO item.
- epics and features are created only when some story of the run is created under them (no empty
  containers); an item under an existing work item (``parent_work_item_id``) is linked to it.
- order: epics, then features, then stories, so every parent is written before its children.
- the project's process (shared.ado.process) names the types written (``ado_type``: a story is a
  User Story, a Product Backlog Item, a Requirement or an Issue). Basic has no Feature type:
  there features are skipped and each story goes where its feature would have gone (under the
  generated epic, or the existing work item the feature hangs under), carrying the feature's
  title (``feature_title``). Signatures use the generated backlog's own type names, so they are
  the same whatever the process.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from shared.ado.process import AGILE, Process
from shared.errors import SynthesizerError
from shared.models import GeneratedItem, PendingRef, TaggingRecord
from shared.writer import render

Decision = Literal["accept", "skip", "keep_existing", "replace", "both"]
DECISIONS: tuple[str, ...] = ("accept", "skip", "keep_existing", "replace", "both")
NEEDS_EXISTING = ("keep_existing", "replace", "both")
Action = Literal["create", "patch", "skip", "blocked"]
ACTIONS: tuple[str, ...] = ("create", "patch", "skip", "blocked")
_ORDER = {"Epic": 0, "Feature": 1, "User Story": 2}


class InvalidDecisions(SynthesizerError, ValueError):
    """The decisions name unknown stories or values, or a decision the story cannot take."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid decisions: " + "; ".join(problems))


@dataclass
class PlannedItem:
    item: GeneratedItem
    action: Action
    signature: str
    parent_item_id: str | None = None  # a generated parent (written first)
    parent_work_item_id: int | None = None  # an existing parent
    tag: str | None = None
    decision: str | None = None  # stories only
    existing_id: int | None = None  # the existing story patched, linked, kept or duplicated
    reason: str = ""
    needs_decision: bool = False  # blocked until the reviewer picks an action
    criteria: list[str] = field(default_factory=list)  # what a patch appends
    # who named the decision and when: the saved review's saved_by / saved_at, else the
    # requester of the write and its time (set by shared/writer/runs.py)
    decided_by: str | None = None
    decided_at: datetime | None = None
    ado_type: str | None = None  # the work item type written; None: nothing can be (Basic feature)
    pending: PendingRef | None = None  # the counterpart is another run's story, not yet written
    feature_title: str | None = None  # Basic: the feature a story was generated under
    # filled by a preview or a write
    status: str | None = None
    ado_id: int | None = None
    error: str | None = None

    @property
    def item_id(self) -> str:
        return self.item.item_id

    @property
    def parent_ref(self) -> str | None:
        """The generated parent's item id, ``ado:{id}`` for an existing parent, or None."""
        if self.parent_item_id:
            return self.parent_item_id
        if self.parent_work_item_id is not None:
            return f"ado:{self.parent_work_item_id}"
        return None

    @property
    def signature_tag(self) -> str:
        return render.signature_tag(self.signature)

    @property
    def patch_mode(self) -> str:
        return "replace" if self.decision == "replace" else "append"

    @property
    def patch_tag(self) -> str:
        """The tag marking the existing story as patched with this item (patches only)."""
        assert self.existing_id is not None, "a patch always names the existing story"
        return render.patch_tag(self.patch_mode, self.existing_id, self.signature)

    def view(self) -> dict[str, Any]:
        """One plan entry as the API and the CLI show it (module docstring of shared.writer)."""
        status = self.status
        if status is None:
            status = {"skip": "skipped", "blocked": "blocked"}.get(self.action, "pending")
        return {
            "item_id": self.item_id,
            "type": self.item.type,
            "work_item_type": self.ado_type,
            "title": self.item.title,
            "action": self.action,
            "status": status,
            "tag": self.tag,
            "decision": self.decision,
            "parent_ref": self.parent_ref,
            "existing_id": self.existing_id,
            "ado_id": self.ado_id,
            "criteria": self.criteria,
            "reason": self.reason,
            "needs_decision": self.needs_decision,
            "decided_by": self.decided_by,
            "decided_at": (
                self.decided_at.isoformat().replace("+00:00", "Z") if self.decided_at else None
            ),
            "error": self.error,
            "signature": self.signature,
            "pending": (
                self.pending.model_dump(include={"run_id", "story_id", "title"})
                if self.pending
                else None
            ),
        }


@dataclass
class Plan:
    run_id: str
    items: list[PlannedItem]
    process: Process = AGILE

    def counts(self) -> dict[str, int]:
        counted: Counter[str] = Counter(p.action for p in self.items)
        out = {a: counted.get(a, 0) for a in ACTIONS}
        out["existing"] = sum(1 for p in self.items if p.status == "existing")
        return out

    def view(self) -> list[dict[str, Any]]:
        return [p.view() for p in self.items]


def related_id(story: GeneratedItem, record: TaggingRecord | None) -> int | None:
    """The existing story a tag refers to: the tagging's first related id, else the generation's
    extends / AC-delta target."""
    if record is not None and record.related_story_ids:
        return int(record.related_story_ids[0])
    if story.extends_work_item_ids:
        return int(story.extends_work_item_ids[0])
    for delta in story.ac_delta_entries:
        if delta.work_item_id is not None:
            return int(delta.work_item_id)
    return None


def delta_criteria(story: GeneratedItem, target: int) -> list[str]:
    """What an extend / gap appends: its AC deltas for ``target`` (or unaddressed ones), else all
    of its acceptance criteria; duplicates are dropped again against the live field on write."""
    deltas = [
        d.criterion for d in story.ac_delta_entries if d.work_item_id in (None, target)
    ] or list(story.acceptance_criteria)
    return render.new_criteria("", deltas)


def validate_decisions(
    decisions: Mapping[str, Any] | None,
    stories: Mapping[str, GeneratedItem],
    records: Mapping[str, TaggingRecord],
) -> dict[str, str]:
    if decisions is None:
        return {}
    if not isinstance(decisions, Mapping):
        raise InvalidDecisions(["decisions must be an object {story_id: decision}"])
    problems: list[str] = []
    for story_id, value in decisions.items():
        if not isinstance(story_id, str) or story_id not in stories:
            problems.append(f"{story_id!r} is not a user story of this run")
            continue
        if not isinstance(value, str) or value not in DECISIONS:
            problems.append(f"{story_id}: {value!r} is not one of {', '.join(DECISIONS)}")
            continue
        existing = related_id(stories[story_id], records.get(story_id))
        if value in NEEDS_EXISTING and existing is None:
            problems.append(
                f"{story_id}: {value!r} needs an existing work item, and this story names none"
            )
        elif value in NEEDS_EXISTING and existing is not None and existing < 0:
            ref = pending_ref(records.get(story_id), existing)
            problems.append(
                f"{story_id}: {value!r} needs an existing work item, and its counterpart "
                f"({_pending_name(ref)}) is not yet written"
            )
    if problems:
        raise InvalidDecisions(problems)
    return dict(decisions)


def _generated(ref: str | None, kind: str, by_id: Mapping[str, GeneratedItem]) -> str | None:
    return ref if ref and ref in by_id and by_id[ref].type == kind else None


def _parent(
    item: GeneratedItem, by_id: Mapping[str, GeneratedItem], features: bool = True
) -> tuple[str | None, int | None]:
    """(the generated parent's item id, or the existing parent's work item id); without
    ``features`` (Basic) a story takes its feature's parent."""
    if item.type == "Feature":
        epic = _generated(item.epic_id, "Epic", by_id)
        if epic:
            return epic, None
    elif item.type == "User Story":
        feature = _generated(item.feature_id, "Feature", by_id)
        if feature and features:
            return feature, None
        if feature:
            return _parent(by_id[feature], by_id)
        if item.parent_work_item_id is None and _generated(item.epic_id, "Epic", by_id):
            return item.epic_id, None
    return None, item.parent_work_item_id


def pending_ref(record: TaggingRecord | None, candidate: int) -> PendingRef | None:
    """The pending story a negative related id names."""
    if record is None:
        return None
    return next((r for r in record.pending_refs if r.candidate_id == candidate), None)


def _pending_name(ref: PendingRef | None) -> str:
    return f"story {ref.story_id} of run {ref.run_id}" if ref else "a pending story of another run"


def _pending_action(
    tag: str | None, record: TaggingRecord | None, decision: str, decided: bool, existing: int
) -> tuple[Action, int | None, str]:
    """A story whose counterpart is another run's story, not written yet (module docstring)."""
    name = _pending_name(pending_ref(record, existing))
    if record is not None and record.needs_review and not decided:
        why = "; ".join(record.review_reasons) or "the tagging asks for a review"
        return (
            "blocked",
            None,
            f"needs a decision ({tag} of {name}, not yet written: {why}): "
            + ("pick accept or skip"),
        )
    if decision == "skip":
        return "skip", None, "skipped by the reviewer"
    if tag == "new":
        return "create", None, "new story"
    if tag == "duplicate":
        return "skip", None, f"duplicate of {name}, not yet written: that run's write writes it"
    if decided and decision == "accept":
        return "create", None, f"created as a new story: {name} is not yet written"
    return (
        "blocked",
        None,
        f"{tag} of {name}, not yet written: write that run first and plan this one again (it "
        "then acts on what that run wrote), or decide accept (create it as a new story) or skip",
    )


def _story_action(
    story: GeneratedItem, record: TaggingRecord | None, decision: str, decided: bool = True
) -> tuple[Action, int | None, str]:
    """``decided``: the reviewer named ``decision`` (not the default ``accept``)."""
    tag = record.decision_tag if record is not None else story.assigned_tag
    existing = related_id(story, record)
    if existing is not None and existing < 0:
        return _pending_action(tag, record, decision, decided, existing)
    if record is not None and record.needs_review and not decided:
        why = "; ".join(record.review_reasons) or "the tagging asks for a review"
        options = "accept, skip" + (", keep_existing, replace or both" if existing else "")
        return "blocked", existing, f"needs a decision ({tag}: {why}): pick {options}"
    if decision == "skip":
        return "skip", existing, "skipped by the reviewer"
    if decision == "keep_existing":
        return "skip", existing, f"the existing work item #{existing} is kept as it is"
    if decision == "replace":
        return "patch", existing, f"#{existing} gets the generated title, description and ACs"
    if decision == "both":
        return "create", existing, f"created and linked to #{existing} (Related)"
    note = " (tagging failed: defaulted to new)" if record and record.tagging_failed else ""
    if tag is None:
        return "blocked", None, "the story has no tagging record: retag the run"
    if tag == "new":
        return "create", None, "new story" + note
    if tag in ("extend", "gap"):
        if existing is None:
            return "create", None, f"tagged {tag} without an existing work item: created as new"
        return "patch", existing, f"{tag} of #{existing}: new ACs and the delta are appended"
    if tag == "duplicate":
        return "skip", existing, f"duplicate of #{existing}" if existing else "duplicate"
    return (
        "blocked",
        existing,
        f"conflict with #{existing}: decide keep_existing, replace, both or skip",
    )


def build_plan(
    run_id: str,
    items: list[GeneratedItem],
    records: list[TaggingRecord],
    decisions: Mapping[str, Any] | None = None,
    process: Process = AGILE,
) -> Plan:
    """The plan for the project's ``process`` (module docstring)."""
    features = process.feature_type is not None
    by_id = {i.item_id: i for i in items}
    stories = {i.item_id: i for i in items if i.type == "User Story"}
    tagging = {r.story_id: r for r in records}
    chosen = validate_decisions(decisions, stories, tagging)
    ordered = sorted(items, key=lambda i: _ORDER[i.type])  # stable: run order within a level

    planned: dict[str, PlannedItem] = {}
    for item in ordered:
        parent_item, parent_work_item = _parent(item, by_id, features)
        if parent_item:
            ref = planned[parent_item].signature
        elif parent_work_item is not None:
            ref = f"ado:{parent_work_item}"
        else:
            ref = ""
        sig = render.signature(item.type, item.title, ref, item.acceptance_criteria)
        entry = PlannedItem(
            item=item,
            action="skip",
            signature=sig,
            parent_item_id=parent_item,
            parent_work_item_id=parent_work_item,
            ado_type=process.ado_type(item.type) if features or item.type != "Feature" else None,
        )
        if not features and item.type == "User Story":
            feature = _generated(item.feature_id, "Feature", by_id)
            entry.feature_title = by_id[feature].title if feature else None
        if item.type == "User Story":
            record = tagging.get(item.item_id)
            entry.tag = record.decision_tag if record is not None else item.assigned_tag
            entry.decision = chosen.get(item.item_id, "accept")
            entry.action, entry.existing_id, entry.reason = _story_action(
                item, record, entry.decision, item.item_id in chosen
            )
            related = related_id(item, record)
            if related is not None and related < 0:
                entry.pending = pending_ref(record, related)
            entry.needs_decision = entry.action == "blocked" and record is not None
            if entry.action == "patch" and entry.existing_id is not None:
                entry.criteria = (
                    [render.clean(c) for c in item.acceptance_criteria]
                    if entry.decision == "replace"
                    else delta_criteria(item, entry.existing_id)
                )
        planned[item.item_id] = entry

    # containers: created only when a story of the run is created under them
    needed: set[str] = set()
    for entry in planned.values():
        if entry.item.type == "User Story" and entry.action == "create":
            parent = entry.parent_item_id
            while parent and parent not in needed:
                needed.add(parent)
                parent = planned[parent].parent_item_id
    for entry in planned.values():
        if entry.ado_type is None:
            entry.reason = (
                f"the {process.name} process has no {entry.item.type} type: its stories go "
                "under its parent and name it in their description"
            )
        elif entry.item.type != "User Story":
            if entry.item_id in needed:
                entry.action = "create"
                entry.reason = "new " + entry.item.type.lower()
            else:
                entry.reason = "no story of this run is created under it"
    return Plan(run_id, [planned[i.item_id] for i in ordered], process)
