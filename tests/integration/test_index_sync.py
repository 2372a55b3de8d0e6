"""The incremental sync (shared/indexing/sync.py) against the fake ADO server over HTTP: only what
changed in ADO since the last sync is embedded, upserted or deleted; a stopped sync is finished by
the next one without embedding anything twice; one sync per project at a time; the CLI and the
timer."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from devhost.standins.fake_ado import REPO, FakeAdo
from shared import layout
from shared.cli import main as cli
from shared.indexing.backlog import IndexBusy, index_lease, load_backlog
from shared.indexing.sync import load_report, load_state, scheduled_sync, sync_project
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from shared.vectorstore import VectorRecord
from shared.vectorstore.embedded import EmbeddedVectorIndex
from tests.support.fakes import HashEmbedder
from tests.support.pipeline import fake_services

PROJECT = "rc"


class CountingEmbedder(HashEmbedder):
    """Records every text it embeds; ``fail_on`` makes that call (1-based) raise."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.calls = 0
        self.fail_on: int | None = None

    def embed(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        if self.fail_on is not None and self.calls == self.fail_on:
            raise RuntimeError("the embedding service is down")
        self.texts.extend(texts)
        return super().embed(texts)


class CountingIndex(EmbeddedVectorIndex):
    """Records the ids of every upsert and delete."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.upserted: list[str] = []
        self.deleted: list[str] = []

    def upsert(self, namespace: str, records: Sequence[VectorRecord]) -> int:
        self.upserted.extend(r.id for r in records)
        return super().upsert(namespace, records)

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        self.deleted.extend(ids)
        return super().delete(namespace, ids)

    def reset(self) -> None:
        self.upserted.clear()
        self.deleted.clear()


@pytest.fixture
def fake() -> Iterator[FakeAdo]:
    with FakeAdo() as server:
        server.seed_sample()
        yield server


@pytest.fixture
def setup(tmp_path: Path, fake: FakeAdo) -> Iterator[dict[str, Any]]:
    """The sample loaded from the fake over REST (as the loader does), then a first sync that
    sets the watermark."""
    embedder = CountingEmbedder()
    store = LocalFolderStore(tmp_path)
    index = CountingIndex(store, embedder.dimension)
    svc = fake_services(store, None, embedder=embedder)
    svc.index_factory = lambda s, st, e: index
    with fake.client(sleep=lambda s: None) as client:
        load_backlog(svc, PROJECT, client=client, show_progress=False)
        first = sync_project(svc, PROJECT, client)
        assert first.status == "completed" and first.full
        # the load indexed the same revisions: nothing embedded, nothing written again
        assert first.embedded == 0 and first.added == first.updated == first.deleted == []
        assert len(first.unchanged) == 51
        embedder.texts.clear()
        index.reset()
        yield {"svc": svc, "client": client, "embedder": embedder, "index": index}


def change_four_items(fake: FakeAdo) -> dict[str, int]:
    """A story reworded, one closed, one deleted, one added, as people do in ADO."""
    fake.edit_item(1102, {"System.Title": "Type a channel number to go straight to it"})
    fake.edit_item(1103, {"System.State": "Closed"})
    fake.remove_item(1108)
    new = fake.item(1104)
    new["id"] = 1200
    new["fields"].update(
        {
            "System.Title": "Show the programme guide for the current channel",
            "System.ChangedDate": fake.now(),
            "System.Rev": 1,
        }
    )
    new["rev"] = 1
    fake.add_items([new])
    return {"reworded": 1102, "closed": 1103, "deleted": 1108, "added": 1200}


def test_a_sync_touches_exactly_what_changed_in_ado(fake: FakeAdo, setup: dict[str, Any]) -> None:
    svc, client, embedder, index = (setup[k] for k in ("svc", "client", "embedder", "index"))
    before = load_state(svc, PROJECT)
    changed = change_four_items(fake)
    fake.clear_log()

    report = sync_project(svc, PROJECT, client)

    assert report.status == "completed" and not report.full
    assert report.added == [changed["added"]]
    assert report.updated == [changed["reworded"], changed["closed"]]
    assert report.deleted == [changed["deleted"]]
    assert report.errors == [] and report.stale == []
    # exactly three texts embedded and three vectors written, one deleted: nothing else touched
    assert report.embedded == 3 and len(embedder.texts) == 3
    assert sorted(index.upserted) == ["ado-1102", "ado-1103", "ado-1200"]
    assert index.deleted == ["ado-1108"]
    # only the changes were asked for: a ChangedDate query with time precision, then a batch read
    # of what it listed (and the ids-only listing for deletions)
    wiql = fake.requests("wiql")
    changed_query = [r for r in wiql if "System.ChangedDate" in r.body["query"]]
    assert len(changed_query) == 1 and changed_query[0].query.get("timePrecision") == "true"
    batch_ids = [i for r in fake.requests("workitemsbatch") for i in r.body["ids"]]
    assert sorted(batch_ids) == [1102, 1103, 1200] and report.unchanged == []
    # the index and ado_vectors.jsonl hold ADO as it is now
    meta = svc.index.fetch(PROJECT, ["ado-1102", "ado-1103", "ado-1200", "ado-1108"])
    assert meta["ado-1102"].metadata["title"] == "Type a channel number to go straight to it"
    assert meta["ado-1103"].metadata["state"] == "Closed"
    assert meta["ado-1200"].metadata["rev"] == 1 and "ado-1108" not in meta
    lines = [json.loads(x) for x in svc.store.get(layout.ado_vectors(PROJECT)).splitlines()]
    assert {x["work_item_id"] for x in lines} == set(fake.items)
    # the watermark moved to the listing's asOf; the report is kept
    state = load_state(svc, PROJECT)
    assert state.watermark and state.watermark > (before.watermark or "")
    assert state.last_completed_sync_id == report.sync_id
    assert load_report(svc, PROJECT, report.sync_id) == report

    # nothing changed since: nothing embedded, written or deleted
    embedder.texts.clear()
    index.reset()
    again = sync_project(svc, PROJECT, client)
    assert again.status == "completed" and again.embedded == 0
    assert again.added == again.updated == again.deleted == []
    assert embedder.texts == [] and index.upserted == [] and index.deleted == []


def test_a_sync_that_stops_midway_is_finished_by_the_next_one(
    fake: FakeAdo, setup: dict[str, Any]
) -> None:
    svc, client, embedder, index = (setup[k] for k in ("svc", "client", "embedder", "index"))
    watermark = load_state(svc, PROJECT).watermark
    change_four_items(fake)
    embedder.fail_on = embedder.calls + 2  # the second item's embedding fails

    with pytest.raises(RuntimeError, match="embedding service is down"):
        sync_project(svc, PROJECT, client, batch_size=1)
    state = load_state(svc, PROJECT)
    stopped = load_report(svc, PROJECT, state.last_sync_id or "")
    assert stopped is not None and stopped.status == "failed"
    assert "embedding service is down" in (stopped.error or "")
    assert state.watermark == watermark and state.last_status == "failed"  # not advanced
    assert stopped.updated == [1102] and index.upserted == ["ado-1102"]  # the first one is in
    assert stopped.deleted == []

    embedder.fail_on = None
    embedder.texts.clear()
    index.reset()
    report = sync_project(svc, PROJECT, client, batch_size=1)
    assert report.status == "completed"
    assert 1102 in report.unchanged  # done by the stopped sync: not embedded again
    assert report.updated == [1103] and report.added == [1200] and report.deleted == [1108]
    assert len(embedder.texts) == 2 and sorted(index.upserted) == ["ado-1103", "ado-1200"]
    assert load_state(svc, PROJECT).watermark > watermark


def test_one_sync_of_a_project_at_a_time(fake: FakeAdo, setup: dict[str, Any]) -> None:
    svc, client = setup["svc"], setup["client"]
    with index_lease(svc, PROJECT):
        with pytest.raises(IndexBusy, match="in progress"):
            sync_project(svc, PROJECT, client)
    assert sync_project(svc, PROJECT, client).status == "completed"


def test_a_sync_never_replaces_a_newer_revision_and_refuses_an_empty_listing(
    fake: FakeAdo, setup: dict[str, Any]
) -> None:
    svc, client = setup["svc"], setup["client"]
    # the index holds rev 9 of #1101 (e.g. a write indexed it); ADO answers an older one
    record = svc.index.fetch(PROJECT, ["ado-1101"])["ado-1101"]
    newer = {**record.metadata, "rev": 99, "work_item_hash": "x"}
    svc.index.upsert(PROJECT, [VectorRecord("ado-1101", record.values, newer)])
    fake.edit_item(1101, {"System.Title": "An older revision than the index holds"})
    report = sync_project(svc, PROJECT, client)
    assert report.stale == [1101]
    assert svc.index.fetch(PROJECT, ["ado-1101"])["ado-1101"].metadata["rev"] == 99

    for wid in list(fake.items):
        fake.remove_item(wid)
    from shared.indexing.indexer import LoaderError

    with pytest.raises(LoaderError, match="would delete all"):
        sync_project(svc, PROJECT, client)
    assert len(svc.index.fetch(PROJECT, ["ado-1102", "ado-1103"])) == 2


def test_the_cli_syncs_and_exits_by_outcome(
    fake: FakeAdo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(tmp_path / "store"))
    monkeypatch.setenv("SYNTH_STORAGE_BACKEND", "local")
    monkeypatch.setenv("SYNTH_EMBEDDER", "minilm")
    assert cli(["sync", "--project", PROJECT, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["status"] == "completed" and first["full"] and len(first["added"]) == 51
    fake.edit_item(1105, {"System.Title": "One button switches the TV on and off"})
    assert cli(["sync", "--project", PROJECT]) == 0
    out = capsys.readouterr().out
    assert "updated 1" in out and "added 0" in out and "embedded 1" in out
    # ADO refuses the PAT: the sync fails, says so, and the watermark stays for the next one
    store = LocalFolderStore(tmp_path / "store")
    watermark = json.loads(store.get(layout.sync_state(PROJECT)))["watermark"]
    monkeypatch.setenv("AZURE_DEVOPS_PAT", "revoked-pat-0000")
    assert cli(["sync", "--project", PROJECT]) == 2
    assert "resumes" in capsys.readouterr().err
    assert json.loads(store.get(layout.sync_state(PROJECT)))["watermark"] == watermark


def test_the_timer_syncs_the_configured_project_and_does_nothing_unconfigured(
    fake: FakeAdo, tmp_path: Path
) -> None:
    embedder = CountingEmbedder()
    svc = fake_services(LocalFolderStore(tmp_path), None, embedder=embedder)
    assert scheduled_sync(svc) is None  # no ADO, no project: nothing to do, nothing raised
    svc.settings = Settings(
        storage_backend="local",
        embedder="minilm",
        sync_project=PROJECT,
        azure_devops_org_url=fake.org_url,
        azure_devops_project=fake.project,
        azure_devops_pat=fake.pat,
    )
    report = scheduled_sync(svc)
    assert report is not None and report.status == "completed" and len(report.added) == 51
    with index_lease(svc, PROJECT):
        assert scheduled_sync(svc) is None  # busy: this turn is skipped
    svc.settings = svc.settings.model_copy(update={"azure_devops_pat": SecretStr("revoked-0")})
    failed = scheduled_sync(svc)  # ADO refuses: recorded and logged, not raised
    assert failed is not None and failed.status == "failed"
    assert load_state(svc, PROJECT).watermark == report.watermark_to


def test_the_sync_timer_exists_only_with_a_schedule() -> None:
    code = (
        "import function_app\n"
        "f = [f for f in function_app.app.get_functions() if f.get_function_name() == 'sync']\n"
        "print(f[0].get_trigger().get_dict_repr()['schedule'] if f else 'none')"
    )

    def schedule(env: dict[str, str]) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", **env},
            check=True,
        )
        return done.stdout.strip()

    assert schedule({}) == "none"
    assert schedule({"SYNTH_SYNC_SCHEDULE": "0 */15 * * * *"}) == "0 */15 * * * *"


def test_the_project_route_shows_the_last_sync(
    setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import azure.functions as func

    import function_app

    function_app.app.functions_bindings = None  # get_functions() is one-shot otherwise
    found = {f.get_function_name(): f for f in function_app.app.get_functions()}
    function_app.app.functions_bindings = None
    trigger = found["project_get"].get_trigger().get_dict_repr()
    assert trigger["route"] == "projects/{project}"
    monkeypatch.setattr(function_app, "app_services", lambda: setup["svc"])
    request = func.HttpRequest(
        method="GET", url="/api/projects/rc", route_params={"project": PROJECT}, body=b""
    )
    response = found["project_get"].get_user_function()(request)
    body = json.loads(response.get_body())
    assert response.status_code == 200 and body["project"] == PROJECT
    assert body["index"] == {
        "ado_items": 51,
        "pending_stories": 0,
        "architecture_chunks": 0,
        "error": None,
    }
    assert body["sync"]["last_status"] == "completed" and body["sync"]["watermark"]
    assert body["sync"]["last_report"]["unchanged"] == 51 and body["runs"] == []
