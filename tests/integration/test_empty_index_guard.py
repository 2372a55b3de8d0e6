"""A transcript dropped under a project with no indexed backlog (a misspelt folder): the run says
so in run.json and summary.json, the dry run lists it, and the write refuses to create the
all-new backlog unless the request allows it (library, HTTP API and CLI)."""

from __future__ import annotations

import json

import pytest

from devhost.standins.fake_ado import FakeAdo
from shared import api, layout
from shared.cli import main as cli
from shared.embeddings.minilm import MiniLMEmbedder
from shared.engine.offline import build_offline_agents
from shared.indexing.documents import load_documents
from shared.indexing.workitems import read_backlog_file
from shared.models import RunStatus, Summary
from shared.pipeline.segment import index_warnings
from shared.settings import Settings
from shared.storage import read_model
from shared.storage.local import LocalFolderStore
from shared.writer.runs import EmptyBacklogRefused, write_run
from tests.support.pipeline import SAMPLES, load_backlog, make_pipeline, run_file

NOTES = SAMPLES / "transcripts" / "remote_control_planning_notes.md"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("store")
    settings = Settings(storage_backend="local", engine="offline", embedder="minilm")
    embedder = MiniLMEmbedder()
    svc, bus = make_pipeline(
        LocalFolderStore(root),
        agents=build_offline_agents(embedder, settings.pipeline),
        embedder=embedder,
        settings=settings,
    )
    load_backlog(svc, "rc", read_backlog_file(SAMPLES / "backlog" / "remote_control_backlog.jsonl"))
    load_documents(svc, "rc", [SAMPLES / "architecture"], show_progress=False)
    # the same notes under a misspelt project folder: nothing indexed there
    typo = run_file(svc, bus, "rcc", "notes.md", NOTES.read_bytes())
    good = run_file(svc, bus, "rc", "notes.md", NOTES.read_bytes())
    assert typo.status == good.status == "completed"
    return {"root": root, "svc": svc, "bus": bus, "typo": typo.run_id, "good": good.run_id}


@pytest.fixture
def fake():
    with FakeAdo() as server:
        server.seed_sample()
        yield server


def test_the_run_and_its_summary_say_the_index_is_empty(world):
    svc = world["svc"]
    run = read_model(svc.store, layout.run_json(world["typo"]), RunStatus)
    assert [w.code for w in run.warnings] == ["empty_index", "no_architecture_docs"]
    assert "'rcc' has no indexed backlog" in run.warnings[0].message
    summary = read_model(svc.store, layout.run_file(world["typo"], "summary.json"), Summary)
    assert summary.warnings == run.warnings
    assert set(summary.tag_distribution) and summary.tag_distribution["new"] == summary.story_count
    good = read_model(svc.store, layout.run_json(world["good"]), RunStatus)
    assert good.warnings == []  # backlog and architecture notes are there
    assert index_warnings(svc, "rc") == []


def test_the_write_refuses_an_all_new_backlog_unless_allowed(world, fake):
    svc, run_id = world["svc"], world["typo"]
    with fake.client(sleep=lambda s: None) as client:
        plan = write_run(svc, run_id, client, dry_run=True)
        assert [w["code"] for w in plan["warnings"]][0] == "empty_index"
        assert plan["counts"]["create"] > 0
        with pytest.raises(EmptyBacklogRefused, match="allow_empty_backlog"):
            write_run(svc, run_id, client)
        assert fake.count(route="create") == 0
        done = write_run(svc, run_id, client, allow_empty_backlog=True)
    assert done["counts"]["created"] == fake.count(route="create", status=200) > 0


def test_http_says_409_with_the_code_and_the_cli_exits_1(world, fake, capsys, monkeypatch):
    svc, run_id = world["svc"], world["typo"]
    with fake.client(sleep=lambda s: None) as client:
        answer = api.write_run(
            svc, run_id, json.dumps({"dry_run": False}).encode(), ado_client=client
        )
        body = json.loads(answer.body)
        assert answer.status == 409 and body["code"] == "empty_index", body
        assert "allow_empty_backlog" in body["error"]
        bad = api.write_run(svc, run_id, b'{"allow_empty_backlog": "yes"}', ado_client=client)
        assert bad.status == 400
    for name, value in fake.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AzureWebJobsStorage", raising=False)
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(world["root"]))
    monkeypatch.setenv("SYNTH_STORAGE_BACKEND", "local")
    assert cli(["write", run_id]) == 1
    assert "no indexed backlog" in capsys.readouterr().err
    assert fake.count(route="create") == 0
    assert cli(["write", run_id, "--allow-empty-backlog"]) == 0
    assert fake.count(route="create", status=200) > 0


def test_loading_the_backlog_and_retagging_lifts_the_warning(world, fake):
    from shared.writer.retag import retag_run

    svc, bus = world["svc"], world["bus"]
    run_id = run_file(svc, bus, "late", "notes.md", NOTES.read_bytes()).run_id
    assert [w.code for w in read_model(svc.store, layout.run_json(run_id), RunStatus).warnings][
        0
    ] == "empty_index"
    load_backlog(
        svc, "late", read_backlog_file(SAMPLES / "backlog" / "remote_control_backlog.jsonl")
    )
    body = retag_run(svc, run_id)
    assert [w["code"] for w in body["warnings"]] == ["no_architecture_docs"]
    run = read_model(svc.store, layout.run_json(run_id), RunStatus)
    summary = read_model(svc.store, layout.run_file(run_id, "summary.json"), Summary)
    assert [w.code for w in run.warnings] == [w.code for w in summary.warnings]
    assert body["tag_distribution"]["new"] < sum(body["tag_distribution"].values())
    with fake.client(sleep=lambda s: None) as client:
        write_run(svc, run_id, client)  # no longer refused
