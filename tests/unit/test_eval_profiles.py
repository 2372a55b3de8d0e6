"""Embedder-specific threshold profiles (calibrated with shared.eval.calibrate) and the offline
tagger's cue rules revised during that calibration."""

from __future__ import annotations

import pytest

from shared.agents import Candidate
from shared.analysis.contradiction import contradiction_cues, frequencies
from shared.engine.offline import OfflineTagger
from shared.models import GeneratedItem, SourceQuote
from shared.settings import (
    THRESHOLD_PROFILES,
    PipelineConfig,
    Settings,
    TaggingConfig,
    ThresholdsConfig,
)

THRESHOLD_RULES = TaggingConfig(scorer="thresholds")  # the seed's rules, not the pair model


def settings(**kw: object) -> Settings:
    return Settings(_env_file=None, **kw)


@pytest.fixture(autouse=True)
def no_app_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other tests of the session may have set the app's variables; these read only their own."""
    import os

    for name in list(os.environ):
        if name.upper().startswith(("SYNTH_", "AZURE", "OPENAI_")):
            monkeypatch.delenv(name)


def test_minilm_gets_its_profile_and_openai_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    minilm = settings(embedder="minilm").pipeline.thresholds
    assert minilm.profile == "minilm"
    assert minilm.new_below == THRESHOLD_PROFILES["minilm"]["new_below"]
    assert minilm.duplicate_at_least == THRESHOLD_PROFILES["minilm"]["duplicate_at_least"]
    seed = settings(embedder="openai").pipeline.thresholds
    assert seed.profile == "seed"
    assert (seed.new_below, seed.conflict_at_least, seed.extend_similarity, seed.gap_at_least) == (
        0.55,
        0.80,
        0.70,
        0.65,
    )
    # auto follows the resolved embedder: an OpenAI key means OpenAI embeddings
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert settings().pipeline.thresholds.profile == "seed"


def test_a_threshold_the_user_sets_wins_over_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNTH_PIPELINE__THRESHOLDS__NEW_BELOW", "0.42")
    t = settings(embedder="minilm").pipeline.thresholds
    assert t.new_below == 0.42
    assert t.conflict_at_least == THRESHOLD_PROFILES["minilm"]["conflict_at_least"]
    monkeypatch.setenv("SYNTH_PIPELINE__THRESHOLDS__PROFILE", "seed")
    t = settings(embedder="minilm").pipeline.thresholds
    assert (t.profile, t.new_below, t.conflict_at_least) == ("seed", 0.42, 0.80)


def test_resolving_twice_keeps_the_users_choice() -> None:
    first = settings(embedder="minilm")
    again = settings(embedder="openai", pipeline=first.pipeline)
    assert again.pipeline.thresholds.profile == "seed"  # the profile was not the user's choice
    custom = PipelineConfig(thresholds=ThresholdsConfig(newBelow=0.3))
    assert settings(embedder="minilm", pipeline=custom).pipeline.thresholds.new_below == 0.3


def test_profile_is_visible_in_snapshot_and_tagging_records() -> None:
    s = settings(embedder="minilm")
    snap = s.snapshot()["thresholds"]
    assert snap["profile"] == "minilm" and snap["duplicateAtLeast"] == 0.86
    assert s.pipeline.thresholds.applied()["duplicateMaxNovelty"] == 1.0


# ------------------------------------------------------------------------------------------------
# cue rules


def story(title: str, description: str, acs: list[str] | None = None) -> GeneratedItem:
    return GeneratedItem(
        run_id="run-1",
        segment_id="seg-0001",
        segment_order=1,
        type="User Story",
        item_id="seg-0001-st01",
        story_id="seg-0001-st01",
        title=title,
        description=description,
        acceptance_criteria=acs or [],
        source_doc="x",
        source_doc_segment="0-1",
        source_quotes=[SourceQuote(text="x", start=0, end=1)],
        generation_agent_version="g",
        engine="offline",
    )


@pytest.mark.parametrize(
    ("mine", "theirs", "cue"),
    [
        ("Send the feedback once a month.", "Provide bi-weekly feedback to parents.", "frequency"),
        ("Publish a new article every day.", "Read a new article about once a week.", "frequency"),
        (
            "Stop spam with a CAPTCHA instead of blocking IP addresses.",
            "Block specific users based on their IP addresses.",
            "negation",
        ),
        (
            "Camper records are deleted at the end of each season.",
            "Keep camper records from previous years.",
            "antonyms",
        ),
        (
            "Facility information is visible only to logged-in users.",
            "Anonymously view public facility information.",
            "antonyms",
        ),
    ],
)
def test_revised_cues(mine: str, theirs: str, cue: str) -> None:
    assert contradiction_cues(mine, theirs)[0].startswith(cue)


def test_each_of_these_is_said_of_the_ones_named_not_of_all() -> None:
    """ "Each of these buttons has a raised marking" (after "power, channel and volume buttons")
    quantifies the buttons just named: no quantifier against "some of the buttons" (the demo's
    "Make some of the buttons easier to see and use" was a confident conflict on it)."""
    some = "Make some of the buttons easier to see and use."
    assert contradiction_cues(some, "Each of these buttons has a raised marking.") == []
    assert contradiction_cues(some, "All those buttons are lit.") == []
    assert contradiction_cues(some, "Each of the buttons has a raised marking.")[0].startswith(
        "quantifier"
    )


def test_no_frequency_cue_without_two_frequencies() -> None:
    assert frequencies("every 3 days, twice a year") == [
        (3.0, "every 3 days"),
        (182.5, "twice a year"),
    ]
    assert contradiction_cues("Send a weekly digest.", "Notify users as events are posted.") == []
    assert contradiction_cues("Send a weekly digest.", "A digest once a week.") == []


def test_reasons_do_not_count_for_antonyms() -> None:
    # "keep" only gives the reason of the existing story
    assert (
        contradiction_cues(
            "Delete scheduled activities.",
            "Edit activities, so that I can keep the schedule clean.",
        )
        == []
    )


def test_an_open_point_is_filled_not_contradicted() -> None:
    tagger = OfflineTagger(None, ThresholdsConfig(), THRESHOLD_RULES)  # type: ignore[arg-type]
    open_point = Candidate(
        13021,
        "Create an account",
        "As a moderator, I want to create an account with a password.",
        ["Password rules are not yet defined."],
        0.85,
    )
    item = story(
        "Password rules",
        "As a moderator, I want passwords of at least 10 characters.",
        ["Registration rejects a password shorter than 10 characters."],
    )
    d = tagger.tag(item, [open_point]).decision
    assert d.decision_tag == "gap", d.reasoning_excerpt


def test_duplicate_max_novelty_comes_from_the_thresholds() -> None:
    existing = Candidate(1, "Export CSV", "As a moderator, I want to export a CSV file.", [], 0.9)
    item = story(
        "Download the game as a spreadsheet",
        "As a moderator, I want to download the transcript as a spreadsheet file.",
    )
    strict = OfflineTagger(None, ThresholdsConfig(duplicateAtLeast=0.86), THRESHOLD_RULES)  # type: ignore[arg-type]
    loose = OfflineTagger(  # type: ignore[arg-type]
        None, ThresholdsConfig(duplicateAtLeast=0.86, duplicateMaxNovelty=1.0), THRESHOLD_RULES
    )
    assert strict.tag(item, [existing]).decision.decision_tag == "extend"
    assert loose.tag(item, [existing]).decision.decision_tag == "duplicate"
