"""One need, one story per run (shared.pipeline.consolidate): which stories merge and which
tagging record the merged story keeps."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest

from shared.models import GeneratedItem, OpenQuestion, SourceQuote, Tag, TaggingRecord
from shared.pipeline.consolidate import carry_tags, merge_duplicates

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RUN = "run-" + "c" * 20


def story(segment: str, n: int, title: str, quote: str, start: int) -> GeneratedItem:
    sid = f"{segment}-st{n:02d}"
    return GeneratedItem(
        run_id=RUN,
        segment_id=segment,
        segment_order=int(segment[-1]),
        type="User Story",
        item_id=sid,
        story_id=sid,
        title=title,
        acceptance_criteria=[f"{quote}."],
        source_doc="m.txt",
        source_doc_segment="0-100",
        generation_agent_version="v",
        engine="offline",
        source_quotes=[SourceQuote(text=quote, start=start, end=start + len(quote))],
    )


def quoting(item: GeneratedItem, text: str, start: int) -> GeneratedItem:
    """``item`` quoting ``text`` (at ``start``) too, after its own quotes."""
    quote = SourceQuote(text=text, start=start, end=start + len(text))
    return item.model_copy(update={"source_quotes": [*item.source_quotes, quote]})


def record(item: GeneratedItem, tag: Tag, similarity: float, related: list[int]) -> TaggingRecord:
    return TaggingRecord(
        run_id=RUN,
        segment_id=item.segment_id,
        story_id=item.item_id,
        decision_tag=tag,
        max_similarity=similarity,
        related_story_ids=related,
        tagging_agent_version="v",
        engine="offline",
        timestamp=NOW,
    )


def alike(texts: Sequence[str]) -> np.ndarray:
    """Every text the same vector: only the rules under test keep stories apart."""
    return np.ones((len(texts), 4)) / 2.0


def test_two_stories_of_one_segment_with_the_same_words_are_one():
    first = story("seg-0001", 1, "Provide a screen with a back light", "A screen with light", 0)
    second = story("seg-0001", 2, "Provide screen with a back light", "Backlit, yes", 40)
    merged = merge_duplicates([first, second], alike, 0.9)
    assert [s.item_id for s in merged] == [first.item_id]
    assert [q.text for q in merged[0].source_quotes] == ["A screen with light", "Backlit, yes"]
    assert merged[0].merged_story_ids == [second.item_id]


def test_two_needs_of_one_segment_stay_apart_however_alike():
    # the grouping kept them apart: self sign-up and a coordinator signing someone up
    mine = story("seg-0001", 1, "Sign themselves up for shifts", "Volunteers sign up", 0)
    theirs = story("seg-0001", 2, "Sign someone up for a shift", "I put people on shifts", 40)
    merged = merge_duplicates([mine, theirs], alike, 0.5)
    assert [s.item_id for s in merged] == [mine.item_id, theirs.item_id]


def test_stories_of_two_segments_merge_by_similarity():
    mine = story("seg-0001", 1, "Sign themselves up for shifts", "Volunteers sign up", 0)
    again = story("seg-0002", 1, "Sign up for a shift", "They sign up themselves", 90)
    merged = merge_duplicates([mine, again], alike, 0.5)
    assert [s.item_id for s in merged] == [mine.item_id]


def test_a_revised_figure_is_in_no_criterion_of_the_merged_story() -> None:
    # "twenty-four hours" in one segment, "forty-eight" in a later one that also recaps the
    # old figure ("we said text, twenty-four hours before"): the recap stays a quote, its
    # figure in no criterion of the story
    old = story("seg-0001", 1, "Send reminders", "Reminders go out twenty-four hours before", 0)
    new = story("seg-0002", 1, "Send reminder texts", "Texts go out forty-eight hours before", 90)
    recap = "We said text, twenty-four hours before"
    new = new.model_copy(
        update={
            "source_quotes": [
                *new.source_quotes,
                SourceQuote(text=recap, start=140, end=140 + len(recap)),
            ],
            "acceptance_criteria": [*new.acceptance_criteria, f"{recap}."],
        }
    )
    (merged,) = merge_duplicates([old, new], alike, 0.5)
    assert [q.text for q in merged.superseded_quotes] == [old.source_quotes[0].text]
    assert recap in [q.text for q in merged.source_quotes]
    assert merged.acceptance_criteria == ["Texts go out forty-eight hours before."]


def test_a_figure_set_anew_in_a_later_segment_revises_the_story_and_keeps_the_rest() -> None:
    # "twelve pounds for up to three sandwiches" in one segment; "let's make it up to five
    # sandwiches" and its recap in a later one: one story, with five, the three-sandwich quote
    # superseded, and what the earlier story said besides (drinks cost extra) kept
    first = "Okay, twelve pounds for up to three sandwiches per order."
    drinks = "Hot drinks cost an extra two pounds each."
    old = story("seg-0003", 2, "Provide twelve pounds for three sandwiches", first, 0)
    old = quoting(old, drinks, 60).model_copy(
        update={"acceptance_criteria": ["Hot drinks cost an extra two pounds."]}
    )
    recap = "Okay, so platter orders are up to five sandwiches for twelve pounds."
    decided = "So let's make it up to five sandwiches."
    new = quoting(story("seg-0007", 2, "Limit platter orders", recap, 400), decided, 350)
    (merged,) = merge_duplicates([old, new], apart, 0.9)
    assert merged.item_id == old.item_id and merged.title == "Limit platter orders"
    assert [q.text for q in merged.superseded_quotes] == [old.source_quotes[0].text]
    assert old.source_quotes[1] in merged.source_quotes and decided in [
        q.text for q in merged.source_quotes
    ]
    assert "Hot drinks cost an extra two pounds." in merged.acceptance_criteria
    assert any("revised during the meeting" in w for w in merged.warnings)
    # the same figures said, no word that sets one anew: two rules, two stories
    said = new.model_copy(update={"source_quotes": new.source_quotes[:1]})
    assert len(merge_duplicates([old, said], apart, 0.9)) == 2


def test_a_figure_set_anew_for_a_case_in_a_later_segment_joins_the_need_it_sets() -> None:
    # "Loans last fourteen days, then a reminder." ... (a later segment) "Okay, let's change it
    # to twenty-one days for students." "Staff I'd keep at fourteen.": no story "Change it to
    # twenty-one days for students"; the loans story quotes it, keeps its criteria, and warns
    loans = story("seg-0002", 1, "Lend books", "Loans last fourteen days, then a reminder.", 0)
    other = story("seg-0003", 1, "Send overdue letters", "Overdue letters go out weekly.", 50)
    change = "Okay, let's change it to twenty-one days for students."
    kept = "Staff I'd keep at fourteen."
    later = story("seg-0008", 2, "Change it to twenty-one days for students", change, 400)
    later = quoting(later, kept, 460)
    merged = merge_duplicates([loans, other, later], apart, 0.9)
    assert [s.item_id for s in merged] == [loans.item_id, other.item_id]
    assert [q.text for q in merged[0].source_quotes] == [loans.source_quotes[0].text, change, kept]
    assert merged[0].acceptance_criteria[0] == loans.acceptance_criteria[0]
    assert any("revised during the meeting" in w for w in merged[0].warnings)
    # the old figure not said again: nothing says which need "it" is
    alone = later.model_copy(update={"source_quotes": later.source_quotes[:1]})
    assert len(merge_duplicates([loans, other, alone], apart, 0.9)) == 3


def apart(texts: Sequence[str]) -> np.ndarray:
    """Every text its own direction: no similarity joins any two stories."""
    return np.eye(len(texts), max(len(texts), 4))


def test_stories_of_two_segments_with_the_same_title_words_are_one() -> None:
    # "work" is no topic word, so the fingerprint is one word; the quotes differ: one title twice
    first = story("seg-0003", 4, "Work on all televisions", "It has to work on all TVs", 0)
    again = story("seg-0009", 3, "Work on all televisions", "'cause it has to work on all", 90)
    other = story("seg-0009", 4, "Work on the newer televisions", "Newer ones", 140)
    merged = merge_duplicates([first, again, other], apart, 0.9)
    assert [s.item_id for s in merged] == [first.item_id, other.item_id]
    assert [q.text for q in merged[0].source_quotes] == [
        first.source_quotes[0].text,
        again.source_quotes[0].text,
    ]


def test_the_merged_story_keeps_the_record_that_relates_it_to_the_backlog():
    first = story("seg-0001", 1, "Provide the advanced chip", "The advanced chip", 0)
    second = story("seg-0001", 2, "Provide the advanced chip too", "Advanced chip too", 40)
    (merged,) = merge_duplicates([first, second], alike, 0.9)
    tags = {
        first.item_id: record(first, "new", 0.41, []),
        second.item_id: record(second, "conflict", 0.66, [1115]),
    }
    carried = carry_tags([merged], tags)
    kept = carried[merged.item_id]
    assert (kept.decision_tag, kept.related_story_ids) == ("conflict", [1115])
    assert (kept.story_id, kept.segment_id) == (merged.item_id, merged.segment_id)


def test_a_conflict_outranks_a_closer_extend_and_a_story_alone_keeps_its_own():
    first = story("seg-0001", 1, "Show the bin days", "Show bin days", 0)
    second = story("seg-0002", 1, "Show the bin days", "Bin days shown", 90)
    alone = story("seg-0002", 2, "Pay for a bulky item", "Pay online", 120)
    merged = merge_duplicates([first, second, alone], alike, 0.99)
    assert [s.item_id for s in merged] == [first.item_id, alone.item_id]
    tags = {
        first.item_id: record(first, "extend", 0.9, [7]),
        second.item_id: record(second, "conflict", 0.7, [8]),
        alone.item_id: record(alone, "new", 0.2, []),
    }
    carried = carry_tags(merged, tags)
    assert carried[first.item_id].related_story_ids == [8]
    assert carried[alone.item_id] == tags[alone.item_id]


def test_a_merged_story_with_criteria_drops_the_no_criteria_warning():
    from shared.pipeline.generate import NO_CRITERIA_WARNING

    first = story("seg-0001", 1, "Provide the advanced chip", "The advanced chip", 0)
    bare = story("seg-0001", 2, "Provide the advanced chip too", "Advanced chip too", 40)
    bare = bare.model_copy(update={"acceptance_criteria": [], "warnings": [NO_CRITERIA_WARNING]})
    (merged,) = merge_duplicates([first, bare], alike, 0.9)
    assert merged.acceptance_criteria == ["The advanced chip."]
    assert NO_CRITERIA_WARNING not in merged.warnings
    both_bare = first.model_copy(
        update={"acceptance_criteria": [], "warnings": [NO_CRITERIA_WARNING]}
    )
    (merged,) = merge_duplicates([both_bare, bare], alike, 0.9)
    assert merged.warnings == [NO_CRITERIA_WARNING]


def feature(
    segment: str, description: str, title: str = "Screen", epic: str | None = None
) -> GeneratedItem:
    return GeneratedItem(
        run_id=RUN,
        segment_id=segment,
        segment_order=int(segment[-1]),
        type="Feature",
        item_id=f"{segment}-F1",
        feature_id=f"{segment}-F1",
        epic_id=epic,
        title=title,
        description=description,
        source_doc="m.txt",
        source_doc_segment="0-100",
        generation_agent_version="v",
        engine="offline",
    )


def test_a_feature_covers_the_stories_it_has_after_the_merge() -> None:
    # "Covers: ...; Provide screen with a back light." named a story merged away
    screen = feature(
        "seg-0001",
        "Covers: Provide a screen with a back light; Provide screen with "
        "a back light; Provide a clock.",
    )
    first = story("seg-0001", 1, "Provide a screen with a back light", "A screen with light", 0)
    second = story("seg-0001", 2, "Provide screen with a back light", "Backlit, yes", 40)
    clock = story("seg-0001", 3, "Provide a clock", "And a clock", 80)
    for s in (first, second, clock):
        s.feature_id = screen.item_id
    own = feature("seg-0002", "What the display shows.", "Display")  # the LLM engine's words
    other = story("seg-0002", 1, "Show the channel", "It shows the channel", 120)
    other.feature_id = own.item_id
    merged = merge_duplicates([screen, first, second, clock, own, other], alike, 0.99)
    features = {i.item_id: i.description for i in merged if i.type == "Feature"}
    assert features == {
        screen.item_id: "Covers: Provide a screen with a back light; Provide a clock.",
        own.item_id: "What the display shows.",
    }


def test_features_of_one_epic_with_the_same_title_are_one() -> None:
    # two segments about the channel gave two features "Channel" under one epic
    first = feature("seg-0001", "Covers: Show the channel.", "Channel", epic="ep-1")
    second = feature("seg-0002", "Covers: Go to channel twenty five.", "channel", epic="ep-1")
    second.open_questions = [OpenQuestion(question="How many channels?")]
    elsewhere = feature("seg-0003", "Covers: List the channels.", "Channel", epic="ep-2")
    show = story("seg-0001", 1, "Show the channel", "It shows the channel", 0)
    go = story("seg-0002", 1, "Go to channel twenty five", "I want to go to twenty five", 40)
    listing = story("seg-0003", 1, "List the channels", "A list of the channels", 80)
    for s, f in ((show, first), (go, second), (listing, elsewhere)):
        s.feature_id = f.item_id
    merged = merge_duplicates([first, second, elsewhere, show, go, listing], apart, 0.9)
    features = {i.item_id: i for i in merged if i.type == "Feature"}
    assert list(features) == [first.item_id, elsewhere.item_id]  # another epic's stays
    kept = features[first.item_id]
    assert kept.merged_feature_ids == [second.item_id]
    assert [q.question for q in kept.open_questions] == ["How many channels?"]
    assert kept.description == "Covers: Show the channel; Go to channel twenty five."
    by_story = {s.item_id: s.feature_id for s in merged if s.type == "User Story"}
    assert by_story == {
        show.item_id: first.item_id,
        go.item_id: first.item_id,
        listing.item_id: elsewhere.item_id,
    }


def test_titles_whose_words_differ_only_in_their_endings_are_one_need() -> None:
    # the demo: "Provide some speech recognition" and, three segments on, "Provide speech
    # recogniser"; MiniLM puts them at 0.77, under the merge threshold
    first = story("seg-0001", 1, "Provide some speech recognition", "some speech recognition", 0)
    later = story("seg-0004", 1, "Provide speech recogniser", "speech recogniser", 90)
    other = story("seg-0005", 1, "Provide speech output", "and speech output", 150)
    merged = merge_duplicates([first, later, other], apart, 0.9)
    assert [s.item_id for s in merged] == [first.item_id, other.item_id]
    assert merged[0].merged_story_ids == [later.item_id]


# --- recaps: a story written from a recap joins the need it restates -----------------------

RECAP_MEETING = (
    "Ana: Drivers must be able to photograph a damaged bin from the cab.\n"  # 0
    "Ben: And the depot should see every missed collection on a map.\n"
    "Ana: Right, let me quickly recap where we landed.\n"
    "Ben: Sure.\n"
    "Ana: Bin photos from the cab, missed collections on a map for the depot.\n"
    "Ana: And the crews keep paper sheets as a backup.\n"
    "Cy: Before we finish, I still think the residents want a text when a collection is missed.\n"
    "Ana: Okay, actions next.\n"
)


def at(text: str) -> int:
    return RECAP_MEETING.index(text)


def said(segment: str, n: int, title: str, text: str) -> GeneratedItem:
    return story(segment, n, title, text, at(text))


def titles_near(pairs: dict[str, tuple[float, float]]):
    """An embedder that puts the given titles at the given 2-d directions and every other text
    (main texts, other titles) on an axis of its own, so only titles can be alike."""
    others: dict[str, int] = {}

    def run(texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 40))
        for n, text in enumerate(texts):
            if text in pairs:
                out[n, :2] = pairs[text]
            else:
                out[n, 2 + others.setdefault(text, len(others))] = 1.0
        return out

    return run


def test_the_recap_runs_from_its_announcement_over_the_short_asides_to_a_longer_line():
    from shared.pipeline.consolidate import recap_spans

    ((start, end),) = recap_spans(RECAP_MEETING)
    assert RECAP_MEETING[start:].startswith("let me quickly recap where we landed")
    assert RECAP_MEETING[start:end].endswith("And the crews keep paper sheets as a backup.")


def test_the_actions_end_a_recap_and_a_summary_to_write_is_none():
    from shared.pipeline.consolidate import recap_spans

    text = "Li: To sum up, reminders by text.\nLi: Actions: Bo writes the spec.\nLi: Texts too.\n"
    ((start, end),) = recap_spans(text)
    assert text[start:end] == "To sum up, reminders by text."
    chores = (
        "Project Manager: We just have to complete the questionnaire and some sort of summary.\n"
    )
    assert recap_spans(chores) == []


def test_a_story_written_from_a_recap_joins_the_need_it_restates():
    photo = said("seg-0001", 1, "Photograph a damaged bin from the cab", "Drivers must be able")
    depot = said("seg-0001", 2, "Show missed collections on a map", "And the depot should")
    recap = said("seg-0002", 1, "Take bin photos from the cab", "Bin photos from the cab")
    embed = titles_near({photo.title: (1.0, 0.0), recap.title: (0.8, 0.6)})  # cosine 0.8
    merged = merge_duplicates([photo, depot, recap], embed, 0.9, RECAP_MEETING)
    assert [s.item_id for s in merged] == [photo.item_id, depot.item_id]
    kept = merged[0]
    assert kept.title == photo.title and kept.merged_story_ids == [recap.item_id]
    assert [q.start for q in kept.source_quotes] == [photo.source_quotes[0].start, at("Bin photos")]
    # the recap's sentence sums up two needs: it is quoted, never a criterion
    assert kept.acceptance_criteria == photo.acceptance_criteria


@pytest.mark.parametrize(
    ("first", "second", "cosine"),
    [
        # a recap's story unlike every earlier title stays a story
        (
            ("Photograph a damaged bin from the cab", "Drivers must be able"),
            ("Keep paper sheets as a backup", "And the crews keep paper"),
            0.5,
        ),
        # a need said again outside the recap: only the merge threshold makes it one
        (
            ("Show missed collections on a map", "And the depot should"),
            ("Text residents about a missed collection", "Before we finish"),
            0.8,
        ),
        # "seven days" recapped where "fourteen days" was said: the reviewer sees both
        (
            ("Keep photos for fourteen days", "Drivers must be able"),
            ("Keep photos for seven days", "Bin photos from the cab"),
            0.9,
        ),
    ],
)
def test_a_story_stays_apart_from_a_recap_unlike_it_or_said_outside_it(
    first: tuple[str, str], second: tuple[str, str], cosine: float
) -> None:
    one, two = said("seg-0001", 1, *first), said("seg-0002", 1, *second)
    embed = titles_near({one.title: (1.0, 0.0), two.title: (cosine, (1 - cosine**2) ** 0.5)})
    merged = merge_duplicates([one, two], embed, 0.9, RECAP_MEETING)
    assert [s.item_id for s in merged] == [one.item_id, two.item_id]


# --- titles that name one need in other words ----------------------------------------------


def test_a_title_naming_the_need_of_another_segment_in_fewer_words_merges_into_it():
    screen = story("seg-0001", 1, "Provide a screen with a back light", "A lit screen", 0)
    light = story("seg-0002", 1, "Provide a back light", "So its purpose is a back light", 90)
    embed = titles_near({screen.title: (1.0, 0.0), light.title: (0.85, 0.527)})
    (merged,) = merge_duplicates([screen, light], embed, 0.9)
    assert merged.title == screen.title and merged.merged_story_ids == [light.item_id]
    assert [q.text for q in merged.source_quotes] == ["A lit screen", light.source_quotes[0].text]


@pytest.mark.parametrize(
    ("first", "second", "cosine"),
    [
        # each names a thing the other does not: two places, two needs
        ("Show free slots on the calendar", "Show free slots on the home page", 0.9),
        # one leaves out what the other provides
        ("Provide a special colour", "Leave out a special colour", 0.9),
        # not close enough
        ("Provide a screen with a back light", "Provide a back light", 0.75),
    ],
)
def test_titles_alike_that_name_other_things_stay_two_needs(
    first: str, second: str, cosine: float
) -> None:
    one = story("seg-0001", 1, first, "First said", 0)
    two = story("seg-0002", 1, second, "Said later", 90)
    embed = titles_near({first: (1.0, 0.0), second: (cosine, (1 - cosine**2) ** 0.5)})
    assert len(merge_duplicates([one, two], embed, 0.9)) == 2


def test_titles_alike_with_figures_of_their_own_stay_two_rules():
    after = story("seg-0001", 1, "Send a nudge to the line manager", "Nudge after four days", 0)
    before = story(
        "seg-0002",
        1,
        "Send a nudge to the line manager before the payroll deadline",
        "Three days before",
        90,
    )
    embed = titles_near({after.title: (1.0, 0.0), before.title: (0.9, 0.436)})
    assert len(merge_duplicates([after, before], embed, 0.9)) == 2
    # the same titles with no figure of their own are one need
    plain = before.model_copy(
        update={"source_quotes": [SourceQuote(text="Before the deadline", start=90, end=109)]}
    )
    assert len(merge_duplicates([after, plain], embed, 0.9)) == 1
