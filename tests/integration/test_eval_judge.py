"""``eval judge RUN_ID`` on a run the pipeline produced (fake agents, local folder store): one
record per story in eval/{run_id}/judge_quality.jsonl and a summary. Without a chat model the LLM
judge is reported as not run; with ``OPENAI_BASE_URL`` (or Azure OpenAI) pointing at the OpenAI
stand-in it scores every story through the real ``openai`` SDK and the chat adapter, retries an
unusable answer once and records a second one as that story's judge failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devhost.standins.openai_standin import OpenAIStandIn, Reply
from shared.cli import main
from shared.models import GeneratedItem
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from tests.integration.test_eval_tagging import clean_env
from tests.support.pipeline import make_pipeline, run_file
from tests.support.transcripts import SMALL


@pytest.fixture
def completed_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    store_dir = tmp_path / "store"
    clean_env(monkeypatch, SYNTH_LOCAL_STORE_DIR=str(store_dir))
    svc, bus = make_pipeline(LocalFolderStore(store_dir))
    run = run_file(svc, bus, "demo", "meeting.txt", SMALL.encode())
    assert run.status == "completed"
    return run.run_id, store_dir


def test_eval_judge_checks_every_story(completed_run, tmp_path: Path, capsys) -> None:
    run_id, store_dir = completed_run
    assert main(["eval", "judge", run_id, "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "LLM judge not run" in printed and "OPENAI_API_KEY" in printed

    store = LocalFolderStore(store_dir)
    stories = [
        i
        for i in read_jsonl(store, f"runs/{run_id}/generated_backlog.jsonl", GeneratedItem)
        if i.type == "User Story"
    ]
    rows = [
        json.loads(line)
        for line in (store_dir / "eval" / run_id / "judge_quality.jsonl").read_text().splitlines()
    ]
    assert [r["story_id"] for r in rows] == [s.item_id for s in stories] and rows
    # the fake generator writes "As a user, I want that <sentence>": no "so that" anywhere (no
    # benefit is fine when none was stated), and every quote is a sentence of the transcript
    assert all(r["checks"]["benefit"]["passed"] for r in rows)
    assert all(r["checks"]["quote_found"]["passed"] for r in rows)
    assert all(r["llm"] is None for r in rows)
    summary = json.loads((tmp_path / "out" / run_id / "judge_summary.json").read_text())
    assert summary["stories"] == len(stories)
    assert summary["pass_rate"]["benefit"] == 1.0 and summary["pass_rate"]["quote_found"] == 1.0
    assert summary["llm_judge"]["status"] == "not_run"


def test_eval_judge_needs_a_known_run(completed_run, capsys) -> None:
    assert main(["eval", "judge", "run-00000000000000000000"]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["eval", "judge", "../etc"]) == 2  # not a run id at all


def judge_rows(store_dir: Path, run_id: str) -> list[dict]:
    path = store_dir / "eval" / run_id / "judge_quality.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch):
    with OpenAIStandIn() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("SYNTH_PIPELINE__JUDGE__MODEL", "judge-standin")
        yield llm


def test_with_a_model_the_judge_scores_every_story_through_the_chat_adapter(
    completed_run, standin, tmp_path: Path, capsys
) -> None:
    run_id, store_dir = completed_run
    assert main(["eval", "judge", run_id, "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out

    rows = judge_rows(store_dir, run_id)
    calls = standin.calls("JudgeAnswer")
    assert rows and len(calls) == len(rows)  # one call per story, no retry needed
    for call in calls:
        assert call.model == "judge-standin"
        fmt = call.body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert "never an instruction" in call.messages[0]["content"]
    for row in rows:
        llm = row["llm"]
        assert row["judge_status"] == llm["status"] == "ok"
        assert llm["model"] == "judge-standin" and llm["prompt_version"] == "judge-llm-v1"
        assert llm["attempts"] == 1 and llm["usage"]["prompt_tokens"] > 0
        assert llm["usage"]["calls"] == 1
        for key in ("invest_score", "ac_completeness", "traceability_score"):
            assert 0.0 <= llm[key] <= 1.0
        assert llm["invest_rationale"] and llm["ac_rationale"] and llm["traceability_rationale"]
        assert row["checks"]["quote_found"]["passed"]  # the model-free checks are still there
    # every story quotes its segment verbatim: the stand-in finds its words there
    assert all(r["llm"]["traceability_score"] >= 0.75 for r in rows)

    summary = json.loads((tmp_path / "out" / run_id / "judge_summary.json").read_text())
    assert summary["llm_judge"] == {
        "status": "ran",
        "model": "judge-standin",
        "prompt_version": "judge-llm-v1",
        "judged": len(rows),
        "failed": 0,
    }
    mean = sum(r["llm"]["invest_score"] for r in rows) / len(rows)
    assert summary["invest_score"] == pytest.approx(mean, abs=1e-4)
    assert summary["llm_usage"]["calls"] == len(rows)
    assert "LLM judge  model judge-standin, prompt judge-llm-v1" in printed
    assert f"{len(rows)} of {len(rows)} stories judged, 0 failed" in printed
    assert "invest_score" in printed and "traceability_score" in printed


def test_a_malformed_answer_is_asked_again_once(completed_run, standin) -> None:
    run_id, store_dir = completed_run
    standin.script(Reply.malformed(), match="JudgeAnswer")
    assert main(["eval", "judge", run_id, "--workers", "1"]) == 0
    rows = judge_rows(store_dir, run_id)
    assert [r["llm"]["attempts"] for r in rows] == [2] + [1] * (len(rows) - 1)
    assert all(r["judge_status"] == "ok" for r in rows)
    retry = standin.calls("JudgeAnswer")[1]
    assert "rejected" in retry.messages[-1]["content"]  # the reason goes back to the model
    assert retry.temperature is not None and retry.temperature == 0.0  # 0.0 stays at 0.0
    assert len(standin.calls("JudgeAnswer")) == len(rows) + 1


def test_two_unusable_answers_are_a_recorded_judge_failure_not_a_crash(
    completed_run, standin, capsys
) -> None:
    run_id, store_dir = completed_run
    # malformed JSON, then valid JSON with a rating outside 1-5
    bad_rating = Reply.auto(mutate=lambda answer, _: {**answer, "small": 9})
    standin.script(Reply.malformed(), bad_rating, match="JudgeAnswer")
    assert main(["eval", "judge", run_id, "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    rows = judge_rows(store_dir, run_id)
    first, rest = rows[0], rows[1:]
    assert first["judge_status"] == "failed"
    assert first["llm"]["attempts"] == 2 and first["llm"]["error_type"] == "JudgeFailed"
    assert "ratings must be integers from 1 to 5" in first["llm"]["error"]
    assert first["llm"]["usage"]["calls"] == 2 and first["checks"]  # checks still recorded
    assert rest and all(r["judge_status"] == "ok" for r in rest)
    summary = json.loads((store_dir / "eval" / run_id / "judge_summary.json").read_text())
    assert summary["llm_failed"] == 1 and summary["llm_judged"] == len(rest)
    assert f"judge failed for {first['story_id']}" in printed


def test_an_unreachable_endpoint_fails_every_story_and_the_command(
    completed_run, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    run_id, store_dir = completed_run
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "0")
    assert main(["eval", "judge", run_id]) == 1
    rows = judge_rows(store_dir, run_id)
    assert rows and all(r["judge_status"] == "failed" for r in rows)
    assert all(r["llm"]["error_type"] == "APIConnectionError" for r in rows)
    assert "0 of" in capsys.readouterr().out


def test_the_judge_on_azure_openai_calls_the_chat_deployment(
    completed_run, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, store_dir = completed_run
    with OpenAIStandIn() as llm:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", llm.azure_endpoint)
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key")
        monkeypatch.setenv("AZURE_OPENAI_CHAT_DEPLOYMENT", "judge-deployment")
        assert main(["eval", "judge", run_id]) == 0
        deployments = {r.deployment for r in llm.calls("JudgeAnswer")}
    assert deployments == {"judge-deployment"}
    assert all(r["llm"]["model"] == "judge-deployment" for r in judge_rows(store_dir, run_id))


def test_related_stories_come_from_the_loaders_artifact(tmp_path: Path) -> None:
    from shared.eval.commands import _related_stories
    from shared.models import SimilarityScore, TaggingRecord
    from shared.services import Services

    store = LocalFolderStore(tmp_path)
    line = {
        "vector_id": "ado-7",
        "work_item_id": 7,
        "metadata": {
            "title": "Lock keys",
            "description": "Parents can lock the keys.",
            "acceptance_criteria": ["Holding OK for 3 s locks"],
        },
    }
    store.put("ingestion/ado/demo/ado_vectors.jsonl", (json.dumps(line) + "\n").encode())
    record = TaggingRecord(
        run_id="run-1",
        segment_id="seg-0001",
        story_id="seg-0001-st01",
        decision_tag="gap",
        related_story_ids=[7, 8],
        similarity_scores=[SimilarityScore(work_item_id=8, title="Backlight", score=0.7)],
        tagging_agent_version="t",
        engine="offline",
        timestamp="2026-01-01T00:00:00Z",
    )
    svc = Services(settings=None, store=store, bus=None)  # type: ignore[arg-type]
    assert _related_stories(svc, "demo")(record) == [
        "[#7] Lock keys\nParents can lock the keys.\n- Holding OK for 3 s locks",
        "[#8] Backlight",
    ]
