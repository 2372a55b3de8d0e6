"""Writing and retagging runs the offline pipeline produced (real engine, MiniLM, the sample
backlog), through the HTTP API functions, the CLI and the fake ADO server over HTTP."""

from __future__ import annotations

import json
import secrets
import shutil
import time

import pytest

from devhost.standins.fake_ado import FakeAdo
from shared import api, layout
from shared.ado import ops
from shared.ado import process as processes
from shared.cli import main as cli
from shared.embeddings.minilm import MiniLMEmbedder
from shared.engine.offline import build_offline_agents
from shared.errors import ConfigurationError
from shared.indexing.backlog import load_backlog as load_from_ado
from shared.indexing.workitems import from_rest, read_backlog_file
from shared.models import GeneratedItem, RunStatus, Summary, TaggingRecord, WorkItem
from shared.settings import Settings
from shared.storage import read_jsonl, read_model
from shared.storage.local import LocalFolderStore
from shared.writer.execute import WriteResult
from shared.writer.runs import WriteInProgress, held_lease, write_run
from tests.support.pipeline import SAMPLES, load_backlog, make_pipeline, run_file

# written to produce every tag against the sample backlog, two conflicts among them
DESIGN = SAMPLES.parent / "tests" / "data" / "review_meeting.txt"
NOTES = SAMPLES / "transcripts" / "remote_control_planning_notes.md"


@pytest.fixture(scope="module")
def engine():
    # the seed's tagging rules: tests/data/review_meeting.txt was written to produce every tag
    # (an extend and a gap to patch, two conflicts) under them; the pair model's tags are tested
    # in tests/unit/test_tagging_pairs.py and scored by `eval tagging`
    settings = Settings(
        storage_backend="local", engine="offline", embedder="minilm", tagging_model="thresholds"
    )
    embedder = MiniLMEmbedder()
    return settings, embedder, build_offline_agents(embedder, settings.pipeline)


def pipeline(root, engine):
    settings, embedder, agents = engine
    return make_pipeline(
        LocalFolderStore(root), agents=agents, embedder=embedder, settings=settings
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory, engine):
    root = tmp_path_factory.mktemp("store")
    svc, bus = pipeline(root, engine)
    load_backlog(svc, "rc", read_backlog_file(SAMPLES / "backlog" / "remote_control_backlog.jsonl"))
    design = run_file(svc, bus, "rc", DESIGN.name, DESIGN.read_bytes())
    notes_a = run_file(svc, bus, "rc", "notes-a.md", NOTES.read_bytes())
    notes_b = run_file(svc, bus, "rc", "notes-b.md", NOTES.read_bytes())
    assert design.status == notes_a.status == notes_b.status == "completed"
    # a copy before any test writes: a write indexes what it created (shared/indexing/writes.py)
    pristine = tmp_path_factory.mktemp("pristine") / "store"
    shutil.copytree(root, pristine)
    return {
        "root": root,
        "pristine": pristine,
        "svc": svc,
        "design": design.run_id,
        "a": notes_a.run_id,
        "b": notes_b.run_id,
    }


@pytest.fixture
def fake(request):
    """The sample project, Agile unless parametrized (indirectly) with another process."""
    with FakeAdo(process=getattr(request, "param", "agile")) as server:
        server.seed_sample()
        yield server


@pytest.fixture
def client(fake):
    with fake.client(sleep=lambda s: None) as c:
        yield c


def clone(svc, run_id: str, **changes) -> str:
    """A copy of a run's final artifacts under a new run id (its run.json changed by ``changes``)."""
    new_id = "run-" + secrets.token_hex(10)
    for name in layout.FINAL_ARTIFACTS:
        data = svc.store.get(layout.run_file(run_id, name))
        if name == "run.json":
            run = RunStatus.model_validate_json(data)
            data = run.model_copy(update={"run_id": new_id, **changes}).model_dump_json().encode()
        svc.store.put(layout.run_file(new_id, name), data)
    return new_id


def records(svc, run_id) -> list[TaggingRecord]:
    return read_jsonl(svc.store, layout.run_file(run_id, "tagging_analysis.jsonl"), TaggingRecord)


def conflict_decisions(svc, run_id) -> dict[str, str]:
    rows = records(svc, run_id)
    conflicts = [r.story_id for r in rows if r.decision_tag == "conflict"]
    assert len(conflicts) >= 2, "the review meeting yields conflicts with the offline engine"
    # the tags the tagging is unsure of need a decision too: the reviewer accepts them
    unsure = {r.story_id: "accept" for r in rows if r.needs_review and r.decision_tag != "conflict"}
    rest = {c: "skip" for c in conflicts[2:]}
    return {**unsure, **rest, conflicts[0]: "both", conflicts[1]: "keep_existing"}


def test_a_dry_run_of_a_pipeline_run_plans_it_and_writes_nothing(runs, fake, client):
    svc, run_id = runs["svc"], runs["design"]
    body = write_run(svc, run_id, client, dry_run=True)
    plan = {p["item_id"]: p for p in body["plan"]}
    rows = records(svc, run_id)
    tags = {r.story_id: r.decision_tag for r in rows}
    unsure = {r.story_id for r in rows if r.needs_review}
    assert body["checked_against_ado"] is True
    assert body["counts"]["blocked"] == sum(
        1 for s, t in tags.items() if t == "conflict" or s in unsure
    )
    for story_id, tag in tags.items():
        expected = {"new": "create", "extend": "patch", "gap": "patch", "conflict": "blocked"}
        action = "blocked" if story_id in unsure else expected.get(tag, "skip")
        assert plan[story_id]["action"] == action, story_id
        assert plan[story_id]["needs_decision"] == (action == "blocked"), story_id
    # every generated story hangs under a generated feature or an existing ADO parent
    stories = [p for p in body["plan"] if p["type"] == "User Story"]
    assert stories and all(p["parent_ref"] for p in stories)
    assert fake.count("create") == fake.count("update") == 0
    assert not svc.store.exists(layout.ado_write_results(run_id))


def test_writing_a_pipeline_run_builds_the_tree_and_writing_again_creates_nothing(
    runs, fake, client
):
    svc = runs["svc"]
    run_id = clone(svc, runs["design"])
    decisions = conflict_decisions(svc, run_id)
    body = write_run(svc, run_id, client, decisions=decisions)
    results = {r["item_id"]: r for r in body["results"]}
    assert body["counts"]["failed"] == body["counts"]["blocked"] == 0
    plan = write_run(svc, run_id, client, dry_run=True, decisions=decisions)["plan"]
    assert body["counts"]["created"] == sum(1 for p in plan if p["action"] == "create") >= 3
    assert body["counts"]["modified"] == sum(1 for p in plan if p["action"] == "patch") >= 2
    for r in body["results"]:
        if r["status"] != "created":
            continue
        ref = r["parent_ref"]
        if ref is None:
            expected = None
        elif ref.startswith("ado:"):
            expected = int(ref[4:])
        else:
            expected = results[ref]["ado_id"]
        assert ops.parent_id_of(fake.item(r["ado_id"])) == expected, r["item_id"]
    kept_both = next(k for k, v in decisions.items() if v == "both")
    links = fake.item(results[kept_both]["ado_id"])["relations"]
    assert any(link["rel"] == "System.LinkTypes.Related" for link in links)
    assert results[next(k for k, v in decisions.items() if v == "keep_existing")]["status"] == (
        "skipped"
    )
    stored = read_jsonl(svc.store, layout.ado_write_results(run_id), WriteResult)
    assert [r.item_id for r in stored] == [r["item_id"] for r in body["results"]]
    assert svc.store.exists(layout.write_results_part(run_id, body["write_id"]))

    items_before = len(fake.items)
    again = write_run(svc, run_id, client, decisions=decisions)
    assert again["counts"]["created"] == again["counts"]["modified"] == 0
    assert again["counts"]["existing"] == body["counts"]["created"] + body["counts"]["modified"]
    assert len(fake.items) == items_before
    latest = api.get_write(svc, run_id).json()
    assert latest["write_id"] == again["write_id"]
    assert latest["writes"] == [body["write_id"], again["write_id"]]


@pytest.mark.parametrize("fake", ["scrum", "cmmi"], indirect=True)
def test_a_run_is_written_as_the_projects_process_names_its_types(runs, fake, client):
    svc = runs["svc"]
    run_id = clone(svc, runs["a"])
    story_type = processes.by_name(fake.process).story_type
    plan = write_run(svc, run_id, client, dry_run=True)
    assert plan["process"] == fake.process and plan["checked_against_ado"] is True
    assert {p["work_item_type"] for p in plan["plan"] if p["type"] == "User Story"} == {story_type}
    body = write_run(svc, run_id, client)
    assert body["process"] == fake.process and body["counts"]["failed"] == 0
    created = [r for r in body["results"] if r["status"] == "created"]
    kinds = {fake.item(r["ado_id"])["fields"]["System.WorkItemType"] for r in created}
    assert story_type in kinds and kinds <= {"Epic", "Feature", story_type}
    generated = generated_items(svc, run_id)
    for r in created:
        if r["type"] == "User Story":
            item = fake.item(r["ado_id"])
            assert item["fields"]["System.WorkItemType"] == r["work_item_type"] == story_type
            criteria = generated[r["item_id"]].acceptance_criteria
            assert from_rest(item).acceptance_criteria == criteria
            assert (ops.ACCEPTANCE_CRITERIA in item["fields"]) == bool(criteria)
    again = write_run(svc, run_id, client)
    assert again["counts"]["created"] == again["counts"]["modified"] == 0
    assert fake.count("workitemtypes") == 1  # detected once for the client


@pytest.fixture(scope="module")
def basic_run(tmp_path_factory, engine):
    """The planning notes run against an index the loader filled from a Basic project over REST
    (Epics and Issues, the Issues' criteria in their descriptions)."""
    svc, bus = pipeline(tmp_path_factory.mktemp("basic"), engine)
    with FakeAdo(process="basic") as project:
        project.seed_sample()
        with project.client(sleep=lambda s: None) as c:
            load_from_ado(svc, "rc", client=c, show_progress=False)
    run = run_file(svc, bus, "rc", "notes-basic.md", NOTES.read_bytes())
    assert run.status == "completed"
    return svc, run.run_id


@pytest.mark.parametrize("fake", ["basic"], indirect=True)
def test_a_basic_project_is_tagged_and_written_with_epics_and_issues(basic_run, fake, client):
    svc, run_id = basic_run
    issues = {
        i for i, item in fake.items.items() if item["fields"]["System.WorkItemType"] == "Issue"
    }
    # tagging found the project's Issues: some stories extend, gap or duplicate them
    related = [r for r in records(svc, run_id) if r.decision_tag != "new"]
    assert related and all(set(r.related_story_ids) <= issues for r in related)

    body = write_run(svc, run_id, client, decisions=conflict_decisions_or_none(svc, run_id))
    assert body["process"] == "basic" and body["counts"]["failed"] == 0
    features = [r for r in body["results"] if r["type"] == "Feature"]
    assert features and all(r["status"] == "skipped" and r["ado_id"] is None for r in features)
    created = [r for r in body["results"] if r["status"] == "created"]
    stories = [r for r in created if r["type"] == "User Story"]
    assert stories
    for r in created:
        item = fake.item(r["ado_id"])
        assert item["fields"]["System.WorkItemType"] == r["work_item_type"]
        assert r["work_item_type"] in ("Epic", "Issue")
        assert ops.ACCEPTANCE_CRITERIA not in item["fields"]
    generated = generated_items(svc, run_id)
    assert any(generated[r["item_id"]].acceptance_criteria for r in stories)
    for r in stories:
        item = fake.item(r["ado_id"])
        parent = ops.parent_id_of(item)
        assert parent is not None and fake.item(parent)["fields"]["System.WorkItemType"] == "Epic"
        assert "<i>Feature:</i>" in item["fields"][ops.DESCRIPTION]
        # the criteria are in the description, and read back from it
        assert from_rest(item).acceptance_criteria == generated[r["item_id"]].acceptance_criteria
    patched = [r for r in body["results"] if r["status"] == "modified"]
    for r in patched:
        assert ops.ACCEPTANCE_CRITERIA not in fake.item(r["ado_id"])["fields"]
    assert fake.count("create", status=400) == 0
    again = write_run(svc, run_id, client, decisions=conflict_decisions_or_none(svc, run_id))
    assert again["counts"]["created"] == again["counts"]["modified"] == 0


def generated_items(svc, run_id) -> dict[str, GeneratedItem]:
    path = layout.run_file(run_id, "generated_backlog.jsonl")
    return {i.item_id: i for i in read_jsonl(svc.store, path, GeneratedItem)}


def conflict_decisions_or_none(svc, run_id) -> dict[str, str]:
    """Every story that needs a decision (a conflict, an unsure tag) kept as it is."""
    return {
        r.story_id: "keep_existing" if r.related_story_ids else "skip"
        for r in records(svc, run_id)
        if r.decision_tag == "conflict" or r.needs_review
    }


def test_two_runs_holding_the_same_items_create_them_once(runs, fake, client):
    svc = runs["svc"]
    first = write_run(svc, clone(svc, runs["a"]), client)
    assert first["counts"]["created"] > 10 and first["counts"]["failed"] == 0
    total = len(fake.items)
    second = write_run(svc, clone(svc, runs["b"]), client)
    assert second["counts"]["created"] == second["counts"]["modified"] == 0
    assert second["counts"]["existing"] == first["counts"]["created"] + first["counts"]["modified"]
    assert len(fake.items) == total


def test_http_write_refusals(runs, fake, client):
    svc, run_id = runs["svc"], runs["design"]
    write = api.write_run
    assert write(svc, "../../etc", b"{}", ado_client=client).status == 400
    assert write(svc, "run-" + "0" * 20, b"{}", ado_client=client).status == 404
    for body in (b"not json", b"[]", b'{"dry_run": "yes"}', b'{"decisions": []}', b'{"x": 1}'):
        assert write(svc, run_id, body, ado_client=client).status == 400, body
    bad = write(svc, run_id, b'{"decisions": {"seg-9999-st01": "accept"}}', ado_client=client)
    assert bad.status == 400 and "not a user story of this run" in bad.json()["problems"][0]
    bad = write(
        svc, run_id, json.dumps({"decisions": {"../x": "nuke"}}).encode(), ado_client=client
    )
    assert bad.status == 400

    running = clone(svc, run_id, status="running", phase="tagging")
    refused = write(svc, running, b'{"dry_run": false}', ado_client=client)
    assert refused.status == 409 and refused.json()["status"] == "running"
    assert api.retag_run(svc, running).status == 409

    with svc.store.lease(layout.write_lock(run_id), seconds=30):
        busy = write(svc, run_id, b'{"dry_run": false}', ado_client=client)
        assert busy.status == 409 and "in progress" in busy.json()["error"]
        assert api.retag_run(svc, run_id).status == 409
        # a dry run takes no lock
        assert write(svc, run_id, b"", ado_client=client).status == 200
    with svc.store.lease(layout.ado_write_lock(), seconds=30):  # another run is being written
        assert write(svc, run_id, b'{"dry_run": false}', ado_client=client).status == 409
    assert fake.count("create") == 0

    # ADO not configured (the test settings have no AZURE_DEVOPS_*): a write is 503, a dry run
    # plans from the files
    unconfigured = write(svc, run_id, b'{"dry_run": false}')
    assert unconfigured.status == 503 and "AZURE_DEVOPS_ORG_URL" in unconfigured.json()["error"]
    assert unconfigured.json()["code"] == "not_configured"
    with pytest.raises(ConfigurationError, match="AZURE_DEVOPS_"):  # the writer asked directly
        write_run(svc, run_id, None, dry_run=False)
    planned = write(svc, run_id, b"{}")
    assert planned.status == 200 and planned.json()["checked_against_ado"] is False

    fresh = clone(svc, run_id)
    never = api.get_write(svc, fresh)
    assert never.status == 200 and never.json()["results"] == [] and never.json()["writes"] == []
    assert api.get_write(svc, "run-..").status == 400


def test_a_process_that_cannot_be_told_stops_a_write_but_not_a_dry_run(
    runs, fake, client, monkeypatch
):
    svc, run_id = runs["svc"], runs["design"]
    fake.fail_next(500, route="workitemtypes", times=6)  # the detection and its five retries
    refused = api.write_run(svc, run_id, b'{"dry_run": false}', ado_client=client)
    assert refused.status == 502 and "Injected failure 500" in refused.json()["error"]
    fake.fail_next(500, route="workitemtypes", times=6)
    planned = api.write_run(svc, run_id, b"{}", ado_client=client)
    body = planned.json()
    assert planned.status == 200 and body["process"] is None
    assert body["checked_against_ado"] is False and "Injected failure 500" in body["ado_error"]
    assert body["plan"] and fake.count("create") == fake.count("wiql") == 0

    def unknown(client):
        raise processes.ProcessError("cannot tell the process of project 'RemoteControl'")

    monkeypatch.setattr(processes, "detect", unknown)
    refused = api.write_run(svc, run_id, b'{"dry_run": false}', ado_client=client)
    assert refused.status == 503 and "cannot tell the process" in refused.json()["error"]
    svc.settings.azure_devops_process = "agile"  # the setting needs no detection
    try:
        planned = api.write_run(svc, run_id, b"{}", ado_client=client).json()
    finally:
        svc.settings.azure_devops_process = "auto"
    assert planned["process"] == "agile" and planned["checked_against_ado"] is True


def test_cli_write(runs, fake, monkeypatch, capsys, tmp_path):
    svc = runs["svc"]
    run_id = clone(svc, runs["a"])
    monkeypatch.delenv("AzureWebJobsStorage", raising=False)
    monkeypatch.setenv("SYNTH_STORAGE_BACKEND", "local")
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(runs["root"]))
    for key in ("AZURE_DEVOPS_ORG_URL", "AZURE_DEVOPS_PROJECT", "AZURE_DEVOPS_PAT"):
        monkeypatch.delenv(key, raising=False)

    assert cli(["write", run_id]) == 2
    assert "AZURE_DEVOPS_ORG_URL" in capsys.readouterr().err
    assert cli(["write", run_id, "--dry-run"]) == 0
    assert "not checked against Azure DevOps" in capsys.readouterr().out

    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    assert cli(["write", run_id, "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["dry_run"] is True and plan["checked_against_ado"] is True
    assert fake.count("create") == 0

    story = next(p["item_id"] for p in plan["plan"] if p["action"] == "create" and p["tag"])
    decisions = tmp_path / "decisions.json"
    decisions.write_text(json.dumps({"decisions": {story: "skip"}}))
    assert cli(["write", run_id, "--decisions", str(decisions)]) == 0
    out = capsys.readouterr().out
    assert f"of {run_id}" in out and "created: " in out and "skipped by the reviewer" in out

    decisions.write_text(json.dumps({story: "explode"}))
    assert cli(["write", run_id, "--decisions", str(decisions)]) == 2
    assert "is not one of" in capsys.readouterr().err
    running = clone(svc, run_id, status="running", phase="tagging")
    assert cli(["write", running, "--dry-run"]) == 1
    assert "only a completed run" in capsys.readouterr().err


def test_retag_follows_the_index_and_is_idempotent(runs, engine, tmp_path):
    root = tmp_path / "store"
    shutil.copytree(runs["pristine"], root)  # the index as loaded: no test's write in it
    svc, _ = pipeline(root, engine)
    run_id = runs["a"]
    path = layout.run_file(run_id, "tagging_analysis.jsonl")
    before = svc.store.get(path)

    same = api.retag_run(svc, run_id)
    assert same.status == 200
    body = same.json()
    assert body["changed"] == 0 and body["snapshot"] is None, body["changes"]
    assert body["tag_distribution"] == body["previous_tag_distribution"]
    assert svc.store.get(path) == before  # nothing moved: not a byte of the tagging changed
    summary = read_model(svc.store, layout.run_file(run_id, "summary.json"), Summary)
    assert summary.retag_count == 1 and summary.retagged_at is not None

    # the backlog grows: someone adds a story saying what a "new" story of the run says
    items = read_jsonl(svc.store, layout.run_file(run_id, "generated_backlog.jsonl"), GeneratedItem)
    target = next(
        i for i in items if i.type == "User Story" and i.assigned_tag == "new" and i.description
    )
    load_backlog(
        svc,
        "rc",
        [
            WorkItem(
                work_item_id=2001,
                work_item_type="User Story",
                title=target.title,
                description=target.description,
                acceptance_criteria=target.acceptance_criteria,
                parent_id=1041,
            )
        ],
    )
    changed = api.retag_run(svc, run_id).json()
    change = next(c for c in changed["changes"] if c["story_id"] == target.item_id)
    assert change["from"] == "new" and change["to"] != "new"
    assert 2001 in change["related_story_ids"]
    assert changed["tag_distribution"]["new"] == changed["previous_tag_distribution"]["new"] - (
        sum(1 for c in changed["changes"] if c["from"] == "new")
        - sum(1 for c in changed["changes"] if c["to"] == "new")
    )
    new_items = read_jsonl(
        svc.store, layout.run_file(run_id, "generated_backlog.jsonl"), GeneratedItem
    )
    assert next(i for i in new_items if i.item_id == target.item_id).assigned_tag == change["to"]
    summary = read_model(svc.store, layout.run_file(run_id, "summary.json"), Summary)
    assert summary.tag_distribution == changed["tag_distribution"] and summary.retag_count == 2
    assert svc.store.get(changed["snapshot"] + "tagging_analysis.jsonl") == before

    again = api.retag_run(svc, run_id).json()
    assert again["changed"] == 0 and again["snapshot"] is None
    assert again["tag_distribution"] == changed["tag_distribution"]
    assert len(svc.store.children(layout.retag_prefix(run_id))) == 1


def test_the_write_lease_is_renewed_while_held_and_released_after(tmp_path):
    store = LocalFolderStore(tmp_path)
    lock = layout.write_lock("run-" + "c" * 20)
    with held_lease(store, lock, "busy", seconds=1):
        time.sleep(1.6)  # past the lease's own second: only the renewals keep it
        with pytest.raises(WriteInProgress, match="busy"):
            with held_lease(store, lock, "busy", seconds=1):
                pass
    with held_lease(store, lock, "busy", seconds=1):  # released at the end
        pass
