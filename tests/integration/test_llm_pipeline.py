"""The pipeline with the LLM engine (real agents, real ``openai`` SDK) against the OpenAI stand-in,
in-process: each failure path of seed 000 (§4, §5, §6, §14 "Failure Handling Summary"), the
SDK's own 429 retry, and what the records say about the engine, model and prompt versions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devhost.standins.openai_standin import (
    Failures,
    OpenAIStandIn,
    Recorded,
    Reply,
    hermetic_env,
    quote_not_in_segment,
    unclear_tag,
)
from shared import layout
from shared.engine.llm import build_llm_agents
from shared.engine.llm.prompting import DATA_BLOCK_RE
from shared.models import (
    ErrorRecord,
    GeneratedItem,
    GeneratedPart,
    Segment,
    Summary,
    TaggingRecord,
    WorkItem,
)
from shared.settings import Settings
from shared.storage import read_jsonl, read_model
from shared.storage.local import LocalFolderStore
from tests.support.fakes import HashEmbedder
from tests.support.pipeline import load_backlog, make_pipeline, run_file


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch):
    hermetic_env(monkeypatch)


MEETING = """Product Owner: Today we plan the new remote control.
Marketing: The remote must have fewer than ten buttons. It should glow in the dark.

Engineer: The battery must last at least twelve months. We need a low battery warning.
Designer: The case should be made of recycled plastic.

Marketing: Users want to find a lost remote, so it should beep when the TV asks.
Project Manager: Okay, that is all for today.
"""
BACKLOG = [
    WorkItem(
        work_item_id=101,
        work_item_type="User Story",
        title="Battery lasts six months",
        description="The battery must last at least six months.",
        acceptance_criteria=["Battery lasts six months on two AA batteries"],
    ),
    WorkItem(work_item_id=102, work_item_type="User Story", title="Remote has a lost beeper"),
]


@pytest.fixture
def llm() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn(units_per_segment=2) as standin:
        yield standin


def pipeline(llm: OpenAIStandIn, tmp_path, *, backlog: bool = True, **settings: object):
    cfg = Settings(
        storage_backend="local",
        engine="llm",
        openai_api_key="x",
        openai_base_url=llm.base_url,
        openai_max_retries=2,
        **settings,
    )
    cfg.pipeline.segmentation.min_merge_threshold = 10
    embedder = HashEmbedder()
    agents = build_llm_agents(cfg, embedder)
    svc, bus = make_pipeline(
        LocalFolderStore(tmp_path), agents=agents, embedder=embedder, settings=cfg
    )
    if backlog:
        load_backlog(svc, "demo", BACKLOG)
    return svc, bus


def run(svc, bus):
    return run_file(svc, bus, "demo", "meeting.txt", MEETING.encode())


def records(svc, run_id: str, name: str, model):
    return read_jsonl(svc.store, layout.run_file(run_id, name), model)


def block(rec: Recorded, kind: str) -> str:
    return next(
        (m["text"] for m in DATA_BLOCK_RE.finditer(rec.user_prompt) if m["kind"] == kind), ""
    )


def about(word: str, kind: str, schema: str):
    return lambda rec: rec.schema_name == schema and word in block(rec, kind)


# ------------------------------------------------------------------------------------------------


def test_a_clean_run_records_engine_model_and_prompt_versions(llm, tmp_path):
    svc, bus = pipeline(llm, tmp_path)
    done = run(svc, bus)
    assert done.status == "completed", done.failure_reason
    assert done.engine == "llm" and done.model == "gpt-4o"
    segments = records(svc, done.run_id, "segments.jsonl", Segment)
    assert len(segments) >= 3 and {s.segmentation_version for s in segments} == {"seg-llm-v1"}
    assert (
        "".join(s.raw_text for s in segments)
        == svc.store.get(layout.run_file(done.run_id, "transcript.txt")).decode()
    )
    items = records(svc, done.run_id, "generated_backlog.jsonl", GeneratedItem)
    stories = [i for i in items if i.type == "User Story"]
    assert stories and {i.generation_agent_version for i in items} == {"gen-llm-v2"}
    assert {i.engine for i in items} == {"llm"} and {i.model for i in items} == {"gpt-4o"}
    tags = records(svc, done.run_id, "tagging_analysis.jsonl", TaggingRecord)
    assert len(tags) == len(stories) and {t.tagging_agent_version for t in tags} == {"tag-llm-v1"}
    summary = read_model(svc.store, layout.run_file(done.run_id, "summary.json"), Summary)
    chat_calls = len(llm.chat_requests)
    assert summary.usage.calls == chat_calls and summary.usage.prompt_tokens > 0


def test_segmentation_is_retried_once_then_the_run_is_aborted_with_the_reason(llm, tmp_path):
    svc, bus = pipeline(llm, tmp_path)
    llm.script(Reply.malformed(), Reply.schema_violation(), match="SegmentationAnswer")
    done = run(svc, bus)
    assert done.status == "failed" and done.phase == "failed"
    assert done.failure_reason.startswith("segment: segmentation of units")
    assert "failed twice" in done.failure_reason and "schema" in done.failure_reason
    calls = llm.calls("SegmentationAnswer")
    assert [c.temperature for c in calls] == [0.2, 0.15]
    assert llm.calls("GenerationAnswer") == []
    [error] = records(svc, done.run_id, "errors.jsonl", ErrorRecord)
    assert (error.phase, error.outcome, error.attempts) == ("segment", "aborted", 2)
    assert "answer" in error.details["raw_output"]  # the last raw answer is kept


def test_generation_is_retried_once_then_the_segment_is_skipped_and_recorded(llm, tmp_path):
    svc, bus = pipeline(llm, tmp_path)
    bad = Reply.auto(mutate=quote_not_in_segment)
    llm.script(bad, bad, match=about("battery", "transcript", "GenerationAnswer"))
    done = run(svc, bus)
    assert done.status == "completed_with_errors"
    [error] = records(svc, done.run_id, "errors.jsonl", ErrorRecord)
    assert (error.phase, error.outcome, error.attempts) == ("generate", "skipped", 2)
    assert "make coffee" in error.message and "make coffee" in error.details["raw_output"]
    part = read_model(svc.store, layout.generated_part(done.run_id, error.unit_id), GeneratedPart)
    assert part.status == "skipped" and part.usage.calls == 2
    retries = [c for c in llm.calls("GenerationAnswer") if "battery" in block(c, "transcript")]
    assert [c.temperature for c in retries] == [0.2, 0.15]
    assert "not exact substrings" in retries[1].messages[-1]["content"]
    stories = [
        i
        for i in records(svc, done.run_id, "generated_backlog.jsonl", GeneratedItem)
        if i.type == "User Story"
    ]
    assert stories and all(s.segment_id != error.unit_id for s in stories)


def test_a_generation_retry_that_succeeds_leaves_no_error(llm, tmp_path):
    svc, bus = pipeline(llm, tmp_path)
    llm.script(
        Reply.auto(mutate=quote_not_in_segment),
        match=about("battery", "transcript", "GenerationAnswer"),
    )
    done = run(svc, bus)
    assert done.status == "completed" and done.error_count == 0
    items = records(svc, done.run_id, "generated_backlog.jsonl", GeneratedItem)
    transcript = svc.store.get(layout.run_file(done.run_id, "transcript.txt")).decode()
    for quote in (q for i in items for q in i.source_quotes):
        assert transcript[quote.start : quote.end] == quote.text


def test_tagging_is_retried_once_then_the_story_is_new_with_tagging_failed(llm, tmp_path):
    svc, bus = pipeline(llm, tmp_path)
    llm.script(
        Reply.auto(mutate=unclear_tag),
        Reply.auto(mutate=unclear_tag),
        match=about("battery must last", "story", "TaggingAnswer"),
    )
    done = run(svc, bus)
    assert done.status == "completed_with_errors"
    tags = records(svc, done.run_id, "tagging_analysis.jsonl", TaggingRecord)
    failed = [t for t in tags if t.tagging_failed]
    assert len(failed) == 1 and failed[0].decision_tag == "new"
    assert failed[0].thresholds_applied["newBelow"] == 0.55
    [error] = records(svc, done.run_id, "errors.jsonl", ErrorRecord)
    assert (error.phase, error.unit_id, error.outcome, error.attempts) == (
        "tag",
        failed[0].story_id,
        "tagged_new",
        2,
    )
    assert "names none of the retrieved stories" in error.message
    assert all(not t.tagging_failed for t in tags if t is not failed[0])


def test_no_retrieved_story_means_new_without_a_model_call(llm, tmp_path):
    svc, bus = pipeline(llm, tmp_path, backlog=False)
    done = run(svc, bus)
    assert done.status == "completed"
    tags = records(svc, done.run_id, "tagging_analysis.jsonl", TaggingRecord)
    assert tags and {t.decision_tag for t in tags} == {"new"}
    assert all("no existing user story" in t.reasoning_excerpt for t in tags)
    assert llm.calls("TaggingAnswer") == []


def test_429_then_success(llm, tmp_path):
    svc, bus = pipeline(llm, tmp_path)
    llm.script(Reply.rate_limited(retry_after=0.05), match="SegmentationAnswer")
    done = run(svc, bus)
    assert done.status == "completed" and done.error_count == 0
    calls = llm.calls("SegmentationAnswer")
    assert [(c.answered_with, c.retry_count) for c in calls] == [
        ("scripted:status", 0),
        ("auto", 1),
    ]


def test_a_run_with_30_percent_failed_answers_still_ends(tmp_path):
    failures = Failures(rate=0.3, seed=5, kinds={"malformed": 2, "429": 1, "500": 1})
    with OpenAIStandIn(units_per_segment=2, failures=failures) as llm:
        svc, bus = pipeline(llm, tmp_path)
        done = run(svc, bus)
        injected = {c.answered_with for c in llm.chat_requests} - {"auto"}
    assert injected  # the plan did hit this run
    assert done.status in ("completed", "completed_with_errors", "failed")
    if done.status != "failed":
        errors = records(svc, done.run_id, "errors.jsonl", ErrorRecord)
        segments = records(svc, done.run_id, "segments.jsonl", Segment)
        skipped = {e.unit_id for e in errors if e.phase == "generate"}
        for s in segments:
            part = read_model(
                svc.store, layout.generated_part(done.run_id, s.segment_id), GeneratedPart
            )
            assert (part.status == "skipped") == (s.segment_id in skipped)


def test_a_tag_the_scores_contradict_is_overridden_and_needs_a_decision(llm, tmp_path):
    """The model calls the battery story a duplicate of an unrelated story: the code holds the
    answer against the similarities, tags it new, keeps the model's answer and blocks the write."""
    from shared.review.plan import build_plan

    def unrelated_duplicate(answer: dict, request: Recorded) -> dict:
        answer.update(decision_tag="duplicate", related_story_ids=[102], confidence=0.9)
        return answer

    svc, bus = pipeline(llm, tmp_path)
    llm.script(
        Reply.auto(mutate=unrelated_duplicate),
        match=about("battery must last", "story", "TaggingAnswer"),
    )
    done = run(svc, bus)
    tags = records(svc, done.run_id, "tagging_analysis.jsonl", TaggingRecord)
    [battery] = [t for t in tags if t.model_tag is not None]
    similarity = {s.work_item_id: s.score for s in battery.similarity_scores}
    assert similarity[102] < battery.thresholds_applied["newBelow"]  # the premise of the check
    assert (battery.decision_tag, battery.model_tag, battery.related_story_ids) == (
        "new",
        "duplicate",
        [],
    )
    assert battery.needs_review and "overridden to new" in battery.review_reasons[0]
    assert battery.confidence is not None and 0.0 <= battery.confidence <= 1.0
    items = records(svc, done.run_id, "generated_backlog.jsonl", GeneratedItem)
    plan = {p.item_id: p for p in build_plan(done.run_id, items, tags).items}
    entry = plan[battery.story_id]
    assert entry.action == "blocked" and entry.view()["needs_decision"]
    decided = build_plan(done.run_id, items, tags, {battery.story_id: "accept"})
    assert {p.item_id: p for p in decided.items}[battery.story_id].action == "create"
    others = [t for t in tags if t.model_tag is None]
    assert others and all(t.confidence is not None for t in others)
