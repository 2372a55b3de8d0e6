"""A saved review applied to the run's backlog and tagging (the rules: ``shared.review.state``).

``apply(state, items, records)`` is pure: edits, moves, open questions, merges and splits give a
new backlog and tagging, and ``Applied`` says what changed (for the review page and the export).
The state must have been checked against the run first (``shared.review.state.check``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from shared.models import (
    AcDelta,
    GeneratedItem,
    OpenQuestion,
    SourceQuote,
    TaggingRecord,
    UnquotedStatement,
)
from shared.review.state import (
    ADDED_REASON,
    SPLIT_REASON,
    QuoteSpan,
    ReviewState,
    StoryEdit,
    ac_key,
)

ADDED_VERSION = "review"  # generation_agent_version of a story the reviewer wrote


@dataclass
class OpenQuestionStory:
    """A story the reviewer made an open question of its feature (not written)."""

    story_id: str
    title: str
    feature_id: str | None
    item: GeneratedItem

    def view(self) -> dict[str, Any]:
        return {"story_id": self.story_id, "title": self.title, "feature_id": self.feature_id}


@dataclass
class Applied:
    """What ``apply`` changed, for the page and the export."""

    edited_ids: list[str] = field(default_factory=list)  # items whose content differs now
    # the run's own title, description and criteria of each edited item that was in the run
    originals: dict[str, dict[str, Any]] = field(default_factory=dict)
    open_questions: list[OpenQuestionStory] = field(default_factory=list)
    merged: dict[str, str] = field(default_factory=dict)  # story -> the story it joined
    split: dict[str, str] = field(default_factory=dict)  # new story -> its source
    added: dict[str, str] = field(default_factory=dict)  # story written in the review -> feature

    def merged_from(self, story_id: str) -> list[str]:
        return [s for s, t in self.merged.items() if t == story_id]


def _text_key(text: str) -> str:
    return " ".join(text.split())


def _rebased_deltas(original: GeneratedItem, criteria: list[str]) -> list[AcDelta]:
    """An extend / gap story's deltas after its criteria changed: every criterion that the
    generation did not find in the existing story already (its original non-delta criteria).
    A story without deltas keeps none: the plan then appends all its criteria."""
    if not original.ac_delta_entries:
        return []
    deltas = {ac_key(d.criterion) for d in original.ac_delta_entries}
    covered = {ac_key(c) for c in original.acceptance_criteria} - deltas
    target = next(
        (d.work_item_id for d in original.ac_delta_entries if d.work_item_id is not None), None
    )
    return [AcDelta(criterion=c, work_item_id=target) for c in criteria if ac_key(c) not in covered]


def _own_edit(
    item: GeneratedItem, edit: StoryEdit, features: Mapping[str, GeneratedItem]
) -> GeneratedItem:
    update: dict[str, Any] = {}
    if edit.title is not None:
        update["title"] = edit.title
    if edit.description is not None:
        update["description"] = edit.description
    if edit.acceptance_criteria is not None:
        update["acceptance_criteria"] = list(edit.acceptance_criteria)
    if edit.feature_id is not None and edit.feature_id != item.feature_id:
        feature = features[edit.feature_id]
        update.update(feature_id=feature.item_id, epic_id=feature.epic_id, parent_work_item_id=None)
    return item.model_copy(update=update, deep=True) if update else item


def _unite_quotes(mine: list[SourceQuote], theirs: list[SourceQuote]) -> list[SourceQuote]:
    seen = {_text_key(q.text) for q in mine}
    out = list(mine)
    for quote in theirs:
        if _text_key(quote.text) not in seen:
            seen.add(_text_key(quote.text))
            out.append(quote)
    return sorted(out, key=lambda q: (q.start, q.end))


def _unite_criteria(mine: list[str], theirs: list[str]) -> list[str]:
    seen = {ac_key(c) for c in mine}
    out = list(mine)
    for criterion in theirs:
        if ac_key(criterion) not in seen:
            seen.add(ac_key(criterion))
            out.append(criterion)
    return out


def _unite_questions(mine: list[OpenQuestion], theirs: list[OpenQuestion]) -> list[OpenQuestion]:
    seen = {_text_key(q.question).lower() for q in mine}
    out = list(mine)
    for question in theirs:
        if _text_key(question.question).lower() not in seen:
            seen.add(_text_key(question.question).lower())
            out.append(question)
    return out


def _quotes_of(
    spans: Sequence[QuoteSpan], said: Mapping[tuple[int, int], UnquotedStatement]
) -> list[SourceQuote]:
    """The sentences ``spans`` name, as quotes with their speaker and timecode."""
    found = [said[(span.start, span.end)] for span in spans]
    return [
        SourceQuote(text=u.text, start=u.start, end=u.end, speaker=u.speaker, timecode=u.timecode)
        for u in found
    ]


def _added_story(
    story_id: str, edit: StoryEdit, feature: GeneratedItem, quotes: list[SourceQuote]
) -> GeneratedItem:
    """A story the reviewer wrote under a generated feature from sentences no story quoted."""
    return GeneratedItem(
        run_id=feature.run_id,
        segment_id=feature.segment_id,
        segment_order=feature.segment_order,
        type="User Story",
        item_id=story_id,
        epic_id=feature.epic_id,
        feature_id=feature.item_id,
        story_id=story_id,
        title=edit.title or "",
        description=edit.description or "",
        acceptance_criteria=list(edit.acceptance_criteria or []),
        assigned_tag="new",
        source_doc=feature.source_doc,
        source_doc_segment=feature.source_doc_segment,
        source_quotes=sorted(quotes, key=lambda q: (q.start, q.end)),
        generation_agent_version=ADDED_VERSION,
        engine=feature.engine,
    )


def _added_record(item: GeneratedItem, when: datetime | None) -> TaggingRecord:
    """Its tagging: new, held for a decision (it was not compared with the backlog)."""
    return TaggingRecord(
        run_id=item.run_id,
        segment_id=item.segment_id,
        story_id=item.item_id,
        decision_tag="new",
        needs_review=True,
        review_reasons=[ADDED_REASON],
        tagging_agent_version=ADDED_VERSION,
        engine=item.engine,
        timestamp=when or datetime.fromtimestamp(0, UTC),
    )


def apply(
    state: ReviewState,
    items: list[GeneratedItem],
    records: list[TaggingRecord],
    unquoted: Sequence[UnquotedStatement] = (),
) -> tuple[list[GeneratedItem], list[TaggingRecord], Applied]:
    """The run's backlog and tagging with ``state`` applied (``check(state, items, unquoted)``
    must be empty; ``unquoted``: the run's sentences no story quotes, which added quotes name).
    Pure: the inputs are not changed. An empty state returns equal lists."""
    applied = Applied()
    said = {(u.start, u.end): u for u in unquoted}
    originals = {i.item_id: i for i in items}
    features = {i.item_id: i for i in items if i.type == "Feature"}
    tagging = {r.story_id: r for r in records}

    # 1. titles and the stories' own edits
    current: dict[str, GeneratedItem] = {}
    for item in items:
        if item.type == "Epic" and item.item_id in state.epics:
            item = item.model_copy(update={"title": state.epics[item.item_id].title})
        elif item.type == "Feature" and item.item_id in state.features:
            item = item.model_copy(update={"title": state.features[item.item_id].title})
        elif item.type == "User Story" and item.item_id in state.stories:
            edit = state.stories[item.item_id]
            item = _own_edit(item, edit, features)
            if edit.added_quotes:  # sentences no story quoted join it
                item = item.model_copy(
                    update={
                        "source_quotes": _unite_quotes(
                            item.source_quotes, _quotes_of(edit.added_quotes, said)
                        )
                    },
                    deep=True,
                )
        current[item.item_id] = item

    # 2. splits: the new story right after its source, the moved quotes leave the source
    children: dict[str, list[str]] = {}
    for story_id, edit in sorted(state.stories.items()):
        if edit.split_from is not None:
            children.setdefault(edit.split_from, []).append(story_id)
            applied.split[story_id] = edit.split_from
    new_records: dict[str, TaggingRecord] = {}
    order: list[str] = []
    for item_id in list(current):
        order.append(item_id)
        for child_id in children.get(item_id, []):
            edit = state.stories[child_id]
            source = current[item_id]
            indexes = set(edit.quotes or [])
            moved = [q for n, q in enumerate(originals[item_id].source_quotes) if n in indexes]
            current[item_id] = source = source.model_copy(
                update={
                    "source_quotes": [q for q in source.source_quotes if q not in moved],
                }
            )
            child = source.model_copy(
                update={
                    "item_id": child_id,
                    "story_id": child_id,
                    "title": edit.title,
                    "acceptance_criteria": list(edit.acceptance_criteria or []),
                    "source_quotes": moved,
                    "superseded_quotes": [],
                    "open_questions": [],
                    "merged_story_ids": [],
                    "merged_feature_ids": [],
                },
                deep=True,
            )
            if edit.description is not None:
                child = child.model_copy(update={"description": edit.description})
            if edit.feature_id is not None:
                child = _own_edit(child, StoryEdit(feature_id=edit.feature_id), features)
            child = child.model_copy(
                update={
                    "ac_delta_entries": _rebased_deltas(
                        originals[item_id], child.acceptance_criteria
                    )
                }
            )
            current[child_id] = child
            order.append(child_id)
            record = tagging.get(item_id)
            if record is not None:
                new_records[child_id] = record.model_copy(
                    update={
                        "story_id": child_id,
                        "needs_review": True,
                        "review_reasons": [
                            *record.review_reasons,
                            SPLIT_REASON.format(source=item_id),
                        ],
                    },
                    deep=True,
                )

    # 2b. stories written in the review: after the last story of their feature
    for story_id, edit in sorted(state.stories.items()):
        if edit.split_from is not None or story_id in originals or not edit.feature_id:
            continue
        feature = current[edit.feature_id]
        child = _added_story(story_id, edit, feature, _quotes_of(edit.added_quotes or [], said))
        current[story_id] = child
        siblings = [n for n, i in enumerate(order) if current[i].feature_id == feature.item_id]
        order.insert((siblings[-1] if siblings else order.index(feature.item_id)) + 1, story_id)
        new_records[story_id] = _added_record(child, state.saved_at)
        applied.added[story_id] = feature.item_id

    # 3. merges: quotes, criteria and open questions join the target
    for story_id, edit in sorted(state.stories.items()):
        if edit.merged_into is None:
            continue
        gone = current.pop(story_id)
        target_id = edit.merged_into
        target = current[target_id]
        target_edit = state.stories.get(target_id)
        criteria = target.acceptance_criteria
        if target_edit is None or target_edit.acceptance_criteria is None:
            criteria = _unite_criteria(criteria, gone.acceptance_criteria)
        merged_features = list(target.merged_feature_ids)
        for feature_id in [gone.feature_id, *gone.merged_feature_ids]:
            if feature_id and feature_id != target.feature_id and feature_id not in merged_features:
                merged_features.append(feature_id)
        current[target_id] = target.model_copy(
            update={
                "source_quotes": _unite_quotes(target.source_quotes, gone.source_quotes),
                "superseded_quotes": _unite_quotes(
                    target.superseded_quotes, gone.superseded_quotes
                ),
                "open_questions": _unite_questions(target.open_questions, gone.open_questions),
                "acceptance_criteria": criteria,
                "merged_story_ids": list(
                    dict.fromkeys([*target.merged_story_ids, story_id, *gone.merged_story_ids])
                ),
                "merged_feature_ids": merged_features,
            },
            deep=True,
        )
        applied.merged[story_id] = target_id

    # 4. open questions leave the backlog
    for story_id in order:
        asked = state.stories.get(story_id)
        if asked is not None and asked.open_question and story_id in current:
            item = current.pop(story_id)
            applied.open_questions.append(
                OpenQuestionStory(story_id, item.title, item.feature_id, item)
            )

    # 5. no stale deltas: criteria that changed decide what a patch appends
    for item_id, item in current.items():
        original = originals.get(item_id)
        if (
            original is not None
            and item.type == "User Story"
            and item.acceptance_criteria != original.acceptance_criteria
        ):
            current[item_id] = item.model_copy(
                update={"ac_delta_entries": _rebased_deltas(original, item.acceptance_criteria)}
            )

    out_items = [current[i] for i in order if i in current]
    out_records: list[TaggingRecord] = []
    for record in records:
        if record.story_id in current:
            out_records.append(record)
        for child_id in children.get(record.story_id, []):
            if child_id in new_records and child_id in current:
                out_records.append(new_records[child_id])
    out_records.extend(r for i, r in new_records.items() if i in applied.added and i in current)

    for item in out_items:
        original = originals.get(item.item_id)
        if original is None:
            applied.edited_ids.append(item.item_id)
        elif item != original:
            applied.edited_ids.append(item.item_id)
            applied.originals[item.item_id] = {
                "title": original.title,
                "description": original.description,
                "acceptance_criteria": list(original.acceptance_criteria),
            }
    for question in applied.open_questions:
        if question.story_id not in originals:  # a split story made an open question at once
            continue
        original = originals[question.story_id]
        applied.originals[question.story_id] = {
            "title": original.title,
            "description": original.description,
            "acceptance_criteria": list(original.acceptance_criteria),
        }
    return out_items, out_records, applied
