"""Run token budgets (``SYNTH_RUN_TOKEN_BUDGET``, shared/pipeline/budget.py): a run estimated over
its budget fails before any model call with the estimate and the budget in its reason; during a
run, the units past the budget are skipped and recorded, the run ends ``completed_with_errors``
and summary.json shows tokens and cost used against the budget."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from devhost.standins.openai_standin import OpenAIStandIn, Recorded, Reply, hermetic_env
from shared import layout
from shared.agents import Agents
from shared.bus.memory import InProcessBus
from shared.cli import main
from shared.models import (
    ErrorRecord,
    GeneratedPart,
    RunStatus,
    Summary,
    TaggingRecord,
    Usage,
    WorkItem,
)
from shared.pipeline import bind_in_process
from shared.pipeline.budget import estimate_run, message_tokens
from shared.pipeline.runs import load_run, start_run
from shared.services import Services, build_services
from shared.settings import Settings
from shared.storage import read_jsonl, read_model
from shared.storage.local import LocalFolderStore
from tests.support.fakes import CueGenerator, ParagraphSegmenter, ThresholdTagger
from tests.support.pipeline import load_backlog, make_pipeline, run_file
from tests.support.transcripts import SMALL

BACKLOG = [
    WorkItem(
        work_item_id=101,
        work_item_type="User Story",
        title="Battery lasts six months",
        description="The battery must last at least six months.",
    ),
    WorkItem(
        work_item_id=102,
        work_item_type="User Story",
        title="Remote has fewer buttons",
        description="The remote must have few buttons and glow in the dark.",
    ),
]


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic_env(monkeypatch)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(tmp_path / "store"))
    (tmp_path / "meeting.txt").write_text(SMALL)
    yield tmp_path


def test_a_run_over_its_budget_fails_at_once_with_no_model_call(workdir, monkeypatch, capsys):
    with OpenAIStandIn() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        monkeypatch.setenv("SYNTH_RUN_TOKEN_BUDGET", "1")
        code = main(["run", "meeting.txt", "--project", "demo", "--out", "out", "--json"])
        chat_calls = len(llm.chat_requests)
        any_calls = len(llm.requests)
    assert code == 1
    assert chat_calls == 0 and any_calls == 0  # not even an embedding
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "failed" and "budget" in printed["failure_reason"]
    [run_dir] = list((workdir / "out").iterdir())
    run = RunStatus.model_validate_json((run_dir / "run.json").read_text())
    assert run.token_budget == 1 and run.token_estimate is not None
    estimate = run.token_estimate
    # one segmentation and one generation call; no indexed story, so no tagging call
    assert estimate.total > 1 and estimate.calls == 2
    assert set(estimate.detail) == {"segmentation", "generation"}
    reason = run.failure_reason or ""
    assert f"estimated {estimate.total:,} model tokens" in reason
    assert "over the budget of 1 (SYNTH_RUN_TOKEN_BUDGET)" in reason
    [error] = [
        ErrorRecord.model_validate_json(line)
        for line in (run_dir / "errors.jsonl").read_text().splitlines()
    ]
    assert (error.phase, error.error_type, error.outcome) == (
        "segment",
        "BudgetExceeded",
        "aborted",
    )


def llm_services(
    tmp_path: Path, llm: OpenAIStandIn, budget: int, workers: int = 2
) -> tuple[Services, InProcessBus]:
    settings = Settings(
        storage_backend="local",
        engine="llm",
        embedder="openai",
        vector_store="embedded",
        openai_api_key="x",
        openai_base_url=llm.base_url,
        run_token_budget=budget,
    )
    bus = InProcessBus(workers=workers)
    svc = build_services(settings, store=LocalFolderStore(tmp_path / "store"), bus=bus)
    bind_in_process(bus, svc)
    load_backlog(svc, "demo", BACKLOG)
    return svc, bus


def test_a_run_within_its_budget_records_estimate_use_and_cost(tmp_path):
    """The estimate counts the prompts the agents really send (the segmentation prompt to the
    token); summary.json compares what was used with the budget."""
    with OpenAIStandIn() as llm:
        svc, bus = llm_services(tmp_path, llm, budget=10_000_000)
        done = run_file(svc, bus, "demo", "meeting.txt", SMALL.encode())
        [segmentation] = llm.calls("SegmentationAnswer")
    assert done.status == "completed", done.failure_reason
    transcript = svc.store.get(layout.run_file(done.run_id, "transcript.txt")).decode()
    [window] = svc.agents.segmenter.prompts(transcript)
    assert message_tokens(window) == message_tokens(segmentation.messages)
    assert done.token_budget == 10_000_000 and done.token_estimate is not None
    summary = read_model(svc.store, layout.run_file(done.run_id, "summary.json"), Summary)
    budget = summary.budget
    assert budget is not None
    used = summary.usage.prompt_tokens + summary.usage.completion_tokens
    assert budget.tokens_used == used > 0
    assert budget.tokens_left == 10_000_000 - used
    assert budget.estimated_tokens == done.token_estimate.total
    assert budget.cost_used_usd == summary.cost_estimate_usd > 0
    assert budget.cost_budget_usd > budget.cost_used_usd
    assert budget.skipped_units == 0 and not budget.exhausted


def test_no_budget_means_no_estimate_and_no_budget_report(tmp_path):
    svc, bus = make_pipeline(LocalFolderStore(tmp_path))
    done = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert done.status == "completed"
    assert done.token_budget is None and done.token_estimate is None
    summary = read_model(svc.store, layout.run_file(done.run_id, "summary.json"), Summary)
    assert summary.budget is None


# ------------------------------------------------------------------------------------------------
# mid-run


class Spending:
    """Wraps a fake agent: each call reports ``tokens`` of usage, and calls are counted."""

    def __init__(self, inner: object, method: str, tokens: int) -> None:
        self.inner, self.method, self.tokens, self.calls = inner, method, tokens, 0
        for attr in ("version", "engine", "model"):
            setattr(self, attr, getattr(inner, attr))
        setattr(self, method, self._call)

    def _call(self, *args: object) -> object:
        self.calls += 1
        result = getattr(self.inner, self.method)(*args)
        return result.model_copy(
            update={"usage": Usage(prompt_tokens=self.tokens, completion_tokens=0, calls=1)}
        )


def test_units_past_the_budget_are_skipped_recorded_and_the_run_ends_with_errors(tmp_path):
    """SMALL makes 3 segments (one without a requirement) and 5 stories; generation costs 1000
    tokens a call, tagging 300. With a budget of 3500 and one worker the run runs out while
    tagging: the units past it make no call, each is in errors.jsonl as skipped for the budget."""
    generator = Spending(CueGenerator(), "generate", 1000)
    tagger = Spending(ThresholdTagger(), "tag", 300)
    agents = Agents(segmenter=ParagraphSegmenter(), generator=generator, tagger=tagger)
    settings = Settings(storage_backend="local", engine="offline", run_token_budget=3500)
    svc, bus = make_pipeline(
        LocalFolderStore(tmp_path), agents=agents, settings=settings, workers=1
    )
    load_backlog(svc, "demo", BACKLOG)
    done = run_file(svc, bus, "demo", "m.txt", SMALL.encode())

    assert done.status == "completed_with_errors", done.failure_reason
    errors = read_jsonl(svc.store, layout.run_file(done.run_id, "errors.jsonl"), ErrorRecord)
    skipped = [e for e in errors if e.error_type == "BudgetExceeded"]
    assert skipped and len(skipped) == len(errors)
    assert all(e.outcome == "skipped" and e.details["skipped"] == "budget" for e in skipped)
    # a skipped unit made no call: calls + skips = units
    generation_skips = [e for e in skipped if e.phase == "generate"]
    tag_skips = [e for e in skipped if e.phase == "tag"]
    assert generator.calls + len(generation_skips) == 3
    tags = read_jsonl(
        svc.store, layout.run_file(done.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    assert tagger.calls + len(tag_skips) == len(tags) == 5
    assert tag_skips, "the budget ran out while tagging"
    for record in tags:
        if record.story_id in {e.unit_id for e in tag_skips}:
            # not silently new: the record says why and holds the story for a decision
            assert record.tagging_failed and record.needs_review
            assert any("token budget" in w for w in record.warnings)
    for e in generation_skips:
        part = read_model(svc.store, layout.generated_part(done.run_id, e.unit_id), GeneratedPart)
        assert part.status == "skipped"
    assert "token_budget" in [w.code for w in done.warnings]

    summary = read_model(svc.store, layout.run_file(done.run_id, "summary.json"), Summary)
    report = summary.budget
    assert report is not None and report.token_budget == 3500
    assert report.tokens_used == 1000 * generator.calls + 300 * tagger.calls
    assert report.tokens_used <= 3500 + 1000  # one worker: at most the unit that crossed it
    assert report.skipped_units == len(skipped) and report.exhausted
    assert report.tokens_left == max(0, 3500 - report.tokens_used)
    assert summary.error_count == len(errors)


def pad(answer: dict, request: Recorded) -> dict:
    """A generation answer far longer than typical: every story asks ~2,000 open questions'
    worth of tokens."""
    for story in answer.get("stories", []):
        story["open_questions"] = ["What exactly does the meeting mean here? " * 1000]
    return answer


def test_an_llm_run_that_uses_more_than_estimated_stops_calling_at_the_budget(tmp_path):
    """The LLM engine against the stand-in: the budget is twice the run's estimate (so the run
    starts), but the first generation answer alone uses more than that: every later unit is
    skipped without a call."""
    with OpenAIStandIn(units_per_segment=2) as llm:
        svc, bus = llm_services(tmp_path, llm, budget=1, workers=1)
        svc.settings.pipeline.segmentation.min_merge_threshold = 10
        path = "transcripts/demo/meeting.txt"
        svc.store.put(path, SMALL.encode())
        probe = start_run(svc, path, SMALL.encode())  # fails at once (budget 1): no call
        bus.drain()
        assert load_run(svc, probe.run_id).status == "failed" and not llm.chat_requests
        transcript = svc.store.get(layout.run_file(probe.run_id, "transcript.txt")).decode()
        estimate = estimate_run(svc, probe, transcript).total
        budget = 2 * estimate
        svc.settings.run_token_budget = budget
        llm.script(Reply.auto(mutate=pad), match="GenerationAnswer")
        done = run_file(svc, bus, "demo", "meeting2.txt", SMALL.encode())
        calls = {name: len(llm.calls(name)) for name in ("GenerationAnswer", "TaggingAnswer")}
    assert done.status == "completed_with_errors", done.failure_reason
    assert done.token_estimate is not None and done.token_estimate.total == estimate
    assert calls == {"GenerationAnswer": 1, "TaggingAnswer": 0}
    errors = read_jsonl(svc.store, layout.run_file(done.run_id, "errors.jsonl"), ErrorRecord)
    assert errors and all(e.details.get("skipped") == "budget" for e in errors)
    assert {e.phase for e in errors} == {"generate", "tag"}
    summary = read_model(svc.store, layout.run_file(done.run_id, "summary.json"), Summary)
    assert summary.budget is not None and summary.budget.tokens_used > budget
    assert summary.budget.skipped_units == len(errors)
