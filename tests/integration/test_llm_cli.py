"""``python -m shared.cli run`` with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` set uses the LLM
engine and the OpenAI embedder (here: the OpenAI stand-in), and says so in run.json; an index
loaded with MiniLM vectors is a clear DimensionMismatch, not garbage retrieval."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from shared.cli import main
from shared.models import ErrorRecord
from tests.support.openai_standin import OpenAIStandIn, hermetic_env
from tests.support.transcripts import SMALL

pytestmark = pytest.mark.integration


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Iterator[Path]:
    hermetic_env(monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(tmp_path / "store"))
    (tmp_path / "meeting.txt").write_text(SMALL)
    yield tmp_path


def artifacts(out: Path) -> Path:
    [run_dir] = list(out.iterdir())
    return run_dir


def test_cli_run_with_an_openai_base_url_uses_the_llm_engine(workdir, monkeypatch, capsys):
    with OpenAIStandIn() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        code = main(["run", "meeting.txt", "--project", "demo", "--out", "out", "--json"])
        routes = {r.route for r in llm.requests}
    assert code == 0, capsys.readouterr()
    run_dir = artifacts(workdir / "out")
    run = json.loads((run_dir / "run.json").read_text())
    assert run["engine"] == "llm" and run["model"] == "gpt-4o"
    assert run["embedding_model"] == "text-embedding-3-small" and run["status"] == "completed"
    runtime = yaml.safe_load((run_dir / "config_snapshot.yaml").read_text())["runtime"]
    assert runtime["engine"] == "llm" and runtime["embedder"] == "openai"
    assert routes == {"chat", "embeddings"}
    assert json.loads(capsys.readouterr().out)["status"] == "completed"


def test_an_index_loaded_with_minilm_is_a_clear_dimension_mismatch(workdir, monkeypatch, capsys):
    backlog = workdir / "backlog.jsonl"
    backlog.write_text(
        json.dumps({"work_item_id": 1, "work_item_type": "User Story", "title": "Battery life"})
        + "\n"
    )
    assert main(["load-backlog", str(backlog), "--project", "demo"]) == 0  # MiniLM, 384
    with OpenAIStandIn() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        main(["run", "meeting.txt", "--project", "demo", "--out", "out", "--json"])
    run_dir = artifacts(workdir / "out")
    errors = [
        ErrorRecord.model_validate_json(line)
        for line in (run_dir / "errors.jsonl").read_text().splitlines()
    ]
    assert errors and all(e.phase == "generate" and e.outcome == "skipped" for e in errors)
    assert all("DimensionMismatch" in e.message for e in errors)
    assert (
        "holds 384-dimensional vectors but the configured embedder makes 1536" in errors[0].message
    )
    assert json.loads((run_dir / "summary.json").read_text())["story_count"] == 0
