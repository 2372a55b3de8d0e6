"""Offline generator: capture, grouping, revisions, drafts, verbatim quotes, context use."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from shared.agents import (
    GenerationContext,
    QuoteNotFound,
    RetrievedAdoItem,
    RetrievedChunk,
    StoryDraft,
    locate_quote,
    locate_quotes,
)
from shared.embeddings.minilm import MiniLMEmbedder
from shared.engine.offline import OfflineGenerator, OfflineSegmenter
from shared.models import Segment
from shared.settings import GenerationConfig, PipelineConfig
from shared.text.textio import extract_text, normalize

REPO = Path(__file__).resolve().parents[2]

MIXED = normalize(
    """Project Manager: Okay , so um let's get started .
Marketing: Yeah .
Marketing: We need a rechargeable battery with a charging dock .
Industrial Designer: Mm-hmm .
User Interface: The remote must have no more than 8 buttons .
Marketing: Should the volume follow the distance between the remote and the TV ?
Project Manager: Right ?
Industrial Designer: I need to go at five , sorry , we need to wrap up soon .
User Interface: As a parent , I want a key lock so that my children cannot change the channel .
"""
)

CHITCHAT = normalize(
    """Project Manager: Hi everyone , how was your weekend ?
Marketing: Yeah it was fine , thanks .
Industrial Designer: Did you see the match last night ?
User Interface: Yeah , great game . Really great .
Marketing: Mm-hmm .
Project Manager: Okay .
"""
)

CONSTRAINTS = """## 3. Energy

- **ARC-10** The energy source must be user-replaceable standard cells (2 x AA or 2 x AAA).
  Built-in lithium-ion cells and charging docks are not allowed in v1.
- **ARC-03** The production cost per unit must not exceed 12.50 EUR (components, assembly, test,
  packaging and quick-start guide).
"""


def segment_of(
    text: str,
    *,
    start: int = 0,
    order: int = 0,
    theme: str = "Power and keypad",
    labels: list[str] | None = None,
) -> Segment:
    return Segment(
        run_id="run-1",
        segment_id=f"seg-{order}",
        segment_order=order,
        raw_text=text,
        start_char=start,
        end_char=start + len(text),
        token_count=len(text) // 4,
        intent_labels=labels or ["battery", "buttons", "feature_request"],
        dominant_intent="requirements: battery, buttons",
        theme=theme,
        segmentation_version="seg-offline-v2",
        engine="offline",
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )


def ami_transcript() -> str:
    """AMI meeting IS1006b as `Speaker: text` lines (shipped in samples/)."""
    path = REPO / "samples" / "transcripts" / "remote_control_functional_design.txt"
    return normalize(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def generator(embedder: MiniLMEmbedder) -> OfflineGenerator:
    return OfflineGenerator(embedder, PipelineConfig())


@pytest.fixture(scope="module")
def mixed(generator: OfflineGenerator):
    return generator.generate(segment_of(MIXED), GenerationContext())


def segmented(embedder: MiniLMEmbedder, transcript: str) -> list[Segment]:
    result = OfflineSegmenter(embedder, PipelineConfig().segmentation).segment(transcript)
    return [
        segment_of(
            transcript[s.start : s.end],
            start=s.start,
            order=k,
            theme=s.theme,
            labels=s.intent_labels,
        )
        for k, s in enumerate(result.spans)
    ]


def test_requirements_become_stories_and_talk_does_not(mixed) -> None:
    draft = mixed.draft
    quotes = [q for s in draft.stories for q in s.source_quotes]
    assert "We need a rechargeable battery with a charging dock ." in quotes
    assert "The remote must have no more than 8 buttons ." in quotes
    assert any(q.startswith("As a parent , I want a key lock") for q in quotes)
    assert not any("wrap up" in q or "let's get started" in q or q == "Yeah ." for q in quotes)
    assert len(draft.stories) == 3
    assert mixed.usage.calls == 0 and mixed.model is None
    # what the classifier found, for coverage: exactly the three requirement sentences
    found = [MIXED[a:b] for a, b in mixed.requirement_spans]
    assert len(found) == 3 and all(f in quotes or f.startswith("As a parent") for f in found)


def test_story_fields(mixed) -> None:
    by_quote = {s.source_quotes[0]: s for s in mixed.draft.stories}
    keypad = by_quote["The remote must have no more than 8 buttons ."]
    assert keypad.title == "Provide no more than 8 buttons"
    assert keypad.description == "As a user, I want no more than 8 buttons."  # no stock benefit
    assert keypad.acceptance_criteria == ["The remote has no more than 8 buttons."]
    lock = next(s for q, s in by_quote.items() if "key lock" in q)
    assert lock.title == "Provide a key lock"
    assert lock.description == (
        "As a parent, I want a key lock, so that my children cannot change the channel."
    )
    battery = by_quote["We need a rechargeable battery with a charging dock ."]
    assert battery.title == "Provide a rechargeable battery with a charging dock"
    assert battery.acceptance_criteria == []  # nothing the title does not say: none invented
    for story in mixed.draft.stories:
        assert story.feature_key == mixed.draft.features[0].key
        assert "so that the product" not in story.description
    assert mixed.draft.epics[0].title == "Power and keypad"
    assert all(f.epic_key == mixed.draft.epics[0].key for f in mixed.draft.features)


def test_open_questions_are_verbatim_and_not_rhetorical(mixed) -> None:
    asked = mixed.draft.open_questions + [q for s in mixed.draft.stories for q in s.open_questions]
    assert asked == ["Should the volume follow the distance between the remote and the TV ?"]
    assert all(q in MIXED for q in asked)


def test_chitchat_gives_no_stories(generator: OfflineGenerator) -> None:
    result = generator.generate(segment_of(CHITCHAT), GenerationContext())
    draft = result.draft
    assert draft.stories == [] and draft.features == [] and draft.epics == []
    assert result.requirement_spans == []


def test_quotes_are_exact_substrings_on_real_inputs(
    embedder: MiniLMEmbedder, generator: OfflineGenerator
) -> None:
    notes = normalize((REPO / "samples/transcripts/remote_control_planning_notes.md").read_text())
    total = 0
    for transcript in (ami_transcript(), notes):
        for seg in segmented(embedder, transcript):
            draft = generator.generate(seg, GenerationContext()).draft
            assert len(draft.stories) <= PipelineConfig().generation.max_stories_per_segment
            for story in draft.stories:
                total += 1
                for quote in story.source_quotes:
                    located = locate_quote(seg, quote)
                    assert transcript[located.start : located.end] == located.text
                # numbers in criteria come from the quotes, never invented
                quoted = " ".join(story.source_quotes)
                for number in re.findall(r"\d+(?:\.\d+)?", " ".join(story.acceptance_criteria)):
                    assert number in quoted
            for question in draft.open_questions:
                assert question in seg.raw_text and question.rstrip().endswith("?")
    assert total >= 60


def test_a_text_said_twice_is_quoted_where_the_story_was_said() -> None:
    """Short statements recur ("Cheap ." at 483 and again later): each quote of a story gets its
    own span, the one nearest to the story's quotes said only once, never the first occurrence
    twice (the capture eval read two quotes of IS1006b as one statement)."""
    text = "Cheap . We talked about colours . We could make it in five Euros . Cheap . Yes ."
    seg = segment_of(text, start=100)
    need = "We could make it in five Euros ."
    one, near = locate_quotes(seg, [need, "Cheap ."])
    assert (near.start - 100, near.text) == (text.rindex("Cheap ."), "Cheap .")
    assert one.start - 100 == text.index(need)
    both = locate_quotes(seg, [need, "Cheap .", "Cheap ."])[1:]
    assert sorted(q.start - 100 for q in both) == [text.index("Cheap ."), text.rindex("Cheap .")]
    for quote in both:
        assert text[quote.start - 100 : quote.end - 100] == quote.text
    with pytest.raises(QuoteNotFound):
        locate_quotes(seg, [need, "Too expensive ."])


def test_notes_statements_without_modals_count(generator: OfflineGenerator) -> None:
    text = normalize(
        "## Scope\n\n- TV only for v1.\n- No teletext button and no teletext functions.\n"
        "- One dedicated power button that switches the TV on and off, coloured red.\n"
        "- [ ] Marketing: survey how often people enter a channel number. Due 2026-12-02.\n"
    )
    quotes = [
        q
        for s in generator.generate(segment_of(text), GenerationContext()).draft.stories
        for q in s.source_quotes
    ]
    assert "No teletext button and no teletext functions." in quotes
    assert any(q.startswith("One dedicated power button") for q in quotes)
    assert not any("survey" in q for q in quotes)  # an action item is not a requirement
    titles = [
        s.title for s in generator.generate(segment_of(text), GenerationContext()).draft.stories
    ]
    assert "Leave out teletext button and teletext functions" in titles


def test_a_list_item_with_a_label_and_details_is_one_story_named_by_its_label(
    generator: OfflineGenerator,
) -> None:
    """Two items written as a label and its details: two stories, each titled by its label,
    each quoting its own details and not the other item's label."""
    text = normalize(
        "## What is new\n\n"
        "- NEW: sleep timer. From the menu the user can set the TV to switch off after 15, 30, "
        "60 or 90 minutes.\n"
        "- NEW: key lock. Holding OK + back for 3 s locks every button except power, so small "
        "children cannot change the channel.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_label = {s.source_quotes[0]: s for s in stories}
    assert set(by_label) == {"NEW: sleep timer.", "NEW: key lock."}, [s.title for s in stories]
    timer, lock = by_label["NEW: sleep timer."], by_label["NEW: key lock."]
    assert "sleep timer" in timer.title.lower() and "key lock" in lock.title.lower()
    assert any("90 minutes" in q for q in timer.source_quotes)
    assert any("3 s" in q for q in lock.source_quotes)
    assert any("90 minutes" in ac for ac in timer.acceptance_criteria)


def test_a_list_item_that_states_a_need_and_its_details_is_one_story(
    generator: OfflineGenerator,
) -> None:
    """A bullet is one point: the need it opens with names the story, the sentences after it on
    the same line are its criteria and quotes, and the next bullet is another story."""
    text = normalize(
        "## Power\n\n"
        "- Two standard AA batteries. No rechargeable battery and no charging dock.\n"
        "- Battery life at least 12 months of typical use, with the backlight on its default "
        "setting.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_main = {s.source_quotes[0]: s for s in stories}
    assert set(by_main) == {
        "Two standard AA batteries.",
        "Battery life at least 12 months of typical use, with the backlight on its default "
        "setting.",
    }, [(s.title, s.source_quotes) for s in stories]
    batteries = by_main["Two standard AA batteries."]
    assert batteries.source_quotes[1:] == ["No rechargeable battery and no charging dock."]
    assert "No rechargeable battery and no charging dock." in batteries.acceptance_criteria


def test_a_sum_worked_out_again_is_no_story_even_when_it_revised_one(
    generator: OfflineGenerator,
) -> None:
    """A revised decision is written from the later statement, but only when that names a
    capability: a sum worked out again ("Then it's only nine pounds." after "Then we have eleven
    pounds.") gives no story ("It's only nine pounds"); a figure revised on a need still does."""
    from shared.analysis.capture import classify, sentences_of
    from shared.engine.offline.generation import WRITE_FROM_AT
    from shared.engine.offline.grouping import _Story

    text = normalize(
        "Project Manager: We can't lose the bamboo case .\n"
        "Project Manager: Then we have eleven pounds .\n"
        "Project Manager: Yes , then it's only nine pounds .\n"
        "Project Manager: Each survey takes ten users .\n"
        "Project Manager: No , make it twenty users per survey .\n"
    )
    sentences = sentences_of(text)
    verdicts, _ = classify(sentences, generator.embedder)
    total = _Story([2], 0.9, superseded=[1])
    assert generator._readable_draft(total, sentences, verdicts, "user", WRITE_FROM_AT) is None
    survey = _Story([4], 0.9, superseded=[3])
    draft = generator._readable_draft(survey, sentences, verdicts, "user", WRITE_FROM_AT)
    assert draft is not None and "twenty" in draft.title, draft


def test_a_list_item_that_states_two_decisions_on_two_things_is_two_stories(
    generator: OfflineGenerator,
) -> None:
    """A bullet can pack two decisions, each a clause on a thing of its own that shares no word
    with the other: two stories. The details of one need stay on it: "Cash only. No cards, no
    vouchers." says what "only" leaves out, and "Reminders go out ... They ..." points back."""
    text = normalize(
        "## Context\n\n"
        "- Reminder from the board: the first pilot is a single depot only. Overtime is off the "
        "table for now.\n"
        "- The membership fee must stay under 40 pounds. The welcome pack is free.\n"
        "- Cash only at the kiosk. No cards, no vouchers.\n"
        "- Reminders go out two days before a shift. They must name the site.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    mains = {s.source_quotes[0]: s for s in stories}
    assert "Overtime is off the table for now." in mains, [
        (s.title, s.source_quotes) for s in stories
    ]
    overtime = mains["Overtime is off the table for now."]
    assert "overtime" in overtime.title.lower() and "depot" not in overtime.title.lower()
    pilot = mains["Reminder from the board: the first pilot is a single depot only."]
    assert pilot.source_quotes == [pilot.source_quotes[0]]
    assert "The welcome pack is free." in mains
    fee = next(s for s in stories if "40 pounds" in s.source_quotes[0])
    assert "The welcome pack is free." not in fee.source_quotes
    cash = next(s for s in stories if s.source_quotes[0].startswith("Cash only"))
    assert cash.source_quotes[1:] == ["No cards, no vouchers."]
    reminders = next(s for s in stories if s.source_quotes[0].startswith("Reminders go out"))
    assert "They must name the site." in reminders.source_quotes


def test_a_definition_of_a_term_is_a_detail_of_the_story_that_says_it(
    generator: OfflineGenerator,
) -> None:
    """'Baby-proof means: ...' says what the earlier need means: it is quoted and drafted in the
    story that says "baby-proof", not a story of its own ("Pull or bite off")."""
    case = "The case is titanium, curved in both directions, and baby-proof."
    means = (
        "Baby-proof means: no part that a small child can pull or bite off, and buttons sealed "
        "against spilled drinks."
    )
    text = normalize(f"- {case}\n- The logo must be on every remote.\n- {means}\n")
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    holding = [s for s in stories if means in s.source_quotes]
    assert len(holding) == 1 and holding[0].source_quotes[0] == case, [
        (s.title, s.source_quotes) for s in stories
    ]
    assert any("spilled drinks" in ac for ac in holding[0].acceptance_criteria)
    assert not any(s.source_quotes[0] == means for s in stories)


def test_three_needs_said_one_after_another_are_three_stories(
    generator: OfflineGenerator,
) -> None:
    """'X needs a Y' states a need as plainly as a modal: the streaming-apps button is not
    quoted as a detail of the backlight or of the PIN lock."""
    text = normalize(
        "Parent panel: Parents must be able to lock the remote with a four-digit PIN so that "
        "children cannot change channels.\n"
        "Engineer: The keys need a soft backlight so the remote can be used in a dark room.\n"
        "Marketing: The remote needs a button that opens the streaming apps menu of the TV.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert [len(s.source_quotes) for s in stories] == [1, 1, 1], [s.title for s in stories]
    assert stories[2].source_quotes[0].startswith("The remote needs a button")


def test_same_requirement_said_twice_is_one_story(generator: OfflineGenerator) -> None:
    text = normalize(
        "User Interface: The remote must have a backlight that changes colour .\n"
        "Marketing: Yes , the backlight must be able to change its colour .\n"
        "Industrial Designer: And we need two standard AA batteries in the remote .\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert len(stories) == 2
    backlight = next(s for s in stories if "backlight" in s.source_quotes[0])
    assert len(backlight.source_quotes) == 2 and backlight.superseded_quotes == []


def test_story_cap_keeps_the_strongest(embedder: MiniLMEmbedder) -> None:
    cfg = PipelineConfig(generation=GenerationConfig(max_stories_per_segment=2))
    draft = OfflineGenerator(embedder, cfg).generate(segment_of(MIXED), GenerationContext()).draft
    assert len(draft.stories) == 2
    assert any("As a parent" in q for s in draft.stories for q in s.source_quotes)


def test_constraint_violations_are_flagged(generator: OfflineGenerator) -> None:
    text = normalize(
        "Marketing: We need a rechargeable battery with a charging dock .\n"
        "Industrial Designer: The remote should cost 18.80 EUR to produce in titanium .\n"
        "User Interface: The remote must use two standard AA cells that the user can replace .\n"
    )
    chunk = RetrievedChunk("c1", "d1", "constraints.md", CONSTRAINTS, 0.6, 0.5)
    draft = generator.generate(
        segment_of(text), GenerationContext(architecture_chunks=[chunk])
    ).draft
    assert len(draft.stories) == 3

    def story(word: str):
        return next(s for s in draft.stories if word in s.source_quotes[0])

    dock, cost, cells = story("charging dock"), story("18.80"), story("standard AA cells")
    assert dock.constraint_violation and dock.constraint_notes[0].startswith("ARC-10")
    assert cost.constraint_violation and any(n.startswith("ARC-03") for n in cost.constraint_notes)
    assert "18.80" in " ".join(cost.constraint_notes)
    assert not cells.constraint_violation and cells.constraint_notes == []
    cfg = PipelineConfig()
    cfg.thresholds.constraint_violation_check = False
    off = (
        OfflineGenerator(generator.embedder, cfg)
        .generate(segment_of(text), GenerationContext(architecture_chunks=[chunk]))
        .draft
    )
    assert not any(s.constraint_violation for s in off.stories)


def test_parent_reuse_extends_and_ac_delta(generator: OfflineGenerator) -> None:
    seg = segment_of(MIXED)
    plain = generator.generate(seg, GenerationContext()).draft
    feature, keypad = plain.features[0], next(s for s in plain.stories if "8 buttons" in s.title)
    existing_feature = RetrievedAdoItem(
        2001, "Feature", feature.title, feature.description, [], "Active", None, 0.8, 0.7
    )
    existing_story = RetrievedAdoItem(
        2002,
        "User Story",
        keypad.title,
        keypad.description,
        [keypad.acceptance_criteria[0]],
        "Active",
        2001,
        0.8,
        0.7,
    )
    unrelated = RetrievedAdoItem(
        2003,
        "User Story",
        "Export invoices as PDF",
        "As an accountant, I want invoices as PDF.",
        [],
        "New",
        None,
        0.2,
        0.2,
    )
    context = GenerationContext(ado_items=[existing_feature, existing_story, unrelated])
    draft = generator.generate(seg, context).draft
    assert draft.features[0].existing_work_item_id == 2001
    story = next(s for s in draft.stories if "8 buttons" in s.title)
    assert story.extends_work_item_ids == [2002]
    assert story.ac_delta == []  # its only criterion is the one the item already has
    others = [s for s in draft.stories if s is not story]
    assert all(2003 not in s.extends_work_item_ids for s in draft.stories)
    assert all(s.ac_delta == [] for s in others if not s.extends_work_item_ids)


def test_deterministic(generator: OfflineGenerator, mixed) -> None:
    again = generator.generate(segment_of(MIXED), GenerationContext())
    assert again.model_dump() == mixed.model_dump()


def test_a_short_fragment_starts_a_need_only_when_very_confident() -> None:
    from shared.engine.offline.grouping import FRAGMENT_SEED_AT, SEED_AT, _seeds

    assert SEED_AT < FRAGMENT_SEED_AT
    between = (SEED_AT + FRAGMENT_SEED_AT) / 2
    assert not _seeds("Special colour ,", between)  # talk in a design discussion, mostly
    assert _seeds("Special colour ,", FRAGMENT_SEED_AT)
    assert _seeds("The case is made of rubber and cork .", between)
    assert _seeds("We need a power button .", between)  # a need cue, however short


def test_talk_before_the_first_need_is_quoted_by_it(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """A confident statement that gives no title ("Price-wise.") said before any need of its
    segment is evidence of the need after it, not dropped (recall: it may be a requirement)."""
    import numpy as np

    import shared.engine.offline.generation as generation
    from shared.analysis.capture import Verdict

    text = "Price-wise . We need a big power button ."

    def classify(sentences, embedder):
        assert [s.text for s in sentences] == ["Price-wise .", "We need a big power button ."]
        confident = Verdict(label="F", p_requirement=0.95, p_quality=0.1)
        return [confident, confident], np.eye(2, 8)  # nothing alike: two needs, not one

    monkeypatch.setattr(generation, "classify", classify)
    draft = generator.generate(segment_of(text), GenerationContext()).draft
    assert [s.title for s in draft.stories] == ["Provide a big power button"]
    assert draft.stories[0].source_quotes == ["We need a big power button .", "Price-wise ."]


@pytest.mark.parametrize(
    ("p_weak", "titles", "first_quotes"),
    [
        (0.5, ["Provide a big power button"], 3),  # talk: quoted by the need before it
        (0.7, ["Provide a big power button"], 3),  # gives criteria, but starts no story
        (0.85, ["Provide a big power button", "Show the channel number"], 1),
    ],
)
def test_a_story_is_written_from_a_weak_statement_only_when_nothing_is_before_it(
    generator: OfflineGenerator, monkeypatch, p_weak: float, titles: list[str], first_quotes: int
) -> None:
    """A need whose main statement gives no title ("Price-wise .") is written from another of
    its statements only when that one is confident enough to start a story of its own
    (``WRITE_FROM_AT``, 0.8; it is then the main quote); a weaker one ("It shows the channel
    number .", p 0.5 or 0.7) leaves it talk around the need before it, quoted there. The first need
    of a segment, with nothing before it, is still written from it."""
    import numpy as np

    import shared.engine.offline.generation as generation
    from shared.analysis.capture import Verdict

    need = "We need a big power button ."
    talk = ["Price-wise .", "It shows the channel number ."]

    def classify(sentences, embedder):
        confident = Verdict(label="F", p_requirement=0.95, p_quality=0.1)
        weak = Verdict(label="F", p_requirement=p_weak, p_quality=0.1)
        verdicts = [weak if s.text == talk[1] else confident for s in sentences]
        vectors = np.array([np.eye(8)[0] if s.text == need else np.eye(8)[1] for s in sentences])
        return verdicts, vectors  # the two talk sentences are alike, and unlike the need

    monkeypatch.setattr(generation, "classify", classify)
    after_need = generator.generate(segment_of(" ".join([need, *talk])), GenerationContext())
    stories = after_need.draft.stories
    assert [s.title for s in stories] == titles
    assert stories[0].source_quotes == [need, *talk][:first_quotes]
    # nothing before it: the weak statement writes the story, the statements are not lost
    alone = generator.generate(segment_of(" ".join(talk)), GenerationContext()).draft.stories
    assert [s.title for s in alone] == ["Show the channel number"]
    assert alone[0].source_quotes == talk[::-1]  # the statement it is written from first


@pytest.mark.parametrize(
    ("said", "title"),
    [
        ("I have been told that we don't consider teletext .", "Leave out teletext"),
        ("The office needs to see who hasn't paid .", "See who hasn't paid"),
    ],
)
def test_a_less_confident_statement_writes_a_story_when_it_says_a_need_or_a_decision_plainly(
    generator: OfflineGenerator, monkeypatch, said: str, title: str
) -> None:
    """A need whose main statement gives no title ("Price-wise .") is written from a statement
    less confident than a story's own start (p 0.7) when that one says a decision left out or a
    need plainly (the demo's "Leave out teletext", written from "we don't consider teletext")."""
    import numpy as np

    import shared.engine.offline.generation as generation
    from shared.analysis.capture import Verdict

    need = "We need a big power button ."
    talk = ["Price-wise .", said]

    def classify(sentences, embedder):
        confident = Verdict(label="F", p_requirement=0.95, p_quality=0.1)
        weak = Verdict(label="F", p_requirement=0.7, p_quality=0.1)
        verdicts = [weak if s.text == said else confident for s in sentences]
        vectors = np.array([np.eye(8)[0] if s.text == need else np.eye(8)[1] for s in sentences])
        return verdicts, vectors

    monkeypatch.setattr(generation, "classify", classify)
    result = generator.generate(segment_of(" ".join([need, *talk])), GenerationContext())
    stories = result.draft.stories
    assert [s.title for s in stories] == ["Provide a big power button", title]
    assert stories[1].source_quotes == [said, "Price-wise ."]


@pytest.mark.parametrize("details", [0, 11])
def test_a_story_is_not_written_from_a_word_said_in_passing(
    generator: OfflineGenerator, monkeypatch, details: int
) -> None:
    """A need whose main statement gives no title ("Price-wise .") is not written from a short
    fragment said with it ("Or a clap ." gave "Provide a clap"): its statements are quoted by the
    need before. When that need has no room left for them (12 quotes), the story is written from
    the fragment rather than its statements lost."""
    need = ["We need a big power button .", *[f"It is button {n} ." for n in range(details)]]
    talk = ["Price-wise .", "Or a clap ."]
    _confident_in_groups(monkeypatch, need, talk)
    stories = generator.generate(segment_of(" ".join(need + talk)), GenerationContext())
    titles = [s.title for s in stories.draft.stories]
    if details == 0:
        assert titles == ["Provide a big power button"]
        assert stories.draft.stories[0].source_quotes == need + talk
    else:
        assert titles == ["Provide a big power button", "Provide a clap"], titles
        assert stories.draft.stories[1].source_quotes == talk[::-1]  # written from the clap


def test_a_first_need_with_no_title_is_evidence_of_the_next(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """The first need of a segment whose statements give no title ("It just beeps .", "Or a clap
    .") is quoted by the next need rather than written from a fragment (the demo's "Provide a
    clap"); only when no need of the segment reads is it written from one."""
    talk = ["It just beeps .", "Or a clap ."]
    need = "Just don't interfere with other devices ."
    _confident_in_groups(monkeypatch, talk, [need])
    stories = generator.generate(segment_of(" ".join([*talk, need])), GenerationContext())
    assert [s.title for s in stories.draft.stories] == ["Do not interfere with other devices"]
    assert stories.draft.stories[0].source_quotes == [need, *talk]
    alone = generator.generate(segment_of(" ".join(talk)), GenerationContext()).draft.stories
    assert [s.title for s in alone] == ["Provide a clap"]  # nothing else to quote them
    assert alone[0].source_quotes == talk[::-1]  # the statement it is written from first


def test_talk_around_a_need_is_never_lost_when_the_need_before_is_full(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """Statements that make no story of their own ("Price-wise .") are evidence of the need
    before; when that need already quotes 12 statements, they are quoted by the next need
    instead of dropped."""
    first = ["We need a big power button .", *[f"It is button {n} ." for n in range(11)]]
    talk = ["Price-wise .", "Colour-wise ."]
    second = "We need a red mute button ."
    _confident_in_groups(monkeypatch, first, talk, [second])
    text = " ".join([*first, *talk, second])
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert [s.title for s in stories] == ["Provide a big power button", "Provide a red mute button"]
    assert stories[0].source_quotes == first
    assert stories[1].source_quotes == [second, *talk]


def test_the_meetings_own_work_is_no_story(generator: OfflineGenerator) -> None:
    """'we have to calculate the production costs' is work for the team, not a need of the
    product; 'we can calculate the VAT automatically' offers what the product can do."""
    text = normalize(
        "Project Manager: And now we have to calculate the production costs .\n"
        "Marketing: The remote must have a backlight that changes colour .\n"
        "Project Manager: First we have to make a functional design .\n"
        "Industrial Designer: And then we have to agree on the rating together .\n"
        "Marketing: So I think we should probably spend lots of time and effort in that .\n"
        "Finance: And we can calculate the VAT automatically from the receipt .\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    quoted = [q for s in stories for q in s.source_quotes]
    assert not any("production costs" in q or "functional design" in q for q in quoted), [
        s.title for s in stories
    ]
    assert not any("rating" in q or "effort" in q for q in quoted)
    assert any(q.startswith("The remote must have a backlight") for q in quoted)
    # what the product can do, offered with "we can", is no team work: a need of its own or a
    # detail of the need before it, written as what the product does
    offered = normalize(
        "Finance: We need to scan the receipts with the phone camera .\n"
        "Finance: And we can calculate the VAT automatically from the receipt .\n"
    )
    stories = generator.generate(segment_of(offered), GenerationContext()).draft.stories
    vat = [s for s in stories if any("calculate the VAT" in q for q in s.source_quotes)]
    assert vat, [s.title for s in stories]
    written = [vat[0].title, *vat[0].acceptance_criteria]
    assert any("VAT automatically" in w and "calculat" in w.lower() for w in written), written


def _confident_in_groups(monkeypatch, *groups: list[str]) -> None:
    """Every statement a confident need (p 0.95); the statements of one group alike in meaning,
    those of different groups not."""
    import numpy as np

    import shared.engine.offline.generation as generation
    from shared.analysis.capture import Verdict

    def classify(sentences, embedder):
        confident = Verdict(label="F", p_requirement=0.95, p_quality=0.1)
        axes = [next(g for g, texts in enumerate(groups) if s.text in texts) for s in sentences]
        return [confident] * len(sentences), np.array([np.eye(8)[g] for g in axes])

    monkeypatch.setattr(generation, "classify", classify)


def _all_confident(
    generator: OfflineGenerator, monkeypatch, lines: list[str], alike: tuple[int, ...] = ()
) -> list:
    """The stories of a segment of ``lines`` when every statement is a confident need and no two
    are alike in meaning, but the statements at ``alike``."""
    import numpy as np

    def vectors(n: int) -> np.ndarray:
        out = np.eye(n, 16)
        for k in alike[1:]:
            out[k] = out[alike[0]]
        return out

    return _classified(generator, monkeypatch, lines, {}, vectors)


def _classified(
    generator: OfflineGenerator,
    monkeypatch,
    lines: list[str],
    p: dict[str, float],
    vectors=None,
) -> list:
    """The stories of a segment of ``lines`` when the classifier gives each statement the
    confidence ``p`` names for its text (0.95 else; below 0.5 it reads as talk) and the vectors
    ``vectors(n)`` makes (by default no two statements alike in meaning)."""
    import numpy as np

    import shared.engine.offline.generation as generation
    from shared.analysis.capture import Verdict

    def classify(sentences, embedder):
        said = [p.get(s.text, 0.95) for s in sentences]
        verdicts = [Verdict("F" if x >= 0.5 else "NULL", x, 0.1) for x in said]
        n = len(sentences)
        return verdicts, vectors(n) if vectors else np.eye(n, 16)

    monkeypatch.setattr(generation, "classify", classify)
    text = normalize("\n".join(lines) + "\n")
    return generator.generate(segment_of(text), GenerationContext()).draft.stories


def test_a_task_a_participant_takes_on_is_no_story(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """'I'll need to check what the timetabling system allows', 'you'll need to sign off the
    privacy impact assessment', 'Tom will find out about log retention': a participant takes a
    task on. Read as needs (confident, unlike everything else), they wrote stories ("Provide
    check what the timetabling system allows"); what was said with such a task stays evidence of
    the need before it. A need said with a task after a "but", and the product's own "we'll
    send", stay needs."""
    lines = [
        "Priya: The booking system should pull the timetable in every night .",
        "Priya: I'll need to check what the timetabling system allows .",
        "Gareth: So at least nightly , ideally hourly .",
        "Maria: Ha , so you'll need to sign off the privacy impact assessment .",
        "Maria: Tom will find out about log retention .",
        "Marcus: I'll confirm it with the CFO , but put a thousand pounds in as the limit .",
        "Linda: We'll send the patient a text two days before the appointment .",
    ]
    # every statement a confident need; the follow-up is about the task it follows, not the need
    stories = _all_confident(generator, monkeypatch, lines, alike=(1, 2))
    quoted = [q for s in stories for q in s.source_quotes]
    for task in ("check what the timetabling", "sign off", "log retention"):
        assert not any(task in q for q in quoted), [s.title for s in stories]
    (timetable,) = [s for s in stories if "timetable in every night" in s.source_quotes[0]]
    assert "So at least nightly , ideally hourly ." in timetable.source_quotes
    assert any("a thousand pounds" in q for q in quoted)
    assert any("send the patient a text" in q for q in quoted)


def test_the_meeting_going_back_to_a_topic_is_no_story(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """'I want to go back to cancelling' and 'I'd need to ask the data protection officer' are the
    meeting's own business; 'you can go back to the main menu' is something the product does, and
    'I'll go back to stuffing receipts' is what someone does, no topic."""
    lines = [
        "Maria: I want to go back to cancelling , because I'm not sure I've got it clear .",
        "Tom: I'd need to ask the data protection officer .",
        "Maria: From any screen you can go back to the main menu with one tap .",
        "Anna: And it has to be quick , or I'll go back to stuffing receipts in an envelope .",
    ]
    stories = _all_confident(generator, monkeypatch, lines)
    quoted = [q for s in stories for q in s.source_quotes]
    assert not any("back to cancelling" in q or "data protection" in q for q in quoted), [
        s.title for s in stories
    ]
    assert any("back to the main menu" in q for q in quoted)
    assert any("it has to be quick" in q for q in quoted)  # what someone does, no topic


def test_the_decision_that_settles_an_argument_writes_the_story(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """The objection and the decision it leads to are one need; the decision writes the story
    even when the objection was said with more confidence, and the objection is its evidence."""
    import shared.engine.offline.generation as generation
    from shared.analysis.capture import Verdict

    lines = [
        "Dr Okafor: Twenty-four hours is not enough , nobody else can use the slot at that notice .",
        "Maria: Okay , changing that : reminder texts go out forty-eight hours before the visit .",
    ]
    text = normalize("\n".join(lines) + "\n")

    real = generation.classify

    def classify(sentences, embedder):  # the objection said with more confidence
        _, vectors = real(sentences, embedder)
        p = [0.95, 0.9]
        return [Verdict("F", p[k], 0.1) for k in range(len(sentences))], vectors

    monkeypatch.setattr(generation, "classify", classify)
    (story,) = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert story.title == "Send reminder texts"
    # when they go is its criterion, without the words that led to the decision
    assert story.acceptance_criteria[0] == (
        "Reminder texts go out forty-eight hours before the visit."
    )
    assert story.source_quotes[0].startswith("Okay , changing that")
    assert any(q.startswith("Twenty-four hours is not enough") for q in story.source_quotes)


def test_action_items_in_notes_are_no_story(generator: OfflineGenerator) -> None:
    """A section of action items, and an item marked as one, are the team's tasks."""
    text = normalize(
        "# Booking app\n"
        "Patients need to book an appointment online without ringing the practice.\n"
        "## Next steps\n"
        "Ana will check the GDPR rules with the practice manager.\n"
        "## Reminders\n"
        "Reminder texts go out forty-eight hours before the appointment.\n"
        "- Action: Linda to book the next workshop.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    quoted = [q for s in stories for q in s.source_quotes]
    assert not any("GDPR" in q or "workshop" in q for q in quoted), [s.title for s in stories]
    assert any(q.startswith("Patients need to book") for q in quoted)
    assert any(q.startswith("Reminder texts go out") for q in quoted)


def test_what_the_meeting_left_open_is_an_open_question_not_a_story(
    generator: OfflineGenerator,
) -> None:
    """Items under "## Open questions" and a line labelled "Open:" are what is still to be
    decided: open questions, verbatim, never stories (was "Phone or a split", "Provide the
    MedOffice cost")."""
    notes = normalize(
        "# Clinic booking\n"
        "## Decided\n"
        "- Patients book online up to six weeks ahead.\n"
        "- Reminders go out by text forty-eight hours before the appointment.\n"
        "## Open questions\n"
        "- Same-day slots: online, phone or a split.\n"
        "- Video appointments for teenagers.\n"
    )
    draft = generator.generate(segment_of(notes), GenerationContext()).draft
    quoted = [q for s in draft.stories for q in s.source_quotes]
    assert not any("Same-day" in q or "teenagers" in q for q in quoted), quoted
    assert draft.open_questions == [
        "Same-day slots: online, phone or a split.",
        "Video appointments for teenagers.",
    ]
    said = normalize(
        "Maria: Patients book online up to six weeks ahead.\n"
        "Linda: Yes.\n"
        "Maria: Open: same-day slots, video, teenagers, log retention, the MedOffice cost.\n"
    )
    draft = generator.generate(segment_of(said), GenerationContext()).draft
    assert [s.title for s in draft.stories] == ["Book online up to six weeks ahead"]
    assert draft.open_questions == [
        "Open: same-day slots, video, teenagers, log retention, the MedOffice cost."
    ]


def test_a_correction_then_said_in_full_is_one_story_with_the_new_figure(
    generator: OfflineGenerator,
) -> None:
    """A figure corrected in passing ("let's make it forty-eight hours") and then the decision
    said in full: one story, written from the decision, the recap of the old figure under
    ``superseded_quotes`` (was two stories, "Send we said text" and "Send reminder texts"), and
    no criterion with the old figure."""
    text = normalize(
        "Maria: Next, reminders, we said text, twenty-four hours before.\n"
        "Dr Okafor: Can I say, twenty-four hours isn't enough.\n"
        "Dr Okafor: If they can't come and cancel the day before, nobody else can use the slot"
        " at that notice.\n"
        "Dr Okafor: Two days before, somebody else can grab it.\n"
        "Tom: So forty-eight hours?\n"
        "Linda: Yes, let's make it forty-eight hours.\n"
        "Maria: Okay, changing that.\n"
        "Maria: Reminder texts go out forty-eight hours before the appointment.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    reminders = [s for s in stories if any("Reminder texts go out" in q for q in s.source_quotes)]
    assert [s.title for s in reminders] == ["Send reminder texts"], [s.title for s in stories]
    (story,) = reminders
    assert story.superseded_quotes == ["Next, reminders, we said text, twenty-four hours before."]
    assert story.acceptance_criteria[0] == (
        "Reminder texts go out forty-eight hours before the appointment."
    )
    assert not any("twenty-four" in c for c in story.acceptance_criteria)
    # what somebody else may then do is no need, and "nobody else can" keeps its negation
    titles = [s.title for s in stories]
    assert not any(t.startswith(("Make somebody", "Use the slot")) for t in titles), titles


def test_what_to_leave_out_stays_the_need_and_what_the_meeting_is_about_is_none(
    generator: OfflineGenerator,
) -> None:
    """ "Anything we shouldn't do ...?" "Multi-currency." is left out, and what is said after
    it is its evidence (was "Pay in pounds for now", written from it); "the goal today is ..."
    says what the meeting is about, no criterion."""
    text = normalize(
        "Nina: So the goal today is the invoicing module for the co-working spaces.\n"
        "Tom: Members want to download all their invoices as PDFs from the member app.\n"
        "Nina: Anything we shouldn't do in the first version?\n"
        "Tom: Multi-currency.\n"
        "Tom: Everyone pays in pounds for now.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_title = {s.title: s for s in stories}
    assert "Leave out multi-currency" in by_title, list(by_title)
    assert "Everyone pays in pounds for now." in by_title["Leave out multi-currency"].source_quotes
    quoted = [q for s in stories for q in s.source_quotes]
    criteria = [c for s in stories for c in s.acceptance_criteria]
    assert not any("goal today" in c for c in criteria), criteria
    assert not any("goal today" in q for q in quoted), quoted


def test_a_need_beyond_the_stories_cap_is_evidence_not_lost() -> None:
    """A segment with more needs than ``max_stories_per_segment`` keeps the strongest; the
    statements of the others are quoted by the need written before them (the demo meeting's
    "We should never complicate things too much." was in no story)."""
    from shared.engine.offline.generation import _hand_over, _strongest
    from shared.engine.offline.grouping import _Story

    first = _Story([0], 0.89)  # said first, weaker than the two after it
    second = _Story([2, 3], 0.93)
    third = _Story([5], 0.95)
    last = _Story([7], 0.60)
    kept, cut = _strongest([first, second, third, last], 2)
    assert kept == [second, third]  # the strongest two, in text order
    vectors = np.eye(8)
    vectors[7] = vectors[5]  # the last need speaks of what the third does
    assert _hand_over([st.members for st in cut], kept, vectors) == {0, 1}
    assert second.members == [2, 3, 0]  # nothing written before it: the first need quotes it
    assert third.members == [5, 7]  # the need written before it
    assert (second.writing, third.writing) == (2, 5)  # their main statements stay
    # quoted by a need it is not about, the first need's statement gives it no criterion; the
    # last one's, about the need that quotes it, may
    assert second.evidence == {0} and third.evidence == set()


def test_a_statement_handed_to_a_need_it_is_not_about_is_evidence_only() -> None:
    """Talk of a need that could not be written is quoted by the need before it (nothing is
    lost), but drafted only when it is about that need: "You have the menu button in between."
    is no criterion of "Provide a phone" (dev, ES2006c)."""
    from shared.engine.offline.grouping import ATTACH_SIMILARITY, _Story

    vectors = np.zeros((4, 3))
    vectors[0] = [1.0, 0.0, 0.0]  # the need
    vectors[1] = [0.6, 0.8, 0.0]  # cosine 0.6 with it: about it
    vectors[2] = [0.1, 0.0, np.sqrt(0.99)]  # cosine 0.1: about something else
    vectors[3] = [0.0, 0.0, 1.0]  # like that one, and nothing like what the need says
    assert 0.1 < ATTACH_SIMILARITY < 0.6
    need = _Story([0], 0.9)
    assert need.take([1, 2], vectors) == []
    assert need.members == [0, 1, 2] and need.writing == 0
    assert need.evidence == {2}
    # what the need is about is what its own statements say, not what it only quotes; its own
    # statement handed back stays what it was
    need.take([0, 3], vectors)
    assert need.evidence == {2, 3} and need.members == [0, 1, 2, 3]


def test_a_follow_up_handed_to_the_need_it_follows_is_about_it_as_the_grouping_would_say() -> None:
    """Said right after the need ("Officers need to check a number plate ..." "That has to work
    on their handheld, and it has to be quick, under two seconds."), a statement is about it at the
    lower similarity the grouping attaches a near statement with; the same said far away is not."""
    from shared.engine.offline.grouping import (
        ATTACH_SIMILARITY,
        ELABORATION_GAP,
        NEAR_ATTACH_SIMILARITY,
        _Story,
    )

    far = ELABORATION_GAP + 5
    vectors = np.zeros((far + 1, 2))
    vectors[0] = [1.0, 0.0]
    cosine = (NEAR_ATTACH_SIMILARITY + ATTACH_SIMILARITY) / 2
    vectors[1] = vectors[far] = [cosine, np.sqrt(1 - cosine**2)]
    near_need, far_need = _Story([0], 0.9), _Story([0], 0.9)
    near_need.take([1], vectors)
    far_need.take([far], vectors)
    assert near_need.evidence == set() and far_need.evidence == {far}


def test_no_story_is_cut_below_the_cap() -> None:
    from shared.engine.offline.generation import _strongest
    from shared.engine.offline.grouping import _Story

    kept, cut = _strongest([_Story([4], 0.7), _Story([1], 0.9)], 12)
    assert [st.members for st in kept] == [[1], [4]] and cut == []


@pytest.mark.parametrize(
    ("statement", "readable"),
    [
        ("So probably plastic or something .", True),  # "Make it of plastic"
        ("Yeah , titanium .", True),
        ("It should be original .", False),  # "Make it original": one word names no need
        # how the product must be, in one quality word
        ("And then it must be easy to use .", True),  # "Make it easy to use"
        ("So it has to be very robust .", True),
        ("And then it can break .", False),  # "Make it break": no quality
        # people are what a rule limits, though "people" and "team" are no content words
        ("No more than two people from the same team off on the same day.", True),
        ("No more than two of them .", False),  # "Limit them": nothing named
    ],
)
def test_a_material_or_a_quality_can_be_a_story_of_its_own(statement: str, readable: bool) -> None:
    """One content word is too little to write a story from, but for a material decided on
    (TS3010a's "So probably plastic or something ." was quoted by "Provide some rubber") or a
    quality the product must have ("Make it very robust", product-wide, a story of its own)."""
    from shared.engine.offline.generation import readable as stands
    from shared.engine.offline.phrasing import write_story

    assert stands(write_story([statement])) is readable


def test_a_limit_on_people_is_a_story_of_its_own(generator: OfflineGenerator) -> None:
    """ "No more than two people from the same team off on the same day" is a rule of its own.
    Was: its title "Limit people from the same team off" counted one content word, so the rule
    and what was said of it were quoted by the story before it, the balance on the home screen."""
    stories = _interview(
        generator,
        "Gary: So the balance has to be on the home screen, like, straight away when you log in.\n"
        "Priti: Also, um, no more than two people from the same team off on the same day."
        " That's a hard rule in the warehouse.\n"
        "Gary: Well, only in the warehouse. Office teams don't care.\n"
        "Priti: Okay, so it's a setting per team then.\n",
    )
    limit = next(s for s in stories if s.title.startswith("Limit people"))
    assert limit.source_quotes[0].startswith("Also, um, no more than two people")
    assert "No more than two people from the same team off on the same day." in (
        limit.acceptance_criteria
    )
    balance = next(s for s in stories if "balance" in s.title)
    assert not any("two people" in q for q in balance.source_quotes)


def test_a_short_remark_goes_with_what_was_just_said(generator: OfflineGenerator) -> None:
    """The annual-leave meeting: "I think that's the policy." is said of the carry-over just
    before it. Was: quoted by the rule on people off on the same day, said earlier, which it
    reads more like."""
    stories = _interview(
        generator,
        "Rachel: Okay so, um, we're here to talk about the annual leave tool. Gary, you've been collecting complaints?\n"
        "Gary: Yeah. So, the big thing is people don't know how many days they've got left. They email HR every week.\n"
        "Gary: So the balance has to be on the home screen, like, straight away when you log in.\n"
        "Rachel: Right.\n"
        "Priti: And managers, uh, they need to approve requests from their phone, they're never at a desk.\n"
        "Gary: With a reminder if they haven't done it in, say, two days.\n"
        "Rachel: Two days is fine.\n"
        "Priti: Also, um, no more than two people from the same team off on the same day. That's a hard rule in the warehouse.\n"
        "Gary: Well, only in the warehouse. Office teams don't care.\n"
        "Priti: Okay, so it's a setting per team then.\n"
        "Rachel: What about carrying over days?\n"
        "Gary: Up to five days can be carried over into next year. I think that's the policy.\n"
        "Priti: It's five, yes.\n"
        "Rachel: And the calendar view, do we want that?\n"
        "Gary: A team calendar would be nice, so people can see who's off before they book.\n"
        "Priti: I'm not sure about showing the reason though, like sick leave. That's private.\n"
        "Gary: No, just off or not off, no reason.\n"
        "Rachel: Okay. And payroll?\n"
        "Priti: Payroll needs an export at the end of every month, CSV is fine.\n"
        "Gary: Oh and it needs to work on the old Windows laptops in the depot, they're still on Edge.\n"
        "Rachel: Great, I think that's it. I'll write it up.\n",
    )
    carry = next(s for s in stories if "carr" in s.title.lower())
    assert carry.source_quotes[1:] == ["I think that's the policy."]
    limit = next(s for s in stories if s.title.startswith("Limit people"))
    assert "I think that's the policy." not in limit.source_quotes
    assert "Okay, so it's a setting per team then." in limit.source_quotes


def test_keep_it_to_a_figure_corrects_it(generator: OfflineGenerator) -> None:
    """ "Let's keep it to four steps, five is too many." corrects the figure just said. Was: the
    story kept "five steps", with the criterion "The product keeps it to four steps."."""
    stories = _interview(
        generator,
        "Tom: The dashboard should show a checklist of five steps that ticks itself off as they"
        " go.\n"
        "Nadia: Let's keep it to four steps, five is too many.\n"
        "Tom: Four, okay.\n",
    )
    checklist = stories[0]
    assert checklist.title == "Show a checklist of four steps"
    assert checklist.superseded_quotes == [
        "The dashboard should show a checklist of five steps that ticks itself off as they go."
    ]


def test_an_onboarding_meeting(generator: OfflineGenerator) -> None:
    """An onboarding meeting written for the offline engine, of a kind the datasets lack. Was:
    "Provide pre-fill the company name and address", "Step" (from "a checklist on the dashboard,
    like five steps, ..."), "Provide single sign-on with Google would help too", the chat
    button's criterion "... park SSO for the next quarter.", and tracking where people drop off
    folded into the checklist as its criterion (it names the checklist's steps)."""
    stories = _interview(
        generator,
        "Nadia: Okay, let's get going. This is the onboarding revamp for the invoicing app. Tom, you talked to the customers?\n"
        "Tom: Yeah, six interviews. The main complaint is that setup takes forever. People give up before they send their first invoice.\n"
        "Nadia: So what do we need?\n"
        "Tom: New accounts should be able to import their customer list from a CSV file, instead of typing it all in.\n"
        "Priya: And from Xero. Half of them come from Xero.\n"
        "Nadia: Xero too, okay. Anything on the company details?\n"
        "Tom: We should pre-fill the company name and address from the VAT number if they give us one.\n"
        "Priya: That only works for EU numbers, mind.\n"
        "Tom: Fine, EU only for now.\n"
        "Nadia: What about the first invoice?\n"
        "Priya: A sample invoice they can edit, with their logo already on it.\n"
        "Tom: And a checklist on the dashboard, like five steps, that ticks itself off as they go.\n"
        "Nadia: Let's keep it to four steps, five is too many.\n"
        "Tom: Four, okay.\n"
        "Priya: Can we make sure they can skip any step? Some people just want to send one invoice.\n"
        "Nadia: Yes, every step can be skipped.\n"
        "Tom: Single sign-on with Google would help too, a lot of them asked.\n"
        "Nadia: Let's park SSO for the next quarter, it's not onboarding really.\n"
        "Priya: What if they get stuck?\n"
        "Tom: A chat button on every onboarding screen that goes to support during office hours.\n"
        "Nadia: Outside office hours it should show the help centre instead.\n"
        "Priya: Also, we have to track where people drop off, per step, so we know what to fix.\n"
        "Nadia: Great. I'll send round the notes.\n",
    )
    titles = [s.title for s in stories]
    assert "Pre-fill the company name and address from the VAT number" in titles
    assert "Provide a checklist on the dashboard" in titles
    assert "Provide single sign-on with Google" in titles
    assert "Track where people drop off, per step" in titles
    assert not any("park" in c.lower() for s in stories for c in s.acceptance_criteria)


def test_a_roles_own_need_reads_in_one_content_word(generator: OfflineGenerator) -> None:
    """ "Both parents should see the trip" is the parents' need, though "see" is no content word.
    Was: no title that read, so the statement was quoted by the medical-information story before
    it, as its criterion "Both parents see the trip, but only one needs to sign."."""
    stories = _interview(
        generator,
        "Amy: Medical info. Teachers on the trip need allergies and emergency contacts, offline,"
        " because there's no signal in the Alps.\n"
        "Ken: That data gets deleted thirty days after the trip. GDPR.\n"
        "Sara: Good. What about kids with two households?\n"
        "Amy: Both parents should see the trip, but only one needs to sign.\n",
    )
    trip = next(s for s in stories if s.title == "See the trip")
    assert trip.description.startswith("As a parent, I want to see the trip")
    medical = next(s for s in stories if "allergies" in s.title)
    assert not any("parents" in c for c in medical.acceptance_criteria)


def _interview(generator: OfflineGenerator, text: str) -> list[StoryDraft]:
    """The stories the generator writes from a transcript given as its lines."""
    return generator.generate(segment_of(normalize(text)), GenerationContext()).draft.stories


def test_a_revised_figure_of_a_detail_is_drafted_and_the_detail_superseded(
    generator: OfflineGenerator,
) -> None:
    """A help-desk kick-off (written for this test): the targets are a detail of the SLA clock,
    and "actually, make it one day for normal" changes one of them. Was: a story "Make it one day
    for normal" of its own, and the SLA clock's criterion kept "two days for normal"."""
    stories = _interview(
        generator,
        "Raj: We need an SLA clock on every ticket. Four hours for high, two days for normal.\n"
        "Lena: Actually, make it one day for normal, two days is too slow.\n"
        "Hannah: Okay, one day. And managers want a weekly report of breached tickets.\n",
    )
    assert [s.title for s in stories] == [
        "Provide an SLA clock on every ticket",
        "Provide a weekly report of breached tickets",
    ]
    clock = stories[0]
    assert clock.superseded_quotes == ["Four hours for high, two days for normal."]
    assert "Actually, make it one day for normal, two days is too slow." in clock.source_quotes
    assert clock.acceptance_criteria == ["Four hours for high, one day for normal."]
    # a case supposed for the sake of argument ("let's say I am on channel eight") revises no
    # figure (it had made the story's example "eight for instance")
    stories = _interview(
        generator,
        "Ana: We need a way to go straight to a channel number, twenty five for instance.\n"
        "Ben: Uh, twenty five.\n"
        "Ana: Yeah, let's say I am on channel eight now.\n",
    )
    assert all(s.superseded_quotes == [] for s in stories), stories


_CALL_SUMMARY = (
    "Subject: Notes from today's call with Greenleaf Garden Centres\n\n"
    "Quick summary of the call with Marta and Joe about the click-and-collect site.\n\n"
    "They want customers to order plants online and pick them up at their nearest store within"
    " two hours. Stock levels on the site need to come from the tills, Marta was clear that"
    " showing something as available when it isn't is the worst thing we could do. Joe asked"
    " whether we could update stock every night; we agreed that isn't good enough and it has to"
    " be at least every fifteen minutes.\n\n"
    "Store staff need a simple screen listing today's collections in order of pick-up time, and"
    " they mark each order as collected when the customer arrives. If an order isn't collected"
    " within three days it goes back into stock and the customer gets a refund automatically."
    " Actually Marta came back on this at the end: make it five days for large items like trees,"
    " three days for everything else.\n\n"
    "Payment is by card only at checkout, no cash on collection.\n"
)


def test_a_correction_goes_to_the_latest_need_with_a_figure_of_its_kind(
    generator: OfflineGenerator,
) -> None:
    """A call summary in prose (written for this test). "Actually ..., make it five days for
    large items, three days for everything else" corrects the days an uncollected order is kept,
    the latest figure of its kind. Was: it revised "every fifteen minutes" of the stock updates
    into "every five minutes" (an older need, another figure), and the story it then made of the
    refund rule was written from it ("Provide marta came back on this at the end")."""
    stories = _interview(generator, _CALL_SUMMARY)
    titles = [s.title for s in stories]
    assert not any("marta" in t.lower() for t in titles), titles
    assert not any(q.startswith("Joe asked") for s in stories for q in s.superseded_quotes), titles
    (often,) = [s for s in stories if any(q.startswith("Joe asked") for q in s.source_quotes)]
    assert "fifteen minutes" in often.description, often.description
    (refund,) = [s for s in stories if any("refund" in q for q in s.source_quotes)]
    assert any(q.startswith("Actually Marta") for q in refund.source_quotes)
    assert any(c.startswith("Five days for large items") for c in refund.acceptance_criteria)
    assert "Provide a simple screen listing today's collections" in titles


def test_an_onboarding_meeting_names_its_roles_lists_and_answers(
    generator: OfflineGenerator,
) -> None:
    """An onboarding-portal meeting (written for this test). Was: "This is about the onboarding
    portal ..." quoted; "As a user, I want starters to upload ..."; "As a user, ... finished my
    paperwork" (a hiring manager said it, of their starters' paperwork); the checklist's items
    quoted under the IT ticket; "Two weeks before.", the answer to a question about the welcome
    pack, a criterion of the IT ticket; "it has to work on a phone" a criterion of it too."""
    stories = _interview(
        generator,
        "Priya: Okay, let's get going. This is about the onboarding portal for new starters.\n"
        "Priya: So new starters should upload their documents in the portal, not by email.\n"
        "Tom: Yes. And the documents must be deleted ninety days after the start date.\n"
        "Ana: As a hiring manager I'd like to see which of my new starters have finished their"
        " paperwork.\n"
        "Priya: A checklist per starter, then. Contract signed, right-to-work check, bank"
        " details, equipment ordered.\n"
        "Tom: Equipment is IT's job, they need to get a ticket automatically when the contract"
        " is signed.\n"
        "Ana: How long before the start date do we send the welcome pack?\n"
        "Tom: Two weeks before.\n"
        "Tom: Oh, and it has to work on a phone. Half of them don't have a laptop until day"
        " one.\n",
    )
    by_title = {s.title: s for s in stories}
    assert not any("This is about" in q for s in stories for q in s.source_quotes)
    upload = by_title["Upload their documents in the portal"]
    assert upload.description == "As a new starter, I want to upload my documents in the portal."
    paperwork = by_title["See which of my new starters have finished their paperwork"]
    assert paperwork.description.startswith("As a hiring manager, I want to see which of my new")
    assert paperwork.description.endswith("have finished their paperwork.")
    checklist = by_title["Provide a checklist per starter"]
    assert checklist.acceptance_criteria == [
        "Contract signed, right-to-work check, bank details, equipment ordered."
    ]
    ticket = by_title["Provide a ticket automatically when the contract is signed"]
    assert ticket.source_quotes == [
        "Equipment is IT's job, they need to get a ticket automatically when the contract is"
        " signed."
    ]
    assert "Work on a phone" in by_title


def test_an_interview_where_the_questions_propose_and_ask_what_to_leave_out(
    generator: OfflineGenerator,
) -> None:
    """A delivery-planning interview (written for this test): the interviewer proposes, the
    interviewee says yes; asks whose need, and what to leave out. Was: the confirmed proposal in
    no story; "As a user, I want the route on their phone, so that they can call if nobody's."
    (the question named the drivers, "in" cut as a dangling word); "Provide the drivers hate
    being watched" beside no story for the answer "Live tracking."."""
    stories = _interview(
        generator,
        "Interviewer: Would it help if the system grouped the orders by area for you?\n"
        "Dana: Yes, massively.\n"
        "Interviewer: What about the drivers, what do they need?\n"
        "Dana: They need the route on their phone, with the customer's phone number, so they can"
        " call if nobody's in.\n"
        "Interviewer: Anything you'd want to leave out?\n"
        "Dana: Live tracking. The drivers hate being watched, and we don't need it.\n",
    )
    by_title = {s.title: s for s in stories}
    grouped = by_title["Group the orders by area"]
    assert grouped.source_quotes == [
        "Would it help if the system grouped the orders by area for you?",
        "Yes, massively.",
    ]
    route = by_title["Provide the route on their phone"]
    assert route.description.startswith("As a driver, I want the route on their phone")
    assert route.description.endswith("so that they can call if nobody's in.")
    left_out = by_title["Leave out live tracking"]
    assert left_out.source_quotes[1] == "The drivers hate being watched, and we don't need it."
    assert left_out.acceptance_criteria == []
    assert len(stories) == 3, list(by_title)
    # a proposal turned down, or one the answer doubts, is no need
    stories = _interview(
        generator,
        "Interviewer: Would it help if the system grouped the orders by area for you?\n"
        "Dana: Yes, but only in December.\n",
    )
    assert not any("Group the orders" in s.title for s in stories)
    # a yes-or-no question is no question of what to leave out: its answer is left out of nothing
    stories = _interview(
        generator,
        "Ana: When you push the button, you produce enough energy with the dynamo.\n"
        "Ben: But you don't need a battery?\n"
        "Ana: To make electricity.\n",
    )
    assert not any(s.title.startswith("Leave out") for s in stories), stories


def test_what_is_done_in_a_case_a_question_asks_about_is_a_need(
    generator: OfflineGenerator,
) -> None:
    """ "And if a delivery fails?" "The driver marks it as failed with a reason, ..." (written
    for this test): what is done in that case is a need, with the case as its condition and
    "it" named by the question. Was: in no story (the classifier reads the answer as talk). An
    answer that does nothing ("That's one Euro.") is still no need."""
    stories = _interview(
        generator,
        "Interviewer: And if a delivery fails?\n"
        "Dana: The driver marks it as failed with a reason, and it comes back to me the next"
        " morning to rebook.\n",
    )
    (failed,) = stories
    assert failed.title == "Mark the delivery as failed with a reason"
    assert failed.source_quotes[0] == "And if a delivery fails?"
    assert failed.acceptance_criteria[0].startswith(
        "Given a driver, when a delivery fails, then the driver marks the delivery as failed"
    )
    stories = _interview(
        generator,
        "Ana: And what if we use only plastic for the case?\nBen: That's one Euro, I think.\n",
    )
    assert stories == []


def test_a_figure_answering_a_question_is_its_need_and_a_later_one_revises_it(
    generator: OfflineGenerator,
) -> None:
    """ "How long before the start date do we send the welcome pack?" "Two weeks before."
    "Let's say ten working days, two weeks is too long ..." (written for this test): the
    question says the need, the answer its figure, which the meeting then revised. Was: the
    answer a criterion "Two weeks before." of the need said before the question (an IT ticket)."""
    stories = _interview(
        generator,
        "Tom: Equipment is IT's job, they need to get a ticket automatically when the contract"
        " is signed.\n"
        "Ana: How long before the start date do we send the welcome pack?\n"
        "Tom: Two weeks before.\n"
        "Priya: Let's say ten working days, two weeks is too long if someone starts on a"
        " Monday.\n"
        "Tom: Fine, ten working days.\n",
    )
    by_title = {s.title: s for s in stories}
    ticket = by_title["Provide a ticket automatically when the contract is signed"]
    assert len(ticket.source_quotes) == 1
    pack = by_title["Send the welcome pack"]
    assert pack.description == (
        "As a user, I want to send the welcome pack ten working days before the start date."
    )
    assert pack.superseded_quotes == ["Two weeks before."]
    assert "How long before the start date do we send the welcome pack?" in pack.source_quotes
    assert pack.acceptance_criteria == [
        "We send the welcome pack ten working days before the start date."
    ]


def test_a_correction_said_after_other_needs_revises_the_need_with_that_figure(
    generator: OfflineGenerator,
) -> None:
    """Gym-booking captions (written for this test, read from .srt): "Actually, make it one hour
    before the class" is said four needs after "they can cancel up to two hours before the class
    starts" and still revises it; "and they can cancel ..." after "the gym wants members to book
    classes from the app" is another need, the members'. Was: one story "Cancel up to two hours
    ..." with the booking as its criterion, and "Make it one hour before the class" of its own."""
    srt = (
        "1\n00:00:01,000 --> 00:00:05,000\n"
        "Okay so the gym wants members to book classes from the app.\n\n"
        "2\n00:00:05,500 --> 00:00:07,900\n"
        "Right, and they can cancel up to two hours before the class starts.\n\n"
        "3\n00:00:08,000 --> 00:00:09,500\n"
        "If they cancel later than that, they lose the credit.\n\n"
        "4\n00:00:10,500 --> 00:00:15,000\n"
        "Instructors need to see who has booked, on the tablet at the front desk.\n\n"
        "5\n00:00:15,500 --> 00:00:20,000\n"
        "The app has to be in English and Spanish.\n\n"
        "6\n00:00:20,500 --> 00:00:25,000\n"
        "And the first person on the waiting list gets the place automatically.\n\n"
        "7\n00:00:25,500 --> 00:00:30,000\n"
        "Actually, make it one hour before the class, two hours is too strict.\n"
    )
    text = extract_text(srt.encode(), "srt")
    stories = _interview(generator, text)
    by_title = {s.title: s for s in stories}
    assert "Book classes from the app" in by_title, list(by_title)
    cancel = by_title["Cancel up to one hour before the class starts"]
    assert cancel.description == (
        "As a member, I want to cancel up to one hour before the class starts."
    )
    assert cancel.superseded_quotes == [
        "Right, and they can cancel up to two hours before the class starts."
    ]
    assert not any(t.startswith("Make it") for t in by_title), list(by_title)
    # what follows when that limit is passed is a rule of the need, not a need of its own (it
    # was "Lose the credit when they cancel later": "As a user, I want to lose the credit.")
    assert cancel.acceptance_criteria == [
        "Given a member, when they cancel later, then they lose the credit."
    ]
    assert not any("credit" in t for t in by_title), list(by_title)


def test_needs_said_at_length_in_an_interview_are_stories_of_their_own(
    generator: OfflineGenerator,
) -> None:
    """An interviewee's needs in everyday phrasing: each its own story with a literal title. Was:
    "automatic reminders" folded as the criterion "Automatic reminders is available." of "Set
    their availability" (two alike sentences about volunteers), the digest email quoted under
    "Let only coordinators delete a shift", and "Phone numbers stay private"."""
    stories = _interview(
        generator,
        "Ben: So the main pain right now is that volunteers sign up on a spreadsheet and then"
        " forget, so we'd really like automatic reminders.\n"
        "Anna: And it's important that volunteers' phone numbers stay private.\n"
        "Ben: We were thinking maybe a weekly digest email for coordinators.\n"
        "Anna: Only coordinators can delete a shift.\n"
        "Ben: It should be possible for volunteers to set their availability for the month.\n",
    )
    assert [s.title for s in stories] == [
        "Send automatic reminders",
        "Keep volunteers' phone numbers private",
        "Send a weekly digest email for coordinators",
        "Let only coordinators delete a shift",
        "Set their availability for the month",
    ]
    assert all(len(s.source_quotes) == 1 for s in stories)


def test_rules_on_named_roles_and_their_settings_are_stories_of_their_own(
    generator: OfflineGenerator,
) -> None:
    """An IT helpdesk interview (written for this test, not from the datasets). Was: "The big one
    for me is that staff can raise a ticket ..." quoted under the knowledge base (no story), "And
    contractors shouldn't see tickets from other departments." quoted under single sign-on (a
    contracted prohibition read as no need, and "and" as a follow-up), "Make the limit five
    attachments per ticket", "Provide the duty engineer, straight away", "Make closed tickets get
    archived after ninety days" and "Search before they raise a ticket"."""
    stories = _interview(
        generator,
        "Owen: The big one for me is that staff can raise a ticket without emailing us.\n"
        "Grace: The limit is five attachments per ticket, anything more and the mailbox chokes.\n"
        "Owen: Right, and anything marked urgent also needs the duty engineer, straight away.\n"
        "Grace: Closed tickets get archived after ninety days, that's the retention policy.\n"
        "Owen: It has to work with our single sign-on, nobody wants another password.\n"
        "Grace: And contractors shouldn't see tickets from other departments.\n"
        "Grace: The default priority is medium, people always pick urgent otherwise.\n"
        "Owen: Oh, and a knowledge base they can search before they raise a ticket, that would"
        " cut the calls.\n",
    )
    assert [s.title for s in stories] == [
        "Raise a ticket without emailing us",
        "Set the limit to five attachments per ticket",
        "Require the duty engineer for anything marked urgent",
        "Archive closed tickets after ninety days",
        "Work with our single sign-on",
        "Do not let contractors see tickets from other departments",
        "Set the default priority to medium",
        "Provide a knowledge base they can search",
    ]
    assert all(len(s.source_quotes) == 1 for s in stories)
    urgent = stories[2]
    assert urgent.acceptance_criteria == [
        "Anything marked urgent also needs the duty engineer, straight away."
    ]


def test_a_correction_and_another_roles_need_in_an_interview(generator: OfflineGenerator) -> None:
    """A parents' evening interview (written for this test, not from the datasets). Was: one story
    "Make the slots twelve minutes" (as a teacher) quoting every line but the last two: "actually,
    ..." corrects the figure of the need before it (the two read too unlike for a revision), "and
    teachers can ..." is another role's need (not a follow-up), "Set which evenings they're
    available" reads as a title, and "Cancel their slots and every parent affected gets an
    email" was two clauses in one title."""
    stories = _interview(
        generator,
        "Luis: Parents book a ten-minute slot with each teacher online.\n"
        "Ines: And teachers can set which evenings they're available, some only do Tuesdays.\n"
        "Maya: How long are the slots?\n"
        "Luis: Actually, make the slots twelve minutes, ten is never enough.\n"
        "Ines: The office cancels their slots and every parent affected gets an email straight"
        " away.\n"
        "Luis: Bookings from the app go into the school diary.\n",
    )
    assert [s.title for s in stories] == [
        "Book a twelve-minute slot with each teacher online",
        "Set which evenings they're available",
        "Cancel their slots",
        "Make bookings from the app go into the school diary",
    ]
    booking = stories[0]
    assert booking.description == (
        "As a parent, I want to book a twelve-minute slot with each teacher online."
    )
    assert booking.superseded_quotes == ["Parents book a ten-minute slot with each teacher online."]
    assert stories[1].description.startswith("As a teacher, ")


def test_each_item_of_a_notes_list_is_a_need_of_its_own(generator: OfflineGenerator) -> None:
    """Workshop notes (written for this test, not from the datasets). Was: the first four items
    quoted under "Mark a job done" (items the classifier is less sure of joined the nearest
    confident one), "We won't build a customer portal this year." in no story, "As an engineer,
    I want the product to reassign a job" and "Update when a part is used on a job"."""
    stories = _interview(
        generator,
        "## Jobs\n"
        "- Engineers see today's jobs on their phone, in route order.\n"
        "- Each job shows the customer address, the fault reported and the parts on the van.\n"
        "- Engineers can mark a job done, add photos and get the customer to sign on screen.\n"
        "- Dispatch can reassign a job to another engineer until it is started.\n"
        "## Parts\n"
        "- The van stock updates when a part is used on a job.\n"
        "## Decisions\n"
        "- We won't build a customer portal this year.\n",
    )
    assert [s.title for s in stories] == [
        "See today's jobs on their phone",
        "Show the customer address",
        "Mark a job done",
        "Reassign a job to another engineer until it is started",
        "Update the van stock",
        "Leave out a customer portal this year",
    ]
    assert all(len(s.source_quotes) == 1 for s in stories)
    assert stories[3].description.startswith("As a dispatcher, ")


def test_a_fragment_a_figure_corrected_and_a_relative_thats_in_an_interview(
    generator: OfflineGenerator,
) -> None:
    """A library interview (written for this test, not from the datasets). Was: "And, uh,
    fines." (a fragment the classifier is sure of) the main statement of the overdue-books need,
    drafted "Provide fines" with that need as its criterion; "let's say twice" not read as a
    correction of "up to three times"; "Reserve a book that's out" read as no title, so the
    reservation was criteria of the fines story; "from their phone" in an "I want"."""
    stories = _interview(
        generator,
        "Tom: Members should be able to renew a book from their phone, up to three times.\n"
        "Hannah: Three times, and then what?\n"
        "Tom: Actually, let's say twice, three is too generous.\n"
        "Aisha: From the staff side, I need to see which books are overdue by more than a week,"
        " per branch.\n"
        "Aisha: And, uh, fines.\n"
        "Aisha: We stopped charging fines for children last year, so the app must never show a"
        " fine on a child's account.\n"
        "Hannah: What about reservations?\n"
        "Tom: Members can reserve a book that's out, and they get a text when it's ready to"
        " collect.\n",
    )
    titles = [s.title for s in stories]
    assert titles == [
        "Renew a book from their phone, up to twice",
        "See which books are overdue by more than a week",
        "Do not show a fine on a child's account",
        "Reserve a book that's out",
    ]
    renew, overdue = stories[0], stories[1]
    assert renew.description == "As a member, I want to renew a book from my phone, up to twice."
    assert renew.superseded_quotes == [
        "Members should be able to renew a book from their phone, up to three times."
    ]
    assert overdue.source_quotes[0].startswith("From the staff side, I need to see")
    assert "And, uh, fines." in overdue.source_quotes


def test_a_figure_corrected_in_words_the_classifier_reads_as_talk(
    generator: OfflineGenerator,
) -> None:
    """ "Let's make it six." is talk to the classifier, and still corrects the figure said just
    before (was: the story kept "eight" and never quoted the correction). A short remark that
    names something else is no correction of it."""
    stories = _interview(
        generator,
        "Dev: Pickers should batch up to eight orders in one trolley run.\n"
        "Mei: Hmm, eight is a lot.\n"
        "Mei: Let's make it six.\n"
        "Carla: Okay, six.\n"
        "Dev: The handhelds are old, so it has to run on Android 9.\n",
    )
    batch = stories[0]
    assert batch.title == "Batch up to six orders in one trolley run"
    assert batch.description == "As a picker, I want to batch up to six orders in one trolley run."
    assert batch.superseded_quotes == [
        "Pickers should batch up to eight orders in one trolley run."
    ]
    assert "Let's make it six." in batch.source_quotes


def test_a_short_remark_naming_something_else_corrects_nothing() -> None:
    from shared.engine.offline.grouping import _names_only_figures_or_shares

    earlier = "I was thinking four hours max, then you have to rebook."
    assert not _names_only_figures_or_shares(
        "Okay, let's say two, minimum two for group rooms.", earlier
    )
    assert _names_only_figures_or_shares("Let's make it two.", earlier)
    assert _names_only_figures_or_shares("Okay, two hours then.", earlier)


def test_notes_under_a_wont_heading_are_left_out(generator: OfflineGenerator) -> None:
    """Workshop notes in MoSCoW sections (written for this test, not from the datasets). Was:
    "Provide paying by cheque" (the opposite of the decision) and "Business permits." quoted
    under the "Could" item before it; a label naming the thing was dropped from its title
    ("Provide 20 days per household per year"); "Make parking services approve"; "Apply for a
    permit online and upload proof of address" (two actions in one title)."""
    stories = _interview(
        generator,
        "# Parking permits workshop\n"
        "## Must\n"
        "- Residents apply for a permit online and upload proof of address.\n"
        "- Parking services approve or reject each application within 5 working days.\n"
        "## Should\n"
        "- Visitors' permits: 20 days per household per year.\n"
        "## Could\n"
        "- Let residents swap the car on a permit themselves.\n"
        "## Won't (this phase)\n"
        "- Business permits.\n"
        "- Paying by cheque.\n",
    )
    assert [s.title for s in stories] == [
        "Apply for a permit online",
        "Approve each application",
        "Provide visitors' permits",
        "Swap the car on a permit",  # the residents' own action (no "themselves" in a title)
        "Leave out business permits",
        "Leave out paying by cheque",
    ]
    assert stories[0].acceptance_criteria == [
        "Residents apply for a permit online and upload proof of address."
    ]
    assert stories[1].description == (
        "As a user, I want parking services to approve or reject each application within 5"
        " working days."
    )
    assert stories[2].acceptance_criteria == ["20 days per household per year."]
    assert stories[3].description == "As a resident, I want to swap the car on a permit myself."
    assert all(len(s.source_quotes) == 1 for s in stories)


def test_a_figure_corrected_with_a_reason_and_a_slot_that_goes_back(
    generator: OfflineGenerator,
) -> None:
    """A dental practice interview (written for this test, not from the datasets). Was: "Make
    that twenty-five" a story of its own (its reason, "twenty doesn't cover our costs", read as
    a quantity, so no correction) and "Make the slot goes back on the waiting list"."""
    stories = _interview(
        generator,
        "Nadia: And if they cancel?\n"
        "Omar: Then the slot goes back on the waiting list, and the first person on the list"
        " gets offered it.\n"
        "Nadia: Anything about payments?\n"
        "Omar: Deposits. New patients pay a twenty pound deposit when they book online, it comes"
        " off the bill.\n"
        "Omar: Actually make that twenty-five, twenty doesn't cover our costs.\n",
    )
    assert [s.title for s in stories] == [
        "Put the slot back on the waiting list",
        "Pay a twenty-five pound deposit when they book online",
    ]
    deposit = stories[1]
    assert deposit.description == (
        "As a patient, I want to pay a twenty-five pound deposit when I book online."
    )
    assert deposit.superseded_quotes == [
        "New patients pay a twenty pound deposit when they book online, it comes off the bill."
    ]


def test_a_survey_finding_is_no_story(generator: OfflineGenerator, monkeypatch) -> None:
    """'Fifty percent of the users only use ten percent of the buttons': a share of people who do
    or find something is what the meeting learnt (the labelling guide's NULL example), read as a
    need it wrote "Provide fifty percent of the users only use ten percent". It is neither a
    story nor quoted; a share said as a need, or a share of a thing, stays one."""
    lines = [
        "Marketing: Seventy five percent of users find most remote controls ugly .",
        "Marketing: And uh fifty percent of the users only use ten percent of the buttons .",
        "Marketing: The other twenty five percent have no fashion sense .",
        "Marketing: So the remote control should have only a few big buttons .",
        "Maria: Okay, fifty percent of routine slots online, adjustable per doctor.",
        "Priya: Ninety percent of users must finish a booking in under two minutes.",
    ]
    stories = _all_confident(generator, monkeypatch, lines)
    quoted = [q for s in stories for q in s.source_quotes]
    for finding in ("find most remote controls ugly", "only use ten percent", "fashion sense"):
        assert not any(finding in q for q in quoted), [s.title for s in stories]
    for need in ("a few big buttons", "routine slots online", "finish a booking"):
        assert any(need in s.source_quotes[0] for s in stories), [s.title for s in stories]


def test_how_things_are_now_is_evidence_of_a_need_not_one(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """'At the moment we ring them and half the time they don't pick up.': how things are done
    now is the problem a need answers. Read as a need, it started a story of its own and gave
    criteria ("Most of the time people give us a card slip, ..."); it is quoted by the need it is
    said with, and gives that need no criterion. Said with a need cue, it is a need."""
    lines = [
        "Linda: The system should text the patient when an appointment moves .",
        "Linda: At the moment we ring them and half the time they don't pick up .",
        "Tom: Most of the time people give us a card slip for the taxi .",
        "Tom: Right now it has to work offline on the train as well .",
    ]
    stories = _all_confident(generator, monkeypatch, lines, alike=(0, 1))
    titles = [s.title for s in stories]
    (text,) = [s for s in stories if "text the patient" in s.source_quotes[0]]
    assert any("At the moment we ring them" in q for q in text.source_quotes), titles
    criteria = [c for s in stories for c in s.acceptance_criteria]
    assert not any("ring them" in c or "card slip" in c for c in criteria), criteria
    assert not any("card slip" in s.source_quotes[0] for s in stories), titles
    assert any("work offline" in s.source_quotes[0] for s in stories), titles


@pytest.mark.parametrize(
    ("main", "criterion"),
    [
        # the main statement gave no title: what it says is a criterion of the story written
        # from the next one (it had been left out: the main statement gave none)
        (
            "Marcus: Yes , from a list , not typed in , because people make codes up .",
            "From a list, not typed in.",
        ),
        ("Ben: I think uh it should be more like , you know .", None),  # talk stays talk
    ],
)
def test_a_main_statement_that_gives_no_title_may_give_a_criterion(
    generator: OfflineGenerator, monkeypatch, main: str, criterion: str | None
) -> None:
    lines = [main, "Marcus: For a project trip it should go to the project code instead ."]
    (story,) = _all_confident(generator, monkeypatch, lines, alike=(0, 1))
    assert story.title == "Go to the project code for a project trip"
    # the statement it is written from is the main quote, the one that gave no title after it
    assert story.source_quotes == [lines[1].split(": ", 1)[1], main.split(": ", 1)[1]]
    assert story.acceptance_criteria == ([criterion] if criterion else [])


def test_a_need_with_a_clause_of_its_own_after_it_is_a_story(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """'The contractor should upload a photo when they close the job': the clause after 'when'
    has its own subject. Its title read as a clause of talk, so the need and what was said with
    it were quoted, as criteria, by the need before it ('Assign a job to a contractor ...')."""
    lines = [
        "Manager: I'd like to assign a job to a contractor from a list .",
        "Manager: The contractor should upload a photo when they close the job .",
        "Tenant rep: And the tenant gets asked to confirm it's fixed .",
    ]
    stories = _all_confident(generator, monkeypatch, lines, alike=(1, 2))
    titles = [s.title for s in stories]
    assert titles == [
        "Assign a job to a contractor from a list",
        "Upload a photo when they close the job",
    ]
    assign, upload = stories
    assert assign.description.startswith("As a manager,")  # the speaker's own need
    assert assign.acceptance_criteria == []
    assert any("confirm it's fixed" in c for c in upload.acceptance_criteria)


def test_agreement_alone_starts_no_story(generator: OfflineGenerator, monkeypatch) -> None:
    """'Agreed.' agrees to what was said and names nothing. Its decision cue made it a need
    said plainly, so, fairly confident, it started a story, and the need said after it (which
    elaborates it) was written as that story, whose main quote was 'Agreed.'."""
    import numpy as np

    lines = [
        "Dan: When they pay by card , we round up to the nearest pound .",
        "Priya: Agreed .",
        "Priya: And they can pause round-ups any time .",
    ]
    p = {"Agreed .": 0.78, "And they can pause round-ups any time .": 0.77}
    stories = _classified(
        generator, monkeypatch, lines, p, lambda n: np.array([[1.0, 0], [0, 1.0], [0, 1.0]])
    )
    assert [s.source_quotes[0] for s in stories] == [
        "When they pay by card , we round up to the nearest pound ."
    ]  # the follow-up and the agreement are quoted by the need they follow
    assert "And they can pause round-ups any time ." in stories[0].source_quotes


def test_what_is_never_a_story_takes_no_place_under_the_cap(
    embedder: MiniLMEmbedder, monkeypatch
) -> None:
    """Notes with two action items and twelve needs (the segment's cap): the action items are no
    stories, but they took two of the twelve places, so the last two needs were cut and quoted
    by the need before them."""
    needs = [
        "- Engineers see today's jobs on their phone.",
        "- Dispatcher can drag a job to another engineer.",
        "- Each job shows the customer address.",
        "- Engineers add notes and photos to a job.",
        "- Everything captured offline syncs later.",
        "- Van stock is tracked per van.",
        "- Using a part takes it off the van stock.",
        "- Rosa sets a minimum per part.",
        "- Customer signs on the engineer's phone.",
        "- The job report is emailed to the customer.",
        "- Engineers log their travel time.",
        "- Dispatcher sees every engineer on a map.",
    ]
    lines = [
        "## Actions",
        "- Ben: confirm MDM supports the app by Friday.",
        "- Kemal: list the top 20 parts per van.",
        "## Jobs",
        *needs,
    ]
    cap = GenerationConfig(max_stories_per_segment=len(needs))
    generator = OfflineGenerator(embedder, PipelineConfig(generation=cap))
    # every item a confident need, the headings talk
    stories = _classified(generator, monkeypatch, lines, {"Actions": 0.02, "Jobs": 0.02})
    assert [s.source_quotes[0] for s in stories] == [n[2:] for n in needs]


def test_an_item_under_a_wont_heading_is_left_out_whatever_it_reads_like(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """'## Won't (this phase)' / '- Timesheets.': the classifier reads one word as talk, so the
    item was no story (and "Leave out timesheets" names one thing, which read as too little)."""
    lines = [
        "## Jobs",
        "- Engineers see today's jobs on their phone.",
        "## Won't (this phase)",
        "- Route optimisation.",
        "- Timesheets.",
    ]
    p = {"Jobs": 0.02, "Won't (this phase)": 0.02, "Timesheets.": 0.22}
    stories = _classified(generator, monkeypatch, lines, p)
    assert [s.title for s in stories] == [
        "See today's jobs on their phone",
        "Leave out route optimisation",
        "Leave out timesheets",
    ]


@pytest.mark.parametrize("alike", [(0, 1), ()])
def test_a_doubt_about_what_was_just_said_is_no_need(
    generator: OfflineGenerator, monkeypatch, alike: tuple[int, ...]
) -> None:
    """'I'm not sure about that, some people want to hide their savings from themselves.': an
    objection to the need before it. Its "want" made it a need said plainly, so it started a
    story ("Hide their savings from themselves"); it is quoted with the need it doubts when it
    reads like it, and is no story either way."""
    lines = [
        "Dan: The balance on the home screen should include the pots .",
        "Mia: I'm not sure about that , some people want to hide their savings from themselves .",
    ]
    stories = _all_confident(generator, monkeypatch, lines, alike=alike)
    assert [s.title for s in stories] == ["Include the pots in the balance on the home screen"]
    assert (len(stories[0].source_quotes) == 2) is bool(alike)


def test_a_figure_judged_then_revised_in_a_word(generator: OfflineGenerator, monkeypatch) -> None:
    """'two weeks is harsh' judges the figure just said and starts no story; 'let's say one
    week' revises it: one story that carries 'one week', the first statement superseded."""
    lines = [
        "Rob: If someone misses three classes in a month , they shouldn't be able to book for"
        " two weeks .",
        "Priya: Hmm , two weeks is harsh .",
        "Priya: Let's say one week .",
        "Hana: And cancellations ?",
        "Rob: Members can cancel up to two hours before the class .",
    ]
    p = {"Hmm , two weeks is harsh .": 0.9, "Let's say one week .": 0.3}
    stories = _classified(generator, monkeypatch, lines, p)
    (banned,) = [s for s in stories if any("book for" in q for q in s.superseded_quotes)]
    assert "one week" in banned.acceptance_criteria[0], banned
    assert "two weeks" not in " ".join(banned.acceptance_criteria), banned
    assert list(banned.superseded_quotes) == [
        "If someone misses three classes in a month , they shouldn't be able to book for"
        " two weeks ."
    ]
    assert not any(s.title.lower().endswith("harsh") for s in stories), [s.title for s in stories]


def test_the_persona_the_main_statement_names_comes_first(
    generator: OfflineGenerator, monkeypatch
) -> None:
    lines = [
        "Hana: So members should be able to book classes online .",
        "Rob: Yes , and on their phone , most of them are on the app already for the gym card .",
        "Priya: From the instructor side , I need to see who's booked , on the tablet .",
    ]
    (story, *_) = _all_confident(generator, monkeypatch, lines, alike=(0, 1, 2))
    assert story.description.startswith("As a member, I want to book classes online"), story


def test_notes_problems_today_and_each_item_left_out(generator: OfflineGenerator) -> None:
    """Items under a heading over how things are now ('## Problems today') are the problems the
    needs answer, no story and no criterion; each item under '## Won't' is a decision of its
    own ('Leave out sick leave', never 'Leave'), and a clause after a need that says how some
    people are ('half the warehouse staff don't have a desk') leaves nothing out."""
    notes = (
        "# Leave requests: workshop notes\n\n"
        "## Problems today\n"
        "- Requests come in by email and get lost; HR re-keys them into the spreadsheet.\n\n"
        "## Decisions\n"
        "- Employees request leave in the portal, not by email.\n"
        "- The portal must work on phones, half the warehouse staff don't have a desk.\n\n"
        "## Won't (this phase)\n"
        "- Sick leave (stays with HR).\n"
        "- Time-off-in-lieu.\n"
    )
    stories = generator.generate(segment_of(normalize(notes)), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert "Leave out sick leave" in titles and "Leave out time-off-in-lieu" in titles, titles
    assert not any("email and get lost" in q for s in stories for q in s.source_quotes), titles
    assert not any("desk" in s.title for s in stories), titles
    (phones,) = [s for s in stories if "phones" in s.source_quotes[0]]
    assert phones.title == "Work on phones"


def test_a_meeting_that_says_what_it_is_and_the_problem_as_it_is(
    generator: OfflineGenerator,
) -> None:
    """A help-desk kick-off (written for this test): its first line says what the meeting is and
    the problem "the main thing is we get tickets by email ..." is how it is now: neither is
    quoted nor gives a criterion of the form's story (it had been the form's criterion "The main
    thing is we get tickets ...", and the kick-off line one of its quotes)."""
    stories = _interview(
        generator,
        "Hannah: Right, so this is the kick-off for the new IT help desk portal.\n"
        "Raj: From the support side, the main thing is we get tickets by email with no"
        " information, no device, no location, nothing.\n"
        "Hannah: So the form should ask for the device and the location, and those fields are"
        " mandatory.\n",
    )
    (form,) = stories
    assert form.title == "Ask for the device and the location"
    assert not any("kick-off" in q for q in form.source_quotes), form.source_quotes
    assert not any("main thing" in c for c in form.acceptance_criteria), form.acceptance_criteria


def test_a_library_app_meeting_with_roles_in_brackets(generator: OfflineGenerator) -> None:
    """A meeting on a library app (written for this test, not from the datasets), speakers
    labelled "Name (role):". Was: the labels quoted and turned into criteria ("Priya, product
    owner: ..."); "Given a member, when a book will be back, then the biggest complaint we get is
    ..."; "See the expected return date of a book that's"; "Make five days enough" written from
    a judgement of the hold period; "Provide card number and a PIN" beside the login story that
    says it in full; the PIN reset, said after "Then", folded into the login; "As a user, I want only if the member to have an email address on file.";
    "The product meets WCAG 2.1 AA, the council requires."; "We abolished fines last year." as
    a criterion."""
    stories = _interview(
        generator,
        "Priya (product owner): Today is about the mobile app for the city libraries.\n"
        "Tom (librarian): The biggest complaint we get is that people can't see when a book"
        " will be back.\n"
        "Priya (product owner): So members should be able to see the expected return date of a"
        " book that's on loan.\n"
        "Sara (developer): How long do we hold a reserved book?\n"
        "Tom (librarian): Seven days at the moment.\n"
        "Priya (product owner): Members need to reserve a book that is on loan.\n"
        "Priya (product owner): Hmm, I think five days is enough.\n"
        "Sara (developer): Do we need to handle fines?\n"
        "Tom (librarian): We abolished fines last year, so no.\n"
        "Priya (product owner): So no fines in the app.\n"
        "Sara (developer): And login, is that the library card number?\n"
        "Tom (librarian): Card number and a PIN, same as the self-service machines.\n"
        "Priya (product owner): The app must let members log in with their library card number"
        " and PIN.\n"
        "Priya (product owner): Then we need a PIN reset by email.\n"
        "Priya (product owner): But only if the member has an email address on file.\n"
        "Priya (product owner): It has to meet WCAG 2.1 AA, the council requires it.\n",
    )
    titles = [s.title for s in stories]
    assert titles == [
        "See the expected return date of a book on loan",
        "Reserve a book that is on loan",
        "Leave out fines in the app",
        "Log in with their library card number and PIN",
        "Provide a PIN reset by email",
        "Meet WCAG 2.1 AA",
    ]
    criteria = [c for s in stories for c in s.acceptance_criteria]
    assert not any("(" in q or "owner" in q for s in stories for q in s.source_quotes)
    assert not any(
        w in c for c in criteria for w in ("complaint", "abolished", "requires", "owner")
    )
    login, reset = stories[3:5]
    assert login.source_quotes[1].startswith("Card number and a PIN")  # the answer, as evidence
    # "Then we need ..." names a need of its own; the condition said after it is of that need
    assert reset.acceptance_criteria == [
        "A PIN reset by email is available only if the member has an email address on file."
    ]
    assert stories[0].description.startswith("As a member, I want to see")


def test_a_figure_said_on_its_own_after_a_need_is_a_detail_of_it(
    generator: OfflineGenerator,
) -> None:
    """An interview on van checks (written for this test, not from the datasets). Was "Provide
    every ten thousand miles", a story of its own beside the service reminder it is the figure
    of; "Leave out if something fails a brake light"; the fleet manager's need "As a user"."""
    stories = _interview(
        generator,
        "Interviewer: Thanks for making time. Can you walk me through how you manage the vans today?"
        "\n"
        "Marco (fleet manager): Sure. We have about forty vans. Right now every driver fills in a paper checklist before they leave the depot, tyres, lights, oil, that kind of thing."
        "\n"
        "Marco (fleet manager): The sheets come back to me at the end of the week and half of them are missing or you can't read them."
        "\n"
        "Interviewer: What would you want instead?"
        "\n"
        "Marco (fleet manager): I want the drivers to do the check on their phone before they can start the shift. And if something fails, like a brake light is out, I need to know straight away, not on Friday."
        "\n"
        "Interviewer: Should a failed check stop the driver from taking the van?"
        "\n"
        "Marco (fleet manager): For the safety items, yes. Brakes, tyres, lights. For the rest, like a dirty windscreen, they can still go but it gets logged."
        "\n"
        "Interviewer: Okay. Anything about servicing?"
        "\n"
        "Marco (fleet manager): Yeah, I'd like a reminder when a van is due for its service, based on the mileage. Every ten thousand miles."
        "\n"
        "Marco (fleet manager): Oh and the MOT dates, those too."
        "\n"
        "Interviewer: How do drivers report damage today?"
        "\n"
        "Marco (fleet manager): They phone me, or they don't. Photos would help a lot. They should be able to take photos of any damage and attach them to the check."
        "\n"
        "Interviewer: Who else needs access?"
        "\n"
        "Marco (fleet manager): The workshop lads need to see the defects so they can plan repairs. But they shouldn't be able to change the drivers' reports."
        "\n"
        "Interviewer: Anything else?"
        "\n"
        "Marco (fleet manager): It has to work without signal, some of our depots are in the middle of nowhere. It can upload later."
        "\n"
        "Interviewer: Great, that's really helpful."
        "\n",
    )
    titles = [s.title for s in stories]
    assert titles == [
        "Do the check on their phone",
        "Know straight away when something fails",
        "Send a reminder when a van is due",
        "Take photos of any damage",
        "Work without signal",
    ]
    reminder = stories[2]
    assert reminder.description.startswith("As a fleet manager, I want a reminder")
    assert "Every ten thousand miles." in reminder.source_quotes
    assert "Every ten thousand miles." in reminder.acceptance_criteria


def test_workshop_notes_with_context_and_not_now_sections(generator: OfflineGenerator) -> None:
    """Workshop notes on a school trips app (written for this test, not from the datasets). Was:
    "Make trip consent on paper today" (how it is done now), the "## Not now" items as wanted ("Provide integration with the
    timetable system"), and "I want the office to see a list ... and can send a reminder"."""
    stories = _interview(
        generator,
        "# School trips app — requirements workshop, 14 Nov"
        "\n"
        ""
        "\n"
        "Attendees: Head of Year 7 (Claire), Office manager (Dev), two parents, IT"
        "\n"
        ""
        "\n"
        "## Context"
        "\n"
        "- Trip consent is on paper today; slips get lost in bags and the office chases them by phone."
        "\n"
        "- Payments are taken in cash at reception."
        "\n"
        ""
        "\n"
        "## Agreed"
        "\n"
        "- Parents give consent for a trip in the app, one tap per child."
        "\n"
        "- Each trip has a deadline for consent; after it, the organiser sees who hasn't replied."
        "\n"
        "- Parents can pay for a trip by card in the app. Partial payments allowed (instalments), max 3."
        "\n"
        "- The office sees a list of unpaid trips per child and can send a reminder to those parents."
        "\n"
        "- Medical info (allergies, medication) is shown to the trip leader only, not to other staff."
        "\n"
        "- Families on free school meals pay nothing; the app must not show this to other parents."
        "\n"
        ""
        "\n"
        "## Open questions"
        "\n"
        "- Do we need consent from both parents when they live apart? (Claire to ask the safeguarding lead)"
        "\n"
        "- Refunds if a trip is cancelled?"
        "\n"
        ""
        "\n"
        "## Not now"
        "\n"
        "- Trip photo gallery."
        "\n"
        "- Integration with the timetable system."
        "\n",
    )
    titles = [s.title for s in stories]
    assert not any("paper" in t for t in titles)  # "... on paper today": how it is done now
    assert titles[-2:] == [
        "Leave out trip photo gallery",
        "Leave out integration with the timetable system",
    ]
    office = next(s for s in stories if s.title.startswith("See a list of unpaid trips"))
    assert office.description.endswith("per child and send a reminder to those parents.")


def test_what_is_said_after_a_need_adds_to_it(generator: OfflineGenerator) -> None:
    """A help desk kick-off as captions (written for this test, not from the datasets). Was:
    "Attach a screenshot" written from the "And they should ..." said after the form's need, the
    form's statement its evidence; "Set it after triage" the main statement of the priority rule
    ("it" being the priority just named); "Provide those fields"."""
    text = extract_text(
        (
            b"WEBVTT\n"
            b"\n"
            b"00:00:01.000 --> 00:00:06.000\n"
            b"<v Hannah>Right, so this is the kick-off for the new IT help desk portal.\n"
            b"\n"
            b"00:00:06.500 --> 00:00:14.000\n"
            b"<v Raj>From the support side, the main thing is we get tickets by email with no information, no device, no location, nothing.\n"
            b"\n"
            b"00:00:14.500 --> 00:00:21.000\n"
            b"<v Hannah>So the form should ask for the device and the location, and those fields are mandatory.\n"
            b"\n"
            b"00:00:21.500 --> 00:00:27.000\n"
            b"<v Raj>Yes. And they should be able to attach a screenshot.\n"
            b"\n"
            b"00:00:27.500 --> 00:00:35.000\n"
            b"<v Lena>What about priorities? At the moment everyone marks everything as urgent.\n"
            b"\n"
            b"00:00:35.500 --> 00:00:44.000\n"
            b"<v Hannah>Users shouldn't set the priority at all. The support team sets it after triage.\n"
            b"\n"
            b"00:00:44.500 --> 00:00:52.000\n"
            b"<v Raj>We need an SLA clock on every ticket. Four hours for high, two days for normal.\n"
            b"\n"
            b"00:00:52.500 --> 00:00:58.000\n"
            b"<v Lena>Actually, make it one day for normal, two days is too slow.\n"
            b"\n"
            b"00:00:58.500 --> 00:01:05.000\n"
            b"<v Hannah>Okay, one day. And managers want a weekly report of breached tickets.\n"
            b"\n"
            b"00:01:05.500 --> 00:01:12.000\n"
            b"<v Raj>The portal has to use single sign-on with our Microsoft accounts, nobody wants another password.\n"
            b"\n"
            b"00:01:12.500 --> 00:01:18.000\n"
            b"<v Lena>Could we also have a knowledge base so people fix simple things themselves?\n"
            b"\n"
            b"00:01:18.500 --> 00:01:24.000\n"
            b"<v Hannah>Good idea, but not for the first release.\n"
            b"\n"
            b"00:01:24.500 --> 00:01:30.000\n"
            b"<v Raj>I'll send round the current ticket categories after the meeting.\n"
        ),
        "vtt",
    )
    stories = _interview(generator, text)
    form, attach, priority = stories[:3]
    assert form.title == "Ask for the device and the location"
    assert form.source_quotes[0].startswith("So the form should ask")
    assert attach.title == "Attach a screenshot"
    assert priority.title == "Do not let users set the priority"
    assert priority.source_quotes == [
        "Users shouldn't set the priority at all.",
        "The support team sets it after triage.",
    ]


def test_a_figure_corrected_right_after_it_is_said_is_a_decision_of_its_own(
    generator: OfflineGenerator,
) -> None:
    """ "Each household gets fifty visitor hours a month." corrected at once ("Actually, make it
    sixty, ...") is a story with the new figure and the old statement superseded (was quoted,
    fifty and sixty both as criteria, by the wardens' story before it)."""
    text = normalize(
        "Grace: And the wardens' handhelds need to see the new permit within five minutes,"
        " otherwise we ticket people who just paid.\n"
        "Owen: Visitor permits too. Each household gets fifty visitor hours a month.\n"
        "Owen: Actually, make it sixty, we had complaints about fifty.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert "Give each household sixty visitor hours a month" in titles, titles
    (hours,) = [s for s in stories if s.title.startswith("Give each household")]
    assert hours.superseded_quotes == ["Each household gets fifty visitor hours a month."]
    (wardens,) = [s for s in stories if "wardens" in s.description]
    assert not any("visitor" in q for q in wardens.source_quotes), wardens.source_quotes
    assert not any("fifty" in c for s in stories for c in s.acceptance_criteria)


def test_an_answer_to_a_question_on_something_new_is_a_need_of_its_own(
    generator: OfflineGenerator,
) -> None:
    """ "Do they need a PO number on it?" "Yes, ... the company admin can add a PO number ...":
    a need of its own, not more of the invoice said before the question (which was written
    from it, "Add a PO number", with the invoice as a criterion); a scope said first without a
    comma ("For companies with more than ten members we send ...") stays out of the title."""
    text = normalize(
        "Ana: For companies with more than ten members we send one invoice for the whole"
        " company, not one per person.\n"
        "Nina: Do they need a PO number on it?\n"
        "Ana: Yes, some of them do, so the company admin can add a PO number before the invoice"
        " goes out.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_title = {s.title: s for s in stories}
    assert set(by_title) == {
        "Send one invoice for the whole company",
        "Add a PO number before the invoice is sent",
    }, list(by_title)
    invoice = by_title["Send one invoice for the whole company"]
    assert "for companies with more than ten members" in invoice.description
    assert not any("PO" in q for q in invoice.source_quotes)
    # the company admin adds it: their need (was "As an admin, I want the product to add ...")
    po = by_title["Add a PO number before the invoice is sent"]
    assert (
        po.description
        == "As a company admin, I want to add a PO number before the invoice is sent."
    )


@pytest.mark.parametrize(
    ("said", "plain"),
    [
        ("Members want to download all their invoices as PDFs from the member app.", True),
        ("Staff need to sign in with their badge.", True),
        ("Members wanted that years ago.", False),
    ],
)
def test_what_a_named_role_wants_or_needs_to_do_is_a_need_said_plainly(
    said: str, plain: bool
) -> None:
    """What a role the meeting names wants or needs to do starts a story of its own (the
    invoices as PDFs had been quoted by the VAT statement before it, and written from it)."""
    from shared.engine.offline.grouping import states_a_need

    assert states_a_need(said) is plain


def test_an_answer_to_a_topic_raised_as_a_question_is_a_need_of_its_own(
    generator: OfflineGenerator,
) -> None:
    """ "And VAT?" "VAT at twenty percent on everything except ...": a need of its own, a rate
    charged (it had been quoted by the late payers' story before it)."""
    text = normalize(
        "Tom: Late payers get a reminder after seven days, and after fourteen days their door"
        " access is paused.\n"
        "Nina: And VAT?\n"
        "Ana: VAT at twenty percent on everything except the meeting room catering, which is"
        " zero-rated.\n"
        "Tom: Members want to download all their invoices as PDFs from the member app.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert "Charge VAT at twenty percent" in titles, titles
    late = [s for s in stories if "Late payers" in s.source_quotes[0]]
    assert late and not any("VAT" in q for s in late for q in s.source_quotes)


def test_a_returns_meeting_answers_roles_needed_and_what_is_not_done(
    generator: OfflineGenerator,
) -> None:
    """A returns-portal call (written for this test, not from the datasets). Was: the answer to
    "how do returns work today?" a criterion ("Given a customer, when the parcel arrives ...,
    then customers email us, we send them a PDF label by hand."), "Start returns of delivery",
    "Provide a finance manager to approve the refund" (as a user), "Start a return themselves
    from their order page", and "We're not doing exchanges yet" a criterion of another story."""
    stories = _interview(
        generator,
        "Priya: No worries. So, Dan, how do returns work today?\n"
        "Dan: Customers email us, we send them a PDF label by hand, and when the parcel arrives"
        " someone in the warehouse checks it and tells finance to refund. It takes about nine"
        " days end to end.\n"
        "Priya: And what should the new portal do?\n"
        "Dan: Customers should be able to start a return themselves from their order page, pick"
        " the items and a reason, and get a prepaid label straight away.\n"
        "Grace: Returns have to be started within thirty days of delivery.\n"
        "Grace: Damaged ones need a finance manager to approve the refund, and the customer gets"
        " an email saying why.\n"
        "Dan: Oh, and customer service agents need to start a return on behalf of a customer who"
        " rings.\n"
        "Priya: Anything we're not doing in the first release?\n"
        "Grace: Exchanges. We're not doing exchanges yet, they just return and reorder.\n",
    )
    by_title = {s.title: s for s in stories}
    assert set(by_title) == {
        "Start a return from their order page",
        "Start returns within thirty days of delivery",
        "Approve the refund for damaged ones",
        "Start a return on behalf of a customer who rings",
        "Leave out exchanges",
    }, list(by_title)
    criteria = [c for s in stories for c in s.acceptance_criteria]
    assert not any("PDF label" in c or "nine days" in c for c in criteria), criteria
    start = by_title["Start a return from their order page"]
    assert start.description == "As a customer, I want to start a return myself from my order page."
    refund = by_title["Approve the refund for damaged ones"]
    assert (
        refund.description == "As a finance manager, I want to approve the refund for damaged ones."
    )
    assert refund.acceptance_criteria == [
        "A finance manager approves the refund for damaged ones, and the customer gets an email"
        " saying why."
    ]
    assert any("exchanges yet" in q for q in by_title["Leave out exchanges"].source_quotes)


def test_a_housekeeping_call_roles_a_corrected_detail_and_what_stays_on_paper(
    generator: OfflineGenerator,
) -> None:
    """A hotel housekeeping call (written for this test, not from the datasets). Was: the
    housekeepers' list "As a receptionist" (housekeeper was no role) with the as-is "Reception
    phones upstairs ..." a criterion (the question ended "today, Leon?"); the supervisor's
    inspection quoted by another story ("So it's clean, then inspected, then ready." had become
    its main statement); "Within four hours" and "two hours" both criteria (the correction came
    with its reason, and both waited for the need they are details of); "Minibar charges." no
    story ("leaving out" was no question on what to leave out)."""
    stories = _interview(
        generator,
        "Marta: Yes, we can hear you. So what's the problem today, Leon?\n"
        "Leon: At the moment the supervisors print a room list every morning. Reception phones"
        " upstairs to ask if a room is ready, all day long.\n"
        "Marta: Okay. What do the housekeepers need?\n"
        "Leon: Each housekeeper should see their own list of rooms for the shift on a phone, in"
        " the order they should clean them.\n"
        "Aisha: A supervisor has to inspect the room before it goes back on sale. So it's clean,"
        " then inspected, then ready.\n"
        "Leon: Housekeepers also need to report a fault, like a broken lamp, with a photo, and it"
        " goes to maintenance.\n"
        "Marta: How quickly does maintenance have to respond?\n"
        "Aisha: Within four hours for normal faults. Actually, let's say two hours, guests"
        " complain a lot.\n"
        "Marta: Anything we're leaving out for now?\n"
        "Leon: Minibar charges. That stays on paper for now.\n",
    )
    by_title = {s.title: s for s in stories}
    assert set(by_title) == {
        "See their own list of rooms for the shift",
        "Inspect the room before it goes back on sale",
        "Report a fault",
        "Leave out minibar charges",
    }, list(by_title)
    rooms = by_title["See their own list of rooms for the shift"]
    assert rooms.description.startswith("As a housekeeper, I want to see my own list of rooms")
    assert not any("Reception phones" in c for c in rooms.acceptance_criteria)
    inspect = by_title["Inspect the room before it goes back on sale"]
    assert inspect.description == (
        "As a supervisor, I want to inspect the room before it goes back on sale."
    )
    fault = by_title["Report a fault"]
    # the corrected answer is drafted with the question's words (v112; was "Within two hours
    # for normal faults.")
    assert "Maintenance responds within two hours for normal faults." in fault.acceptance_criteria
    assert not any("four hours" in c for c in fault.acceptance_criteria)
    assert fault.superseded_quotes == ["Within four hours for normal faults."]


@pytest.mark.parametrize(
    ("question", "answer", "whole"),
    [
        (
            "How far ahead can they book?",
            "Six weeks, I'd say.",
            "They can book up to six weeks ahead.",
        ),
        (
            "How quickly does maintenance have to respond?",
            "Within four hours for normal faults.",
            "Maintenance has to respond within four hours for normal faults.",
        ),
        ("How long do we keep it?", "Ninety days.", "We keep it ninety days."),
        ("How many pets can an owner add?", "Five.", "An owner can add five pets."),
        ("How often should it sync?", "Every ten minutes.", "It syncs every ten minutes."),
        # no one doing anything, or no figure: nothing to say whole
        ("How long is the trial?", "Thirty days.", None),
        ("How far ahead can they book?", "Not too far.", None),
        # how it is now, or more than a figure: no decision to say whole
        ("How long do we hold a reserved book?", "Seven days at the moment.", None),
        (
            "How far ahead can people book now?",
            "Routine appointments we open four weeks ahead.",
            None,
        ),
        (
            "How far ahead can people book now?",
            "Four weeks.",
            "People can book up to four weeks ahead.",
        ),
    ],
)
def test_a_figure_answered_is_said_with_the_questions_words(
    question: str, answer: str, whole: str | None
) -> None:
    from shared.engine.offline.grouping import answer_said_whole

    assert answer_said_whole(question, answer) == whole


def test_a_vet_practice_call_figures_answered_topics_named_and_pronouns_kept(
    generator: OfflineGenerator,
) -> None:
    """A vet practice call (written for this test, not from the datasets). Was: "Six weeks, I'd
    say." in no story (an answer to "How far ahead can they book?", too unlike the booking
    statement to attach); "And they need to see which vet it is." in no story (the classifier
    rates it 0.34); "The number one thing is booking." a criterion; "Send a reminder by
    text" (the title had cut "or email"); "... before the pharmacy gets." (its "it" cut)."""
    stories = _interview(
        generator,
        "Sophie: So what do pet owners actually want from it?\n"
        "Raj: Honestly, the number one thing is, um, booking. People want to book an appointment"
        " online, you know, without ringing us at eight in the morning.\n"
        "Kate: And they need to see which vet it is.\n"
        "Sophie: Right. How far ahead can they book?\n"
        "Kate: Six weeks, I'd say.\n"
        "Kate: So a reminder by text or email, two weeks before the booster is due.\n"
        "Raj: Owners should be able to request a repeat prescription in the app, and a vet has to"
        " approve it before the pharmacy gets it.\n",
    )
    by_title = {s.title: s for s in stories}
    booking = by_title["Book an appointment online"]
    assert "Six weeks, I'd say." in booking.source_quotes
    assert "They can book up to six weeks ahead." in booking.acceptance_criteria
    criteria = [c for s in stories for c in s.acceptance_criteria]
    assert not any("number one" in c for c in criteria), criteria
    assert "Send a reminder by text or email" in by_title
    # a need said plainly that the classifier rates low (was in no story; "it is" kept)
    assert by_title["See which vet it is"].source_quotes == [
        "And they need to see which vet it is."
    ]
    prescription = by_title["Request a repeat prescription in the app"]
    assert prescription.acceptance_criteria[0].endswith("before the pharmacy gets it.")


def test_inspection_notes_a_figure_revised_in_an_item_and_a_qualified_role(
    generator: OfflineGenerator,
) -> None:
    """Workshop notes for a site inspection app (written for this test, not from the datasets).
    Was: "Omar: make it 48 hours, the reviewers can't do 24." a criterion beside the 24 hours
    (a correction with its reason read as the need said again, and a second sentence of an item
    read as its detail); "A senior inspector reviews every report ..." quoted by the report's
    story "As a user"; "Provide each failed item needs at least one photo"."""
    stories = _interview(
        generator,
        "## Decisions\n"
        "- Inspectors complete the checklist on a tablet, on site.\n"
        "- Each failed item needs at least one photo and a comment.\n"
        "- The report is generated as a PDF and emailed to the client within 24 hours of the"
        " inspection. Omar: make it 48 hours, the reviewers can't do 24.\n"
        "- A senior inspector reviews every report before it goes to the client.\n"
        "- Checklists are versioned; an inspection keeps the version it started with.\n",
    )
    by_title = {s.title: s for s in stories}
    report = by_title["Generate the report as a PDF"]
    assert report.superseded_quotes == [
        "The report is generated as a PDF and emailed to the client within 24 hours of the"
        " inspection."
    ]
    assert report.acceptance_criteria == [
        "The report is generated as a PDF and emailed to the client within 48 hours of the"
        " inspection."
    ]
    review = by_title["Review every report before it goes to the client"]
    assert review.description == (
        "As a senior inspector, I want to review every report before it goes to the client."
    )
    photo = by_title["Provide at least one photo and a comment"]
    assert (
        photo.description
        == "As a user, I want at least one photo and a comment for each failed item."
    )
    versioned = by_title["Make checklists versioned"]
    assert versioned.acceptance_criteria[0].endswith("the version it started with.")


PARKING = (
    "Priya: Okay, shall we begin? This is about the resident parking permit service.\n"
    "Tom: Right now residents fill in a paper form and post it, and we type it all in.\n"
    "Priya: And what do we want instead?\n"
    "Tom: Residents should apply online and upload a proof of address, like a council tax bill"
    " or a tenancy agreement.\n"
    "Grace: And the permit has to be issued within two working days if the documents are fine.\n"
    "Priya: What if they're not fine?\n"
    "Grace: Then an officer rejects it with a reason, and the resident gets an email telling"
    " them what to fix.\n"
    "Tom: Each household can have up to two permits. A third one costs more, we'd need to check"
    " the price with finance.\n"
    "Priya: Do visitors need something?\n"
    "Grace: Yes, residents buy visitor vouchers, in books of ten.\n"
    "Tom: Residents also want to see when their permit expires, and get a reminder a month"
    " before.\n"
    "Priya: How do they pay?\n"
    "Tom: By card online.\n"
    "Tom: We don't take cash anymore.\n"
    "Grace: Officers need to check a number plate on the street and see straight away if it has"
    " a valid permit. That has to work on their handheld, and it has to be quick, under two"
    " seconds.\n"
    "Priya: What about blue badge holders?\n"
    "Grace: They park free, so no permit, but we keep their badge number on file.\n"
    "Tom: And the whole thing must meet the accessibility standard, WCAG 2.2 AA, it's the law"
    " for us.\n"
    "Priya: Anything we're not doing in this phase?\n"
    "Tom: Business permits. Those come later.\n"
)


def test_parking_permit_call_every_need_is_a_story_drafted_as_said(
    generator: OfflineGenerator,
) -> None:
    """A council's parking permit call (written for this test, not from the datasets), one
    segment of fourteen needs. Was: the twelve-story cap of a segment cut "How do they pay?" "By
    card online." and "Business permits." (quoted by other stories); "See when their permit
    expires" read as no capability (its need quoted by another story); "proof of address a
    council tax bill" (the example lost its "like"); "The product checks the price with
    finance." (the team's own work) and "Given an officer, when it has a valid permit, then ..."
    (what is seen read as a condition) as criteria; "under two seconds" in no criterion."""
    stories = _interview(generator, PARKING)
    by_title = {s.title: s for s in stories}
    apply = by_title["Apply online and upload a proof of address"]
    assert (
        apply.description == "As a resident, I want to apply online and upload a proof of address."
    )
    assert apply.acceptance_criteria[0].endswith(
        "proof of address, such as a council tax bill or a tenancy agreement."
    )
    expires = by_title["See when their permit expires"]
    assert expires.source_quotes[0].startswith("Residents also want to see when their permit")
    pay = by_title["Pay by card online"]
    assert pay.description == "As a resident, I want to pay by card online."
    assert {"By card online.", "How do they pay?"} <= set(pay.source_quotes)
    assert "Leave out business permits" in by_title
    check = by_title["Check a number plate on the street"]
    assert not any(c.startswith("Given") for c in check.acceptance_criteria)
    assert any("under two seconds" in c for c in check.acceptance_criteria)
    assert not any("finance" in c for s in stories for c in s.acceptance_criteria)


def test_housekeeping_call_a_narrowing_answer_is_said_with_its_question(
    generator: OfflineGenerator,
) -> None:
    """A hotel housekeeping call (written for this test). Was: "No, only checkouts." a criterion
    as it was said, and "When they finish a room they mark it clean, ..." (a step of the work,
    p 0.85 by the classifier) quoted by the room list's story with no story of its own."""
    stories = _interview(
        generator,
        "Marta: What do the housekeepers need?\n"
        "Leon: Each housekeeper should see their own list of rooms for the shift on a phone, in"
        " the order they should clean them.\n"
        "Aisha: Checkouts first, then stayovers. And VIP arrivals always at the top.\n"
        "Leon: When they finish a room they mark it clean, and reception sees it straight away.\n"
        "Aisha: A supervisor has to inspect the room before it goes back on sale. So it's clean,"
        " then inspected, then ready.\n"
        "Marta: Does every room need an inspection?\n"
        "Aisha: No, only checkouts. Stayovers go straight to ready.\n",
    )
    by_title = {s.title: s for s in stories}
    inspect = by_title["Inspect the room before it goes back on sale"]
    assert "Only checkouts need an inspection." in inspect.acceptance_criteria
    assert "No, only checkouts." in inspect.source_quotes
    assert not any(c.startswith("No,") for c in inspect.acceptance_criteria)
    clean_room = [s for s in stories if s.source_quotes[0].startswith("When they finish a room")]
    assert len(clean_room) == 1 and clean_room[0].title.startswith("Mark it clean")


def test_warehouse_call_a_frequency_corrected_with_sorry_revises_the_need(
    generator: OfflineGenerator,
) -> None:
    """A warehouse picking call (written for this test). Was: "Sorry, every thirty seconds." a
    second criterion beside "refreshed every minute", and "A minute is too slow at peak." a story
    "Make a minute too slow at peak"; "Orders placed before two o'clock ships ..."; "the picker
    marks it short and moves on" after a condition "As a user" and "Mark it short and moves on"."""
    stories = _interview(
        generator,
        "Kim: And if an item is out of stock, the picker marks it short and moves on.\n"
        "Kim: Team leads want a dashboard of open orders per zone, refreshed every minute, so they"
        " can move pickers around.\n"
        "Kim: Sorry, every thirty seconds. A minute is too slow at peak.\n"
        "Sam: Orders placed before two o'clock must ship the same day.\n",
    )
    by_title = {s.title: s for s in stories}
    dashboard = by_title["Provide a dashboard of open orders per zone"]
    assert dashboard.superseded_quotes == [
        "Team leads want a dashboard of open orders per zone, refreshed every minute, so they"
        " can move pickers around."
    ]
    assert any("every thirty seconds" in c for c in dashboard.acceptance_criteria)
    assert not any("every minute" in c for c in dashboard.acceptance_criteria)
    assert not any("too slow" in s.title for s in stories)
    short = by_title["Mark it short and move on"]
    assert short.description == "As a picker, I want to mark it short and move on."
    ship = by_title["Ship the same day"]
    assert "Orders placed before two o'clock ship the same day." in ship.acceptance_criteria


def test_an_answer_to_what_the_meeting_asked_keeps_its_place_under_the_cap(
    embedder: MiniLMEmbedder,
) -> None:
    """The classifier rates "By card online." and "Business permits." low as said alone (0.55);
    under the cap they were the first cut, though each answers what the meeting asked."""
    generator = OfflineGenerator(
        embedder, PipelineConfig(generation=GenerationConfig(max_stories_per_segment=3))
    )
    stories = _interview(
        generator,
        "Tom: Residents should apply online and upload a proof of address.\n"
        "Grace: Officers need to check a number plate on the street.\n"
        "Tom: Residents also want to see when their permit expires.\n"
        "Priya: How do they pay?\n"
        "Tom: By card online.\n"
        "Priya: Anything we're not doing in this phase?\n"
        "Tom: Business permits.\n",
    )
    titles = [s.title for s in stories]
    assert "Pay by card online" in titles and "Leave out business permits" in titles
    assert len(stories) == 3


def test_warehouse_call_a_maybe_for_later_never_displaces_the_need_it_follows(
    generator: OfflineGenerator,
) -> None:
    """Was: "Maybe batch picking next year." (rated 0.76, above the alert's 0.73) the main
    statement of the team lead's alert, titled "Batch picking next year", with the alert as
    its criterion cut to "... or hold."."""
    stories = _interview(
        generator,
        "Dana: What happens to a short item?\n"
        "Kim: The team lead gets an alert and decides whether to ship the order partially or hold"
        " it.\n"
        "Dana: How many orders does a picker do at once?\n"
        "Sam: One at a time for now. Maybe batch picking next year.\n",
    )
    alert = next(s for s in stories if s.source_quotes[0].startswith("The team lead gets"))
    assert alert.title == "Send the team lead an alert"
    assert alert.description == (
        "As a team lead, I want to get an alert and decide whether to ship the order partially"
        " or hold it."
    )
    assert not any("batch" in c.lower() for s in stories for c in s.acceptance_criteria)
    assert not any(s.title.startswith("Batch") for s in stories)


def test_vet_call_what_a_yes_no_answer_says_it_holds_for_is_a_criterion(
    generator: OfflineGenerator,
) -> None:
    """A vet practice call (written for this test). Was: "Not for consultations, ..." and "But
    for prescriptions, yes, ..." quoted with no criterion; "and they can turn it off" (the
    reminders) no criterion either ("turn" names no topic)."""
    stories = _interview(
        generator,
        "Kate: So a reminder by text or email, two weeks before the booster is due.\n"
        "Sophie: Text or email, their choice?\n"
        "Kate: Yeah, their choice, and they can turn it off.\n"
        "Raj: Owners should be able to request a repeat prescription in the app, and a vet has to"
        " approve it before the pharmacy gets it.\n"
        "Sophie: Do we take payment in the app?\n"
        "Raj: Not for consultations, they pay at the desk.\n"
        "Raj: But for prescriptions, yes, they pay when they order.\n",
    )
    by_title = {s.title: s for s in stories}
    assert (
        "They can turn it off." in by_title["Send a reminder by text or email"].acceptance_criteria
    )
    prescription = by_title["Request a repeat prescription in the app"]
    assert "We take payment in the app for prescriptions." in prescription.acceptance_criteria
    assert "We do not take payment in the app for consultations." in (
        prescription.acceptance_criteria
    )


def test_how_things_are_now_and_what_is_left_out_again_start_no_need(
    generator: OfflineGenerator,
) -> None:
    """Was: "Slip in book bags and cash in envelopes" (how consent is collected now, the main
    statement of the reminder said later) and two stories on photos, "Leave out photos" and
    "Provide trip photos" (what someone wants, left out in the same breath)."""
    text = normalize(
        "Helen: Right now it's paper slips in book bags and cash in envelopes.\n"
        "Raj: And half the slips never come back.\n"
        "Helen: Parents should be able to give consent for a trip on their phone.\n"
        "Sofia: A reminder three days before the deadline, and another one the day before.\n"
        "Helen: Anything we're not doing?\n"
        "Sofia: Photos.\n"
        "Sofia: Parents want trip photos, but that's a safeguarding nightmare, let's keep that"
        " out.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert not any("slip" in t.lower() for t in titles), titles
    photos = [s for s in stories if "photos" in s.title.lower()]
    assert [s.title for s in photos] == ["Leave out photos"], titles
    assert len(photos[0].source_quotes) == 2
    assert any(s.source_quotes[0].startswith("A reminder three days") for s in stories), titles


@pytest.mark.parametrize(
    ("said", "now"),
    [
        ("We still print a letter for every trip.", True),
        ("They still ring the office every morning.", True),
        ("It should still work offline.", False),
        ("We still need a letter for every trip.", False),
    ],
)
def test_what_is_still_done_today_describes_now(said: str, now: bool) -> None:
    """Was: "We still print a letter for every trip." a criterion of the trip details' story."""
    from shared.engine.offline.grouping import describes_now

    assert describes_now(said) is now


def test_a_new_need_asked_and_answered_for_what_it_holds_is_a_story(
    generator: OfflineGenerator,
) -> None:
    """Was: "For the residential trip, yes, that's three hundred pounds." a criterion of the
    story said before the question, and "For day trips, no." not read as a no."""
    text = normalize(
        "Sofia: Right, anyone on free school meals gets the trip free.\n"
        "Helen: Good.\n"
        "Helen: Can parents pay in instalments?\n"
        "Sofia: For the residential trip, yes, that's three hundred pounds.\n"
        "Sofia: For day trips, no.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    paid = [s for s in stories if "instalments" in s.title]
    assert [s.title for s in paid] == ["Pay in instalments for the residential trip"], [
        s.title for s in stories
    ]
    assert paid[0].source_quotes[0].startswith("For the residential trip")
    assert "Parents cannot pay in instalments for day trips." in paid[0].acceptance_criteria


def test_what_a_speaker_goes_on_to_say_after_a_short_answer_stays_with_its_need(
    generator: OfflineGenerator,
) -> None:
    """Was: "I don't want to look at a tablet with flour on my hands." a criterion of the
    allergens' story said after it."""
    text = normalize(
        "Priya: For us in the shop, we need a list of what to bake each morning, totals per"
        " product.\n"
        "Tom: Yes, printed.\n"
        "Tom: I don't want to look at a tablet with flour on my hands.\n"
        "Maria: Allergens have to be shown on every product page.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_title = {s.title: s for s in stories}
    assert "Provide a list of what to bake each morning" in by_title, list(by_title)
    listed = by_title["Provide a list of what to bake each morning"]
    assert any("flour" in q for q in listed.source_quotes)
    allergens = [s for s in stories if "allergens" in s.title.lower()]
    assert allergens and not any("flour" in q for q in allergens[0].source_quotes)


def test_a_figure_settled_for_a_need_just_asked_about_is_its_detail_and_can_be_revised(
    generator: OfflineGenerator,
) -> None:
    """Was: "Let's say three instalments for the residential." a story of its own, and the
    correction a second one ("Provide five instalments for the residential")."""
    text = normalize(
        "Helen: Can parents pay in instalments?\n"
        "Sofia: For the residential trip, yes, that's three hundred pounds.\n"
        "Helen: Let's say three instalments for the residential.\n"
        "Sofia: Actually, make it up to five instalments, some families asked for monthly.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert [s.title for s in stories] == ["Pay in instalments for the residential trip"]
    paid = stories[0]
    assert paid.superseded_quotes == ["Let's say three instalments for the residential."]
    assert "Five instalments for the residential." in paid.acceptance_criteria


def test_a_no_to_a_question_on_the_need_just_said_is_its_criterion(
    generator: OfflineGenerator,
) -> None:
    """Was: "No, but they can leave an email if they want updates." a story of its own, handed
    to the need before with a criterion of its own words only."""
    text = normalize(
        "Dave: So residents should be able to report a pothole online with a photo and a pin on a"
        " map.\n"
        "Leah: Do they need to log in?\n"
        "Dave: No, but they can leave an email if they want updates.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert len(stories) == 1, [s.title for s in stories]
    assert "They do not need to log in." in stories[0].acceptance_criteria


def test_a_need_said_in_full_after_a_word_that_takes_the_turn_is_a_story_of_its_own(
    generator: OfflineGenerator,
) -> None:
    """Was: "Right, anyone on free school meals gets the trip free, ..." the main statement of
    the card payments' story, "Pay by card in the app" only one of its criteria."""
    text = normalize(
        "Helen: Agreed, two reminders max.\n"
        "Sofia: Payment. Most trips cost something, ten or fifteen pounds.\n"
        "Helen: Parents pay by card in the app. Some families can't pay, though.\n"
        "Sofia: Right, anyone on free school meals gets the trip free, and the parent shouldn't"
        " see a payment screen at all.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert "Pay by card in the app" in titles, titles
    assert "Give anyone on free school meals the trip free" in titles, titles


def test_a_spoken_topic_label_ends_the_need_before_it(generator: OfflineGenerator) -> None:
    """Was: "Most trips cost something, ten or fifteen pounds." a criterion of "Send two
    reminders max", said before "Payment." opened a new topic."""
    text = normalize(
        "Sofia: A reminder three days before the deadline, and another one the day before.\n"
        "Helen: Agreed, two reminders max.\n"
        "Sofia: Payment. Most trips cost something, ten or fifteen pounds.\n"
        "Helen: Parents pay by card in the app. Some families can't pay, though.\n"
        "Sofia: Right, anyone on free school meals gets the trip free, and the parent shouldn't"
        " see a payment screen at all.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    reminders = [s for s in stories if "reminder" in s.title.lower()]
    assert reminders, [s.title for s in stories]
    for story in reminders:
        assert not any("trips cost" in q for q in story.source_quotes), story


@pytest.mark.parametrize(
    ("lines", "label"),
    [
        (["Helen: Agreed, two reminders max.", "Sofia: Payment.", "Sofia: Most trips cost ..."], 1),
        (["Jo: Claims go to the manager.", "Marcus: Then the ledger.", "Marcus: We use it."], 1),
        # a recap of what was just said, a remark, a figure, an answer: no label
        (
            ["Jo: A short reason, and it's optional.", "Linda: Optional, and short.", "Linda: Ok."],
            0,
        ),
        (["Jo: It will be red.", "Ann: Cool.", "Ann: Next thing."], 0),
        (["Jo: How many?", "Ann: Four.", "Ann: Maybe five."], 0),
        (["Jo: What colour?", "Ann: Green.", "Ann: Dark green."], 0),
        (["Jo: We need a button.", "Ann: Payment.", "Bo: Yes."], 0),
    ],
)
def test_a_speaker_names_the_next_topic_with_a_word_or_two(lines: list[str], label: int) -> None:
    from shared.analysis.capture import sentences_of
    from shared.engine.offline.grouping import _names_the_topic

    sentences = sentences_of(normalize("\n".join(lines) + "\n"))
    assert [_names_the_topic(sentences, j) for j in range(len(sentences))] == [
        j == 1 and bool(label) for j in range(len(sentences))
    ]


def test_yes_to_a_thing_raised_as_a_question_is_a_need_of_that_thing(
    generator: OfflineGenerator,
) -> None:
    """Was: "Like a loaf every Saturday." a criterion of the loyalty card left out, and "Weekly,
    and they can pause it when they're away." one of "Cancel online, any time"."""
    text = normalize(
        "Maria: Allergens have to be shown on every product page.\n"
        "Priya: What about subscriptions? Like a loaf every Saturday.\n"
        "Maria: Yes, people ask for that all the time. Weekly, and they can pause it when they're"
        " away.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_title = {s.title: s for s in stories}
    assert "Provide subscriptions" in by_title, list(by_title)
    quoted = " ".join(by_title["Provide subscriptions"].source_quotes)
    assert "What about subscriptions?" in quoted and "pause it" in quoted
    allergens = [s for s in stories if "llergens" in s.title]
    assert allergens and not any("loaf" in q for q in allergens[0].source_quotes)


def test_an_answer_that_opens_with_the_example_asked_about_is_a_need_of_its_own(
    generator: OfflineGenerator,
) -> None:
    """Was: "Cakes need forty-eight hours notice." a quote of the online orders' story."""
    text = normalize(
        "Maria: So customers should be able to order online for collection or delivery.\n"
        "Priya: What about big orders, like birthday cakes?\n"
        "Tom: Cakes need forty-eight hours notice.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert "Require forty-eight hours notice for cakes" in titles, titles


def test_examples_of_the_need_just_said_are_its_criterion_and_a_fact_of_most_things_no_need(
    generator: OfflineGenerator,
) -> None:
    """Was: "Allergies, inhalers, that kind of thing." only quoted (read with too little
    confidence to draft), and "Most trips cost something, ten or fifteen pounds." the story "Make
    most trips cost something"."""
    text = normalize(
        "Raj: Teachers need the medical info on the day. Allergies, inhalers, that kind of thing.\n"
        "Sofia: Payment. Most trips cost something, ten or fifteen pounds.\n"
        "Helen: Parents pay by card in the app. Some families can't pay, though.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_title = {s.title: s for s in stories}
    assert (
        "Such as allergies, inhalers."
        in by_title["Provide the medical info on the day"].acceptance_criteria
    )
    assert not any("cost" in t for t in by_title), list(by_title)


MUSEUM = (
    "Anna: So visitors should be able to book a timed entry slot online before they come.\n"
    "Kofi: How long are the slots?\n"
    "Anna: Half an hour each, from ten to four thirty.\n"
    "Mei: How many people per slot?\n"
    "Anna: Two hundred, that's what the fire officer allows in the main hall.\n"
    "Kofi: Members get in free to everything, they just show their card.\n"
    "Mei: So members need to book too?\n"
    "Anna: Yes, they still need a slot, but no payment.\n"
    "Kofi: What about group bookings, like schools?\n"
    "Anna: Yes, schools ask all the time. Up to thirty pupils, booked by the teacher.\n"
    "Mei: Anything we're leaving out?\n"
    "Anna: Audio guides. People want to rent them online, but the supplier can't integrate yet,"
    " so not this year.\n"
)


def test_a_museum_call_figures_asked_of_a_thing_a_yes_to_what_was_asked_and_what_is_left_out(
    generator: OfflineGenerator,
) -> None:
    """Was: "Two hundred, ..." quoted by no story (read as talk) and "Half an hour each, ..."
    only quoted; "Yes, they still need a slot, but no payment." a story of its own, apart from
    "Members get in free to everything"; group bookings a criterion of another story ("Group bookings, yes." read "group" as a
    verb); "Rent them online" a story of what was left out."""
    stories = generator.generate(segment_of(normalize(MUSEUM)), GenerationContext()).draft.stories
    by_title = {s.title: s for s in stories}
    booked = by_title["Book a timed entry slot online before they come"]
    assert "The slots are half an hour each, from ten to four thirty." in booked.acceptance_criteria
    assert "Two hundred people per slot." in booked.acceptance_criteria
    members = [s for s in stories if any("still need a slot" in q for q in s.source_quotes)]
    assert len(members) == 1
    assert any(q.startswith("Members get in free") for q in members[0].source_quotes)
    assert "Provide group bookings" in by_title, list(by_title)
    assert any("Up to thirty pupils" in q for q in by_title["Provide group bookings"].source_quotes)
    left_out = by_title["Leave out audio guides"]
    assert any("rent them online" in q for q in left_out.source_quotes)
    assert not any("ent them" in t for t in by_title), list(by_title)


@pytest.mark.parametrize(
    ("question", "answer", "said"),
    [
        (
            "How long are the slots?",
            "Half an hour each, from ten to four thirty.",
            "The slots are half an hour each, from ten to four thirty.",
        ),
        (
            "How many people per slot?",
            "Two hundred, that's what the fire officer allows in the main hall.",
            "Two hundred people per slot.",
        ),
        ("How long are the slots?", "Half an hour at the moment.", None),  # how it is now
        ("How many people per slot?", "Lots, I'd say.", None),  # no figure
        ("How long do we keep it?", "Six years.", None),  # someone doing something: not here
    ],
)
def test_a_figure_asked_of_a_thing_is_said_with_the_questions_words(
    question: str, answer: str, said: str | None
) -> None:
    from shared.engine.offline.grouping import figure_said_of

    assert figure_said_of(question, answer) == said


def test_a_figure_answered_for_a_case_is_a_criterion_of_the_need_asked_about(
    generator: OfflineGenerator,
) -> None:
    """Was: "For urgent things, within an hour." quoted, and no criterion said it."""
    text = normalize(
        "Customer: They should be able to report a fault with a photo, and it goes straight to"
        " maintenance.\n"
        "Analyst: How fast does maintenance need to react?\n"
        "Customer: For urgent things, within an hour.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert [s.title for s in stories] == ["Report a fault with a photo"]
    assert "Maintenance reacts within an hour for urgent things." in (
        stories[0].acceptance_criteria
    )


def test_a_question_on_what_they_can_do_after_a_need_is_its_criterion_not_a_new_need(
    generator: OfflineGenerator,
) -> None:
    """Was: "Cancel online, any time" a story of its own, "they" (the subscribers) read as a
    new need's people; then "The subscriptions cancel online" ("they" taken for the thing)."""
    text = normalize(
        "Priya: What about subscriptions? Like a loaf every Saturday.\n"
        "Maria: Yes, people ask for that all the time. Weekly, and they can pause it when they're"
        " away.\n"
        "Tom: Can they cancel online?\n"
        "Maria: Yes, any time, no phone call needed.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert [s.title for s in stories] == ["Provide subscriptions"]
    assert "They cancel online, any time." in stories[0].acceptance_criteria


def test_a_need_put_off_by_the_next_speaker_is_left_out_and_a_rule_answered_is_a_story(
    generator: OfflineGenerator,
) -> None:
    """Was: "Put their match results in" a story (the "that's phase two" after it quoted by
    none), and "I think after, like, two no-shows in a month they get blocked ..." a criterion
    of the story before the question ("What if someone doesn't turn up?")."""
    text = normalize(
        "Gemma: Members should be able to book a court without ringing the office.\n"
        "Priti: What if someone doesn't turn up?\n"
        "Dan: I think after, like, two no-shows in a month they get blocked from booking for a"
        " week.\n"
        "Dan: Members want to, um, put their match results in and see a league table.\n"
        "Gemma: That's nice but, hmm, that's phase two, honestly.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_title = {s.title: s for s in stories}
    assert "Leave out putting their match results in" in by_title, list(by_title)
    assert any(
        "phase two" in q for q in by_title["Leave out putting their match results in"].source_quotes
    )
    blocked = [s for s in stories if any("no-shows" in q for q in s.source_quotes)]
    assert len(blocked) == 1 and blocked[0].title == "Block them from booking", list(by_title)
    assert (
        "Given a user, when someone doesn't turn up, then they get blocked from booking for a"
        " week after two no-shows in a month." in blocked[0].acceptance_criteria
    )


def test_a_club_call_a_figure_agreed_to_a_tag_question_and_said_again_is_the_needs(
    generator: OfflineGenerator,
) -> None:
    """Was: "An hour, yeah." and "Forty-five minutes for squash." only quoted, and "No, let's
    keep it simple, seven days for everyone." the story "Keep it simple, seven days for
    everyone"."""
    text = normalize(
        "Gemma: Members should be able to book a court without ringing the office.\n"
        "Priti: How far ahead can they book?\n"
        "Gemma: Seven days. Well, maybe, uh, maybe fourteen for the seniors? No, let's keep it"
        " simple, seven days for everyone.\n"
        "Dan: Okay. And, um, courts are an hour, right?\n"
        "Gemma: An hour, yeah. Forty-five minutes for squash.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert [s.title for s in stories] == ["Book a court without ringing the office"]
    assert "Courts are an hour." in stories[0].acceptance_criteria
    assert "They can book up to seven days ahead." in stories[0].acceptance_criteria
    assert any("keep it simple" in q for q in stories[0].source_quotes)


@pytest.mark.parametrize(
    ("question", "answer", "said"),
    [
        ("And, um, courts are an hour, right?", "An hour, yeah.", "Courts are an hour."),
        ("So the slots are ten minutes, right?", "Twelve.", None),  # not what was asked back
    ],
)
def test_a_figure_agreed_to_a_tag_question_is_what_it_said(
    question: str, answer: str, said: str | None
) -> None:
    from shared.engine.offline.grouping import figure_said_of

    assert figure_said_of(question, answer) == said


def test_how_many_there_are_of_a_thing_the_need_names_is_its_criterion(
    generator: OfflineGenerator,
) -> None:
    """Was: "There are only four wheelchair spaces per slot in the lift." the story "Provide only
    four wheelchair spaces per slot in the lift"."""
    text = normalize(
        "Anna: The booking pages must work with a screen reader, and we need a way to book a"
        " wheelchair space.\n"
        "Kofi: There are only four wheelchair spaces per slot in the lift.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert len(stories) == 1, [s.title for s in stories]
    assert "There are only four wheelchair spaces per slot in the lift." in (
        stories[0].acceptance_criteria
    )


def test_a_turn_to_a_problem_after_a_thing_raised_is_no_yes_to_it(
    generator: OfflineGenerator,
) -> None:
    """Was: "And the lorry tracking?" "Yeah, about that." the story "Provide the lorry
    tracking" (a "yeah" that turns to a problem read as a yes)."""
    text = normalize(
        "Ana: Crews must photograph a bin they could not empty.\n"
        "Ben: What about the lorry tracking?\n"
        "Ana: Yeah, about that. The supplier has not signed yet.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert not any("tracking" in t for t in titles), titles


def test_a_price_answered_to_whether_we_charge_is_a_charge_for_the_thing_named(
    generator: OfflineGenerator,
) -> None:
    """Was: "Provide two pounds extra after dark" (the price read as a thing wanted, the
    question and the topic it named left out)."""
    text = normalize(
        "Gemma: Members should be able to book a court without ringing the office.\n"
        "Priti: So, the floodlights. Do we, er, do we charge for those?\n"
        "Dan: Two pounds extra after dark. It's automatic, the lights are on a timer.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    charged = [s for s in stories if "pounds" in s.title]
    assert [s.title for s in charged] == [
        "Charge two pounds extra after dark for the floodlights"
    ], [s.title for s in stories]
    assert any("charge for those?" in q for q in charged[0].source_quotes)


def test_a_count_capped_after_a_need_is_a_criterion_of_the_need_that_names_it(
    generator: OfflineGenerator,
) -> None:
    """Was: "Agreed, two reminders max." the story "Send two reminders max", apart from the
    reminders it caps (and "Agreed," kept in what it said)."""
    text = normalize(
        "Sofia: From the office side, we need to see who hasn't consented yet, per class.\n"
        "Helen: Yes. And chase them.\n"
        "Sofia: Ideally the system chases them. A reminder three days before the deadline, and"
        " another one the day before.\n"
        "Raj: Not more than that, parents already get too many messages from us.\n"
        "Helen: Agreed, two reminders max.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    capped = [s for s in stories if any("two reminders max" in q for q in s.source_quotes)]
    assert len(capped) == 1 and "reminder" in capped[0].title.lower(), [s.title for s in stories]
    assert "Two reminders max." in capped[0].acceptance_criteria
    assert not any(s.title == "Send two reminders max" for s in stories)


def test_the_option_an_answer_takes_is_a_detail_of_the_need_it_was_offered_for(
    generator: OfflineGenerator,
) -> None:
    """Was: "A tick is fine, but it has to record which parent gave it and when." the story
    "Record which parent gave it and when", and "Phone, but it has to work with no signal, ..." the
    story "Work with no signal", each apart from the need the question offered options for."""
    text = normalize(
        "Helen: Parents should be able to give consent for a trip on their phone.\n"
        "Raj: With a signature? Or just a tick?\n"
        "Helen: A tick is fine, but it has to record which parent gave it and when.\n"
        "Raj: Teachers need the medical info on the day. Allergies, inhalers, that kind of thing.\n"
        "Helen: On paper or on a phone?\n"
        "Raj: Phone, but it has to work with no signal, half the places we go are in the middle"
        " of nowhere.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    by_title = {s.title: s for s in stories}
    assert list(by_title) == [
        "Give consent for a trip on their phone",
        "Provide the medical info on the day",
    ], list(by_title)
    consent = by_title["Give consent for a trip on their phone"]
    assert any("which parent gave it" in c for c in consent.acceptance_criteria)
    medical = by_title["Provide the medical info on the day"]
    assert any("no signal" in c for c in medical.acceptance_criteria)


def test_an_answer_to_a_question_that_asks_something_else_is_no_option_taken(
    generator: OfflineGenerator,
) -> None:
    text = normalize(
        "Helen: Parents should be able to give consent for a trip on their phone.\n"
        "Raj: Do parents pay by card or in cash?\n"
        "Helen: Card, and parents must be able to pay in instalments for the residential.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    consent = [s for s in stories if "consent" in s.title]
    assert consent and not any("instalments" in q for q in consent[0].source_quotes)


def test_a_sentence_broken_off_or_what_a_part_takes_starts_no_story(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """Were stories, read as confident needs: "Do not hold any advantages as such" (AMI ES2006c:
    "... as such for a {disfmarker}"), "Change colour of t", "Provide an advanced chip" (TS3010c:
    "The display requires an advanced chip"), "Clap detection means a microphone ..." (the
    planning notes). A need whose speaker then breaks off adding another ("..., or
    {disfmarker}") and one that a part needs, said with a modal, stay stories."""
    lines = [
        "Industrial Designer: But it does not hold any advantages as such for a {disfmarker}",
        "Project Manager: Change colour of t",
        "Industrial Designer: The display requires a advanced chip , which is more expensive .",
        "- Clap detection means a microphone that is always listening; that costs battery.",
        "Project Manager: So perhaps some sort of menu-based thing , or {disfmarker}",
        "User Interface: The remote should require a PIN for the adult channels .",
    ]
    stories = _all_confident(generator, monkeypatch, lines)
    firsts = [s.source_quotes[0] for s in stories]
    for said in ("any advantages", "colour of t", "advanced chip", "Clap detection"):
        assert not any(said in q for q in firsts), [s.title for s in stories]
    assert any("menu-based thing" in q for q in firsts), [s.title for s in stories]
    assert any("require a PIN" in q for q in firsts), [s.title for s in stories]


def test_what_we_would_want_is_a_need_said_plainly(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """Was: "For health data we'd want it hosted in the UK." (the clinic meeting, p 0.77 from the
    model that never saw it) joined the need before as a quote: "we'd want" read as no need. A
    question said inside ("what you'd need from it") stays talk."""
    lines = [
        "Tom: Reminders go out by text two days before the appointment .",
        "Tom: For health data we'd want it hosted in the UK .",
        "Maria: Today I just want to hear what you'd need from it .",
    ]
    stories = _classified(generator, monkeypatch, lines, {lines[1][5:]: 0.7, lines[2][7:]: 0.7})
    firsts = [s.source_quotes[0] for s in stories]
    assert any("hosted in the UK" in q for q in firsts), [s.title for s in stories]
    assert not any("hear what" in q for q in firsts), [s.title for s in stories]


def test_what_is_said_between_two_quotes_of_a_need_is_its_evidence(
    generator: OfflineGenerator, monkeypatch
) -> None:
    """Was: "Yes, that's number one." (the clinic meeting, F, p 0.36 from the model that never
    saw it) said between two statements of one need was in no story. Questions, talk the
    classifier is sure of and what lies further apart stay out; the evidence gives no criterion."""
    import numpy as np

    lines = [
        "Maria: So patients need to be able to book an appointment online themselves .",
        "Tom: Do they always pick a doctor ?",
        "Linda: Yes , that's number one .",
        "Linda: Right , okay .",
        "Maria: Booking online should show the free slots of every doctor .",
    ]
    p = {lines[1][5:]: 0.4, lines[2][7:]: 0.36, lines[3][7:]: 0.1}

    def vectors(n: int) -> np.ndarray:
        v = np.eye(n, 16)
        v[n - 1] = v[0]  # the first and the last statement say one thing: one need
        return v

    [story] = _classified(generator, monkeypatch, lines, p, vectors)
    assert any("that's number one" in q for q in story.source_quotes), story.source_quotes
    assert not any("pick a doctor" in q or "Right , okay" in q for q in story.source_quotes)
    assert not any("number one" in c for c in story.acceptance_criteria)

    talk = ["Tom: I'll write that on the board now .", "Linda: The phones ring all morning here ."]
    apart = [*lines[:4], *talk, lines[4]]
    p.update({t.split(": ", 1)[1]: 0.1 for t in talk})
    [story] = _classified(generator, monkeypatch, apart, p, vectors)
    assert len(story.source_quotes) == 2, story.source_quotes

    # one the classifier reads as a requirement is no evidence of the need around it: no story
    # quotes it, so the review page lists it for the reviewer to place
    stray = [lines[0], "Linda: The frail ones , the ones who ring .", lines[4]]
    [story] = _classified(generator, monkeypatch, stray, {stray[1][7:]: 0.6}, vectors)
    assert not any("frail ones" in q for q in story.source_quotes), story.source_quotes


def test_a_wish_said_then_said_in_full_by_the_same_speaker_is_one_need(
    generator: OfflineGenerator,
) -> None:
    """Was: "Provide a live dashboard" and "See on a dashboard how full the rooms are today", two
    stories of one need; "Send reminders" beside "Send a reminder the evening before ..."."""
    for text, title, wish in [
        (
            "Gareth: We need a booking page for the meeting rooms.\n"
            "Gareth: A live dashboard would be great. Facilities should see on a dashboard how"
            " full the rooms are today.\n"
            "Priya: And staff book with their university login.\n",
            "See on a dashboard how full the rooms are today",
            "A live dashboard would be great.",
        ),
        (
            "Joanne: Residents look up their bin days online.\n"
            "Joanne: Reminders would help a lot. Residents should get a reminder the evening"
            " before each collection.\n"
            "Sam: By email, to start with.\n",
            "Send a reminder the evening before each collection",
            "Reminders would help a lot.",
        ),
    ]:
        stories = generator.generate(segment_of(normalize(text)), GenerationContext()).draft.stories
        assert len(stories) == 2, [s.title for s in stories]
        said = stories[1]
        assert said.title == title
        assert said.source_quotes[0] != wish and wish in said.source_quotes
    # a need said plainly is no wish: the next need naming the same thing is a need of its own
    text = (
        "Gareth: We need a dashboard.\n"
        "Gareth: Facilities should see on the dashboard which rooms are out of service.\n"
    )
    stories = generator.generate(segment_of(normalize(text)), GenerationContext()).draft.stories
    assert len(stories) == 2, [(s.title, s.source_quotes) for s in stories]


@pytest.mark.parametrize(("as_said", "drafted"), [(None, True), (0.55, False)])
def test_a_statement_lifted_by_dense_talk_is_quoted_but_not_drafted(
    generator: OfflineGenerator, monkeypatch, as_said: float | None, drafted: bool
) -> None:
    """A follow-up at 0.65 gives a criterion; the same 0.65 reached only because the talk around
    it was dense (the classifier said 0.55, under ``CRITERIA_AT``) is quoted as evidence, not
    drafted."""
    import numpy as np

    import shared.engine.offline.generation as generation
    from shared.analysis.capture import Verdict

    text = "We need a big power button . It should be red ."

    def classify(sentences, embedder):
        need = Verdict(label="F", p_requirement=0.95, p_quality=0.1)
        red = Verdict(label="F", p_requirement=0.65, p_quality=0.1, p_as_said=as_said)
        return [need, red], np.array([np.eye(8)[0], np.eye(8)[0]])  # about the same thing

    monkeypatch.setattr(generation, "classify", classify)
    monkeypatch.setattr(generation, "relative_to_density", lambda sentences, verdicts: verdicts)
    [story] = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert story.source_quotes == ["We need a big power button .", "It should be red ."]
    assert any("red" in c for c in story.acceptance_criteria) is drafted, story.acceptance_criteria


def test_a_thing_proposed_as_a_question_and_confirmed_is_the_need_with_what_the_yes_adds(
    generator: OfflineGenerator,
) -> None:
    """Was "Provide something two days before" (the answer's own words as the title) after
    "Good question, a reminder to the approver before the cut-off?" (dev expense-claims)."""
    text = normalize(
        "Ana: Will the drivers know if a delivery slot is about to close?\n"
        "Ben: Good question, a text message to the driver before the slot closes?\n"
        "Cleo: Yes, something like two hours before, any open orders get flagged.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert "Send a text message to the driver" in titles, titles
    story = stories[titles.index("Send a text message to the driver")]
    assert "before the slot closes" in story.description
    assert "Two hours before, any open orders get flagged." in story.acceptance_criteria
    # a check of which one was meant names no thing to want
    check = normalize(
        "Ana: Drivers should see their route on the tablet.\n"
        "Ben: The red one?\n"
        "Cleo: Yes, the red one.\n"
    )
    stories = generator.generate(segment_of(check), GenerationContext()).draft.stories
    assert not any("red one" in s.title for s in stories), [s.title for s in stories]


@pytest.mark.parametrize(
    ("said", "plain"),
    [
        (
            "Okay, let's say for now the system checks the category limits and blocks anything"
            " over, and we can come back to it.",
            True,
        ),
        ("Okay, let's change it to twenty minutes for rooms.", True),
        ("Yeah mm let's say I am on channel eight now.", False),  # a case imagined
        ("Let's say someone books twice.", False),
    ],
)
def test_what_the_meeting_settles_with_lets_say_is_a_need_said_plainly(
    said: str, plain: bool
) -> None:
    """A decision settled with "let's say" / "let's change it to" starts a story when it is
    confident enough; on dev, leave one meeting out, the expense-claims limits decision ("let's
    say for now the system checks the category limits ...", p 0.84) had joined no story."""
    from shared.engine.offline.grouping import states_a_need

    assert states_a_need(said) is plain


@pytest.mark.parametrize(
    ("said", "wanted"),
    [
        ("And I want to find a room by what's in it.", True),
        ("And I'd like to see all my team's claims that are waiting for me in one list.", True),
        ("I'd need to talk to the partners.", False),  # the meeting's own work
        ("I'd need to ask the data protection officer.", False),  # a task of the speaker's
        ("I want to go back to cancelling, because I'm not sure I've got it clear.", False),
        ("I want to say I'm the secretary, so I make the minutes.", False),
    ],
)
def test_what_someone_wants_to_do_with_the_product_said_of_themselves_is_a_need(
    said: str, wanted: bool
) -> None:
    """ "And I want to find a room by what's in it." (dev room-booking) was read at p 0.30 by the
    classifier trained without its meeting and left out: what people want to do, said of
    themselves, is a need as it is when said of a role."""
    from shared.engine.offline.grouping import people_need_to

    assert people_need_to(said) is wanted


@pytest.mark.parametrize(
    ("said", "past"),
    [
        (
            "When I was in Frankfurt I paid for stuff in euros and then I had to work out the"
            " exchange rate myself.",
            True,
        ),
        ("I used to send fifty texts a day, you know.", True),
        ("People will get used to it.", False),
        ("We had to cut some things down, so we need a cheaper case.", False),  # needed now
        ("Patients have to ring us.", False),
        # when it happened, said first (dev expense-claims, leave one meeting out: a criterion
        # of the delegation story)
        ("Last winter I was off for a month and came back to forty of them.", True),
        ("Last time we booked a hall it took a week.", True),
        ("Last year we need to fix it.", False),
        ("Next summer I want it to work.", False),
    ],
)
def test_an_account_of_what_happened_starts_no_need(said: str, past: bool) -> None:
    """ "When I was in Frankfurt ... I had to work out the exchange rate myself." was the story
    "Work out the exchange rate" (dev expense-claims, leave one meeting out): why a need is felt
    is quoted with the need, never a need of its own."""
    from shared.engine.offline.grouping import _said_of_a_need, tells_what_happened

    assert tells_what_happened(said) is past
    if past:
        assert _said_of_a_need(said)


def test_a_need_named_again_and_acknowledged_is_quoted_with_it_never_drafted(
    generator: OfflineGenerator,
) -> None:
    """Was: "Route planning for drivers, okay." the criterion "Route planning for drivers." (and
    on the dev split's expense meeting "An automatic match suggestion, okay." a story of its own
    with no criterion): the name another speaker gives the need just said is quoted with it."""
    text = normalize(
        "Omar: So drivers want to see the whole day's route on their phone, with the stops in"
        " order.\n"
        "Jess: Route planning for drivers, okay.\n"
        "Omar: And customers get a text with a delivery window on the morning of delivery.\n"
        "Jess: Delivery window texts, got it.\n"
        "Omar: Returns have to be collected within three working days.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert len(stories) == 3, [s.title for s in stories]
    for story, recap in zip(stories, ["Route planning", "Delivery window texts"], strict=False):
        assert any(q.startswith(recap) for q in story.source_quotes), story.source_quotes
        assert not any(recap.lower() in c.lower() for c in story.acceptance_criteria)


def test_another_time_than_the_one_asked_is_a_criterion_of_the_need_and_a_share_of_people_is_how_it_is(
    generator: OfflineGenerator,
) -> None:
    """Was: "Hmm, I'd say up to three hours before." the story "Provide up to three hours
    before", and "Most walk-ins are people who ..." (a hyphenated noun) a criterion: how things
    are now, said of the need."""
    text = normalize(
        "Coach: Members need to be able to cancel a class online.\n"
        "Coach: Most walk-ins are people who didn't know the class was full, and then they go home"
        " annoyed.\n"
        "Ana: Can they cancel ten minutes before?\n"
        "Coach: Hmm, I'd say up to three hours before.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert [s.title for s in stories] == ["Cancel a class online"]
    assert stories[0].acceptance_criteria == ["They can cancel up to three hours before."]


@pytest.mark.parametrize(
    ("question", "answer", "whole"),
    [
        (
            "Can members cancel a class an hour before?",
            "Um, I'd say up to three hours before.",
            "Members can cancel a class up to three hours before.",
        ),
        (
            "So should we send it a week ahead?",
            "Two weeks ahead, I think.",
            "We should send it two weeks ahead.",
        ),
        ("Can they cancel five minutes before?", "Yes.", None),
        ("Can they book a day ahead?", "Two days ahead at the moment.", None),
        ("Can they book a day ahead?", "Two days ahead would mean nobody gets a slot.", None),
        ("Is a day ahead enough?", "Two days ahead.", None),
    ],
)
def test_a_time_said_instead_of_the_one_asked_is_said_with_the_questions_words(
    question: str, answer: str, whole: str | None
) -> None:
    from shared.engine.offline.grouping import answer_said_whole

    assert answer_said_whole(question, answer) == whole


def test_who_a_need_is_for_is_its_criterion_and_how_hard_something_is_no_need(
    generator: OfflineGenerator,
) -> None:
    """Was: "For over sixties only." a piece of talk, and "The guest thing is harder, legally,
    that's a licensing question." the story "Make the guest thing harder" that took it."""
    text = normalize(
        "Ria: So a member should be able to book a free swim from their own account.\n"
        "Dev: Yes, that's the big one.\n"
        "Dev: For over sixties only.\n"
        "Ola: The guest thing is harder, legally, that's a licensing question.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert [s.title for s in stories] == ["Book a free swim from their own account"]
    assert stories[0].acceptance_criteria == ["For over sixties."]


@pytest.mark.parametrize(
    ("said", "whom"),
    [
        ("For under sixteens anyway.", "For under sixteens"),
        ("Only for staff.", "Only for staff"),
        ("Yes, for volunteers, of course.", "For volunteers"),
        ("For the locator.", None),
        ("For sure.", None),
        ("For staff it's mostly the laptops.", None),
    ],
)
def test_who_a_need_is_for_said_alone(said: str, whom: str | None) -> None:
    from shared.engine.offline.statement import for_whom

    assert for_whom(said) == whom


@pytest.mark.parametrize(
    ("said", "judges"),
    [
        ("The carers thing is harder, legally.", True),
        ("Yeah, that's much more complicated.", True),
        ("The rubber is harder, so it won't dent.", False),
        ("The voice recognition is simpler, we have it in-house.", False),
        ("Refunds are more complicated than they look.", True),
        ("Deleting a member should be harder than adding one.", False),
        ("The login has to be easier for older people.", False),
    ],
)
def test_how_hard_something_is_said_without_a_need(said: str, judges: bool) -> None:
    from shared.engine.offline.statement import judges_the_work

    assert judges_the_work(said) is judges


def test_how_a_need_is_met_said_alone_after_it_is_its_criterion(
    generator: OfflineGenerator,
) -> None:
    """Was: "By phone, ideally, because they never read letters." the story "Send by phone" with
    no criterion beside the need it says how to meet."""
    text = normalize(
        "Kim: So when a class is cancelled, the members booked on it are told automatically.\n"
        "Lou: By phone, ideally, because they never read letters.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    assert len(stories) == 1, [s.title for s in stories]
    assert f"{stories[0].title} by phone." in stories[0].acceptance_criteria


@pytest.mark.parametrize(
    ("said", "by"),
    [
        ("By text, ideally, because it's important.", "By text"),
        ("By email, please.", "By email"),
        ("Yes, by phone or email.", "By phone or email"),
        ("By the way, the app is slow.", None),
        ("By text, but only for reminders.", None),
        ("Or by text?", None),
        ("By text or email?", None),
    ],
)
def test_how_a_need_is_met_said_alone(said: str, by: str | None) -> None:
    from shared.engine.offline.statement import by_what

    assert by_what(said) == by


def test_a_need_said_as_what_someone_wants_is_that_need_and_its_summing_up_is_more_of_it(
    generator: OfflineGenerator,
) -> None:
    """Was: "So what I'd want, really, is to ..." the title "Make what I'd want, to ...", no story
    of its own; the view ending "but I'd need to check with the insurer" a story ("Check with
    the insurer") that took it; and "So, a ... " summing the need up a criterion of the next."""
    text = normalize(
        "Jo: So what I'd want, really, is to scan the parcel label on my phone at the door, and"
        " then I can skip the paper slip.\n"
        "Sam: Well, can she skip the slip, that's the question.\n"
        "Ray: I think a scan is enough for the courier now, but I'd need to check with the"
        " insurer.\n"
        "Sam: I'll note that down.\n"
        "Kai: So, a scan of the parcel label taken on the phone, stored with the delivery.\n"
        "Jo: And if it could read the label, like, pull out the postcode and the weight, that"
        " would save me loads of typing.\n"
    )
    stories = generator.generate(segment_of(text), GenerationContext()).draft.stories
    titles = [s.title for s in stories]
    assert titles[0] == "Scan the parcel label on my phone at the door", titles
    assert not any("insurer" in t for t in titles), titles
    assert any(q.startswith("So, a scan of the parcel") for q in stories[0].source_quotes)
    assert not any("insurer" in q for s in stories for q in s.acceptance_criteria)


@pytest.mark.parametrize(
    ("said", "task"),
    [
        ("I think a scan is enough now, but I'd need to check with the insurer.", True),
        ("It's probably fine, but Tom will find out.", True),
        ("We need a scan of every label, but I'll check with the insurer.", False),
        ("I'd need to check with the insurer, but a scan is enough.", False),
    ],
)
def test_a_task_taken_on_after_a_view_is_the_meetings_work(said: str, task: bool) -> None:
    from shared.engine.offline.generation import _task_after_but

    assert _task_after_but(said) is task


def test_a_need_put_to_its_owner_and_a_yes_with_more_is_one_story(
    generator: OfflineGenerator,
) -> None:
    """Was: "So you'd want to ..." a story with no criterion and the "Yes, ..." that says how a
    story of its own."""
    text = (
        "Ana: So you'd want to pass your rota to someone else while you're on leave.\n"
        "Ben: Yes, hand it to another coordinator for a date range, and it should come back to me"
        " automatically when I'm back.\n"
    )
    stories = _interview(generator, text)
    assert len(stories) == 1, [s.title for s in stories]
    assert len(stories[0].source_quotes) == 2
    assert stories[0].acceptance_criteria


def test_a_want_with_nothing_named_is_no_story(generator: OfflineGenerator) -> None:
    """Was: "So I want a number." the story "Provide a number", which took the yes to the need
    said in full after it."""
    text = (
        "Lee: How many members renew online versus at the desk.\n"
        "Lee: The trustees will ask next year whether the website paid for itself.\n"
        "Lee: So I want a number.\n"
        "Mo: So the membership secretary sees how many renewals were made online versus at the"
        " desk, per month.\n"
        "Lee: Yes, in the same report as the lapsed members, if possible.\n"
    )
    stories = _interview(generator, text)
    assert not any("number" in s.title.lower() for s in stories), [s.title for s in stories]
    assert any(q.startswith("So I want a number") for s in stories for q in s.source_quotes)


def test_an_account_of_what_happened_quoted_with_a_need_is_no_criterion_of_it(
    generator: OfflineGenerator,
) -> None:
    """Was (dev expense-claims, leave one meeting out): "Last summer I was away for two weeks and
    came back to, like, fifteen of them, ..." a criterion of the delegation story it is quoted
    with."""
    from shared.analysis.capture import Sentence, Span, Verdict
    from shared.engine.offline.grouping import _Story

    said = [
        "So you'd want to pass your rota to someone else while you're on leave.",
        "Last winter I was off for a month and came back to forty of them, and people were cross.",
    ]
    sentences = [Sentence(Span(0, len(t)), t, "text", True, None) for t in said]
    verdicts = [Verdict("F", 0.95, 0.1), Verdict("F", 0.9, 0.1)]
    story = _Story([0, 1], 0.95)
    draft = generator._draft(story, sentences, verdicts, "user")
    assert draft.source_quotes == said
    assert not any("winter" in c for c in draft.acceptance_criteria), draft.acceptance_criteria


@pytest.mark.parametrize(
    ("later", "same"),
    [
        ("Weekly recurring bookings for staff, for the whole term.", True),
        ("Recurring bookings for staff.", True),
        ("Weekly bookings for staff, for the whole term.", False),  # not every word of it
        ("They said recurring bookings are too hard to build.", False),  # a clause, said of it
        ("Recurring bookings.", False),  # nothing more
    ],
)
def test_a_need_named_in_a_few_words_then_in_full_is_one_need(later: str, same: bool) -> None:
    """Was (dev room-booking): "Recurring bookings, by the way." a story with no criterion
    beside "Provide weekly recurring bookings for staff", the same need named in full two
    statements later."""
    from shared.analysis.capture import Sentence, Span
    from shared.engine.offline.grouping import _named_in_full, _Story

    said = [
        ("Ngozi", "Recurring bookings, by the way."),
        ("Ngozi", "I have office hours every Tuesday, and I don't want to book that twelve times."),
        ("Gareth", later),
    ]
    sentences = [Sentence(Span(0, len(t)), t, "text", True, who) for who, t in said]
    stories = [_Story([0], 0.9), _Story([1], 0.9)]
    assert (_named_in_full(stories, sentences, 2) is stories[0]) is same


def _stories_of(generator: OfflineGenerator, lines: list[str]) -> list[StoryDraft]:
    return _interview(generator, "\n".join(lines) + "\n")


def _titles_and_quotes(generator: OfflineGenerator, lines: list[str]) -> list[tuple[str, list]]:
    return [(s.title, s.source_quotes) for s in _stories_of(generator, lines)]


def test_a_need_named_again_right_after_it_in_its_words_is_quoted_with_it(
    generator: OfflineGenerator,
) -> None:
    """Was: "Some kind of automatic reading, so OCR." the story "Provide some automatic reading",
    beside "Pull out the amount and the date" with no criterion (dev expense-claims): another
    speaker naming the need just said, in a word of it, is no need of its own; nor is "Ooh, yes,
    a cancel link right in the email, that's good." after "And maybe a link to cancel." (dev
    clinic-booking)."""
    stories = _titles_and_quotes(
        generator,
        [
            "Rosa: And honestly, if it could read the meter photo, like, pull out the reading and"
            " the date, that would save me loads of typing.",
            "Dev: Some kind of automatic meter reading, so OCR.",
            "Rosa: Confirmation text with the date, the time and the depot address.",
            "Rosa: And maybe a link to reschedule.",
            "Lee: Ooh, yes, a reschedule link right in the text, that's great.",
        ],
    )
    assert len(stories) == 2, [t for t, _ in stories]
    assert any(q.startswith("Some kind of automatic") for q in stories[0][1]), stories[0]
    assert any(q.startswith("Ooh, yes, a reschedule link") for q in stories[1][1]), stories[1]


def test_a_thing_said_after_a_need_without_its_words_is_no_recap(
    generator: OfflineGenerator,
) -> None:
    """Guard of the recap above: a thing another speaker names that shares no word with the need
    just said does not name it again; it is drafted as before, not only quoted."""
    story = _stories_of(
        generator,
        [
            "Rosa: Drivers need to take a photo of the meter at every stop.",
            "Dev: A monthly invoice for each customer, by email.",
        ],
    )[0]
    assert any("monthly invoice" in c for c in story.acceptance_criteria), story


def test_a_need_acknowledged_right_after_it_in_other_words_is_quoted_with_it(
    generator: OfflineGenerator,
) -> None:
    """Was: "Performance at peak, okay." the story "Provide performance at peak" with no criterion
    (dev room-booking), or the criterion "Speed under pressure.": named and acknowledged by
    another speaker right after the need, it names that need, whatever its words: quoted with
    it, never drafted."""
    stories = _stories_of(
        generator,
        [
            "Sam: In March, probably a couple of thousand people all trying to file at once.",
            "Priya: So it has to cope with two thousand people at once without falling over.",
            "Gareth: Speed under pressure, okay.",
        ],
    )
    assert len(stories) == 1, [s.title for s in stories]
    assert "Speed under pressure, okay." in stories[0].source_quotes
    assert not any("pressure" in c for c in stories[0].acceptance_criteria), stories[0]


def test_yes_to_what_people_want_summed_up_is_more_of_that_need(
    generator: OfflineGenerator,
) -> None:
    """Was: "Yes, book a desk in advance, on the phone, ..." after "So students want to book desks
    as well as group rooms." the story "Book a desk in advance" with no criterion (dev
    room-booking): the yes of the people whose want was summed up, in its words, is more of it;
    a yes that goes on to something else is a need of its own."""
    stories = _titles_and_quotes(
        generator,
        [
            "Ana: So nurses want to swap shifts as well as see the rota.",
            "Ben: Yes, swap a shift in advance, on the phone, and know it's confirmed.",
        ],
    )
    assert len(stories) == 1, [t for t, _ in stories]
    other = _titles_and_quotes(
        generator,
        [
            "Ana: So nurses want to swap shifts as well as see the rota.",
            "Ben: Yes, and overtime has to be approved by the ward manager.",
        ],
    )
    assert len(other) == 2, [t for t, _ in other]


def test_what_the_need_just_said_leaves_is_a_detail_of_it(generator: OfflineGenerator) -> None:
    """Was: "All the other things can be controlled through the screen." a story of its own
    beside "Provide only few buttons", neither with a criterion (the demo's meeting, dev
    IS1006b): said by the same speaker right after, everything else the need leaves is its
    criterion."""
    stories = _stories_of(
        generator,
        [
            "Uma: The kiosk will have just three big keys .",
            "Uma: All the other settings can be changed through the touch screen .",
        ],
    )
    assert len(stories) == 1, [s.title for s in stories]
    assert any("other settings" in c for c in stories[0].acceptance_criteria), stories[0]


def test_what_another_speaker_says_of_the_rest_is_no_detail_of_the_need_before(
    generator: OfflineGenerator,
) -> None:
    """Guard of the detail above: said by another speaker, "the rest" is theirs."""
    stories = _titles_and_quotes(
        generator,
        [
            "Uma: The kiosk will have just three big keys .",
            "Joe: All the other settings can be changed through the touch screen .",
        ],
    )
    assert len(stories) == 2, [t for t, _ in stories]


@pytest.mark.parametrize(
    ("who", "later", "of_it"),
    [
        ("Ian", "So we need to have particular pairing codes.", True),
        ("Ian", "All the other settings can be changed through the screen.", True),
        ("Ian", "And all these manuals should be easy to find.", True),
        ("Ian", "So we need a password reset by email too.", False),  # no word of the need
        ("Ian", "So a reminder by text before the pairing is due.", False),  # a thing, summed up
        ("Joe", "So we need to have particular pairing codes.", False),  # another speaker's
        ("Ian", "And everything else, you can forget about it.", False),  # a topic said first
    ],
)
def test_what_is_said_right_after_a_need_of_what_it_names_is_its_detail(
    who: str, later: str, of_it: bool
) -> None:
    """Was (the demo's meeting, dev IS1006b): "So we need to have particular encryption codes."
    a story with no criterion right after "So we need to check their specifications and do
    their encryption ..." by the same speaker; "All the other things can be controlled through
    the screen." one beside "We'll need only few buttons."."""
    from shared.analysis.capture import Sentence, Span
    from shared.engine.offline.grouping import _points_back, _Story

    said = [
        ("Ian", "So we need to check their manuals and do their pairing with the speaker."),
        (who, later),
    ]
    sentences = [Sentence(Span(0, len(t)), t, "text", True, w) for w, t in said]
    assert _points_back([_Story([0], 0.9)], sentences, 1) is of_it


@pytest.mark.parametrize(("away", "drafted"), [(6, False), (1, True)])
def test_a_statement_attached_by_meaning_alone_far_from_the_need_is_only_quoted(
    away: int, drafted: bool
) -> None:
    """Was (the demo's meeting, dev IS1006b): "but you can't phone your remote control ." said
    some fifty statements before "People want to have a power button ." joined it by meaning
    alone and was its criterion "You can't phone your remote control."; said away from the need
    it is quoted as evidence, said next to it it may still be drafted."""
    from shared.analysis.capture import Sentence, Span, Verdict
    from shared.engine.offline.grouping import _group

    said = [
        "Some of the phones have this kind of little light .",
        *["Mm-hmm ."] * (away - 1),
        "People want to have a power button .",
    ]
    sentences = [Sentence(Span(0, len(t)), t, "text", True, "Ann") for t in said]
    verdicts = [Verdict("F", 0.7, 0.1)] + [Verdict("NULL", 0.0, 0.0)] * (away - 1)
    verdicts.append(Verdict("F", 0.95, 0.1))
    vectors = np.zeros((len(said), 4))
    vectors[0] = [0.6, 0.8, 0.0, 0.0]
    vectors[1:-1] = [0.0, 0.0, 1.0, 0.0]
    vectors[-1] = [1.0, 0.0, 0.0, 0.0]
    stories = _group(sentences, verdicts, vectors)
    assert [s.members for s in stories] == [[away, 0]]
    assert (0 not in stories[0].evidence) is drafted


def test_talk_after_a_new_topic_is_opened_is_evidence_of_the_next_need(
    generator: OfflineGenerator,
) -> None:
    """Was (dev room-booking): after "Let's talk about exams.", "So during exams a load of rooms
    become exam venues, ..., and those need to be blocked ..." (no title of its own) was quoted
    under the need said before the new topic, recurring bookings; it is evidence of the next
    need, the one that says it in full."""
    text = (
        "Ann: Recurring bookings, by the way.\n"
        "Ann: I run a clinic every Monday for the whole term, and I don't want to book that"
        " twelve times.\n"
        "Bob: Weekly recurring bookings for staff, for the whole term.\n"
        "Ann: And if one of them clashes, tell me which one, don't just fail the whole thing.\n"
        "Bob: Okay, book the ones that work and list the clashes.\n"
        "Bob: Let's talk about open days.\n"
        "Ann: Oh good, my favourite.\n"
        "Eve: Open day is the worst, honestly, the campus is like a zoo.\n"
        "Bob: So during open days a load of rooms become visitor spaces, the foyer, the big halls,"
        " some labs, and those need to be held for the whole open day.\n"
        "Dan: Do open days come from the events system too?\n"
        "Bob: Separate, the events team has its own spreadsheet. Don't ask.\n"
        "Bob: So the events team need to be able to hold a set of rooms for a date range, in"
        " bulk, and ideally import the open day schedule.\n"
    )
    stories = _interview(generator, text)
    held = "So during open days a load of rooms"
    by_title = {s.title: s for s in stories}
    assert any(
        q.startswith(held) for q in by_title["Hold a set of rooms for a date range"].source_quotes
    )
    assert not any(
        q.startswith(held)
        for s in stories
        if not s.title.startswith("Hold")
        for q in s.source_quotes
    )


def test_what_people_would_do_put_as_a_question_and_said_yes_to_is_a_need(
    generator: OfflineGenerator,
) -> None:
    """Was (dev clinic-booking): "And they'd see, like, a calendar of free slots?" "I suppose so,
    something simple, though." gave the story "Provide something simple" (the question left
    out); what the question puts to them, said yes to, is the need."""
    stories = _titles_and_quotes(
        generator,
        [
            "Lena: So riders can pick a stop, or just take the nearest one.",
            "Omar: And they'd see, like, a map of the nearby stops?",
            "Lena: I suppose so, nothing fancy, though.",
        ],
    )
    titles = [t for t, _ in stories]
    assert "See a map of the nearby stops" in titles, titles
    quotes = dict(stories)["See a map of the nearby stops"]
    assert quotes[0] == "And they'd see, like, a map of the nearby stops?"
    # no yes, no need: the question alone stays a question
    asked = _titles_and_quotes(
        generator,
        [
            "Lena: So riders can pick a stop, or just take the nearest one.",
            "Omar: And they'd see, like, a map of the nearby stops?",
            "Lena: Hmm, not sure that's needed.",
        ],
    )
    assert "See a map of the nearby stops" not in [t for t, _ in asked]


def test_a_need_summed_up_right_after_as_what_people_can_do_is_one_need(
    generator: OfflineGenerator,
) -> None:
    """Was (dev clinic-booking): "The older ones always want the same GP, Dr Okafor or Dr Hale,
    ..." the story "Provide the same GP, Dr Okafor or Dr Hale" beside "Choose a specific doctor",
    the summing up another speaker gave right after it; one need, written from the summing up.
    Said by the same speaker, "So ..." is no summing up of another's need."""
    stories = _titles_and_quotes(
        generator,
        [
            "Ravi: The regulars always want the same trainer, Sam or Jo, other people just want"
            " the first slot going.",
            "Mia: So members can choose a specific trainer, or just take the first free session"
            " with anyone.",
        ],
    )
    assert [t for t, _ in stories] == ["Choose a specific trainer"]
    assert stories[0][1][1].startswith("The regulars always want the same trainer")
    alone = _titles_and_quotes(
        generator,
        [
            "Ravi: The regulars always want the same trainer, Sam or Jo, other people just want"
            " the first slot going.",
            "Ravi: So members can choose a specific trainer, or just take the first free session"
            " with anyone.",
        ],
    )
    assert len(alone) == 2, alone


def test_a_need_summed_up_by_another_speaker_two_statements_later_is_one_need(
    generator: OfflineGenerator,
) -> None:
    """Was (dev clinic-booking, expense-claims): "And book on behalf of someone who rings, ..."
    a story with no criterion beside "Book appointments for any patient", the summing up another
    speaker gave right after it; "I don't want my whole diary online, ..." the story "Leave out
    my whole diary online" beside "Decide what share of their slots can be booked online", its
    summing up two statements later, which says no need plainly. One need each, the summing up
    written from when it says the need plainly (else the surer one is); a "yes, so ..." that goes on to a need of its
    own, or a summing up of something else, stays a story of its own."""
    stories = _titles_and_quotes(
        generator,
        [
            "Ola: And answer for someone who phones in, obviously, because we'll still get"
            " loads of calls.",
            "Ben: So the support agent can open, update and close tickets for any customer.",
            "Ola: I don't want my whole queue public, I keep some for the customers who can't"
            " use the portal.",
            "Ben: Hmm.",
            "Ben: So each agent decides what share of their tickets shows on the portal.",
            "Ola: Yes, so if a ticket looks urgent they can phone the customer.",
        ],
    )
    titles = [t for t, _ in stories]
    assert len(stories) == 3, titles
    assert titles[0] == "Open tickets for any customer"
    assert stories[0][1][1].startswith("And answer for someone who phones in")
    said = [q[:20] for q in stories[1][1]]
    assert said[:2] == ["I don't want my whol", "So each agent decide"], said
    assert titles[2] == "Phone the customer"


def test_a_case_of_the_need_just_said_with_what_must_then_happen_is_its_criterion(
    generator: OfflineGenerator,
) -> None:
    """Was (dev room-booking): "And if one of them clashes, tell me which one, don't just fail
    the whole thing." after "Weekly recurring bookings for staff, for the whole term." was quoted
    by no story (too unlike the need's words to attach by meaning): a case of what was just said,
    whoever says it, is a condition of that need, and what the speaker asks the product to do for
    them is what it then does."""
    stories = _stories_of(
        generator,
        [
            "Sam: What else?",
            "Dr Lee: Repeat prescriptions, by the way.",
            "Dr Lee: I see the same patients every month for the same pills, and I don't want to"
            " sign that twelve times.",
            "Maya: Monthly repeat prescriptions for patients, for the whole year.",
            "Dr Lee: And if one of them runs out, tell me which one, don't just stop the whole"
            " order.",
            "Maya: Let's talk about refunds.",
        ],
    )
    repeats = [s for s in stories if "repeat prescriptions" in s.title.lower()]
    assert len(repeats) == 1, [s.title for s in stories]
    assert any(q.startswith("And if one of them runs out") for q in repeats[0].source_quotes)
    assert (
        "when one of them runs out, then the product tells them which one, and does not stop the"
        " whole order." in " ".join(repeats[0].acceptance_criteria)
    ), repeats[0].acceptance_criteria


def test_a_maybe_said_right_after_a_need_named_as_a_thing_is_more_of_it(
    generator: OfflineGenerator,
) -> None:
    """Was (dev clinic-booking uploaded as captions, the two sentences on one line): "And maybe a
    link to cancel." the main statement of "Provide a link to cancel", the confirmation email its
    criterion, as sure as each other by the classifier: a maybe right after a need it adds to
    never displaces it, whether that need is said with a modal or named as a thing."""
    for lines in (
        [
            "Rob: Confirmation email with the date, time, vet and the clinic address. And maybe a"
            " link to cancel."
        ],
        [
            "Rob: Confirmation text with the date, time, depot and the collection address.",
            "Rob: And maybe a link to reschedule.",
        ],
    ):
        stories = _titles_and_quotes(generator, lines)
        assert len(stories) == 1, stories
        title, quotes = stories[0]
        assert quotes[0].startswith("Confirmation "), (title, quotes)


def test_a_need_the_asker_assumes_and_the_answer_says_yes_to_is_a_story_with_its_reason(
    generator: OfflineGenerator,
) -> None:
    """Was (dev expense-claims): "... and I assume that threshold should be configurable?" "Yes
    please, so I don't have to come back to you every time the CFO changes her mind." the story
    "Remove the need to come back", the question quoted by none: the need the asker assumes,
    said yes to, is the story, and the yes's "so ..." its benefit."""
    stories = _stories_of(
        generator,
        [
            "Ana: So store managers sign off orders over five hundred euros, not three hundred,"
            " and I assume that limit should be editable?",
            "Piet: Yes please, so I don't have to ring you every time the board changes its mind.",
            "Ana: Let's move on to deliveries.",
        ],
    )
    assert len(stories) == 1, [s.title for s in stories]
    story = stories[0]
    assert story.title == "Make the limit editable", story.title
    assert story.description.endswith(
        "so that I don't have to ring you every time the board changes its mind."
    ), story.description
    assert story.source_quotes[0].startswith("So store managers sign off"), story.source_quotes


def test_a_need_summed_up_in_other_words_is_one_need_when_its_speaker_says_yes_to_it(
    generator: OfflineGenerator,
) -> None:
    """Was (dev expense-claims): "And it has to work offline, ..." "So capture receipts and draft
    claims with no connection, and sync later." "Yes, I don't want to lose a photo because the
    upload failed in a tunnel." three stories, the first and last with no criterion: a summing up
    in other words is the need when the one who said it says yes next, and what that yes says
    is more of it; a yes that goes on to another need ("Yes, and ...") is still a need of its
    own."""
    stories = _stories_of(
        generator,
        [
            "Lena: And it must keep working in the basement car parks, there's never any signal"
            " down there.",
            "Omar: So drivers record deliveries with no network, and upload them later.",
            "Lena: Yes, I never want to lose a signature because the upload dropped halfway.",
            "Omar: Let's talk about the depot screens.",
        ],
    )
    assert len(stories) == 1, [s.title for s in stories]
    quotes = stories[0].source_quotes
    assert any(q.startswith("And it must keep working") for q in quotes), quotes
    assert any(q.startswith("Yes, I never want to lose a signature") for q in quotes), quotes
    assert any("signature" in ac for ac in stories[0].acceptance_criteria), stories[0]
    more = _stories_of(
        generator,
        [
            "Lena: The parcel scans should come into the app automatically, hourly ideally.",
            "Omar: So the scan is already there and the driver just confirms it.",
            "Lena: Yes, and if the parcel is damaged, the app should ask for a photo of it.",
            "Omar: Let's talk about the depot screens.",
        ],
    )
    assert len(more) == 2, [s.title for s in more]


def test_a_need_named_again_after_an_okay_is_that_need(
    generator: OfflineGenerator,
) -> None:
    """Was (dev expense-claims, one segment): "And it has to be quick, if it takes a minute to
    open I just won't bother, ..." "Ha, okay, fast to open and fast to take a photo, I'll put a
    number on that later." two stories of one need: another speaker naming the need just said
    after an "okay" (and what they will do about it) is that need; its main statement when it
    says it in as many words (as settled), else quoted with it."""
    stories = _stories_of(
        generator,
        [
            "Piet: And it has to be quick, if it takes a minute to start I simply won't use it,"
            " I'll go back to paper.",
            "Ana: Okay, fast to open and fast to photograph a receipt, I'll put a number on that"
            " later.",
            "Ana: Let's move on to the depot screens.",
        ],
    )
    assert len(stories) == 1, [s.title for s in stories]
    quotes = stories[0].source_quotes
    assert any(q.startswith("Okay, fast to open") for q in quotes), quotes
    # the need said in full stays the main statement of its short naming
    assert quotes[0].startswith("And it has to be quick"), quotes


def test_what_something_already_does_is_no_need(generator: OfflineGenerator) -> None:
    """Was (dev room-booking): "The auto-release already stops the hoarding, though." the story
    "Stop the hoarding": what something does already is said against a need, not one."""
    stories = _stories_of(
        generator,
        [
            "Nadia: Let's say three missed pickups and a one month suspension for now.",
            "Ben: The reminder text already cuts the no-shows, though.",
            "Ben: People keep booking slots they never use.",
            "Nadia: Let's move on to reporting.",
        ],
    )
    assert not any("cut" in s.title.lower() for s in stories), [s.title for s in stories]
    assert any("suspension" in s.title.lower() or "pickups" in s.title.lower() for s in stories)


def test_the_answer_to_what_hurts_most_today_is_no_criterion(generator: OfflineGenerator) -> None:
    """Was (dev expense-claims): "Marcus, what's the biggest pain from finance?" "So we get the
    claims once they're approved, ..." drafted "Given a user, when they're approved, then we get
    the claims.": the answer to a question on how things hurt now says the problem as it is."""
    stories = _stories_of(
        generator,
        [
            "Ana: Piet, what's the biggest headache for the warehouse?",
            "Piet: So we get the orders once they're paid, then we pick them by hand, and then we"
            " key every address into the courier site again.",
            "Piet: And returns, don't get me started on returns.",
            "Ana: So the courier labels should be printed straight from the order.",
            "Ana: Let's move on to reporting.",
        ],
    )
    criteria = " ".join(ac for s in stories for ac in s.acceptance_criteria).lower()
    assert "when they're paid" not in criteria and "get the orders" not in criteria, criteria
    assert "don't get me started" not in criteria, criteria


def test_things_named_in_answer_to_what_someone_needs_to_see_are_what_they_see(
    generator: OfflineGenerator,
) -> None:
    """Was (dev expense-claims): "Reporting, what do you need to see?" "Spend by category, by
    department, by month." drafted "Spend by category" ("spend" read as the verb) and the question
    was quoted by no story."""
    stories = _stories_of(
        generator,
        [
            "Ana: Then the dashboard, what would you want to see?",
            "Piet: Returns by reason, by warehouse, by week.",
            "Ana: Okay, returns by reason.",
            "Ana: Let's move on to the couriers.",
        ],
    )
    seen = [s for s in stories if "Returns by reason, by warehouse, by week." in s.source_quotes]
    assert len(seen) == 1, [s.title for s in stories]
    assert seen[0].title.startswith("See returns by reason"), seen[0].title
    assert "Then the dashboard, what would you want to see?" in seen[0].source_quotes


@pytest.mark.parametrize(
    "answer",
    [
        "I think we need the costs first, honestly.",  # a clause: said as it is
        "Not much, to be honest.",  # a reply, nothing named
    ],
)
def test_an_answer_that_names_nothing_to_see_is_not_drafted_as_seen(
    generator: OfflineGenerator, answer: str
) -> None:
    stories = _stories_of(
        generator, ["Ana: Then the dashboard, what would you want to see?", f"Piet: {answer}"]
    )
    assert not any(s.title.startswith("See ") for s in stories), [s.title for s in stories]


@pytest.mark.parametrize(
    ("said", "now"),
    [
        # what is done by hand today (was, dev expense-claims: the story "Check them against the
        # policy by hand" from "Then we check them against the policy by hand, then we key them
        # into payroll ...", an answer on what hurts now)
        ("Then we copy them into the ledger by hand, which takes two days.", True),
        ("So we fix it manually at the end of the month.", True),
        # a need about doing it by hand, or not
        ("We shouldn't have to copy them into the ledger by hand.", False),
        ("We can review each flagged claim manually.", False),
        ("My team can look at the worst cases by hand.", False),
    ],
)
def test_what_is_done_by_hand_today_describes_now(said: str, now: bool) -> None:
    from shared.engine.offline.grouping import describes_now

    assert describes_now(said) is now


def test_a_need_that_points_back_at_the_need_named_before_it_is_a_detail_of_it(
    generator: OfflineGenerator,
) -> None:
    """Was: "I have office hours every Tuesday for the whole term, and I don't want to book that
    thirteen times." the story "Do not book that thirteen times", beside the recurring bookings it
    is about (dev room-booking): a need whose object points back ("book that") said right after a
    need named in a few words, by the same speaker, is what that need is for."""
    stories = _stories_of(
        generator,
        [
            "Priya: Okay, so the office manager can add suppliers, set their delivery days and set"
            " the order limits.",
            "Tom: Recurring deliveries, by the way.",
            "Tom: We buy the same twenty boxes of paper every month, and I don't want to book that"
            " twelve times a year.",
            "Priya: Monthly recurring deliveries for the office, for the whole year.",
        ],
    )
    titles = [s.title for s in stories]
    assert not any("that twelve times" in t for t in titles), titles
    recurring = [s for s in stories if "recurring deliveries" in s.title]
    assert len(recurring) == 1, titles
    assert any("book that twelve times" in q for q in recurring[0].source_quotes)


def test_things_pointed_back_at_are_named_in_the_title(generator: OfflineGenerator) -> None:
    """Was: "Load those automatically" (dev clinic-booking, after "Yes, and the bank holidays, we
    always forget the bank holidays.")."""
    stories = _stories_of(
        generator,
        [
            "Tom: Yes, and the school holidays, we always forget the school holidays.",
            "Priya: We can import those automatically, the council publishes a list.",
            "Tom: Oh, could you?",
        ],
    )
    assert "Import the school holidays automatically" in [s.title for s in stories]


@pytest.mark.parametrize(
    ("said", "before", "named"),
    [
        (
            "We can import those automatically.",
            "Yes, and the school holidays, we always forget the school holidays.",
            "We can import the school holidays automatically.",
        ),
        # nothing named first, or one thing where "those" points at several: as said
        ("We can import those automatically.", "No.", "We can import those automatically."),
        (
            "We can import those automatically.",
            "And the school calendar, we always forget it.",
            "We can import those automatically.",
        ),
        # "those of" names its things itself
        (
            "We can import those of the council.",
            "Yes, and the school holidays.",
            "We can import those of the council.",
        ),
    ],
)
def test_those_said_after_the_things_named_first_are_those_things(
    said: str, before: str, named: str
) -> None:
    from shared.engine.offline.phrasing import named_before

    assert named_before(said, before) == named


@pytest.mark.parametrize(
    ("finding", "criterion"),
    [
        # how much another thing is used or matters is a finding about it (was the criterion
        # "Channel selection is often very often used ..." of "Provide a power button", the
        # demo's meeting)
        ("Ana: Channel selection is very often used and indeed very relevant.", None),
        ("Ana: The teletext is used less these days.", None),
        # said of the thing the need names, it stays a criterion
        (
            "Ana: The power button is very often used, at least ten times an evening.",
            "The power button is very often used, at least ten times an evening.",
        ),
    ],
)
def test_how_much_another_thing_is_used_is_no_criterion_of_the_need(
    generator: OfflineGenerator, monkeypatch, finding: str, criterion: str | None
) -> None:
    stories = _all_confident(
        generator, monkeypatch, ["Ana: People want to have a power button.", finding], (0, 1)
    )
    power = [s for s in stories if s.title == "Provide a power button"]
    assert len(power) == 1, [s.title for s in stories]
    assert any(finding.split(": ", 1)[1] in q for q in power[0].source_quotes)
    assert power[0].acceptance_criteria == ([criterion] if criterion else [])


def test_a_scope_decision_said_in_a_meeting_is_a_story(generator: OfflineGenerator) -> None:
    """Was missed (the classifier read "Okay, reviews are out for now." as talk): a thing
    decided out, said alone, is a decision the backlog keeps."""
    stories = _stories_of(
        generator,
        [
            "Priya: And the app should load in under two seconds on a normal phone.",
            "Tom: Reviews, maybe later, not for the first version.",
            "Priya: Okay, reviews are out for now.",
            "Priya: Thanks all.",
        ],
    )
    titles = [s.title for s in stories]
    assert "Leave out reviews" in titles, titles
    # where someone is, or what "it" is, decides nothing
    others = _stories_of(
        generator,
        [
            "Priya: And the app should load in under two seconds on a normal phone.",
            "Tom: The driver is out today.",
            "Priya: Okay, it is out for now.",
        ],
    )
    assert not any(s.title.startswith("Leave out") for s in others), [s.title for s in others]


def test_an_interview_gives_each_need_its_story(generator: OfflineGenerator) -> None:
    """A requirements interview written as a probe: a topic asked by its name alone is answered
    with a need of its own ("Reminders?" "A reminder the day before, by text." was a criterion
    of the background check); a participle alone is what is done to the thing just named
    ("Exported to Excel, ideally." was the story "Provide exported to Excel"); a no said in
    answer to what to leave out is not negated twice (was "Leave out no app store app")."""
    stories = _stories_of(
        generator,
        [
            "Sam: Do you need to approve new volunteers?",
            "Jo: Yes, new volunteers need a background check before they can pick a shift.",
            "Sam: Reminders?",
            "Jo: A reminder the day before, by text.",
            "Sam: What about reports?",
            "Jo: I need to see the hours per volunteer per month, for the funding report.",
            "Jo: Exported to Excel, ideally.",
            "Sam: Anything you don't want?",
            "Jo: No app store app, please.",
            "Jo: It has to work in the browser.",
        ],
    )
    by_title = {s.title: s for s in stories}
    assert "Send a reminder the day before" in by_title, list(by_title)
    hours = by_title["See the hours per volunteer per month"]
    assert "Exported to Excel." in hours.acceptance_criteria, hours.acceptance_criteria
    assert "Leave out app store app" in by_title, list(by_title)
    assert "Work in the browser" in by_title, list(by_title)


def test_a_bare_figure_set_anew_revises_the_one_figure_said_before(
    generator: OfflineGenerator,
) -> None:
    """Was a criterion of each ("... drops under four, ..." and "A note when under five."): a
    number said alone first thing ("Let's say five actually, four is too few ...") sets anew the
    one number the need said without a unit, and the need's first wording is superseded."""
    stories = _stories_of(
        generator,
        [
            "Nadia: The cleaners need to see which rooms are booked tomorrow.",
            "Nadia: If the stock of towels in a building drops under four, the housekeeper should"
            " get a note.",
            "Ben: Four, or five?",
            "Nadia: Let's say five actually, four is too few for the big rooms.",
            "Ben: Okay, a note when under five.",
        ],
    )
    note = next(s for s in stories if s.superseded_quotes)
    assert note.superseded_quotes == [
        "If the stock of towels in a building drops under four, the housekeeper should get a note."
    ]
    assert any("under five" in c for c in note.acceptance_criteria), note.acceptance_criteria
    assert not any("under four" in c for c in note.acceptance_criteria), note.acceptance_criteria


def test_a_topic_asked_about_and_turned_down_is_a_scope_decision(
    generator: OfflineGenerator,
) -> None:
    """Were lost (the answers read as talk): a topic asked about by its name alone and turned
    down or put off by another speaker ("Timesheets?" "Not yet, maybe next year."), or asked
    about and then put as a yes/no question ("And invoices? Should the app create the
    invoice?" "No, not in the app."), is a decision the backlog keeps, and the need said after it
    ("But the job report should go to Sage ...") is one of its own; the room asked for questions
    is no topic."""
    stories = _stories_of(
        generator,
        [
            "Sam: The volunteers need to see their shifts on their phone.",
            "Sam: Timesheets?",
            "Jo: Not yet, maybe next year.",
            "Sam: And invoices? Should the app create the invoice?",
            "Jo: No, not in the app.",
            "Jo: But the job report should go to Sage so finance can invoice.",
            "Sam: Any questions?",
            "Jo: Nope.",
        ],
    )
    by_title = {s.title: s for s in stories}
    assert "Leave out timesheets" in by_title, list(by_title)
    assert "Timesheets?" in by_title["Leave out timesheets"].source_quotes
    assert "Do not create the invoice" in by_title, list(by_title)
    # what is needed instead is a need of its own, not more of what was turned down
    assert any(t.startswith("Send the job report to Sage") for t in by_title), list(by_title)
    assert not any("Nope." in s.source_quotes for s in stories), list(by_title)


def test_a_thing_kept_out_by_name_is_a_decision_that_takes_no_other_need(
    generator: OfflineGenerator,
) -> None:
    """Was evidence of the next need ("Let's keep leavers out of this first version." quoted
    under "Use single sign-on"): a thing kept out by name is a scope decision, and a need said
    after it that is not about that thing is not more of it."""
    stories = _stories_of(
        generator,
        [
            "Raj: The agent should be able to record a move-in date for each tenancy.",
            "Raj: Let's keep deposits out of this first release.",
            "Ana: Anything on security?",
            "Raj: It has to use single sign-on.",
        ],
    )
    by_title = {s.title: s for s in stories}
    assert "Leave out deposits" in by_title, list(by_title)
    assert by_title["Leave out deposits"].source_quotes == [
        "Let's keep deposits out of this first release."
    ]
    assert "Use single sign-on" in by_title, list(by_title)


def test_a_question_and_its_answer_go_to_the_need_they_name_not_a_verb_they_share(
    generator: OfflineGenerator,
) -> None:
    """Was a criterion of "Leave out deposits" (both say "keep"): a figure answered to a question
    on a thing goes to the need that names that thing; a rule said "actually, for <another
    case>, ..." is that case's rule, no revision of the figure just said (was "three years"
    superseded by "three months")."""
    stories = _stories_of(
        generator,
        [
            "Raj: The agent should be able to archive the tenancy files from the portal.",
            "Raj: Let's keep deposits out of this first release.",
            "Ana: And how long do we keep the tenancy files?",
            "Raj: Three years after they end, that's the policy.",
            "Raj: Actually, for withdrawn applications, delete them after three months.",
        ],
    )
    files = next(s for s in stories if "tenancy files" in s.title)
    deposits = next(s for s in stories if s.title == "Leave out deposits")
    assert "We keep the tenancy files three years after they end." in files.acceptance_criteria
    assert not any("three years" in c.lower() for c in deposits.acceptance_criteria)
    assert not any(s.superseded_quotes for s in stories), [s.superseded_quotes for s in stories]


def test_the_people_a_question_names_are_who_the_need_after_it_is_for(
    generator: OfflineGenerator,
) -> None:
    """Was "Change the wording before it goes", written from the answer, with the email a
    criterion, "As an agent", and the team's account of today quoted first: "They should get
    a move-in email ..." after "What about the tenants themselves?" is the tenants' need; a
    statement said long before never displaces it; "Does the move-in email need sign-off?" "No,
    but ..." gives both the no and what the answer says instead."""
    stories = _stories_of(
        generator,
        [
            "Ana: What happens today when a tenant moves in?",
            "Raj: The agent emails us, we email the locksmith for keys, and something always"
            " gets missed.",
            "Raj: The agent should be able to record a move-in date for each tenancy.",
            "Ana: What about the tenants themselves?",
            "Raj: They should get a move-in email three days before, with the office address and"
            " who to call.",
            "Ana: Does the move-in email need sign-off?",
            "Raj: No, but the agent should be able to change the wording before it goes.",
        ],
    )
    email = next(s for s in stories if "move-in email" in s.title)
    assert email.description.startswith("As a tenant,"), email.description
    assert email.source_quotes[0].startswith("They should get a move-in email"), email.source_quotes
    assert "The agent can change the wording before it goes." in email.acceptance_criteria
    assert "The move-in email does not need sign-off." in email.acceptance_criteria
    record = next(s for s in stories if s.title.startswith("Record a move-in date"))
    assert not any("locksmith" in c for c in record.acceptance_criteria), record


def test_what_a_team_is_asked_to_need_is_a_need_and_the_answer_goes_on_with_it(
    generator: OfflineGenerator,
) -> None:
    """Was quoted under the signatures story, with what the answer went on to say: a thing named
    in answer to "What does the depot need?" is that need ("The depot needs a screen ..."), and
    what the same speaker says next, not a need of its own, is more of it; "they should be
    stored ..." after "Yeah, customer signatures." names the signatures (was "Store with the
    delivery"-like titles that name nothing)."""
    stories = _stories_of(
        generator,
        [
            "Lee: The drivers need to see their deliveries for the day on a tablet.",
            "Lee: They should be able to mark each delivery as done.",
            "Kim: Signatures?",
            "Lee: Yeah, customer signatures.",
            "Lee: Optional, but they should be stored with the delivery.",
            "Kim: And the depot side.",
            "Kim: What does the depot need?",
            "Lee: A screen with every van on a map.",
            "Lee: Well, the last drop they made, not live tracking.",
        ],
    )
    by_title = {s.title: s for s in stories}
    assert "Store customer signatures with the delivery" in by_title, list(by_title)
    screen = by_title.get("Provide a screen with every van on a map")
    assert screen is not None, list(by_title)
    assert "Well, the last drop they made, not live tracking." in screen.source_quotes
    assert "What does the depot need?" in screen.source_quotes


def test_a_need_asked_as_a_question_and_answered_is_that_need(
    generator: OfflineGenerator,
) -> None:
    """Were "See the new order" (the answer's last clause) and a quote of the signature story: a
    question whether people may do something, answered yes by another speaker, is that need
    ("Should they be able to swap shifts?" "Yes, if ..., but ..."), the answer its criterion; a
    need put as a statement with a question mark ("And the volunteer gets a reminder?") and
    answered with how is that need. A question on an action the need just said names is a
    detail of that need, no story of its own."""
    stories = _stories_of(
        generator,
        [
            "Jo: Volunteers need to see their shifts for the month on their phone.",
            "Sam: Should they be able to swap shifts with each other?",
            "Jo: Yes, if they both agree, but the coordinator needs to see every swap.",
            "Sam: And the volunteer gets a reminder?",
            "Jo: By text, the evening before the shift.",
            "Jo: Members need to book a court online.",
            "Sam: Can they book for their children too?",
            "Jo: Yes, up to two children.",
        ],
    )
    by_title = {s.title: s for s in stories}
    swap = next((s for t, s in by_title.items() if t.startswith("Swap shifts")), None)
    assert swap is not None, list(by_title)
    assert any("coordinator" in c for c in swap.acceptance_criteria), swap.acceptance_criteria
    reminder = next(s for s in stories if "And the volunteer gets a reminder?" in s.source_quotes)
    assert "reminder" in reminder.title.lower(), reminder.title
    assert "By text, the evening before the shift." in reminder.source_quotes
    assert not any(t.startswith("Book for their children") for t in by_title), list(by_title)


def test_an_elicitation_with_a_figure_taken_back_a_case_asked_and_things_put_off(
    generator: OfflineGenerator,
) -> None:
    """From a click-and-collect probe: "How long are the slots?" "Ninety minutes." "No wait, two
    hours, ..." was a criterion "No wait, two hours, ..." with the first answer lost; a figure
    taken back is revised in the question's words, in its new unit ("two hours", not "two
    minutes"). "What if a dish is sold out?" was read from its purpose ("Provide so they can
    ..."); "A loyalty card would be nice, but that's for next year." was "Provide a loyalty
    card"; "And the shift manager?" names who says "I need ..." next."""
    stories = _stories_of(
        generator,
        [
            "Kim: Customers should be able to book a table online and choose a time slot.",
            "Lee: How long are the slots?",
            "Kim: Ninety minutes.",
            "Kim: No wait, two hours, ninety is too short for groups.",
            "Lee: What if a dish is sold out?",
            "Kim: The waiter marks it as sold out and the customer gets a message, so they can"
            " pick something else if they want.",
            "Kim: A loyalty card would be nice, but that's for next year.",
            "Lee: Drinks?",
            "Kim: Not for now, the licence is a headache.",
            "Lee: And the shift manager?",
            "Kim: I need to see how many tables we served each evening.",
        ],
    )
    by_title = {s.title: s for s in stories}
    book = by_title["Book a table online"]
    assert "The slots are two hours." in book.acceptance_criteria, book.acceptance_criteria
    assert "Ninety minutes." in book.superseded_quotes, book.superseded_quotes
    assert "Mark the dish as sold out" in by_title, list(by_title)
    assert "Leave out a loyalty card" in by_title, list(by_title)
    assert "Leave out drinks" in by_title, list(by_title)
    tables = by_title["See how many tables we served each evening"]
    assert tables.description.startswith("As a shift manager,"), tables.description


def test_who_need_not_see_something_may_not(generator: OfflineGenerator) -> None:
    """Was "Provide facilities doesn't need to see payroll details", then lost as a story with no
    title: a team that doesn't need to see something may not ("Do not let reception see bank
    details"), as "contractors shouldn't see ..." reads; "I don't need to approve them" is still
    a chore taken away."""
    stories = _stories_of(
        generator,
        [
            "Raj: Managers should be able to approve invoices from their phone.",
            "Ana: Who sees the invoices?",
            "Raj: Each department sees only its own invoices.",
            "Raj: Reception doesn't need to see bank details, obviously.",
        ],
    )
    from shared.engine.offline.phrasing import write_story

    titles = [s.title for s in stories]
    assert "Do not let reception see bank details" in titles, titles
    assert write_story(["I don't need to approve them."]).title == "Remove the need to approve them"


def test_a_limit_set_anew_and_said_again_is_one_story_and_a_figure_given_in_to_revises(
    generator: OfflineGenerator,
) -> None:
    """From a waste-portal meeting: "So let's make it up to five items." and "Okay, so bulky
    bookings are up to five items for thirty pounds." were two stories ("Make it up to five
    items" and one with "Gareth, the bulky limit." as a criterion), and "And the missed bin
    window, twenty-four hours." was a criterion of the bulky one; "Okay, fine, two working days."
    revised nothing."""
    stories = _stories_of(
        generator,
        [
            "Ana: Members book classes in the app, and they can see the timetable for the week.",
            "Ben: Ana, the class limit.",
            "Ana: Yeah, so, actually, the instructors said two is silly.",
            "Ana: So let's make it up to four classes.",
            "Ana: Same ten pounds.",
            "Ben: Same price? Is finance happy?",
            "Ana: It's already in the price list from June.",
            "Ana: Four classes, ten pounds.",
            "Ben: Okay, so members can book up to four classes a week for ten pounds.",
            "Ben: And the cancellation cut-off, two hours.",
            "Cat: Can I push back on that?",
            "Cat: People get stuck at work and they find out late.",
            "Cat: Six hours would be fairer.",
            "Ana: Okay, fine, six hours.",
        ],
    )
    with_four = [s for s in stories if any("four classes" in q for q in s.source_quotes)]
    assert len(with_four) == 1, [s.title for s in stories]
    (classes,) = with_four
    assert "So let's make it up to four classes." in classes.source_quotes
    assert "Four classes, ten pounds." in classes.source_quotes
    assert not any("class limit" in c for c in classes.acceptance_criteria)
    assert not any("cut-off" in c for c in classes.acceptance_criteria)
    (cut_off,) = [s for s in stories if any("cut-off" in c for c in s.acceptance_criteria)]
    assert "The cancellation cut-off is six hours." in cut_off.acceptance_criteria
    assert not any("two hours" in c for c in cut_off.acceptance_criteria)
    assert cut_off.superseded_quotes == ["And the cancellation cut-off, two hours."]


def test_a_need_said_as_do_it_belongs_to_the_need_it_points_at(
    generator: OfflineGenerator,
) -> None:
    """From a waste-portal meeting: "And my supervisors need to be able to do it themselves at six
    in the morning, ..." was a story "Do it at six in the morning"; it is more of the need the
    next speaker sums up in words ("Supervisors can publish disruption notices directly.")."""
    stories = _stories_of(
        generator,
        [
            "Rita: When a branch has to close we need to tell its members, just that branch.",
            "Tom: So staff can post a closure notice for a branch, and the members of that branch"
            " get it.",
            "Rita: And my duty managers need to be able to do it themselves on a Sunday, without"
            " calling IT.",
            "Tom: Duty managers can publish closure notices directly.",
        ],
    )
    titles = [s.title for s in stories]
    assert not any(t.lower().startswith("do it") for t in titles), titles
    (direct,) = [s for s in stories if s.source_quotes[0].startswith("Duty managers")]
    assert any("on a Sunday" in q for q in direct.source_quotes), direct.source_quotes
    post = next(s for s in stories if s.title.startswith("Post a closure notice"))
    assert not any(c.endswith(" get.") for c in post.acceptance_criteria), post.acceptance_criteria


def test_what_some_people_cannot_do_is_how_things_are_and_a_participle_names_a_topic() -> None:
    """From a waste-portal meeting: "some residents can't get their bin to the kerb" was a story
    "Leave out their bin to the kerb" (a rule on residents); and "Assisted collections." opened
    no topic ("assisted" read as a verb), so the statements after it, with no title of their
    own, went to the need before it ("English only at launch")."""
    from shared.analysis.capture import Sentence, Span
    from shared.engine.offline.grouping import _names_the_topic
    from shared.engine.offline.phrasing import write_story

    said = "Yes, so some residents can't get their bin to the kerb, elderly, disabled."
    assert not write_story([said]).title.startswith("Leave out"), write_story([said]).title
    # a rule on a role stays one
    rule = write_story(["Residents can't see other people's bookings."]).title
    assert rule == "Do not let residents see other people's bookings"
    lines = [
        ("Joanne", "Hmm, okay, for now."),
        ("Priya", "Assisted collections."),
        ("Priya", "Joanne, you mentioned those on the phone."),
        ("Joanne", "Sounds good."),
        ("Joanne", "We get a lot of calls about them."),
    ]
    sentences = [Sentence(Span(0, len(t)), t, "text", True, who) for who, t in lines]
    assert _names_the_topic(sentences, 1)
    assert not _names_the_topic(sentences, 3)  # "sounds" is a verb, and no participle


def test_only_some_people_may_do_what_is_said_without_a_modal() -> None:
    """From a waste-portal meeting: "only the waste services staff who approve it see the
    reason" was "Provide only the waste services staff"; "Only managers see the salary." was "See
    the salary", the rule lost; "to see it" lost its "it" in the description."""
    from shared.engine.offline.phrasing import write_story

    staff = write_story(["Yeah, so only the payroll office staff who sign it off see the amount."])
    assert staff.title == "Let only the payroll office staff see the amount"
    assert "only the payroll office staff who sign it off to see the amount" in staff.description
    assert (
        write_story(["Only managers see the salary."]).title == "Let only managers see the salary"
    )
    trip = write_story(["Only the teachers on that trip can see it."])
    assert trip.description.endswith("only the teachers on that trip to see it."), trip.description
    assert not write_story(["Only then we see the result."]).title.startswith("Let only")


def test_two_things_done_to_a_thing_read_as_two_verbs_and_a_thing_for_some_people_only() -> None:
    """From the field-service and onboarding probes: "Everything gets saved on the phone and
    synced later." was "Save everything on the phone and synced later"; "Yes, salary is payroll
    only." was "Make salary payroll only"."""
    from shared.engine.offline.phrasing import write_story

    said = write_story(["The report is generated and emailed to the manager every Monday."])
    assert said.title == "Generate the report and email to the manager", said.title
    assert write_story(["Bins are emptied and returned to the kerb."]).title == (
        "Empty bins and return to the kerb"
    )
    assert write_story(["Yes, the rota is coordinators only."]).title == (
        "Restrict the rota to coordinators"
    )
    # a thing for some days only is no one's
    assert write_story(["Delivery is weekdays only."]).title == "Make delivery weekdays only"


def test_they_after_a_question_on_someone_is_that_someone_in_the_criteria_too(
    generator: OfflineGenerator,
) -> None:
    """From the onboarding probe: "What about the starter themselves?" "They should get a welcome
    email ..." gave the criterion "What about the starter themselves get a welcome email ..."."""
    stories = _stories_of(
        generator,
        [
            "Dee: Every new volunteer gets a shift buddy for the first month.",
            "Raj: What about the volunteer themselves?",
            "Dee: They should get a welcome pack a week before their first shift, with where to"
            " go and who to ask for.",
        ],
    )
    pack = next(s for s in stories if "welcome pack" in s.title.lower())
    assert not any(c.startswith("What about") for c in pack.acceptance_criteria), (
        pack.acceptance_criteria
    )


def test_a_permission_is_what_people_can_do_and_a_thing_for_a_role_only_is_restricted() -> None:
    """From dev room-booking and the probes: "For rooms students are allowed to book" and "Staff
    are allowed to book for others." read as things to allow ("Staff are allowed to book for
    others", with "I want to staff are allowed ..."); "... are student only." was "Make ...
    student only"."""
    from shared.engine.offline.phrasing import write_story

    staff = write_story(["Staff are allowed to book for others."])
    assert staff.title == "Book for others"
    assert staff.description == "As a staff member, I want to book for others."
    parents = write_story(["Parents are not allowed to see other children."])
    assert parents.title == "Do not let parents see other children"
    assert write_story(["The quiet rooms are member only."]).title == (
        "Restrict the quiet rooms to members"
    )
    # a thing allowed that is no one's stays allowed
    assert write_story(["The app is allowed to send texts."]).title == "Allow the app to send texts"


def test_why_a_figure_is_what_it_is_belongs_to_the_need_that_holds_it(
    generator: OfflineGenerator,
) -> None:
    """From dev expense-claims: "Six is the legal minimum, I think, but we do seven to be safe."
    after "we keep everything for seven years" was a story "Make six the legal minimum"."""
    stories = _stories_of(
        generator,
        [
            "Ola: Yes, and we keep the visitor logs for three years, badges included.",
            "Pat: Three years retention.",
            "Ola: Two is what the insurer asks, I think, but we do three to be safe.",
        ],
    )
    assert len(stories) == 1, [s.title for s in stories]
    assert any("insurer" in q for q in stories[0].source_quotes)


def test_a_purpose_said_as_how_it_is_better_is_the_benefit_and_them_is_no_thing() -> None:
    """From dev room-booking: "..., so it's fairer and you can plan around your actual exams" gave
    the title "Plan around the actual exams" (the purpose read as the need); and "We only need
    them while the case is open." gave the criterion "Them while the case is open is
    available."."""
    from shared.engine.offline.criteria import criteria
    from shared.engine.offline.phrasing import write_story
    from shared.engine.offline.statement import capability

    said = write_story(["We need a waiting list, so it's easier for the receptionists."])
    assert said.title == "Provide a waiting list"
    assert said.description.endswith("so that it's easier for the receptionists."), said.description
    shorter = write_story(
        ["Shorter, like one day ahead in August, so it's fairer and you can plan."]
    )
    assert not shorter.title.startswith("Plan"), shorter.title
    texts = [
        "Okay, CCTV clips are deleted after thirty days.",
        "We only need them while it's open.",
    ]
    cap = capability(texts[0])
    assert not any(c.startswith("Them") for c in criteria(texts, cap, cap.title, "user"))


def test_a_topic_asked_about_with_what_about_and_put_off_is_left_out(
    generator: OfflineGenerator,
) -> None:
    """From a parking-permit probe: "What about visitors?" "Not now. Visitors are reception's
    problem, maybe next year." was in no story; and "So main car park needs approval, overflow
    doesn't." was the criterion "Approval, overflow doesn't is available."."""
    from shared.engine.offline.criteria import criteria
    from shared.engine.offline.statement import capability

    stories = _stories_of(
        generator,
        [
            "Ana: Members should be able to book a locker online.",
            "Cat: What about guests?",
            "Ana: Not now. Guests are the front desk's problem, maybe next year.",
        ],
    )
    by_title = {s.title: s for s in stories}
    assert "Leave out guests" in by_title, list(by_title)
    texts = [
        "Members should be able to book a room online.",
        "So main hall needs approval, side room doesn't.",
    ]
    cap = capability(texts[0])
    assert criteria(texts, cap, cap.title, "member") == [
        "Main hall needs approval, side room doesn't."
    ]


def test_how_soon_asked_bare_is_answered_for_the_need_before_the_question(
    generator: OfflineGenerator,
) -> None:
    """From the parking-permit probe: "How quickly?" "Same day. Actually, within an hour would be
    better, ..." "Within an hour, then." was quoted, never drafted (a story of its own that named
    no need, handed over as evidence)."""
    stories = _stories_of(
        generator,
        [
            "Mia: So the app has to send each order to the kitchen printer.",
            "Tom: How quickly?",
            "Mia: Straight away. Actually, within two minutes would be fine, the printer is slow.",
            "Tom: Within two minutes, then.",
        ],
    )
    (printer,) = stories
    assert "Within two minutes." in printer.acceptance_criteria, printer.acceptance_criteria
