"""Offline tagger: each rule on crafted candidates, contradiction cues, and real MiniLM pairs."""

from __future__ import annotations

import pytest

from shared.agents import Candidate
from shared.analysis.contradiction import (
    contradiction_cues,
    limit_violations,
    limits,
    quantities,
)
from shared.embeddings.minilm import MiniLMEmbedder
from shared.engine.offline import OfflineTagger
from shared.models import GeneratedItem, story_text
from shared.settings import TaggingConfig, ThresholdsConfig
from tests.support.backlog_items import lone_story

THRESHOLD_RULES = TaggingConfig(scorer="thresholds")  # the seed's rules, not the pair model


story = lone_story


def candidate(wid: int, sim: float, title: str, description: str = "", acs=None) -> Candidate:
    return Candidate(wid, title, description, list(acs or []), sim)


KEYPAD = story(
    "Keypad with 8 buttons",
    "As a viewer, I want a keypad with 8 buttons, so that the remote stays simple.",
    ["The keypad has 8 buttons."],
)
KEYPAD_15 = (
    "Keypad with a full numeric pad",
    "As a viewer, I want a keypad with 15 buttons "
    "including the digits, so that I can enter channel numbers.",
    ["The keypad has exactly 15 buttons."],
)


@pytest.fixture(scope="module")
def tagger() -> OfflineTagger:
    return OfflineTagger(None, ThresholdsConfig(), THRESHOLD_RULES)  # type: ignore[arg-type]


def decide(tagger: OfflineTagger, item: GeneratedItem, candidates: list[Candidate]):
    result = tagger.tag(item, candidates)
    assert result.usage.calls == 0 and result.model is None
    return result.decision


def test_ports_metadata(tagger: OfflineTagger) -> None:
    assert (tagger.version, tagger.engine, tagger.model) == ("tag-offline-v1", "offline", None)


def test_new_without_candidates_or_below_new_below(tagger: OfflineTagger) -> None:
    assert decide(tagger, KEYPAD, []).decision_tag == "new"
    d = decide(tagger, KEYPAD, [candidate(1001, 0.41, "Quick-start guide in five languages")])
    assert (d.decision_tag, d.related_story_ids) == ("new", [])
    assert "0.41" in d.reasoning_excerpt and "#1001" in d.reasoning_excerpt


def test_weak_overlap_is_new_with_related_ids(tagger: OfflineTagger) -> None:
    cands = [candidate(1002, 0.50, "Other"), candidate(1001, 0.60, "Make buttons bigger")]
    d = decide(tagger, KEYPAD, cands)
    assert d.decision_tag == "new" and d.related_story_ids == [1001]


def test_gap_band(tagger: OfflineTagger) -> None:
    d = decide(tagger, KEYPAD, [candidate(1001, 0.67, "Make the most-used buttons bigger")])
    assert d.decision_tag == "gap" and d.related_story_ids == [1001]
    assert "gap band" in d.reasoning_excerpt


def test_extend(tagger: OfflineTagger) -> None:
    d = decide(
        tagger,
        KEYPAD,
        [candidate(1001, 0.75, "Simple keypad", "As a viewer, I want a simple keypad.")],
    )
    assert d.decision_tag == "extend" and "0.75" in d.reasoning_excerpt


def test_conflict_on_numbers(tagger: OfflineTagger) -> None:
    cands = [candidate(1121, 0.84, *KEYPAD_15), candidate(1122, 0.70, "Bigger buttons")]
    d = decide(tagger, KEYPAD, cands)
    assert d.decision_tag == "conflict"
    assert d.related_story_ids == [1121, 1122]
    assert "#1121" in d.reasoning_excerpt and "8" in d.reasoning_excerpt
    assert "15" in d.reasoning_excerpt


def test_conflict_needs_high_similarity(tagger: OfflineTagger) -> None:
    d = decide(tagger, KEYPAD, [candidate(1121, 0.75, *KEYPAD_15)])
    assert d.decision_tag == "extend"  # the seed asks for >= 0.80 before calling a conflict
    assert "Possible contradiction" in d.reasoning_excerpt


def test_conflict_picks_the_contradicted_candidate(tagger: OfflineTagger) -> None:
    cands = [
        candidate(1200, 0.90, "Keypad with 8 buttons", "As a viewer, I want 8 buttons."),
        candidate(1121, 0.85, *KEYPAD_15),
    ]
    d = decide(tagger, KEYPAD, cands)
    assert d.decision_tag == "conflict" and d.related_story_ids[0] == 1121


@pytest.mark.parametrize(
    ("mine", "theirs", "cue"),
    [
        (
            "No teletext button and no teletext functions.",
            "As a viewer, I want a teletext button so that I can read the news.",
            "negation",
        ),
        (
            "Two standard AA batteries, the remote uses disposable batteries.",
            "As a user, I want a rechargeable battery in the remote.",
            "antonyms",
        ),
        (
            "Voice control must be available on every remote.",
            "Voice control is optional on every remote.",
            "modal",
        ),
        (
            "Channel up and down cycle through all channels.",
            "Channel up and down cycle only through favourite channels.",
            "quantifier",
        ),
        ("The battery lasts 2 years.", "The battery lasts 6 months.", "numbers"),
        ("Sell the remote at 25 EUR.", "Sell the remote at 12.50 EUR.", "numbers"),
    ],
)
def test_contradiction_cues(tagger: OfflineTagger, mine: str, theirs: str, cue: str) -> None:
    assert contradiction_cues(mine, theirs)[0].startswith(cue)
    d = decide(tagger, story(mine, mine), [candidate(1300, 0.83, theirs, theirs)])
    assert d.decision_tag == "conflict" and cue in d.reasoning_excerpt


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "As a viewer, I want a power button so that I can switch the TV on.",
            "As a viewer, I want one power button that switches the TV on and off.",
        ),
        (
            "Keep the unit production cost at or below 12.50 EUR.",
            "Production cost per unit must not exceed 12.50 EUR.",
        ),
        (
            "Work with the five best-selling TV brands out of the box.",
            "The remote must work with the five best-selling TV brands.",
        ),
    ],
)
def test_agreeing_texts_have_no_cue(a: str, b: str) -> None:
    assert contradiction_cues(a, b) == []


def test_duplicate_and_its_novelty_check(tagger: OfflineTagger) -> None:
    same = candidate(
        1105,
        0.95,
        "Switch the TV on and off with one power button",
        "As a viewer, I want one power button that switches the TV on and off.",
    )
    item = story(
        "Switch the TV on and off with one power button",
        "As a viewer, I want one power button that switches the TV on and off, so that "
        "the product meets what was agreed for power.",
    )
    d = decide(tagger, item, [same])
    assert d.decision_tag == "duplicate" and d.related_story_ids == [1105]
    richer = story(
        item.title,
        item.description,
        ["The power button is red, at the top, lit by a green LED and protected by a rubber seal."],
    )
    assert decide(tagger, richer, [same]).decision_tag == "extend"


def test_gap_when_the_candidate_leaves_a_placeholder(tagger: OfflineTagger) -> None:
    tbd = candidate(
        1114,
        0.76,
        "Battery life target",
        "As a viewer, I want a long battery life. The target is TBD.",
    )
    item = story(
        "Battery life of at least 12 months",
        "As a user, I want a battery life of at least 12 months.",
    )
    d = decide(tagger, item, [tbd])
    assert d.decision_tag == "gap" and "TBD" in d.reasoning_excerpt


def test_thresholds_come_from_config() -> None:
    strict = OfflineTagger(None, ThresholdsConfig(newBelow=0.7), THRESHOLD_RULES)  # type: ignore[arg-type]
    d = strict.tag(KEYPAD, [candidate(1001, 0.67, "Make the most-used buttons bigger")]).decision
    assert d.decision_tag == "new"


def test_deterministic(tagger: OfflineTagger) -> None:
    cands = [candidate(1121, 0.84, *KEYPAD_15), candidate(1122, 0.70, "Bigger buttons")]
    assert tagger.tag(KEYPAD, cands) == tagger.tag(KEYPAD, list(reversed(cands)))


def test_quantities_and_limits() -> None:
    assert [q.text for q in quantities("ARC-03 v1, due 2026-11-27: 40,000 units at 12.50 EUR")] == [
        "40,000 units",
        "12.50 EUR",
    ]
    assert quantities("our target is twelve point five Euros")[0].value == 12.5
    # "and a half" belongs to its number, and a cue before it makes it a limit
    said = "we need production costs of maximum twelve and a half Euro so that we can"
    assert [(q.value, q.text) for q in quantities(said)] == [(12.5, "twelve and a half Euro")]
    assert [(lim.kind, lim.quantity.value) for lim in limits(said)] == [("max", 12.5)]
    assert quantities("it takes 2 and a half hours")[0].value == 2.5 * 3600
    assert [q.text for q in quantities("25 euros and a half of the team")] == ["25 euros"]
    cap = "ARC-03 The production cost per unit must not exceed 12.50 EUR."
    assert limit_violations("The remote should cost 18.80 EUR to produce.", cap) != []
    assert limit_violations("The production cost is 11.90 EUR.", cap) == []
    assert limit_violations("The selling price stays at 25 EUR.", cap) == []  # another quantity
    assert limit_violations("The battery lasts 6 months.", "Battery life at least 12 months.") != []


# ------------------------------------------------------------------------------------------------
# real MiniLM similarities (the supervisor computes them the same way: cosine of story texts)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def cosine(embedder: MiniLMEmbedder, a: GeneratedItem | Candidate, b: Candidate) -> float:
    va, vb = embedder.embed(
        [
            story_text(a.title, a.description, a.acceptance_criteria),
            story_text(b.title, b.description, b.acceptance_criteria),
        ]
    )
    return round(float(va @ vb), 4)


def test_real_pairs_order_and_tags(embedder: MiniLMEmbedder, tagger: OfflineTagger) -> None:
    power = story(
        "One power button that switches the TV on and off",
        "As a viewer, I want one power button that switches the TV on and off.",
    )
    existing = candidate(
        1105,
        0.0,
        "Switch the TV on and off with one power button",
        "As a viewer, I want one power button that switches the TV on and off, "
        "so that I do not need the TV's own switch.",
        ["Pressing the power button toggles the TV."],
    )
    related = candidate(
        1101,
        0.0,
        "Zap through channels with next and previous buttons",
        "As a viewer, I want next and previous buttons to zap through channels.",
    )
    unrelated = candidate(
        1135,
        0.0,
        "Quick-start guide in five languages",
        "As a buyer, I want a printed quick-start guide in five languages.",
    )
    sims = {c.work_item_id: cosine(embedder, power, c) for c in (existing, related, unrelated)}
    assert sims[1105] > sims[1101] > sims[1135]
    assert sims[1105] >= 0.70 and sims[1135] < 0.55
    for c in (existing, related, unrelated):
        c.similarity = sims[c.work_item_id]
    assert decide(tagger, power, [unrelated]).decision_tag == "new"
    assert decide(tagger, power, [existing, related, unrelated]).decision_tag in {
        "extend",
        "duplicate",
    }
    twin = candidate(1105, 0.0, power.title, power.description)
    twin.similarity = cosine(embedder, power, twin)
    assert twin.similarity > 0.99
    assert decide(tagger, power, [twin]).decision_tag == "duplicate"
