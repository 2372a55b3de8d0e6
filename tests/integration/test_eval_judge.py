"""``eval judge RUN_ID`` on a run the pipeline produced (fake agents, local folder store): one
record per story in eval/{run_id}/judge_quality.jsonl, a summary, and the LLM judge reported as
not run when no chat model is configured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    # the fake generator writes "As a user, I want that <sentence>": no "so that" anywhere,
    # and every quote is a sentence of the transcript
    assert all(not r["checks"]["ends"]["passed"] for r in rows)
    assert all(r["checks"]["quote_found"]["passed"] for r in rows)
    assert all(r["llm"] is None for r in rows)
    summary = json.loads((tmp_path / "out" / run_id / "judge_summary.json").read_text())
    assert summary["stories"] == len(stories)
    assert summary["pass_rate"]["ends"] == 0.0 and summary["pass_rate"]["quote_found"] == 1.0
    assert summary["llm_judge"]["status"] == "not_run"


def test_eval_judge_needs_a_known_run(completed_run, capsys) -> None:
    assert main(["eval", "judge", "run-00000000000000000000"]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["eval", "judge", "../etc"]) == 2  # not a run id at all


def test_a_configured_model_without_the_judge_wiring_says_so(
    completed_run, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    run_id, store_dir = completed_run
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert main(["eval", "judge", run_id]) == 1  # the model-free checks ran, the judge did not
    assert "not wired" in capsys.readouterr().out
    summary = json.loads((store_dir / "eval" / run_id / "judge_summary.json").read_text())
    assert summary["llm_judge"]["status"] == "not_implemented"
    assert summary["pass_rate"]["quote_found"] == 1.0
