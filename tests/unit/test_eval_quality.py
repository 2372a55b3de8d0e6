"""Story quality: the model-free (AQUSA-style) checks on good and bad stories, and the LLM judge
with a stand-in chat model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.engine.llm.prompting import DATA_BLOCK_RE
from shared.eval.checks import check_story
from shared.eval.quality import (
    JudgeAnswer,
    JudgeFailed,
    LLMJudge,
    judge_chat_model,
    judge_run,
)
from shared.llm import InvalidOutput, StructuredAnswer
from shared.llm.openai_chat import OpenAIChatModel
from shared.models import GeneratedItem, Segment, SourceQuote, TaggingRecord, Usage
from shared.settings import Settings

TRANSCRIPT = (
    "PM: The remote needs a power button at the top.\n"
    "UI: Users want to lock the keys so that kids cannot change channels.\n"
)
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def segment(start: int = 0, end: int = len(TRANSCRIPT)) -> Segment:
    return Segment(
        run_id="run-1",
        segment_id="seg-0001",
        segment_order=1,
        raw_text=TRANSCRIPT[start:end],
        start_char=start,
        end_char=end,
        token_count=20,
        segmentation_version="v",
        engine="offline",
        timestamp=NOW,
    )


def quote(text: str) -> SourceQuote:
    at = TRANSCRIPT.index(text)
    return SourceQuote(text=text, start=at, end=at + len(text))


def story(
    description: str,
    acs: list[str] | None = None,
    title: str = "Lock the keys",
    item_id: str = "seg-0001-st01",
    quotes: list[SourceQuote] | None = None,
) -> GeneratedItem:
    return GeneratedItem(
        run_id="run-1",
        segment_id="seg-0001",
        segment_order=1,
        type="User Story",
        item_id=item_id,
        story_id=item_id,
        title=title,
        description=description,
        acceptance_criteria=["Holding OK for 3 seconds locks every key."] if acs is None else acs,
        source_doc="notes.txt",
        source_doc_segment="0-10",
        source_quotes=quotes or [quote("lock the keys")],
        generation_agent_version="gen",
        engine="offline",
    )


GOOD = "As a parent, I want to lock the keys of the remote, so that kids cannot change channels."


def failed(item: GeneratedItem, others: list[GeneratedItem] | None = None) -> dict[str, str]:
    checks = check_story(item, TRANSCRIPT, segment(), others or [item])
    return {c.name: c.detail for c in checks if not c.passed}


def test_a_good_story_passes_every_check() -> None:
    assert failed(story(GOOD)) == {}


@pytest.mark.parametrize(
    ("description", "check"),
    [
        ("I want to lock the keys, so that kids cannot change channels.", "role"),
        ("As a parent, the keys lock, so that kids cannot change channels.", "means"),
        (
            "As a parent, I want to lock the keys, so that the product meets what was agreed.",
            "benefit",
        ),
        ("As a parent, I want to lock the keys, so that revenue doubles next year.", "benefit"),
        (
            "As a parent, I want to lock the keys, so that kids stay away. As a child, I want "
            "to unlock them, so that I can watch.",
            "atomic",
        ),
        (
            "As a parent, I want to lock and unlock the keys, so that kids stay away.",
            "conjunctions",
        ),
        (
            "As an admin, I want to add users or delete them, so that the list is right.",
            "conjunctions",
        ),
        ("As a parent, I want to lock the keys (all of them), so that kids stay away.", "minimal"),
        ("As a parent, I want to lock the keys, so that kids stay away. It is urgent.", "minimal"),
    ],
)
def test_a_bad_story_fails_the_check_that_names_its_flaw(description: str, check: str) -> None:
    assert check in failed(story(description))


def test_a_benefit_saying_what_i_can_then_do_is_one_story() -> None:
    """ "so that I can ..." is the benefit of the one "I want", not a second story."""
    said = "As a parent, I want to lock the keys, so that I can leave the room."
    assert "atomic" not in failed(story(said))
    two = "As a parent, I want to lock the keys and I want to see the log, so that I can rest."
    assert "atomic" in failed(story(two))


def test_no_benefit_is_fine_when_none_was_stated() -> None:
    assert failed(story("As a parent, I want to lock the keys of the remote.")) == {}


@pytest.mark.parametrize(
    ("title", "problem"),
    [
        ("Keys", "words"),
        ("It must lock the keys", "not a verb"),
        ("Lock the keys uh", "disfluency"),
        ("Lock the keys of the", "ends on"),
        ("Lock the keys {disfmarker} now", "disfluency"),
        ("Maybe lock the keys", "not a verb"),
    ],
)
def test_titles_are_short_verb_phrases(title: str, problem: str) -> None:
    assert problem in failed(story(GOOD, title=title))["title"]


def test_the_persona_the_statement_names_is_the_role() -> None:
    power = [quote("The remote needs a power button at the top.")]
    users = [quote("Users want to lock the keys so that kids cannot change channels.")]
    named = TRANSCRIPT.replace("Users want", "Parents want")
    item = story("As a user, I want to lock the keys.", quotes=users)
    assert "persona" not in failed(item)  # "users" names no role: the default is right
    said = "Parents want to lock the keys"
    at = named.index(said)
    parent_quote = SourceQuote(text=said, start=at, end=at + len(said))
    checks = check_story(story("As a user, I want to lock the keys.", quotes=[parent_quote]), named)
    assert any(c.name == "persona" and not c.passed for c in checks)
    checks = check_story(
        story("As a parent, I want to lock the keys.", quotes=[parent_quote]), named
    )
    assert all(c.passed for c in checks if c.name == "persona")
    assert "persona" not in failed(story("As a user, I want a power button.", quotes=power))


def test_people_described_by_what_they_can_do_are_not_the_role() -> None:
    """ "I don't want my whole diary online, I keep some for the patients who can't use it." (the
    clinic meeting) is the speaker's need; the patients are described, no role of the story."""
    said = "I keep some slots for the patients who can't use it."
    named = TRANSCRIPT + f"DR: {said}\n"
    at = named.index(said)
    described = SourceQuote(text=said, start=at, end=at + len(said))
    item = story("As a user, I want to keep some slots.", quotes=[described])
    assert all(c.passed for c in check_story(item, named) if c.name == "persona")
    wants = "Patients can't book online."
    named = TRANSCRIPT + f"DR: {wants}\n"
    at = named.index(wants)
    theirs = SourceQuote(text=wants, start=at, end=at + len(wants))
    item = story("As a user, I want to keep some slots.", quotes=[theirs])
    assert not all(c.passed for c in check_story(item, named) if c.name == "persona")


@pytest.mark.parametrize(
    ("said", "names_a_role"),
    [
        ("Finance will be on laptops, big screens, lots of columns.", False),  # where they are
        ("Drivers will be in the van all day.", False),
        ("Finance will check every claim.", True),  # what they will do: their need
    ],
)
def test_where_people_will_be_names_no_role(said: str, names_a_role: bool) -> None:
    named = TRANSCRIPT + f"DR: {said}\n"
    at = named.index(said)
    item = story(
        "As a user, I want a web version.",
        quotes=[SourceQuote(text=said, start=at, end=at + len(said))],
    )
    passed = all(c.passed for c in check_story(item, named) if c.name == "persona")
    assert passed is not names_a_role


def test_criteria_must_add_to_the_title() -> None:
    restating = failed(story(GOOD, title="Lock the keys", acs=["The keys are locked."]))
    assert "restates" in restating["acs_add"]
    assert "acs_add" not in failed(story(GOOD, acs=["Holding OK for 3 seconds locks every key."]))
    gwt = "Given the remote, when it is checked, then it has at most 8 buttons."
    assert "acs_add" not in failed(story(GOOD, title="Provide at most 8 buttons", acs=[gwt]))


def test_generated_text_has_no_transcript_markers() -> None:
    item = story(GOOD, acs=["Holding OK {vocalsound} for 3 seconds locks every key."])
    assert "{vocalsound}" in failed(item)["clean_text"]
    assert "clean_text" not in failed(story(GOOD))


def test_conjunctions_between_nouns_are_fine() -> None:
    ok = "As a parent, I want to see the channel and the volume, so that I know the state."
    assert "conjunctions" not in failed(story(ok))


def test_acceptance_criteria_must_be_testable() -> None:
    assert "no acceptance criteria" in failed(story(GOOD, acs=[]))["testable_acs"]
    vague = failed(story(GOOD, acs=["The lock is fast and user-friendly."]))["testable_acs"]
    assert "vague" in vague and "AC 1" in vague
    assert "testable_acs" not in failed(story(GOOD, acs=["The lock engages within 2 seconds."]))
    assert "question" in failed(story(GOOD, acs=["Which keys are locked?"]))["testable_acs"]
    assert "too short" in failed(story(GOOD, acs=["Works."]))["testable_acs"]


def test_unique_compares_titles_and_means_across_the_run() -> None:
    first = story(GOOD)
    second = story(GOOD, title="Key lock for kids", item_id="seg-0001-st02")
    assert "seg-0001-st02" in failed(first, [first, second])["unique"]
    other = story(
        "As a viewer, I want a power button, so that I can switch on.",
        title="Power button",
        item_id="seg-0001-st03",
        quotes=[quote("a power button at the top")],
    )
    assert "unique" not in failed(first, [first, other])


def test_quotes_must_be_in_the_transcript_and_in_the_segment() -> None:
    wrong = SourceQuote(text="lock the doors", start=0, end=14)
    assert "differs" in failed(story(GOOD, quotes=[wrong]))["quote_found"]
    first_line = TRANSCRIPT.index("UI:")
    outside = check_story(story(GOOD), TRANSCRIPT, segment(0, first_line))
    assert not next(c for c in outside if c.name == "quote_found").passed
    assert not next(c for c in check_story(story(GOOD), None) if c.name == "quote_found").passed


# ------------------------------------------------------------------------------------------------
# LLM judge


class StandInChat:
    """Answers with the queued JudgeAnswers (or raises queued errors), recording each call."""

    model = "stand-in"

    def __init__(self, *answers: JudgeAnswer | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[dict] = []

    def structured(self, messages, schema, *, temperature, max_tokens=None):
        self.calls.append({"messages": messages, "schema": schema, "temperature": temperature})
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return StructuredAnswer(answer, "{}", Usage(prompt_tokens=100, completion_tokens=20), "m-1")


def answer(**overrides: object) -> JudgeAnswer:
    values = dict(
        independent=5,
        negotiable=4,
        valuable=5,
        estimable=3,
        small=4,
        testable=3,
        ac_coverage=5,
        ac_negative_cases=1,
        ac_measurability=3,
        traceability=5,
        gap_is_real_enhancement=True,
        invest_rationale="Estimable is weakest.",
        ac_rationale="No negative case.",
        traceability_rationale="The segment says it.",
        gap_rationale="Fills the open point.",
    )
    values.update(overrides)
    return JudgeAnswer(**values)


def record(tag: str) -> TaggingRecord:
    return TaggingRecord(
        run_id="run-1",
        segment_id="seg-0001",
        story_id="seg-0001-st01",
        decision_tag=tag,
        tagging_agent_version="t",
        engine="offline",
        timestamp=NOW,
    )


def test_llm_judge_maps_ratings_to_scores() -> None:
    chat = StandInChat(answer())
    result = LLMJudge(chat).judge(story(GOOD), TRANSCRIPT, record("gap"), ["#1 Lock keys"])
    # INVEST mean (5+4+5+3+4+3)/6 = 4 -> (4-1)/4; AC mean (5+1+3)/3 = 3 -> 0.5; trace 5 -> 1
    assert result["invest_score"] == pytest.approx(0.75)
    assert result["ac_completeness"] == pytest.approx(0.5)
    assert result["traceability_score"] == 1.0
    assert result["gap_correctness"] is True and result["gap_rationale"] == "Fills the open point."
    assert (
        result["invest_rationale"] and result["ac_rationale"] and result["traceability_rationale"]
    )
    assert result["prompt_version"] == "judge-llm-v1" and result["model"] == "m-1"
    assert result["usage"] == {"prompt_tokens": 100, "completion_tokens": 20, "calls": 0}
    system, user = (m["content"] for m in chat.calls[0]["messages"])
    assert "## Source Segment" in user and "lock the keys" in user and "#1 Lock keys" in user
    assert "never an instruction" in system
    blocks = {m["kind"]: m["text"] for m in DATA_BLOCK_RE.finditer(user)}
    assert blocks["segment"] == TRANSCRIPT and "Lock the keys" in blocks["story"]
    assert chat.calls[0]["schema"] is JudgeAnswer


def test_gap_correctness_only_for_gap_stories() -> None:
    result = LLMJudge(StandInChat(answer())).judge(story(GOOD), TRANSCRIPT, record("extend"))
    assert result["gap_correctness"] is None and result["gap_rationale"] is None


def test_llm_judge_retries_once_then_gives_up() -> None:
    chat = StandInChat(InvalidOutput("bad json", raw="{oops"), answer())
    result = LLMJudge(chat, temperature=0.2).judge(story(GOOD), TRANSCRIPT)
    assert result["attempts"] == 2
    assert chat.calls[1]["temperature"] < chat.calls[0]["temperature"]
    # the retry shows the model its rejected answer and the reason
    assert "bad json" in chat.calls[1]["messages"][-1]["content"]
    judge = LLMJudge(StandInChat(answer(small=9), answer(small=0)))
    with pytest.raises(JudgeFailed, match="failed twice: ratings must be integers") as err:
        judge.judge(story(GOOD), TRANSCRIPT)
    assert err.value.attempts == 2
    failure = judge.failure(err.value)
    assert failure["status"] == "failed" and failure["attempts"] == 2
    assert failure["prompt_version"] == "judge-llm-v1"


def test_judge_run_records_a_failed_story_and_goes_on() -> None:
    good, other = story(GOOD), story(GOOD, title="Key lock", item_id="seg-0001-st02")
    chat = StandInChat(InvalidOutput("bad"), InvalidOutput("bad again"), answer())
    rows, summary = judge_run([good, other], [], [segment()], TRANSCRIPT, LLMJudge(chat))
    assert [r["judge_status"] for r in rows] == ["failed", "ok"]
    assert rows[0]["llm"]["error_type"] == "JudgeFailed" and rows[0]["checks"]
    assert summary["llm_judged"] == 1 and summary["llm_failed"] == 1
    assert summary["invest_score"] == pytest.approx(0.75)


def test_judge_run_summarizes_checks_and_llm_scores() -> None:
    good, bad = (
        story(GOOD),
        story("I want the keys locked.", title="Keys locked", item_id="seg-0001-st02"),
    )
    rows, summary = judge_run(
        [good, bad], [], [segment()], TRANSCRIPT, LLMJudge(StandInChat(answer(), answer()))
    )
    assert [r["story_id"] for r in rows] == ["seg-0001-st01", "seg-0001-st02"]
    assert summary["pass_rate"]["role"] == 0.5 and summary["pass_rate"]["quote_found"] == 1.0
    assert summary["all_checks_passed"] == 1
    assert summary["llm_judged"] == 2 and summary["invest_score"] == pytest.approx(0.75)


def test_no_chat_model_means_no_llm_judge() -> None:
    none = Settings(_env_file=None, openai_api_key=None, azure_openai_endpoint=None)
    assert judge_chat_model(none) is None
    configured = Settings(_env_file=None, openai_api_key="sk-test")
    configured.pipeline.judge.model = "judge-model"
    chat = judge_chat_model(configured)
    assert isinstance(chat, OpenAIChatModel) and chat.model == "judge-model"
