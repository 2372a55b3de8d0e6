"""Rolling back an ADO write (shared/writer/rollback.py) through the real AdoClient against the
fake ADO server: a hand-made completed run is written (creates, an extend patch, a ``both``
link), then undone through ``rollback_run``, the HTTP API, the function route and the CLI."""

from __future__ import annotations

import json
from typing import Any

import azure.functions as func
import pytest

import function_app
from devhost.standins.fake_ado import FakeAdo
from shared import api, layout
from shared.ado import ops
from shared.bus.memory import InProcessBus
from shared.cli import main as cli
from shared.errors import ConfigurationError
from shared.ids import InvalidIdentifier
from shared.models import RunStatus
from shared.services import Services
from shared.settings import Settings
from shared.storage import create_model, dump_jsonl, read_jsonl
from shared.storage.local import LocalFolderStore
from shared.writer.execute import WriteResult
from shared.writer.revert import NO_BEFORE, NO_REV, RollbackRecord
from shared.writer.rollback import NothingToRollBack, UnknownWrite, rollback_run
from shared.writer.runs import WriteInProgress, write_run
from tests.support.backlog_items import NOW, Backlog

# revision metadata moves forward in ADO whatever is undone (a revert is itself a revision)
REVISION_FIELDS = ("System.Rev", "System.ChangedDate", "System.ChangedBy")


@pytest.fixture
def fake():
    with FakeAdo() as server:
        server.seed_sample()
        yield server


@pytest.fixture
def client(fake):
    with fake.client(sleep=lambda s: None) as c:
        yield c


@pytest.fixture
def svc(tmp_path):
    return Services(
        settings=Settings(storage_backend="local"),
        store=LocalFolderStore(tmp_path / "store"),
        bus=InProcessBus(),
    )


def stored_run(svc: Services, b: Backlog) -> str:
    """``b`` as a completed run in the store (what finalize leaves)."""
    create_model(
        svc.store,
        layout.run_json(b.run_id),
        RunStatus(
            run_id=b.run_id,
            project="rc",
            source_path="transcripts/rc/notes.md",
            source_name="notes.md",
            content_sha256="0" * 64,
            size_bytes=1,
            status="completed",
            phase="done",
            engine="offline",
            embedding_model="test",
            created_at=NOW,
            updated_at=NOW,
        ),
    )
    svc.store.put(layout.run_file(b.run_id, "generated_backlog.jsonl"), dump_jsonl(b.items))
    svc.store.put(layout.run_file(b.run_id, "tagging_analysis.jsonl"), dump_jsonl(b.records))
    return b.run_id


def voice_run(svc: Services) -> tuple[str, dict[str, str], dict[str, str]]:
    """A run whose write creates 7 items (a new epic and feature, a feature under the existing
    epic #1002, a ``both`` story linked to #1101) and patches #1126 (extend)."""
    b = Backlog()
    ids = {"epic": b.epic("Voice control")}
    ids["f1"] = b.feature("Voice commands", ids["epic"])
    ids["s1"] = b.story("Say a channel number", ids["f1"])
    ids["s2"] = b.story("Say the input source", ids["f1"])
    ids["extend"] = b.story(
        "Louder by voice",
        ids["f1"],
        tag="extend",
        related=[1126],
        deltas=["Saying 'louder' raises the volume by one step"],
    )
    ids["f2"] = b.feature("Battery", parent_work_item_id=1002)
    ids["s3"] = b.story("Battery icon on the LCD", ids["f2"])
    ids["both"] = b.story("Zap by voice only", ids["f2"], tag="conflict", related=[1101])
    return stored_run(svc, b), ids, {ids["both"]: "both"}


def snapshot(fake: FakeAdo) -> dict[int, dict[str, Any]]:
    """Every item's fields (but the revision metadata) and links."""
    out = {}
    for wid in sorted(fake.items):
        item = fake.item(wid)
        fields = {k: v for k, v in item["fields"].items() if k not in REVISION_FIELDS}
        out[wid] = {"fields": fields, "relations": item.get("relations", [])}
    return out


def by_item(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["item_id"]: r for r in body["results"]}


def test_a_rollback_leaves_ado_as_it_was_and_a_second_one_does_nothing(svc, fake, client):
    run_id, ids, decisions = voice_run(svc)
    before = snapshot(fake)
    written = write_run(svc, run_id, client, decisions=decisions)
    assert written["counts"]["created"] == 7 and written["counts"]["modified"] == 1
    results = {r["item_id"]: r for r in written["results"]}
    patch = results[ids["extend"]]
    assert set(patch["before"]) == {ops.ACCEPTANCE_CRITERIA, ops.DESCRIPTION, ops.TAGS}
    assert patch["before"] == {f: before[1126]["fields"].get(f) for f in patch["before"]}
    assert patch["after"][ops.DESCRIPTION] == fake.item(1126)["fields"][ops.DESCRIPTION]
    # the rev each item had when the write ended (the epic got a revision for its child)
    for r in written["results"]:
        assert r["rev_after"] == fake.item(r["ado_id"])["rev"], r["item_id"]
    assert results[ids["epic"]]["rev_after"] > 1
    assert snapshot(fake) != before

    fake.clear_log()
    body = rollback_run(svc, run_id, client)
    assert body["write_id"] == written["write_id"] and body["dry_run"] is False
    rows = by_item(body)
    assert body["counts"]["deleted"] == 7 and body["counts"]["reverted"] == 1
    assert rows[ids["extend"]]["action"] == "revert"
    assert set(rows[ids["extend"]]["fields_reverted"]) == set(patch["before"])
    assert snapshot(fake) == before  # every field and link as it was, the same items
    assert set(fake.recycle_bin) == {r["ado_id"] for r in written["results"]} - {1126}
    # children before parents: every deleted item's parent is deleted after it
    order = [int(r.path.rsplit("/", 1)[1]) for r in fake.requests("delete")]
    ado = {r["item_id"]: r["ado_id"] for r in written["results"]}
    for child, parent in (("s1", "f1"), ("s2", "f1"), ("f1", "epic"), ("s3", "f2")):
        assert order.index(ado[ids[child]]) < order.index(ado[ids[parent]])
    assert fake.count("delete") == 7 and fake.count("update") == 1
    assert all(r.query.get("destroy") is None for r in fake.requests("delete"))
    stored = read_jsonl(
        svc.store, layout.rollback_part(run_id, body["rollback_id"]), RollbackRecord
    )
    assert [r.status for r in stored] == [r["status"] for r in body["results"]]

    fake.clear_log()
    again = rollback_run(svc, run_id, client)
    assert fake.count("delete") == fake.count("update") == 0
    assert again["counts"]["already_gone"] == 7 and again["counts"]["already_reverted"] == 1
    assert again["rollback_id"] != body["rollback_id"]
    assert snapshot(fake) == before

    # the undone write can be written again
    rewritten = write_run(svc, run_id, client, decisions=decisions)
    assert rewritten["counts"]["created"] == 7 and rewritten["counts"]["modified"] == 1


def test_items_changed_in_ado_since_the_write_are_reported_not_reverted(svc, fake, client):
    run_id, ids, decisions = voice_run(svc)
    written = write_run(svc, run_id, client, decisions=decisions)
    ado = {r["item_id"]: r["ado_id"] for r in written["results"]}
    fake.edit_item(1126, {"System.State": "Active"})  # a person works on the patched story
    fake.edit_item(ado[ids["s1"]], {ops.TITLE: "Say a channel number out loud"})
    patched = fake.item(1126)["fields"]

    body = rollback_run(svc, run_id, client)
    rows = by_item(body)
    for key in ("extend", "s1"):
        assert rows[ids[key]]["status"] == "changed_since_write", key
        assert rows[ids[key]]["action"] == "none" and "rev" in rows[ids[key]]["reason"]
    assert fake.item(1126)["fields"] == patched  # not reverted
    assert fake.item(ado[ids["s1"]])["fields"][ops.TITLE] == "Say a channel number out loud"
    # its parents stay with it, so nothing is orphaned
    assert rows[ids["f1"]]["status"] == rows[ids["epic"]]["status"] == "kept"
    assert f"#{ado[ids['s1']]}" in rows[ids["f1"]]["reason"]
    assert set(fake.items) >= {ado[ids[k]] for k in ("s1", "f1", "epic")}
    for key in ("s2", "s3", "f2", "both"):
        assert rows[ids[key]]["status"] == "deleted", key
        assert ado[ids[key]] not in fake.items
    assert body["counts"]["deleted"] == 4 and body["counts"]["reverted"] == 0


def test_a_dry_run_changes_nothing_and_lists_what_would_be_done(svc, fake, client):
    run_id, ids, decisions = voice_run(svc)
    written = write_run(svc, run_id, client, decisions=decisions)
    after_write = snapshot(fake)
    fake.clear_log()

    body = rollback_run(svc, run_id, client, dry_run=True)
    assert body["dry_run"] is True and body["rollback_id"] is None
    assert body["checked_against_ado"] is True
    assert body["counts"]["pending"] == 8
    rows = by_item(body)
    assert rows[ids["extend"]]["action"] == "revert"
    assert ops.DESCRIPTION in rows[ids["extend"]]["fields_reverted"]
    assert {rows[ids[k]]["action"] for k in ids if k != "extend"} == {"delete"}
    assert fake.count("delete") == fake.count("update") == fake.count("create") == 0
    assert snapshot(fake) == after_write
    assert svc.store.list(layout.rollback_prefix(run_id)) == []

    # an edit shows in the dry run as it would in the rollback
    fake.edit_item(written["results"][0]["ado_id"], {"System.State": "Active"})  # the epic
    rows = by_item(rollback_run(svc, run_id, client, dry_run=True))
    assert rows[ids["epic"]]["status"] == "changed_since_write"
    # without ADO: from the records alone, unchecked
    unchecked = rollback_run(svc, run_id, None, dry_run=True)
    assert unchecked["checked_against_ado"] is False and unchecked["counts"]["pending"] == 8


def test_a_write_finished_by_a_second_one_is_undone_newest_first(svc, fake, client):
    run_id, ids, decisions = voice_run(svc)
    before = snapshot(fake)
    fake.reject_writes(title="Voice commands", message="TF401320: Rule Error for field Area Path.")
    first = write_run(svc, run_id, client, decisions=decisions)
    assert first["counts"]["failed"] == 3  # f1 and its two stories
    fake.clear_faults()
    second = write_run(svc, run_id, client, decisions=decisions)
    assert second["counts"]["created"] == 3 and second["counts"]["existing"] == 5

    latest = rollback_run(svc, run_id, client)  # the latest write by default
    assert latest["write_id"] == second["write_id"] and latest["counts"]["deleted"] == 3
    # the epic got a revision from the second write's feature: that write recorded it
    earlier = rollback_run(svc, run_id, client, write_id=first["write_id"])
    assert earlier["counts"]["deleted"] == 4 and earlier["counts"]["reverted"] == 1
    assert earlier["counts"]["changed_since_write"] == earlier["counts"]["kept"] == 0
    assert snapshot(fake) == before

    with pytest.raises(UnknownWrite):
        rollback_run(svc, run_id, client, write_id="w-0009-20260101T000000Z")
    with pytest.raises(InvalidIdentifier):
        rollback_run(svc, run_id, client, write_id="../w-1")


def test_a_lost_answer_is_looked_at_again_on_write_and_on_rollback(svc, fake, client):
    run_id, ids, decisions = voice_run(svc)
    before = snapshot(fake)
    fake.fail_next(500, route="update", applied=True)  # patched, but the answer is a 500
    written = write_run(svc, run_id, client, decisions=decisions, sleep=lambda s: None)
    patch = by_item(written)[ids["extend"]]
    assert patch["status"] == "modified"
    assert patch["before"][ops.DESCRIPTION] == before[1126]["fields"][ops.DESCRIPTION]
    assert fake.count("update", status=200) == 0  # one PATCH: applied, answered 500

    fake.fail_next(500, route="delete", applied=True)
    fake.fail_next(502, route="update", applied=True)
    body = rollback_run(svc, run_id, client, sleep=lambda s: None)
    assert body["counts"]["deleted"] == 7 and body["counts"]["reverted"] == 1
    assert snapshot(fake) == before


def test_a_write_recorded_before_rollbacks_existed_is_left_alone(svc, fake, client):
    run_id, ids, decisions = voice_run(svc)
    written = write_run(svc, run_id, client, decisions=decisions)
    path = layout.write_results_part(run_id, written["write_id"])
    old = [
        {k: v for k, v in json.loads(line).items() if k not in ("before", "after", "rev_after")}
        for line in svc.store.get(path).decode().splitlines()
    ]
    svc.store.put(path, "\n".join(json.dumps(r) for r in old).encode() + b"\n")
    assert all(r.before is None for r in read_jsonl(svc.store, path, WriteResult))
    after_write = snapshot(fake)

    body = rollback_run(svc, run_id, client)
    rows = by_item(body)
    assert rows[ids["extend"]]["status"] == "failed"
    assert rows[ids["extend"]]["reason"] == NO_BEFORE
    assert rows[ids["s1"]]["status"] == "failed" and rows[ids["s1"]]["reason"] == NO_REV
    assert body["counts"]["failed"] == 8
    assert snapshot(fake) == after_write


def test_http_rollback(svc, fake, client):
    run_id, ids, decisions = voice_run(svc)
    rollback = api.rollback_run
    assert rollback(svc, "../../etc", b"{}", ado_client=client).status == 400
    assert rollback(svc, "run-" + "0" * 20, b"{}", ado_client=client).status == 404
    never = rollback(svc, run_id, b"", ado_client=client)
    assert never.status == 409 and "no write" in never.json()["error"]

    written = write_run(svc, run_id, client, decisions=decisions)
    bad_bodies = (
        b"not json",
        b"[]",
        b'{"dry_run": "no"}',
        b'{"write_id": 3}',
        b'{"write_id": "w-1/../x"}',
        b'{"x": 1}',
    )
    for raw in bad_bodies:
        assert rollback(svc, run_id, raw, ado_client=client).status == 400, raw
    missing = rollback(svc, run_id, b'{"write_id": "w-0042-20260101T000000Z"}', ado_client=client)
    assert missing.status == 404

    # a dry run unless told otherwise, as for a write
    planned = rollback(svc, run_id, b"", ado_client=client)
    assert planned.status == 200 and planned.json()["dry_run"] is True
    assert planned.json()["counts"]["pending"] == 8 and fake.count("delete") == 0

    with svc.store.lease(layout.write_lock(run_id), seconds=30):  # a write or retag of the run
        busy = rollback(svc, run_id, b'{"dry_run": false}', ado_client=client)
        assert busy.status == 409 and "in progress" in busy.json()["error"]
    with svc.store.lease(layout.ado_write_lock(), seconds=30):  # another run is being written
        assert rollback(svc, run_id, b'{"dry_run": false}', ado_client=client).status == 409
    assert fake.count("delete") == 0

    # ADO not configured (no AZURE_DEVOPS_* in these settings): 503, a dry run is unchecked
    assert rollback(svc, run_id, b'{"dry_run": false}').status == 503
    with pytest.raises(ConfigurationError, match="AZURE_DEVOPS_"):  # the rollback asked directly
        rollback_run(svc, run_id, None, dry_run=False)
    assert rollback(svc, run_id, b"{}").json()["checked_against_ado"] is False

    done = rollback(
        svc,
        run_id,
        json.dumps({"dry_run": False, "write_id": written["write_id"]}).encode(),
        ado_client=client,
    )
    assert done.status == 200 and done.json()["counts"]["deleted"] == 7
    assert sorted(done.json()["deleted_ids"]) == sorted(written["created_ids"])


def test_the_function_route(svc, fake, monkeypatch):
    run_id, _, decisions = voice_run(svc)
    configured = Services(
        settings=Settings(
            storage_backend="local",
            azure_devops_org_url=fake.org_url,
            azure_devops_project=fake.project,
            azure_devops_pat=fake.pat,
        ),
        store=svc.store,
        bus=svc.bus,
    )
    with fake.client(sleep=lambda s: None) as client:
        written = write_run(configured, run_id, client, decisions=decisions)
    function_app.app.functions_bindings = None  # get_functions() is one-shot otherwise
    found = {f.get_function_name(): f for f in function_app.app.get_functions()}
    function_app.app.functions_bindings = None
    trigger = found["rollback_post"].get_trigger().get_dict_repr()
    assert trigger["route"] == "runs/{run_id}/rollback"
    assert [str(getattr(m, "value", m)) for m in trigger["methods"]] == ["POST"]
    monkeypatch.setattr(function_app, "app_services", lambda: configured)

    def post(body: dict[str, Any]) -> func.HttpResponse:
        request = func.HttpRequest(
            method="POST",
            url=f"http://localhost/api/runs/{run_id}/rollback",
            route_params={"run_id": run_id},
            body=json.dumps(body).encode(),
        )
        return found["rollback_post"].get_user_function()(request)

    planned = post({})
    assert planned.status_code == 200 and json.loads(planned.get_body())["dry_run"] is True
    assert fake.count("delete") == 0
    done = post({"dry_run": False})
    assert done.status_code == 200 and done.mimetype == "application/json"
    assert json.loads(done.get_body())["counts"]["deleted"] == len(written["created_ids"])


def test_cli_rollback(svc, fake, client, monkeypatch, capsys, tmp_path):
    run_id, ids, decisions = voice_run(svc)
    monkeypatch.delenv("AzureWebJobsStorage", raising=False)
    monkeypatch.setenv("SYNTH_STORAGE_BACKEND", "local")
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(tmp_path / "store"))
    for key in ("AZURE_DEVOPS_ORG_URL", "AZURE_DEVOPS_PROJECT", "AZURE_DEVOPS_PAT"):
        monkeypatch.delenv(key, raising=False)
    assert cli(["rollback", run_id]) == 2  # no ADO settings
    assert "AZURE_DEVOPS_ORG_URL" in capsys.readouterr().err
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    assert cli(["rollback", run_id]) == 1  # never written
    assert "no write" in capsys.readouterr().err

    written = write_run(svc, run_id, client, decisions=decisions)
    assert cli(["rollback", run_id, "--write-id", "nope"]) == 2
    assert "invalid write_id" in capsys.readouterr().err
    assert cli(["rollback", run_id, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"write {written['write_id']} of {run_id}" in out and "pending: 8" in out
    assert fake.count("delete") == 0

    fake.edit_item(written["results"][-1]["ado_id"], {"System.State": "Active"})  # "both"
    assert cli(["rollback", run_id, "--write-id", written["write_id"], "--json"]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["counts"]["changed_since_write"] == body["counts"]["kept"] == 1  # it and f2
    assert body["counts"]["deleted"] == 5 and body["counts"]["reverted"] == 1
    assert cli(["rollback", run_id]) == 1  # the edited item is still there, reported again
    out = capsys.readouterr().out
    assert "already_gone: 5" in out and "changed_since_write: 1" in out and "kept: 1" in out
    assert fake.count("delete") == 5


def test_nothing_to_roll_back_and_a_busy_run(svc, client):
    run_id, _, _ = voice_run(svc)
    with pytest.raises(NothingToRollBack):
        rollback_run(svc, run_id, client)
    svc.store.put(layout.write_results_part(run_id, "w-0001-20260101T000000Z"), b"")
    with svc.store.lease(layout.write_lock(run_id), seconds=30):
        with pytest.raises(WriteInProgress):
            rollback_run(svc, run_id, client)


def test_an_auth_failure_changes_nothing_and_says_why(svc, fake, client):
    run_id, _, decisions = voice_run(svc)
    write_run(svc, run_id, client, decisions=decisions)
    after_write = snapshot(fake)
    with FakeAdo(pat="another-pat-0123456789") as other:
        bad = other.client(sleep=lambda s: None)
        bad.org_url = fake.org_url  # right server, wrong PAT
        body = rollback_run(svc, run_id, bad)
    assert body["counts"]["failed"] == 8 and "personal access token" in body["ado_error"]
    assert body["checked_against_ado"] is False
    assert snapshot(fake) == after_write
    # running it again with a good token finishes it
    assert rollback_run(svc, run_id, client)["counts"]["deleted"] == 7
