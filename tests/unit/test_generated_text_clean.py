"""Generated text is cleaned of transcript markers and fillers in every field, whichever engine wrote
it; quotes keep the transcript's words verbatim (``shared.pipeline.generate.assemble``)."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.agents import (
    EpicDraft,
    FeatureDraft,
    GenerationContext,
    GenerationDraft,
    GenerationResult,
    RetrievedAdoItem,
    StoryDraft,
)
from shared.models import RunStatus, Segment
from shared.pipeline.generate import assemble, tidy
from tests.support.generated_text import MARKER, quotes, unclean

NOW = datetime(2026, 1, 1, tzinfo=UTC)
TRANSCRIPT = (
    "Marketing: So {disfmarker} we need uh a power button at the top . {vocalsound}\n"
    "User Interface: Um should it glow in the dark {disfmarker} ?\n"
    "Project Manager: {vocalsound} {gap}\n"
)
POWER = "we need uh a power button at the top . {vocalsound}"
GLOW = "Um should it glow in the dark {disfmarker} ?"


def segment() -> Segment:
    return Segment(
        run_id="run-1",
        segment_id="seg-0001",
        segment_order=1,
        raw_text=TRANSCRIPT,
        start_char=0,
        end_char=len(TRANSCRIPT),
        token_count=40,
        segmentation_version="test",
        engine="llm",
        timestamp=NOW,
    )


def run() -> RunStatus:
    return RunStatus(
        run_id="run-1",
        project="p",
        source_path="transcripts/p/m.txt",
        source_name="m.txt",
        content_sha256="0" * 64,
        size_bytes=len(TRANSCRIPT),
        status="running",
        phase="generating",
        engine="llm",
        embedding_model="test",
        created_at=NOW,
        updated_at=NOW,
    )


def context() -> GenerationContext:
    existing = RetrievedAdoItem(
        work_item_id=7,
        work_item_type="User Story",
        title="Power button",
        description="",
        acceptance_criteria=[],
        state="New",
        parent_id=None,
        similarity=0.9,
        composite=0.9,
    )
    return GenerationContext(ado_items=[existing])


def draft_with_markers_everywhere() -> GenerationDraft:
    """What a model answering in the transcript's own words could send (it passed validation)."""
    return GenerationDraft(
        epics=[
            EpicDraft(key="e", title="{vocalsound} Um controls", description="uh the {gap} basics")
        ],
        features=[
            FeatureDraft(
                key="f",
                title="Power {disfmarker} button",
                description="Um it it glows",
                epic_key="e",
            )
        ],
        stories=[
            StoryDraft(
                title="Press uh a power button {disfmarker}",
                description="As a viewer, I want uh a power {vocalsound} button at the top.",
                acceptance_criteria=[
                    "The button is uh at the top {disfmarker}",
                    "{vocalsound} {gap}",  # nothing but markers: dropped
                ],
                feature_key="f",
                source_quotes=[POWER],
                open_questions=[GLOW, "{vocalsound} uh ?"],  # the second asks nothing
                constraint_violation=True,
                constraint_notes=["ARC-01: um the {gap} cost"],
                ac_delta=["The button is uh at the top {disfmarker}"],
                extends_work_item_ids=[7],
            )
        ],
        open_questions=["{vocalsound} Um what colour {disfmarker} ?"],
    )


def test_every_generated_field_is_cleaned_and_quotes_stay_verbatim() -> None:
    result = GenerationResult(draft=draft_with_markers_everywhere(), model="gpt-4o")
    items = assemble(
        run(), segment(), result, context(), version="gen-llm-v1", engine="llm", trace_id=None
    )
    records = [i.model_dump(mode="json") for i in items]
    assert unclean(records) == []

    epic, feature, story = items
    assert (epic.title, epic.description) == ("controls", "the basics")
    assert (feature.title, feature.description) == ("Power button", "it glows")
    assert story.title == "Press a power button"
    assert story.description == "As a viewer, I want a power button at the top."
    assert story.acceptance_criteria == ["The button is at the top"]
    assert [d.criterion for d in story.ac_delta_entries] == ["The button is at the top"]
    assert story.constraint_notes == ["ARC-01: the cost"]
    assert [q.question for q in story.open_questions] == ["should it glow in the dark?"]
    assert [q.question for q in feature.open_questions] == ["what colour?"]

    # quotes: the transcript's text at their offsets, markers and fillers included
    for quote in [q for r in records for q in quotes(r)]:
        assert TRANSCRIPT[quote["start"] : quote["end"]] == quote["text"]
    assert story.source_quotes[0].text == POWER
    assert story.open_questions[0].quote is not None
    assert story.open_questions[0].quote.text == GLOW
    assert MARKER.search(POWER) and MARKER.search(GLOW)


def test_a_title_of_markers_alone_is_named_untitled() -> None:
    draft = draft_with_markers_everywhere()
    draft.stories[0].title = "{vocalsound} {disfmarker}"
    items = assemble(
        run(), segment(), GenerationResult(draft=draft), context(), version="v", engine="llm",
        trace_id=None,
    )  # fmt: skip
    assert items[-1].title == "Untitled user story"


def test_tidy_never_falls_back_to_the_markers() -> None:
    assert tidy("{vocalsound} {gap}") == ""
    assert tidy("Uh {disfmarker} ?") == ""  # asks nothing
    assert tidy("T_V_ only {vocalsound}") == "TV only"
    assert tidy("it's very well , it's it's not easy ?") == "it's very well, it's not easy?"


def test_a_letter_spelled_on_its_own_is_the_letter_in_generated_text() -> None:
    """Was: "I want the blue function key at the bottom and F_ eight." (AMI ES2006b)."""
    assert tidy("the blue function key and F_ eight.") == "the blue function key and F eight."
    assert (
        tidy("Version three point O_ has other colours.")
        == "Version three point O has other colours."
    )
    assert tidy("Provide an L_C_D_ display") == "Provide an LCD display"
