"""End to end through the local Functions host running the real function_app.py on Azurite, with the
offline engine and the packaged MiniLM embedder: upload by blob drop and by HTTP → completed."""

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
from shared import layout
from shared.ids import content_sha256, make_run_id
from shared.models import GeneratedItem, Segment
from shared.services import app_services
from shared.settings import get_settings
from shared.storage import read_jsonl
from tests.support.pipeline import REPO, SAMPLES

KEY = "e2e-key"
PROJECT = "remote-control"


def call(
    method: str, url: str, body: bytes | None = None, headers: dict | None = None
) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=body, method=method, headers={"x-functions-key": KEY, **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as err:
        raw, status = err.read(), err.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def wait_for(host: LocalHost, run_id: str, timeout: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, body = call("GET", f"{host.url}/api/runs/{run_id}")
        if status == 200 and body["status"] in ("completed", "completed_with_errors", "failed"):
            return body
        time.sleep(0.3)
    raise TimeoutError(run_id)


@pytest.fixture(scope="module")
def host(azurite, tmp_path_factory) -> Iterator[LocalHost]:
    mp = pytest.MonkeyPatch()
    mp.setenv("AzureWebJobsStorage", azurite.connection_string)
    mp.setenv("SYNTH_STORAGE_BACKEND", "azure")
    mp.chdir(tmp_path_factory.mktemp("cwd"))  # no local.settings.json leaks in
    get_settings.cache_clear()
    app_services.cache_clear()
    from devhost.demo import load_index

    load_index(PROJECT)
    with LocalHost("function_app", port=0, function_key=KEY, root=REPO) as running:
        yield running
    app_services.cache_clear()
    get_settings.cache_clear()
    mp.undo()


def test_health_is_anonymous_and_the_api_needs_the_key(host):
    status, body = call("GET", f"{host.url}/api/health", headers={"x-functions-key": ""})
    assert status == 200 and body["engine"] == "offline" and body["storage"] == "azure"
    request = urllib.request.Request(f"{host.url}/api/runs")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 401


def test_blob_drop_runs_to_completion(host, azurite):
    data = (SAMPLES / "transcripts" / "remote_control_planning_notes.md").read_bytes()
    blobs = BlobServiceClient.from_connection_string(azurite.connection_string)
    container = blobs.get_container_client("transcripts")
    if not container.exists():
        container.create_container()
    container.upload_blob(f"{PROJECT}/notes.md", data, overwrite=True)
    run_id = make_run_id(f"transcripts/{PROJECT}/notes.md", f"{content_sha256(data)}:{len(data)}")

    run = wait_for(host, run_id)
    assert run["status"] == "completed", run
    assert run["engine"] == "offline" and run["story_count"] > 0
    assert (
        run["completed_segments"] == run["segment_count"]
        and run["tagged_stories"] == run["story_count"]
    )

    svc = app_services()
    transcript = svc.store.get(layout.run_file(run_id, "transcript.txt")).decode()
    segments = read_jsonl(svc.store, layout.run_file(run_id, "segments.jsonl"), Segment)
    assert "".join(s.raw_text for s in segments) == transcript
    items = read_jsonl(svc.store, layout.run_file(run_id, "generated_backlog.jsonl"), GeneratedItem)
    for story in (i for i in items if i.type == "User Story"):
        assert story.assigned_tag is not None
        for quote in story.source_quotes:
            assert transcript[quote.start : quote.end] == quote.text

    # the same blob again (same content) is the same run: nothing new is created
    before = sorted(svc.store.list(layout.run_prefix(run_id)))
    container.upload_blob(f"{PROJECT}/notes.md", data, overwrite=True)
    host.wait_idle(timeout=60)
    assert sorted(svc.store.list(layout.run_prefix(run_id))) == before
    status, listed = call("GET", f"{host.url}/api/runs?project={PROJECT}")
    assert [r["run_id"] for r in listed["runs"]].count(run_id) == 1


def test_http_upload_runs_to_completion_and_serves_the_backlog(host):
    text = (
        b"Product Owner: The remote must have no more than eight buttons.\n"
        b"Engineer: The battery must last at least twelve months on two AA batteries.\n"
        b"Designer: We should offer a lost-remote beeper that is triggered from the TV.\n"
    )
    status, body = call(
        "POST",
        f"{host.url}/api/runs?project={PROJECT}&name=short.txt",
        body=text,
        headers={"Content-Type": "text/plain"},
    )
    assert status == 202, body
    run = wait_for(host, body["run_id"])
    assert run["status"] == "completed"
    status, tree = call("GET", f"{host.url}/api/runs/{run['run_id']}/backlog")
    assert status == 200
    titles = (
        [
            s["item"]["title"]
            for group in tree["epics"]
            for f in group["features"]
            for s in f["stories"]
        ]
        + [s["item"]["title"] for p in tree["existing_parents"] for s in p["stories"]]
        + [n["item"]["title"] for n in tree["unparented"]]
    )
    assert len(titles) >= 2
    status, names = call("GET", f"{host.url}/api/runs/{run['run_id']}/artifacts")
    assert {"run.json", "segments.jsonl", "summary.json"} <= {a["name"] for a in names["artifacts"]}
    status, raw = call("GET", f"{host.url}/api/runs/{run['run_id']}/artifacts/..%2Frun.json")
    assert status in (400, 404)
    status, _ = call("GET", f"{host.url}/api/runs/not-a-run")
    assert status == 400
