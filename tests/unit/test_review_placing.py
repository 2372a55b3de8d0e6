"""What the review bundle offers for a sentence no story quoted (shared/api/bundle.py): the
offline drafter's story of it, and the story that quotes what was said nearest to it."""

from __future__ import annotations

from shared.api.bundle import draft_of, nearest_story
from shared.models import GeneratedItem, SourceQuote
from tests.support.backlog_items import lone_story


def story(item_id: str, segment_id: str, *spans: tuple[int, int]) -> GeneratedItem:
    """A story of ``segment_id`` quoting these spans of the transcript."""
    quotes = [SourceQuote(text="x" * (b - a), start=a, end=b) for a, b in spans]
    return lone_story("Provide a power button", "", item_id=item_id).model_copy(
        update={"segment_id": segment_id, "source_quotes": quotes}
    )


def test_the_nearest_story_is_looked_for_in_the_sentences_segment_first() -> None:
    near_other = story("seg-0002-st01", "seg-0002", (110, 120))
    far_same = story("seg-0001-st01", "seg-0001", (10, 20))
    nearer_same = story("seg-0001-st02", "seg-0001", (40, 50), (300, 310))
    sentence = {"start": 100, "end": 105, "segment_id": "seg-0001"}
    assert nearest_story(sentence, [near_other, far_same, nearer_same]) == "seg-0001-st02"
    assert nearest_story({**sentence, "segment_id": "seg-0002"}, [far_same, near_other]) == (
        "seg-0002-st01"
    )
    assert nearest_story(sentence, []) is None


def test_a_sentence_is_drafted_only_into_a_story_the_generator_would_keep() -> None:
    draft = draft_of("The manager must approve every claim over 50 pounds.", "user")
    assert draft == {
        "title": "Approve every claim",
        "description": "As a manager, I want to approve every claim over 50 pounds.",
        "acceptance_criteria": ["The manager approves every claim over 50 pounds."],
    }
    persona = draft_of("We need a reminder before the licence expires.", "clinic admin")
    assert persona is not None and persona["description"].startswith("As a clinic admin,")
    assert draft_of("Cheap .", "user") is None  # "Provide a cheap": no story
    assert draft_of("And well , what about the idea of automatic on off , yeah .", "user") is None
