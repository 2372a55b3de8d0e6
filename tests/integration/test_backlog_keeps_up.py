"""Recurring meetings never duplicate: the index follows every write, and the stories reviewed but
not yet written count too (the offline engine with MiniLM, the fake ADO server over HTTP, the
local folder store; no load after the first).

Monday's meeting asks for a PIN lock, a key backlight and a streaming-apps button; Thursday's
restates the first two in other words ("a secret code", "the buttons light up softly") and adds
a spoken channel name (tests/data/recurring_meeting_*.txt).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devhost.standins.fake_ado import FakeAdo
from shared import api, layout
from shared.embeddings.minilm import MiniLMEmbedder
from shared.engine.offline import build_offline_agents
from shared.indexing import pending
from shared.indexing.backlog import load_backlog as load_from_ado
from shared.indexing.project import project_view
from shared.models import GeneratedItem, TaggingRecord
from shared.settings import Settings
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from shared.writer.rollback import rollback_run
from shared.writer.runs import write_run
from tests.support.pipeline import REPO, make_pipeline, run_file

PROJECT = "rc"
MONDAY = REPO / "tests" / "data" / "recurring_meeting_monday.txt"
THURSDAY = REPO / "tests" / "data" / "recurring_meeting_thursday.txt"
# Thursday's restatements, by a word of their quotes, and the Monday stories they restate
RESTATED = {"secret code": "four-digit PIN", "gentle backlight": "soft backlight"}


@pytest.fixture(scope="module")
def engine() -> tuple[Settings, MiniLMEmbedder, Any]:
    settings = Settings(storage_backend="local", engine="offline", embedder="minilm")
    embedder = MiniLMEmbedder()
    return settings, embedder, build_offline_agents(embedder, settings.pipeline)


@pytest.fixture
def project(tmp_path: Path, engine: Any) -> Iterator[dict[str, Any]]:
    """The sample project in the fake ADO, loaded once into the index over REST."""
    settings, embedder, agents = engine
    svc, bus = make_pipeline(
        LocalFolderStore(tmp_path), agents=agents, embedder=embedder, settings=settings
    )
    with FakeAdo() as fake:
        fake.seed_sample()
        with fake.client(sleep=lambda s: None) as client:
            load_from_ado(svc, PROJECT, client=client, show_progress=False)
            yield {"svc": svc, "bus": bus, "fake": fake, "client": client}


def run(project: dict[str, Any], path: Any) -> str:
    done = run_file(project["svc"], project["bus"], PROJECT, path.name, path.read_bytes())
    assert done.status == "completed"
    return done.run_id


def stories(svc: Any, run_id: str) -> dict[str, tuple[GeneratedItem, TaggingRecord]]:
    """The run's stories by the first words of their first quote."""
    items = read_jsonl(svc.store, layout.run_file(run_id, "generated_backlog.jsonl"), GeneratedItem)
    records = {
        r.story_id: r
        for r in read_jsonl(
            svc.store, layout.run_file(run_id, "tagging_analysis.jsonl"), TaggingRecord
        )
    }
    return {
        i.source_quotes[0].text: (i, records[i.item_id]) for i in items if i.type == "User Story"
    }


def story_with(found: dict[str, tuple[GeneratedItem, TaggingRecord]], words: str) -> Any:
    return next(pair for quote, pair in found.items() if words in quote)


def accept_unsure(svc: Any, run_id: str) -> dict[str, str]:
    """What a reviewer does with the stories the tagging is unsure of: accepts them."""
    return {r.story_id: "accept" for _, r in stories(svc, run_id).values() if r.needs_review}


def test_a_written_run_is_in_the_index_and_the_next_meeting_creates_nothing_for_it(
    project: dict[str, Any],
) -> None:
    svc, fake, client = project["svc"], project["fake"], project["client"]
    monday = run(project, MONDAY)
    assert {r.decision_tag for _, r in stories(svc, monday).values()} == {"new"}

    written = write_run(svc, monday, client, decisions=accept_unsure(svc, monday))
    assert written["counts"]["failed"] == 0
    created = {r["item_id"]: r["ado_id"] for r in written["results"] if r["status"] == "created"}
    monday_stories = stories(svc, monday)
    story_ids = {i.item_id: created[i.item_id] for i, _ in monday_stories.values()}
    assert len(story_ids) == 3
    # every item the write created or touched is in the index now, with no load in between ...
    update = written["index_update"]
    assert update["status"] == "updated" and update["error"] is None
    assert set(created.values()) <= set(update["indexed_ids"])
    assert all(r["indexed"] for r in written["results"] if r["status"] == "created")
    vectors = svc.index.fetch(PROJECT, [f"ado-{i}" for i in story_ids.values()])
    assert len(vectors) == 3
    # ... exactly as the loader puts it there: a fresh load into another namespace agrees
    load_from_ado(svc, "check", client=client, show_progress=False)
    loaded = svc.index.fetch("check", [f"ado-{i}" for i in created.values()])
    ours = svc.index.fetch(PROJECT, [f"ado-{i}" for i in created.values()])
    for vid, rec in loaded.items():
        assert {**ours[vid].metadata, "project": "check"} == rec.metadata, vid
        assert ours[vid].values == pytest.approx(rec.values, abs=1e-5)
    lines = svc.store.get(layout.ado_vectors(PROJECT)).decode().splitlines()
    assert set(created.values()) <= {json.loads(line)["work_item_id"] for line in lines}
    # the write's parents gained a revision: the index has their new one too
    epic = next(r for r in written["results"] if r["type"] == "Epic" and r["status"] == "created")
    assert ours[f"ado-{epic['ado_id']}"].metadata["rev"] == fake.item(epic["ado_id"])["rev"]

    # the project view shows what Monday wrote and what the index holds now
    view = api.get_project(svc, PROJECT).json()
    monday_row = next(r for r in view["runs"] if r["run_id"] == monday)
    assert sorted(monday_row["write"]["created_ids"]) == sorted(created.values())
    assert monday_row["write"]["indexed"] == len(created) and monday_row["pending"] == 0
    assert view["index"]["ado_items"] == 51 + len(created) and view["pending"] == []
    assert api.get_project(svc, "../rc").status == 400

    thursday = run(project, THURSDAY)
    found = stories(svc, thursday)
    for words, monday_words in RESTATED.items():
        item, record = story_with(found, words)
        target = story_ids[story_with(monday_stories, monday_words)[0].item_id]
        assert record.decision_tag != "new", (words, record.decision_tag)
        assert record.related_story_ids[0] == target, words
        assert record.pending_refs == []  # Monday is written: nothing of it is pending
    total = len(fake.items)
    second = write_run(svc, thursday, client, decisions=accept_unsure(svc, thursday))
    assert second["counts"]["failed"] == 0
    results = {r["item_id"]: r for r in second["results"]}
    for words in RESTATED:
        item, _ = story_with(found, words)
        assert results[item.item_id]["status"] != "created", words
        assert results[item.item_id]["created_ids"] == []
    spoken, _ = story_with(found, "aloud")
    assert results[spoken.item_id]["status"] == "created"
    new_stories = [
        r for r in second["results"] if r["type"] == "User Story" and r["status"] == "created"
    ]
    assert [r["item_id"] for r in new_stories] == [spoken.item_id]
    assert len(fake.items) == total + len(second["created_ids"])


def test_stories_reviewed_but_not_written_count_for_the_next_meeting(
    project: dict[str, Any],
) -> None:
    svc, client = project["svc"], project["client"]
    monday = run(project, MONDAY)
    assert pending.project_pending(svc, PROJECT) == []  # not reviewed yet: nothing pending
    saved = api.put_review_state(svc, monday, b'{"decisions": {}}', None, "ana")
    assert saved.status == 200
    monday_stories = stories(svc, monday)
    listed = pending.project_pending(svc, PROJECT)
    assert {(p["run_id"], p["story_id"]) for p in listed} == {
        (monday, i.item_id) for i, _ in monday_stories.values()
    }

    thursday = run(project, THURSDAY)
    found = stories(svc, thursday)
    refs = {}
    for words, monday_words in RESTATED.items():
        item, record = story_with(found, words)
        monday_item = story_with(monday_stories, monday_words)[0]
        assert record.decision_tag != "new", (words, record.decision_tag)
        candidate = record.related_story_ids[0]
        assert candidate < 0  # a pending story, not an ADO item
        ref = next(r for r in record.pending_refs if r.candidate_id == candidate)
        assert (ref.run_id, ref.story_id) == (monday, monday_item.item_id)
        refs[item.item_id] = (record.decision_tag, ref, record.needs_review)
    spoken, spoken_record = story_with(found, "aloud")
    assert spoken_record.decision_tag == "new"

    # the review page names Monday's run beside each of them
    bundle = api.get_review(svc, thursday).json()
    for story_id, (_, ref, _) in refs.items():
        also = bundle["stories"][story_id]["also_in"]
        assert also == [
            {
                "run_id": monday,
                "story_id": ref.story_id,
                "title": ref.title,
                "source_name": MONDAY.name,
            }
        ]
        shown = bundle["existing"][str(ref.candidate_id)]
        assert shown["pending"]["run_id"] == monday and shown["found"] is True
    # the project view lists Monday's pending stories
    view = project_view(svc, PROJECT)
    assert {r["run_id"]: r["pending"] for r in view["runs"]}[monday] == 3
    assert view["index"]["pending_stories"] == 3 and view["index"]["ado_items"] == 51

    # Thursday written first: nothing in ADO to act on. Undecided, a duplicate of Monday's is
    # skipped and anything else (or an unsure tag) waits for a decision; accepted, a duplicate is
    # still skipped and the rest is created as a story of its own, saying why
    plan = {p["item_id"]: p for p in write_run(svc, thursday, client, dry_run=True)["plan"]}
    accepted = write_run(
        svc, thursday, client, dry_run=True, decisions={s: "accept" for s in refs}
    )["plan"]
    for story_id, (tag, _, unsure) in refs.items():
        entry = plan[story_id]
        assert entry["pending"]["run_id"] == monday and entry["existing_id"] is None
        assert monday in entry["reason"]
        waits = unsure or tag != "duplicate"
        assert entry["action"] == ("blocked" if waits else "skip"), entry
        assert entry["needs_decision"] == waits
        chosen = next(p for p in accepted if p["item_id"] == story_id)
        assert chosen["action"] == ("skip" if tag == "duplicate" else "create"), chosen
        assert "not yet written" in chosen["reason"] and monday in chosen["reason"]
    refused = api.write_run(
        svc,
        thursday,
        json.dumps({"dry_run": True, "decisions": {s: "both" for s in refs}}).encode(),
        ado_client=client,
    )
    assert refused.status == 400 and "not yet written" in refused.json()["problems"][0]

    # Monday is written: its stories leave the pending list and its items are indexed
    write_run(svc, monday, client, decisions=accept_unsure(svc, monday))
    assert pending.project_pending(svc, PROJECT) == []
    created = {
        r["item_id"]: r["ado_id"]
        for r in json.loads(
            "["
            + ",".join(svc.store.get(layout.ado_write_results(monday)).decode().splitlines())
            + "]"
        )
        if r["status"] == "created"
    }
    # Thursday's plan now acts on what Monday created
    plan = write_run(svc, thursday, client, decisions=accept_unsure(svc, thursday), dry_run=True)
    entries = {p["item_id"]: p for p in plan["plan"]}
    for story_id, (_, ref, _) in refs.items():
        entry = entries[story_id]
        assert entry["pending"] is None and entry["existing_id"] == created[ref.story_id]
        assert entry["action"] in ("skip", "patch"), entry

    # undoing Monday's write makes its stories pending again, and its items leave the index
    undone = rollback_run(svc, monday, client)
    assert undone["index_update"]["status"] == "updated"
    assert {r["index"] for r in undone["results"] if r["status"] == "deleted"} == {"removed"}
    assert not svc.index.fetch(PROJECT, [f"ado-{i}" for i in created.values()])
    assert len(pending.project_pending(svc, PROJECT)) == 3
    row = next(r for r in project_view(svc, PROJECT)["runs"] if r["run_id"] == monday)
    assert row["write"]["writes"] == 1 and row["write"]["created_ids"] == [] and row["pending"] == 3


def test_with_completed_every_completed_run_counts_before_its_review(
    project: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = project["svc"]
    monkeypatch.setattr(svc.settings, "pending_stories", "completed")
    monday = run(project, MONDAY)  # no review saved: finalize made its stories pending
    assert {p["run_id"] for p in pending.project_pending(svc, PROJECT)} == {monday}
    thursday = run(project, THURSDAY)
    item, record = story_with(stories(svc, thursday), "secret code")
    assert record.related_story_ids[0] < 0 and record.pending_refs[0].run_id == monday


def test_pending_stories_can_be_turned_off(
    project: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = project["svc"]
    monkeypatch.setattr(svc.settings, "pending_stories", "off")
    monday = run(project, MONDAY)
    assert api.put_review_state(svc, monday, b'{"decisions": {}}', None, "ana").status == 200
    assert pending.project_pending(svc, PROJECT) == []
    thursday = run(project, THURSDAY)
    assert all(r.pending_refs == [] for _, r in stories(svc, thursday).values())
