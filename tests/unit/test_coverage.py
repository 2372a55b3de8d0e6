"""Coverage (shared.pipeline.finalize.coverage): how many requirement statements some story
quotes, and which ones none does, with where and by whom they were said."""

from __future__ import annotations

from datetime import UTC, datetime

from shared.models import GeneratedItem, Segment, SourceQuote
from shared.pipeline.finalize import coverage

RUN = "run-" + "d" * 20
TRANSCRIPT = (
    "[00:00:05] Ana: We need a power button.\n"
    "[00:00:09] Ben: And it has to be red.\n"
    "[00:00:14] Ana: Next topic.\n"
    "[00:00:20] Ben: The remote must float in water.\n"
)


def span(text: str) -> tuple[int, int]:
    start = TRANSCRIPT.index(text)
    return start, start + len(text)


def segment(n: int, start: int, end: int) -> Segment:
    return Segment(
        run_id=RUN,
        segment_id=f"seg-000{n}",
        segment_order=n,
        raw_text=TRANSCRIPT[start:end],
        start_char=start,
        end_char=end,
        token_count=10,
        segmentation_version="v",
        engine="offline",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_the_requirement_statements_no_story_quotes_are_listed_with_who_and_when() -> None:
    quote = "We need a power button."
    start, end = span(quote)
    story = GeneratedItem(
        run_id=RUN,
        segment_id="seg-0001",
        segment_order=1,
        type="User Story",
        item_id="seg-0001-st01",
        story_id="seg-0001-st01",
        title="Provide a power button",
        source_doc="m.txt",
        source_doc_segment="0-80",
        generation_agent_version="v",
        engine="offline",
        source_quotes=[SourceQuote(text=quote, start=start, end=end)],
    )
    requirement = [
        span(quote),
        span("And it has to be red."),
        span("The remote must float in water."),
    ]
    second = TRANSCRIPT.index("[00:00:14]")
    segments = [segment(1, 0, second), segment(2, second, len(TRANSCRIPT))]
    found = coverage([story], requirement, TRANSCRIPT, segments)
    assert (found.requirement_sentences, found.quoted_sentences) == (3, 1)
    assert found.share == round(1 / 3, 4)
    assert [(u.text, u.segment_id, u.speaker, u.timecode) for u in found.unquoted] == [
        ("And it has to be red.", "seg-0001", "Ben", "00:00:09"),
        ("The remote must float in water.", "seg-0002", "Ben", "00:00:20"),
    ]
    # a statement said twice is listed once; with every statement quoted, none is listed
    assert len(coverage([story], requirement + requirement[1:2], TRANSCRIPT).unquoted) == 2
    assert coverage([story], requirement[:1], TRANSCRIPT).unquoted == []
