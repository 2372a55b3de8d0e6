"""``python -m shared.cli run`` with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` set uses the LLM
engine and the OpenAI embedder (here: the OpenAI stand-in), and says so in run.json; an index
loaded with MiniLM vectors fails the run before its first model call with the reason and the fix
in run.json (and the loaders refuse it the same way until ``--rebuild``), never garbage
retrieval."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from devhost.standins.openai_standin import OpenAIStandIn, hermetic_env
from shared.cli import main
from shared.models import ErrorRecord
from tests.support.transcripts import SMALL


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


MISMATCH = (
    "index namespace 'demo' has dimension 384 (loaded with all-MiniLM-L6-v2-int8) but the "
    "embedder text-embedding-3-small gives 1536: reload the index with this embedder "
    "(python -m loaders.ado_loader --project demo --rebuild"
)


def test_an_index_loaded_with_minilm_fails_the_run_at_once_with_the_fix(
    workdir, monkeypatch, capsys
):
    backlog = workdir / "backlog.jsonl"
    backlog.write_text(
        json.dumps({"work_item_id": 1, "work_item_type": "User Story", "title": "Battery life"})
        + "\n"
    )
    assert main(["load-backlog", str(backlog), "--project", "demo"]) == 0  # MiniLM, 384
    info = json.loads((workdir / "store" / "index" / "demo" / "index.json").read_text())
    assert info == {"embedder": "all-MiniLM-L6-v2-int8", "dimension": 384, "count": 1}
    capsys.readouterr()
    with OpenAIStandIn() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        code = main(["run", "meeting.txt", "--project", "demo", "--out", "out", "--json"])
        chat_calls = len(llm.chat_requests)
    assert code == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == "failed" and MISMATCH in printed["failure_reason"]
    assert chat_calls == 0  # failed before the first model call, not once per segment
    run_dir = artifacts(workdir / "out")
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "failed" and run["failure_reason"].startswith("segment: " + MISMATCH)
    assert run["failure_reason"].endswith("or set SYNTH_EMBEDDER=minilm")
    [error] = [
        ErrorRecord.model_validate_json(line)
        for line in (run_dir / "errors.jsonl").read_text().splitlines()
    ]
    assert error.phase == "segment" and error.error_type == "DimensionMismatch"
    assert error.outcome == "aborted"


def test_the_loaders_say_the_same_and_rebuild_fixes_it(workdir, monkeypatch, capsys):
    from loaders import ado_loader, arch_loader

    backlog = workdir / "backlog.jsonl"
    backlog.write_text(
        json.dumps({"work_item_id": 1, "work_item_type": "User Story", "title": "Battery life"})
        + "\n"
    )
    docs = workdir / "docs"
    docs.mkdir()
    (docs / "arch.md").write_text("# Power\n\nThe remote runs on two AA batteries.\n")
    assert main(["load-backlog", str(backlog), "--project", "demo"]) == 0  # MiniLM, 384
    assert main(["load-docs", str(docs), "--project", "demo"]) == 0
    capsys.readouterr()
    with OpenAIStandIn() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        # the CLI and both loader modules refuse, with the same reason, before embedding anything
        assert main(["load-backlog", str(backlog), "--project", "demo"]) == 2
        assert MISMATCH in capsys.readouterr().err
        err = io.StringIO()
        assert ado_loader.main(["--file", str(backlog), "--project", "demo"], stderr=err) == 2
        assert MISMATCH in err.getvalue()
        err = io.StringIO()
        assert arch_loader.main([str(docs), "--project", "demo"], stderr=err) == 2
        assert MISMATCH in err.getvalue()
        assert not [r for r in llm.requests if r.route == "embeddings"]
        # --rebuild empties the namespace and loads it with the configured embedder
        assert main(["load-backlog", str(backlog), "--project", "demo", "--rebuild"]) == 0
        assert main(["load-docs", str(docs), "--project", "demo"]) == 0
        info = json.loads((workdir / "store" / "index" / "demo" / "index.json").read_text())
        assert info["embedder"] == "text-embedding-3-small" and info["dimension"] == 1536
        assert info["count"] >= 2  # the work item and the document's chunk(s)
        code = main(["run", "meeting.txt", "--project", "demo", "--out", "out", "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["status"] == "completed"
