"""Finalize merges two stories of one segment that state the same need, and the merged story keeps
the tag that relates it to the backlog (a correct conflict is never lost to a merge)."""

from __future__ import annotations

from shared import layout
from shared.agents import (
    Agents,
    Candidate,
    EpicDraft,
    FeatureDraft,
    GenerationContext,
    GenerationDraft,
    GenerationResult,
    StoryDraft,
    TagDecision,
    TaggingResult,
)
from shared.models import GeneratedItem, Segment, TaggingRecord, WorkItem
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from shared.writer.retag import retag_run
from tests.support.fakes import ParagraphSegmenter
from tests.support.pipeline import load_backlog, make_pipeline, run_file

MEETING = (
    "We should use the advanced chip.\n"
    "Marketing wants a cheap remote, but we should take the advanced chip too.\n"
)


def chip_story(title: str, criterion: str, quote: str) -> StoryDraft:
    return StoryDraft(
        title=title,
        description=f"As an engineer, I want to {title[0].lower()}{title[1:]}.",
        acceptance_criteria=[criterion],
        feature_key="f1",
        source_quotes=[quote],
    )


class TwoDrafts:
    """One story per sentence, titled by the sentence's chip ("the advanced chip" twice)."""

    version = "gen-two-v1"
    engine = "offline"
    model = None

    def generate(self, segment: Segment, context: GenerationContext) -> GenerationResult:
        first, second = [line for line in segment.raw_text.splitlines() if line]
        return GenerationResult(
            draft=GenerationDraft(
                epics=[EpicDraft(key="e1", title="Chips")],
                features=[FeatureDraft(key="f1", title="Chip choice", epic_key="e1")],
                stories=[
                    chip_story(
                        "Use the advanced chip", "The remote runs on the advanced chip.", first
                    ),
                    chip_story(
                        "Use the advanced chip too",
                        "The advanced chip is taken despite its cost.",
                        second,
                    ),
                ],
            )
        )


class CheapConflicts:
    """``conflict`` with the best candidate when the story's quote speaks of cost, else ``new``."""

    version = "tag-cost-v1"
    engine = "offline"
    model = None

    def tag(self, story: GeneratedItem, candidates: list[Candidate]) -> TaggingResult:
        if "cheap" in story.source_quotes[0].text:
            best = candidates[0]
            return TaggingResult(
                decision=TagDecision(
                    decision_tag="conflict",
                    related_story_ids=[best.work_item_id],
                    reasoning_excerpt="the backlog keeps the basic chip for cost",
                )
            )
        return TaggingResult(decision=TagDecision(decision_tag="new", reasoning_excerpt="none"))


def test_the_same_need_twice_in_one_segment_is_one_story_that_keeps_its_conflict(tmp_path):
    agents = Agents(segmenter=ParagraphSegmenter(), generator=TwoDrafts(), tagger=CheapConflicts())
    svc, bus = make_pipeline(LocalFolderStore(tmp_path / "store"), agents=agents)
    load_backlog(
        svc,
        "remote",
        [
            WorkItem(
                work_item_id=1115,
                work_item_type="User Story",
                title="Use the basic chip",
                description="The remote uses the basic chip to keep the cost down.",
            )
        ],
    )
    run = run_file(svc, bus, "remote", "meeting.txt", MEETING.encode())
    assert run.status == "completed", run.failure_reason
    items = read_jsonl(
        svc.store, layout.run_file(run.run_id, "generated_backlog.jsonl"), GeneratedItem
    )
    stories = [i for i in items if i.type == "User Story"]
    assert len(stories) == 1, [s.title for s in stories]
    (story,) = stories
    assert [q.text for q in story.source_quotes] == [line for line in MEETING.splitlines()]
    assert story.acceptance_criteria == [
        "The remote runs on the advanced chip.",
        "The advanced chip is taken despite its cost.",
    ]
    assert story.assigned_tag == "conflict"
    (record,) = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    assert (record.story_id, record.decision_tag) == (story.item_id, "conflict")
    assert record.related_story_ids == [1115]

    # a retag against the same index tags the merged story the way finalize did: nothing changes
    before = svc.store.get(layout.run_file(run.run_id, "tagging_analysis.jsonl"))
    body = retag_run(svc, run.run_id)
    assert body["changed"] == 0, body["changes"]
    assert svc.store.get(layout.run_file(run.run_id, "tagging_analysis.jsonl")) == before
