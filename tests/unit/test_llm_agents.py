"""The LLM agents' rules with a scripted chat model (no I/O): cutting and limits, windows, the
retry rule of each agent, quote checks, clear tagging decisions. The SDK and the wire are covered
by tests/integration/test_llm_*.py against the OpenAI stand-in."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.agents import (
    Candidate,
    GenerationContext,
    GenerationFailed,
    SegmentationFailed,
    TaggingFailed,
)
from shared.engine.llm.generation import LLMGenerator
from shared.engine.llm.prompting import UNIT_LINE_RE
from shared.engine.llm.schemas import (
    GenerationAnswer,
    SegmentationAnswer,
    TaggingAnswer,
)
from shared.engine.llm.segmentation import LLMSegmenter
from shared.engine.llm.tagging import LLMTagger
from shared.llm import InvalidOutput, InvalidRequest, StructuredAnswer
from shared.models import GeneratedItem, Segment, SourceQuote, Usage
from shared.settings import PipelineConfig, SegmentationConfig
from shared.text.tokens import count_tokens

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class FakeChat:
    """Answers from a list: a dict (parsed into the schema), a callable(messages) -> dict, or an
    exception to raise. Records every call."""

    model = "fake-model"

    def __init__(self, answers: list[Any]) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    def structured(
        self,
        messages: Sequence[dict[str, Any]],
        schema: type,
        *,
        temperature: float,
        max_tokens: int | None = None,
    ) -> StructuredAnswer:
        self.calls.append({"messages": list(messages), "temperature": temperature})
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            answer = answer(messages)
        return StructuredAnswer(
            value=schema.model_validate(answer),
            raw=str(answer),
            usage=Usage(prompt_tokens=100, completion_tokens=10, calls=1),
            model="fake-model-2026",
        )


def segment_of(text: str, order: int = 1, start: int = 0) -> Segment:
    return Segment(
        run_id="run-0123456789abcdef0123",
        segment_id=f"seg-{order:04d}",
        segment_order=order,
        raw_text=text,
        start_char=start,
        end_char=start + len(text),
        token_count=count_tokens(text),
        intent_labels=["battery"],
        dominant_intent="requirements: battery",
        theme="Power",
        segmentation_version="seg-llm-v1",
        engine="llm",
        timestamp=NOW,
    )


def proposal(start: int, label: str = "topic") -> dict[str, Any]:
    return {
        "start_unit": start,
        "intent_labels": [label],
        "dominant_intent": f"requirements: {label}",
        "theme": "Remote",
    }


def shown_units(messages: Sequence[dict[str, Any]]) -> list[int]:
    return [int(i) for i in UNIT_LINE_RE.findall(messages[-1]["content"])] or [
        int(i) for m in messages for i in UNIT_LINE_RE.findall(m["content"])
    ]


TOPICS = ["battery", "buttons", "case", "voice", "price", "colour"]


def transcript(lines_per_topic: int = 6) -> str:
    out = []
    for topic in TOPICS:
        for k in range(lines_per_topic):
            out.append(
                f"Speaker {k}: about the {topic}, point {k}, we discussed the {topic} at length "
                f"and agreed that the {topic} matters for the remote."
            )
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------------
# segmentation


def test_segments_are_cut_at_the_chosen_units_and_tile_the_transcript():
    text = transcript()
    chat = FakeChat([{"segments": [proposal(k * 6, t) for k, t in enumerate(TOPICS)]}])
    seg = LLMSegmenter(chat, SegmentationConfig(min_merge_threshold=10))
    result = seg.segment(text)
    assert "".join(text[s.start : s.end] for s in result.spans) == text
    assert [s.intent_labels for s in result.spans] == [[t] for t in TOPICS]
    assert result.usage.calls == 1 and result.model == "fake-model-2026"
    assert result.merge_operations == 0 and seg.version == "seg-llm-v1"


def test_over_long_segments_are_split_and_short_ones_merged():
    text = transcript()
    # one giant segment, then a one-line segment at the end
    last = 6 * len(TOPICS) - 1
    chat = FakeChat([{"segments": [proposal(0, "all"), proposal(last, "tail")]}])
    cfg = SegmentationConfig(max_segment_tokens=300, min_merge_threshold=80)
    result = LLMSegmenter(chat, cfg).segment(text)
    tokens = [count_tokens(text[s.start : s.end]) for s in result.spans]
    assert all(t <= 300 for t in tokens), tokens
    assert all(t >= 80 for t in tokens), tokens
    assert result.merge_operations >= 1
    assert "".join(text[s.start : s.end] for s in result.spans) == text
    assert "tail" in result.spans[-1].intent_labels  # a merged segment keeps both labels


def test_a_first_segment_that_starts_late_still_covers_the_beginning():
    text = transcript()
    chat = FakeChat([{"segments": [proposal(3, "a"), proposal(18, "b")]}])
    result = LLMSegmenter(chat, SegmentationConfig(min_merge_threshold=10)).segment(text)
    assert result.spans[0].start == 0 and result.spans[0].intent_labels == ["a"]


def test_invalid_segmentation_is_retried_once_at_a_lower_temperature():
    text = transcript()
    chat = FakeChat(
        [
            {"segments": [proposal(0), proposal(999)]},  # a unit that does not exist
            {"segments": [proposal(0), proposal(12)]},
        ]
    )
    result = LLMSegmenter(chat, SegmentationConfig(temperature=0.2)).segment(text)
    assert len(result.spans) == 2 and result.attempts == 2 and result.usage.calls == 2
    assert chat.calls[0]["temperature"] == pytest.approx(0.2)
    assert chat.calls[1]["temperature"] == pytest.approx(0.15)
    feedback = chat.calls[1]["messages"][-1]["content"]
    assert "rejected" in feedback and "999" in feedback


def test_segmentation_fails_after_its_retry_with_the_raw_output_and_usage():
    chat = FakeChat(
        [
            InvalidOutput("not JSON", raw='{"segments": [', usage=Usage(prompt_tokens=50, calls=1)),
            {"segments": []},
        ]
    )
    with pytest.raises(SegmentationFailed) as err:
        LLMSegmenter(chat, SegmentationConfig()).segment(transcript())
    assert err.value.attempts == 2 and "no segments" in str(err.value)
    assert err.value.usage.calls == 2 and err.value.usage.prompt_tokens == 150
    assert len(chat.calls) == 2


def test_long_transcripts_are_segmented_in_overlapping_windows():
    text = transcript(lines_per_topic=12)

    def every_fourth(messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
        units = shown_units(messages)
        return {"segments": [proposal(u, f"u{u}") for u in units if u % 4 == 0 or u == units[0]]}

    cfg = SegmentationConfig(window_tokens=700, window_overlap_tokens=150, min_merge_threshold=10)
    chat = FakeChat([every_fourth] * 20)
    result = LLMSegmenter(chat, cfg).segment(text)
    assert len(chat.calls) > 2
    assert "".join(text[s.start : s.end] for s in result.spans) == text
    starts = [s.start for s in result.spans]
    assert starts == sorted(set(starts))
    windows = [shown_units(c["messages"]) for c in chat.calls]
    assert all(w[0] < n[0] <= w[-1] for w, n in zip(windows, windows[1:], strict=False))


# ------------------------------------------------------------------------------------------------
# generation

SEGMENT_TEXT = (
    "Marketing: The remote must have fewer than ten buttons. It should glow in the dark.\n"
    "Engineer: The battery must last at least twelve months.\n"
)


def story(quote: str, title: str = "Few buttons") -> dict[str, Any]:
    return {
        "title": title,
        "description": "As a user, I want few buttons, so that it is simple.",
        "acceptance_criteria": ["Fewer than ten buttons"],
        "feature_key": "f1",
        "source_quotes": [quote],
        "superseded_quotes": [],
        "open_questions": [],
        "constraint_violation": False,
        "constraint_notes": [],
        "ac_delta": [],
        "extends_work_item_ids": [],
    }


def generation(*stories: dict[str, Any]) -> dict[str, Any]:
    return {
        "epics": [
            {"key": "e1", "title": "Remote", "description": "", "existing_work_item_id": None}
        ],
        "features": [
            {
                "key": "f1",
                "title": "Controls",
                "description": "",
                "epic_key": "e1",
                "existing_work_item_id": None,
            }
        ],
        "stories": list(stories),
        "open_questions": [],
    }


def test_generation_accepts_verbatim_quotes_and_reports_usage():
    seg = segment_of(SEGMENT_TEXT, start=100)
    chat = FakeChat([generation(story("The remote must have fewer than ten buttons."))])
    result = LLMGenerator(chat, PipelineConfig()).generate(seg, GenerationContext())
    assert result.draft.stories[0].source_quotes == ["The remote must have fewer than ten buttons."]
    assert result.attempts == 1 and result.usage.prompt_tokens == 100


def test_parent_reuse_deltas_violations_and_questions_reach_the_draft():
    seg = segment_of(SEGMENT_TEXT)
    answer = generation(story("The battery must last at least twelve months.", "Battery"))
    answer["epics"][0]["existing_work_item_id"] = 11
    answer["stories"][0].update(
        extends_work_item_ids=[42],
        ac_delta=["Battery lasts 12 months, not 6"],
        constraint_violation=True,
        constraint_notes=["ARC-02 allows at most 6 months of standby"],
        open_questions=["Which battery type?"],
    )
    answer["open_questions"] = ["Who owns the beeper?"]
    draft = (
        LLMGenerator(FakeChat([answer]), PipelineConfig()).generate(seg, GenerationContext()).draft
    )
    assert draft.epics[0].existing_work_item_id == 11
    s = draft.stories[0]
    assert (s.extends_work_item_ids, s.ac_delta) == ([42], ["Battery lasts 12 months, not 6"])
    assert (
        s.constraint_violation
        and s.constraint_notes
        and s.open_questions == ["Which battery type?"]
    )
    assert draft.open_questions == ["Who owns the beeper?"]


def test_a_quote_not_in_the_segment_is_retried_with_feedback_then_fails():
    seg = segment_of(SEGMENT_TEXT)
    invented = story("The remote must make coffee.", "Coffee")
    chat = FakeChat([generation(invented), generation(invented)])
    gen = LLMGenerator(chat, PipelineConfig())
    with pytest.raises(GenerationFailed) as err:
        gen.generate(seg, GenerationContext())
    assert err.value.attempts == 2 and "make coffee" in str(err.value)
    assert "make coffee" in err.value.raw_output
    assert chat.calls[1]["temperature"] == pytest.approx(chat.calls[0]["temperature"] - 0.05)
    assert "not exact substrings" in chat.calls[1]["messages"][-1]["content"]


def test_superseded_quotes_are_checked_verbatim_too():
    seg = segment_of(SEGMENT_TEXT)
    revised = story("The battery must last at least twelve months.", "Battery")
    revised["superseded_quotes"] = ["The battery must last six months."]  # never said
    fixed = story("The battery must last at least twelve months.", "Battery")
    fixed["superseded_quotes"] = ["It should glow in the dark."]
    chat = FakeChat([generation(revised), generation(fixed)])
    result = LLMGenerator(chat, PipelineConfig()).generate(seg, GenerationContext())
    assert result.attempts == 2 and "six months" in chat.calls[1]["messages"][-1]["content"]
    assert result.draft.stories[0].superseded_quotes == ["It should glow in the dark."]


def test_the_prompt_asks_for_the_meetings_persona_and_no_stock_benefit():
    gen = LLMGenerator(FakeChat([]), PipelineConfig())
    system = gen.messages(segment_of(SEGMENT_TEXT), GenerationContext())[0]["content"]
    assert "superseded_quotes" in system and 'use "user"' in system
    assert "only when the meeting states" in system and "Never a stock phrase" in system


def test_a_story_without_quotes_is_retried_and_the_fixed_answer_accepted():
    seg = segment_of(SEGMENT_TEXT)
    unquoted = story("x")
    unquoted["source_quotes"] = []
    chat = FakeChat(
        [generation(unquoted), generation(story("The battery must last at least twelve months."))]
    )
    result = LLMGenerator(chat, PipelineConfig()).generate(seg, GenerationContext())
    assert result.attempts == 2 and result.usage.calls == 2
    assert "source_quotes" in chat.calls[1]["messages"][-1]["content"]


def test_stories_beyond_the_limit_are_dropped():
    seg = segment_of(SEGMENT_TEXT)
    quotes = ["It should glow in the dark.", "The battery must last at least twelve months."]
    chat = FakeChat([generation(*(story(q) for q in quotes * 3))])
    cfg = PipelineConfig()
    cfg.generation.max_stories_per_segment = 4
    result = LLMGenerator(chat, cfg).generate(seg, GenerationContext())
    assert len(result.draft.stories) == 4


def test_a_rejected_request_fails_without_a_retry():
    chat = FakeChat([InvalidRequest("context length exceeded")])
    with pytest.raises(GenerationFailed) as err:
        LLMGenerator(chat, PipelineConfig()).generate(segment_of(SEGMENT_TEXT), GenerationContext())
    assert err.value.attempts == 1 and len(chat.calls) == 1


# ------------------------------------------------------------------------------------------------
# tagging


def generated_story() -> GeneratedItem:
    return GeneratedItem(
        run_id="run-0123456789abcdef0123",
        segment_id="seg-0001",
        segment_order=1,
        type="User Story",
        item_id="seg-0001-st01",
        story_id="seg-0001-st01",
        title="Long battery life",
        description="As a user, I want the battery to last a year.",
        acceptance_criteria=["Battery lasts 12 months"],
        source_doc="m.txt",
        source_doc_segment="0-10",
        source_quotes=[SourceQuote(text="battery", start=0, end=7)],
        generation_agent_version="gen-llm-v2",
        engine="llm",
    )


CANDIDATES = [
    Candidate(7, "Battery", "Battery lasts six months", ["6 months"], 0.86, "Active"),
    Candidate(9, "Case", "Recycled case", [], 0.41),
]


def tag_answer(tag: str, related: list[int], **kw: Any) -> dict[str, Any]:
    return {
        "decision_tag": tag,
        "confidence": kw.get("confidence", 0.8),
        "runner_up_tag": kw.get("runner_up_tag"),
        "runner_up_confidence": kw.get("runner_up_confidence"),
        "related_story_ids": related,
        "reasoning_excerpt": "Twelve months contradicts six months.",
    }


def test_tagging_prompt_carries_candidates_and_thresholds():
    chat = FakeChat([tag_answer("conflict", [7])])
    result = LLMTagger(chat, PipelineConfig()).tag(generated_story(), CANDIDATES)
    assert result.decision.decision_tag == "conflict" and result.decision.related_story_ids == [7]
    prompt = chat.calls[0]["messages"][-1]["content"]
    assert "[#7] similarity 0.860" in prompt and "[#9] similarity 0.410" in prompt
    assert "newBelow=0.55" in prompt and "duplicateAtLeast=0.92" in prompt
    assert '"duplicate"' in prompt  # the fifth tag is defined


def test_an_unclear_decision_is_retried_then_tagging_fails():
    chat = FakeChat([tag_answer("extend", [12345]), tag_answer("gap", [])])
    with pytest.raises(TaggingFailed) as err:
        LLMTagger(chat, PipelineConfig()).tag(generated_story(), CANDIDATES)
    assert err.value.attempts == 2 and "names none of the retrieved stories" in str(err.value)
    assert chat.calls[1]["temperature"] == pytest.approx(0.05)


def test_the_higher_confidence_tag_wins_and_unknown_ids_are_dropped():
    answer = tag_answer(
        "extend", [7, 4242], confidence=0.4, runner_up_tag="conflict", runner_up_confidence=0.7
    )
    result = LLMTagger(FakeChat([answer]), PipelineConfig()).tag(generated_story(), CANDIDATES)
    assert result.decision.decision_tag == "conflict"
    assert result.decision.related_story_ids == [7]


def test_new_needs_no_related_story_and_no_candidates_needs_no_call():
    result = LLMTagger(FakeChat([tag_answer("new", [7])]), PipelineConfig()).tag(
        generated_story(), CANDIDATES
    )
    assert result.decision.decision_tag == "new" and result.decision.related_story_ids == []
    chat = FakeChat([])
    result = LLMTagger(chat, PipelineConfig()).tag(generated_story(), [])
    assert result.decision.decision_tag == "new" and chat.calls == []


def test_schemas_are_strict_structured_output_schemas():
    from openai.lib._parsing._completions import type_to_response_format_param

    for schema in (SegmentationAnswer, GenerationAnswer, TaggingAnswer):
        fmt = type_to_response_format_param(schema)
        assert fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["name"] == schema.__name__
