"""Recurring meetings never duplicate, end to end: the real function_app.py in the local Functions
host on Azurite, Azure DevOps played by the fake ADO server over HTTP, the offline engine with
MiniLM.

The project is loaded into the index once, from the fake ADO over REST. Monday's meeting goes in by
a blob drop and is written through ``POST /api/runs/{id}/write``; nobody loads again. Thursday's
meeting (by HTTP upload) restates two of Monday's needs in other words ("a secret code", "the
buttons light up softly") and adds a spoken channel name (tests/data/recurring_meeting_*.txt):
those two are tagged against the items Monday's write created, and Thursday's write creates
nothing for them.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from azure.storage.blob import BlobServiceClient

from devhost.host import LocalHost
from devhost.standins.fake_ado import FakeAdo
from shared.ids import content_sha256, make_run_id
from shared.indexing.backlog import load_backlog
from shared.services import app_services
from shared.settings import get_settings
from tests.support.pipeline import REPO

KEY = "keeps-up-key"
PROJECT = "rc"
MONDAY = REPO / "tests" / "data" / "recurring_meeting_monday.txt"
THURSDAY = REPO / "tests" / "data" / "recurring_meeting_thursday.txt"
# Thursday's restatements, by a word of their quotes, and the Monday stories they restate
RESTATED = {"secret code": "four-digit PIN", "gentle backlight": "soft backlight"}


def call(method: str, url: str, body: bytes | None = None) -> tuple[int, Any]:
    request = urllib.request.Request(
        url,
        data=body,
        method=method,
        headers={"x-functions-key": KEY, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            raw, status = response.read(), response.status
    except urllib.error.HTTPError as err:
        raw, status = err.read(), err.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


@pytest.fixture
def keeps_up(azurite_clean: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Empty Azurite, the sample project in a fresh fake ADO and loaded into the index from it,
    and the local host running function_app.py with that ADO configured."""
    mp = pytest.MonkeyPatch()
    mp.setenv("AzureWebJobsStorage", azurite_clean.connection_string)
    mp.setenv("SYNTH_STORAGE_BACKEND", "azure")
    mp.setenv("SYNTH_ENGINE", "offline")
    mp.setenv("SYNTH_EMBEDDER", "minilm")
    mp.chdir(tmp_path_factory.mktemp("cwd"))  # no local.settings.json leaks in
    with FakeAdo() as fake:
        fake.seed_sample()
        for name, value in fake.env().items():
            mp.setenv(name, value)
        get_settings.cache_clear()
        app_services.cache_clear()
        try:
            with fake.client(sleep=lambda s: None) as client:
                load_backlog(app_services(), PROJECT, client=client, show_progress=False)
            with LocalHost("function_app", port=0, function_key=KEY, root=REPO) as host:
                yield host, fake, azurite_clean
        finally:
            app_services.cache_clear()
            get_settings.cache_clear()
            mp.undo()


def wait_for(host: LocalHost, run_id: str, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, body = call("GET", f"{host.url}/api/runs/{run_id}")
        if status == 200 and body["status"] in ("completed", "completed_with_errors", "failed"):
            return body
        time.sleep(0.3)
    raise TimeoutError(f"run {run_id} did not finish in {timeout} s")


def jsonl(host: LocalHost, run_id: str, name: str) -> list[dict[str, Any]]:
    status, raw = call("GET", f"{host.url}/api/runs/{run_id}/artifacts/{name}")
    assert status == 200, (name, raw)
    text = raw.decode() if isinstance(raw, bytes) else json.dumps(raw)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def stories(host: LocalHost, run_id: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """The run's stories with their tagging records, by the text of their first quote."""
    records = {r["story_id"]: r for r in jsonl(host, run_id, "tagging_analysis.jsonl")}
    return {
        i["source_quotes"][0]["text"]: (i, records[i["item_id"]])
        for i in jsonl(host, run_id, "generated_backlog.jsonl")
        if i["type"] == "User Story"
    }


def story_with(found: dict[str, tuple[dict[str, Any], dict[str, Any]]], words: str) -> Any:
    return next(pair for quote, pair in found.items() if words in quote)


def write(host: LocalHost, run_id: str) -> dict[str, Any]:
    """The reviewer accepts what the tagging is unsure of, and writes."""
    decisions = {
        r["story_id"]: "accept" for _, r in stories(host, run_id).values() if r["needs_review"]
    }
    body = json.dumps({"dry_run": False, "decisions": decisions}).encode()
    status, written = call("POST", f"{host.url}/api/runs/{run_id}/write", body)
    assert status == 200, written
    assert written["counts"]["failed"] == 0, written
    return written


def test_a_written_meeting_is_indexed_and_the_next_one_creates_nothing_for_it(
    keeps_up: Any,
) -> None:
    host, fake, azurite = keeps_up
    loaded = len(fake.items)

    # Monday: a blob drop, then a write through the API
    blobs = BlobServiceClient.from_connection_string(azurite.connection_string)
    container = blobs.get_container_client("transcripts")
    if not container.exists():
        container.create_container()
    data = MONDAY.read_bytes()
    container.upload_blob(f"{PROJECT}/{MONDAY.name}", data)
    monday = make_run_id(
        f"transcripts/{PROJECT}/{MONDAY.name}", f"{content_sha256(data)}:{len(data)}"
    )
    assert wait_for(host, monday)["status"] == "completed"
    monday_stories = stories(host, monday)
    assert len(monday_stories) == 3
    assert {r["decision_tag"] for _, r in monday_stories.values()} == {"new"}

    written = write(host, monday)
    created = {r["item_id"]: r["ado_id"] for r in written["results"] if r["status"] == "created"}
    assert {i["item_id"] for i, _ in monday_stories.values()} <= set(created)
    assert len(fake.items) == loaded + len(created)
    # the write put every item it created into the index: no load in between
    assert written["index_update"]["status"] == "updated", written["index_update"]
    assert set(created.values()) <= set(written["index_update"]["indexed_ids"])
    vectors = app_services().index.fetch(PROJECT, [f"ado-{i}" for i in created.values()])
    assert set(vectors) == {f"ado-{i}" for i in created.values()}
    status, view = call("GET", f"{host.url}/api/projects/{PROJECT}")
    assert status == 200
    assert view["index"]["ado_items"] == 51 + len(created)
    row = next(r for r in view["runs"] if r["run_id"] == monday)
    assert sorted(row["write"]["created_ids"]) == sorted(created.values())

    # Thursday: restates two of Monday's needs in other words, adds one
    status, started = call(
        "POST",
        f"{host.url}/api/runs?project={PROJECT}&name={THURSDAY.name}",
        THURSDAY.read_bytes(),
    )
    assert status == 202, started
    thursday = started["run_id"]
    assert wait_for(host, thursday)["status"] == "completed"
    found = stories(host, thursday)
    for words, monday_words in RESTATED.items():
        _, record = story_with(found, words)
        target = created[story_with(monday_stories, monday_words)[0]["item_id"]]
        assert record["decision_tag"] != "new", (words, record["decision_tag"])
        assert record["related_story_ids"][0] == target, words
    spoken, spoken_record = story_with(found, "aloud")
    assert spoken_record["decision_tag"] == "new"

    before = len(fake.items)
    second = write(host, thursday)
    results = {r["item_id"]: r for r in second["results"]}
    for words in RESTATED:
        item, _ = story_with(found, words)
        assert results[item["item_id"]]["status"] != "created", words
        assert results[item["item_id"]]["created_ids"] == []
    new_stories = [
        r for r in second["results"] if r["type"] == "User Story" and r["status"] == "created"
    ]
    assert [r["item_id"] for r in new_stories] == [spoken["item_id"]]
    assert len(fake.items) == before + len(second["created_ids"])

    # a write delivered twice creates nothing more
    again = write(host, thursday)
    assert again["created_ids"] == [] and len(fake.items) == before + len(second["created_ids"])
