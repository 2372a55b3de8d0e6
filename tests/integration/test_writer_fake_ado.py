"""The writer through the real AdoClient (HTTP) against the fake ADO server, on hand-made plans:
hierarchy and links, idempotency, throttling, failures, lost answers, a write that died halfway,
escaping, the conflict decisions, and each ADO process's types and fields."""

from __future__ import annotations

import pytest

from devhost.standins.fake_ado import FakeAdo
from shared.ado import ops
from shared.ado import process as processes
from shared.ado.process import AGILE, Process
from shared.indexing.workitems import from_rest
from shared.review import render
from shared.review.plan import build_plan
from shared.writer.execute import Writer, counts, preview
from tests.support.backlog_items import Backlog

PROCESSES = ("agile", "scrum", "cmmi", "basic")


@pytest.fixture
def fake(request):
    """The sample project, Agile unless parametrized (indirectly) with another process."""
    with FakeAdo(process=getattr(request, "param", "agile")) as server:
        server.seed_sample()
        yield server


@pytest.fixture
def slept():
    return []


@pytest.fixture
def client(fake, slept):
    with fake.client(sleep=slept.append) as c:
        yield c


def backlog() -> tuple[Backlog, dict[str, str]]:
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
        deltas=[
            "Saying 'louder' raises the volume by one step",
            "Voice control can be switched off.",
        ],
    )
    ids["f2"] = b.feature("Battery", parent_work_item_id=1002)
    ids["s3"] = b.story("Battery icon on the LCD", ids["f2"])
    ids["conflict"] = b.story("Zap by voice only", ids["f2"], tag="conflict", related=[1101])
    return b, ids


def write(client, b: Backlog, decisions=None, slept=None, write_id="w-1", process: Process = AGILE):
    plan = build_plan(b.run_id, b.items, b.records, decisions, process)
    writer = Writer(
        client,
        run_id=b.run_id,
        write_id=write_id,
        sleep=(slept if slept is not None else []).append,
    )
    results = writer.run(plan)
    return {r.item_id: r for r in results}, counts(results)


def parent_of(fake, work_item_id):
    return ops.parent_id_of(fake.item(work_item_id))


def with_tag(fake, tag):
    return [i for i, item in fake.items.items() if tag in ops.tags_of(item)]


def test_hierarchy_links_patches_and_a_second_write_changes_nothing(fake, client):
    b, ids = backlog()
    results, tally = write(client, b, {ids["conflict"]: "both"})
    assert tally == {
        "created": 7,
        "modified": 1,
        "existing": 0,
        "skipped": 0,
        "blocked": 0,
        "failed": 0,
    }
    epic, f1, f2 = (results[ids[k]].ado_id for k in ("epic", "f1", "f2"))
    assert parent_of(fake, epic) is None
    assert parent_of(fake, f1) == epic
    assert parent_of(fake, f2) == 1002  # the existing epic the generation reused
    for key in ("s1", "s2"):
        assert parent_of(fake, results[ids[key]].ado_id) == f1
    assert parent_of(fake, results[ids["s3"]].ado_id) == f2
    # both: a new story under its feature, linked to the existing one
    kept = fake.item(results[ids["conflict"]].ado_id)
    assert parent_of(fake, kept["id"]) == f2
    related = [r for r in kept["relations"] if r["rel"] == "System.LinkTypes.Related"]
    assert [ops.id_from_url(r["url"]) for r in related] == [1101]
    # extend: only the criterion that was not there yet is appended, plus the delta and tags
    patched = fake.item(1126)["fields"]
    ac = patched[ops.ACCEPTANCE_CRITERIA]
    assert ac.count("Voice control can be switched off.") == 1
    assert "Saying &#x27;louder&#x27; raises the volume by one step" in ac
    assert "Backlog Synthesizer (extend" in patched[ops.DESCRIPTION]
    assert {"backlog-synth", "synth-extend"} <= set(ops.tags_of(fake.item(1126)))
    created = fake.item(results[ids["s1"]].ado_id)
    assert render.signature_tag(results[ids["s1"]].signature) in ops.tags_of(created)
    assert results[ids["s1"]].url.endswith(f"/_workitems/edit/{created['id']}")

    creates, updates, rev = fake.count("create"), fake.count("update"), fake.item(1126)["rev"]
    again, tally = write(client, b, {ids["conflict"]: "both"}, write_id="w-2")
    assert tally["created"] == tally["modified"] == 0 and tally["existing"] == 8
    assert (fake.count("create"), fake.count("update")) == (creates, updates)
    assert fake.item(1126)["rev"] == rev
    assert all(again[k].ado_id == results[k].ado_id for k in results)


@pytest.mark.parametrize("fake", PROCESSES, indirect=True)
def test_each_process_gets_its_own_types_and_fields(fake, client):
    process = processes.detect(client)
    assert process.name == fake.process
    basic = process.feature_type is None
    b, ids = backlog()
    ids["replaced"] = b.story(
        "Jump to a channel", ids["f2"], tag="conflict", related=[1102], criteria=["Two digits"]
    )
    decisions = {ids["conflict"]: "both", ids["replaced"]: "replace"}
    results, tally = write(client, b, decisions, process=process)
    assert tally == {
        "created": 5 if basic else 7,
        "modified": 2,
        "existing": 0,
        "skipped": 2 if basic else 0,  # Basic: the two features
        "blocked": 0,
        "failed": 0,
    }

    def stored(key):
        return fake.item(results[ids[key]].ado_id)

    assert stored("epic")["fields"]["System.WorkItemType"] == "Epic"
    for key in ("s1", "s2", "s3", "conflict"):
        assert stored(key)["fields"]["System.WorkItemType"] == process.story_type
        assert results[ids[key]].work_item_type == process.story_type
    story = stored("s1")["fields"]
    criteria = "<ul><li>Given it, then say a channel number</li></ul>"
    if basic:
        for key in ("f1", "f2"):
            assert results[ids[key]].status == "skipped" and results[ids[key]].ado_id is None
        assert parent_of(fake, stored("s1")["id"]) == results[ids["epic"]].ado_id
        assert parent_of(fake, stored("s3")["id"]) == 1002  # where f2 hung
        assert ops.ACCEPTANCE_CRITERIA not in story
        assert "<div><i>Feature:</i> Voice commands</div>" in story[ops.DESCRIPTION]
        assert f"<h3>Acceptance criteria</h3>{criteria}" in story[ops.DESCRIPTION]
        # the loader reads them back as the item's criteria
        assert from_rest(stored("s1")).acceptance_criteria == [
            "Given it, then say a channel number"
        ]
    else:
        assert stored("f1")["fields"]["System.WorkItemType"] == "Feature"
        assert parent_of(fake, stored("s1")["id"]) == results[ids["f1"]].ado_id
        assert parent_of(fake, stored("f2")["id"]) == 1002
        assert story[ops.ACCEPTANCE_CRITERIA] == criteria
        assert "Acceptance criteria" not in story[ops.DESCRIPTION]
    # extend: the new criterion appended where the process keeps criteria, the known one not again
    kept_in = process.ac_field or ops.DESCRIPTION
    patched = fake.item(1126)
    assert patched["fields"][kept_in].count("Voice control can be switched off.") == 1
    assert "Saying &#x27;louder&#x27; raises the volume by one step" in patched["fields"][kept_in]
    assert "Backlog Synthesizer (extend" in patched["fields"][ops.DESCRIPTION]
    assert "Saying 'louder' raises the volume by one step" in from_rest(patched).acceptance_criteria
    # replace: the generated criteria instead of the old ones
    replaced = fake.item(1102)
    assert from_rest(replaced).acceptance_criteria == ["Two digits"]
    assert (ops.ACCEPTANCE_CRITERIA in replaced["fields"]) != basic

    again, tally = write(client, b, decisions, write_id="w-2", process=process)
    assert tally["created"] == tally["modified"] == 0
    assert tally["existing"] == (7 if basic else 9)
    assert all(again[k].ado_id == results[k].ado_id for k in results)


@pytest.mark.parametrize("fake", ["scrum"], indirect=True)
def test_types_the_project_lacks_fail_clearly(fake, client):
    b, ids = backlog()
    results, tally = write(client, b, {ids["conflict"]: "skip"})  # planned for Agile
    assert results[ids["epic"]].status == "created"  # a Scrum project has epics and features
    failed = results[ids["s1"]]
    assert failed.status == "failed"
    assert "VS402323: Work item type User Story does not exist" in failed.error
    assert "AZURE_DEVOPS_PROCESS" in failed.error
    assert tally["failed"] == 3 and fake.count("create", status=404) == 3


def test_a_plan_checked_against_ado_shows_what_exists(fake, client):
    b, ids = backlog()
    plan = build_plan(b.run_id, b.items, b.records)
    assert preview(plan, client) is None
    assert {p.status for p in plan.items if p.action in ("create", "patch")} == {"pending"}
    assert by_item(plan)[ids["extend"]].criteria == [
        "Saying 'louder' raises the volume by one step"
    ]  # the other one is already on #1126
    write(client, b)
    plan = build_plan(b.run_id, b.items, b.records)
    preview(plan, client)
    assert plan.counts()["existing"] == plan.counts()["create"] + plan.counts()["patch"]
    assert fake.count("create") == 6 and fake.count("update") == 1  # preview writes nothing


def by_item(plan):
    return {p.item_id: p for p in plan.items}


def test_model_text_arrives_escaped(fake, client):
    b = Backlog()
    f = b.feature("F <i>one</i>", b.epic("E"))
    s = b.story(
        "<script>alert('x')</script> remote",
        f,
        description="Click <img src=x onerror=alert(1)> now",
        criteria=["<b>bold</b> & done"],
    )
    patch = b.story(
        "Voice <script>", f, tag="gap", related=[1126], deltas=["<script>steal()</script>"]
    )
    results, _ = write(client, b)
    stored = fake.item(results[s].ado_id)["fields"]
    assert stored[ops.TITLE] == "&lt;script&gt;alert('x')&lt;/script&gt; remote"
    assert "<img" not in stored[ops.DESCRIPTION] and "&lt;img src=x" in stored[ops.DESCRIPTION]
    assert stored[ops.ACCEPTANCE_CRITERIA] == "<ul><li>&lt;b&gt;bold&lt;/b&gt; &amp; done</li></ul>"
    assert fake.item(results[f].ado_id)["fields"][ops.TITLE] == "F &lt;i&gt;one&lt;/i&gt;"
    assert results[patch].status == "modified"
    for field in (ops.DESCRIPTION, ops.ACCEPTANCE_CRITERIA):
        assert "<script>" not in fake.item(1126)["fields"][field]
    assert "&lt;script&gt;steal()" in fake.item(1126)["fields"][ops.ACCEPTANCE_CRITERIA]
    for item in fake.items.values():
        assert all(";" not in t for t in ops.tags_of(item))


def test_a_429_storm_is_survived(fake, client, slept):
    b, ids = backlog()
    fake.throttle_next(times=4, retry_after=2)
    fake.throttle_next(times=3, retry_after=1, route="create")
    _, tally = write(client, b, {ids["conflict"]: "skip"})
    assert tally["failed"] == 0 and tally["created"] == 6 and tally["modified"] == 1
    assert slept.count(2) >= 4 and slept.count(1) >= 3  # what Retry-After said, each time
    assert fake.count(status=429) == 7
    assert len(with_tag(fake, "backlog-synth")) == 7


def test_a_400_on_one_item_is_recorded_and_the_rest_is_written_then_finished(fake, client):
    b, ids = backlog()
    fake.reject_writes(title="Voice commands", message="TF401320: Rule Error for field Area Path.")
    results, tally = write(client, b, {ids["conflict"]: "keep_existing"})
    assert results[ids["f1"]].status == "failed" and "TF401320" in results[ids["f1"]].error
    for key in ("s1", "s2"):
        assert results[ids[key]].status == "failed"
        assert f"parent {ids['f1']} was not written" in results[ids[key]].error
    assert results[ids["s3"]].status == "created" and results[ids["extend"]].status == "modified"
    assert results[ids["conflict"]].status == "skipped"
    assert tally["failed"] == 3

    fake.clear_faults()
    again, tally = write(client, b, {ids["conflict"]: "keep_existing"}, write_id="w-2")
    assert tally == {
        "created": 3,
        "modified": 0,
        "existing": 4,
        "skipped": 1,
        "blocked": 0,
        "failed": 0,
    }
    assert parent_of(fake, again[ids["s1"]].ado_id) == again[ids["f1"]].ado_id
    for entry in build_plan(b.run_id, b.items, b.records).items:
        assert len(with_tag(fake, render.signature_tag(entry.signature))) <= 1


def test_a_write_that_died_halfway_is_finished_by_running_it_again(fake, client):
    b, ids = backlog()
    real = client.create_work_item
    calls = []

    def dying(*args, **kwargs):
        if len(calls) == 3:
            raise SystemExit("the worker was killed")
        calls.append(args)
        return real(*args, **kwargs)

    client.create_work_item = dying
    with pytest.raises(SystemExit):
        write(client, b, {ids["conflict"]: "both"})
    assert fake.count("create") == 3
    client.create_work_item = real
    results, tally = write(client, b, {ids["conflict"]: "both"}, write_id="w-2")
    assert tally["existing"] == 3 and tally["created"] == 4 and tally["failed"] == 0
    assert len(with_tag(fake, "backlog-synth")) == 8  # 7 created + the patched #1126
    assert parent_of(fake, results[ids["s2"]].ado_id) == results[ids["f1"]].ado_id


def test_a_lost_answer_is_retried_without_a_duplicate(fake, client, slept):
    b = Backlog()
    f = b.feature("Lonely feature", parent_work_item_id=1001)
    s = b.story("Only story", f)
    fake.fail_next(500, route="create", applied=True)  # created, but the answer is a 500
    fake.fail_next(502, route="create")  # the next create is refused before it happens
    results, tally = write(client, b, slept=slept)
    assert tally["created"] == 2 and tally["failed"] == 0
    assert slept == [1.0, 1.0]  # one backoff each, then a look at the signature
    assert len(with_tag(fake, render.signature_tag(results[f].signature))) == 1
    assert len(with_tag(fake, render.signature_tag(results[s].signature))) == 1
    assert parent_of(fake, results[s].ado_id) == results[f].ado_id


def test_a_patch_is_idempotent_and_survives_a_concurrent_edit(fake, client):
    b = Backlog()
    s = b.story("Beep twice", None, tag="gap", related=[1124], deltas=["It beeps twice"])
    real = client.get_work_item
    edited = []

    def racing(work_item_id):
        item = real(work_item_id)
        if not edited:  # someone edits #1124 between our read and our patch
            edited.append(fake.edit_item(1124, {"System.State": "Active"}))
        return item

    client.get_work_item = racing
    results, _ = write(client, b)
    assert results[s].status == "modified" and fake.count("update", status=412) == 1
    fields = fake.item(1124)["fields"]
    assert fields["System.State"] == "Active"  # the other edit is kept
    assert fields[ops.ACCEPTANCE_CRITERIA].count("It beeps twice") == 1
    client.get_work_item = real
    results, tally = write(client, b, write_id="w-2")
    assert results[s].status == "existing" and tally["modified"] == 0
    assert fake.item(1124)["fields"][ops.ACCEPTANCE_CRITERIA].count("It beeps twice") == 1


def test_conflict_decisions(fake, client):
    b = Backlog()
    f = b.feature("Channels", parent_work_item_id=1010)
    blocked = b.story("Zap with one button", f, tag="conflict", related=[1101])
    kept = b.story("No favourites", f, tag="conflict", related=[1103])
    replaced = b.story(
        "Jump <fast> to a channel", f, tag="conflict", related=[1102], criteria=["Two digits"]
    )
    before = {i: fake.item(i) for i in (1101, 1103)}
    results, tally = write(client, b, {kept: "keep_existing", replaced: "replace"})
    assert results[blocked].status == "blocked" and results[kept].status == "skipped"
    assert results[f].status == "skipped"  # nothing is created under it
    assert {i: fake.item(i) for i in (1101, 1103)} == before  # never touched
    fields = fake.item(1102)["fields"]
    assert fields[ops.TITLE] == "Jump &lt;fast&gt; to a channel"
    assert fields[ops.ACCEPTANCE_CRITERIA] == "<ul><li>Two digits</li></ul>"
    assert tally["created"] == 0 and tally["modified"] == 1


def test_an_auth_failure_ends_the_write_with_every_item_recorded(fake):
    b, ids = backlog()
    with FakeAdo(pat="another-pat-0123456789") as other:
        bad = other.client(sleep=lambda s: None)
        bad.org_url = fake.org_url  # right server, wrong PAT
        results, tally = write(bad, b, {ids["conflict"]: "skip"})
    assert tally["failed"] == 7 and tally["skipped"] == 1
    first = results[ids["epic"]]
    assert "personal access token" in first.error
    assert all(
        r.error.startswith("not attempted")
        for k, r in results.items()
        if k != ids["epic"] and r.status == "failed"
    )
    assert fake.count("create") == 0
