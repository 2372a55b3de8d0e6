"""The HTTP API functions over a local store: validation, 400/404/409/413/422, live status."""

from __future__ import annotations

import pytest

from shared import api, layout
from shared.storage.local import LocalFolderStore
from tests.support.pipeline import make_pipeline
from tests.support.transcripts import SMALL


@pytest.fixture
def pipe(tmp_path):
    return make_pipeline(LocalFolderStore(tmp_path))


def test_upload_then_status_then_backlog(pipe):
    svc, bus = pipe
    created = api.create_run(svc, "demo", "m.txt", SMALL.encode())
    assert created.status == 202
    run_id = created.json()["run_id"]
    assert created.json()["status_url"] == f"/api/runs/{run_id}"
    assert svc.store.exists("transcripts/demo/m.txt")  # same path as a blob drop

    waiting = api.get_backlog(svc, run_id)
    assert waiting.status == 409 and waiting.json()["status"] == "queued"
    bus.drain()

    status = api.get_run(svc, run_id).json()
    assert status["status"] == "completed"
    assert status["completed_segments"] == status["segment_count"] == 3
    assert status["tagged_stories"] == status["story_count"] == 5
    assert status["errors"] == []
    names = [a["name"] for a in api.list_artifacts(svc, run_id).json()["artifacts"]]
    assert names[: len(layout.FINAL_ARTIFACTS)] == list(layout.FINAL_ARTIFACTS)
    art = api.get_artifact(svc, run_id, "summary.json")
    assert (
        art.status == 200
        and art.content_type == "application/json"
        and art.json()["story_count"] == 5
    )
    tree = api.get_backlog(svc, run_id).json()
    stories = [s for e in tree["epics"] for f in e["features"] for s in f["stories"]]
    assert len(stories) == 5 and all(s["tag"]["decision_tag"] for s in stories)
    listed = api.list_runs(svc).json()["runs"]
    assert [r["run_id"] for r in listed] == [run_id]
    assert api.list_runs(svc, project="other").json()["runs"] == []


@pytest.mark.parametrize(
    "run_id", ["../../etc", "run-..", "run-0123456789abcdef012Z", "runs", "%2e%2e"]
)
def test_malformed_run_ids_are_400(pipe, run_id):
    svc, _ = pipe
    for call in (api.get_run, api.list_artifacts, api.get_backlog):
        response = call(svc, run_id)
        assert response.status == 400 and "invalid run_id" in response.json()["error"]


def test_unknown_run_is_404_and_bad_artifact_name_400(pipe):
    svc, bus = pipe
    assert api.get_run(svc, "run-0123456789abcdef0123").status == 404
    run_id = api.create_run(svc, "demo", "m.txt", SMALL.encode()).json()["run_id"]
    bus.drain()
    assert api.get_artifact(svc, run_id, "../run.json").status == 400
    assert api.get_artifact(svc, run_id, "parts/tags").status == 400
    assert api.get_artifact(svc, run_id, "nothing_here.json").status == 404


def test_upload_validation(pipe):
    svc, _ = pipe
    assert api.create_run(svc, "../x", "m.txt", b"a").status == 400
    assert api.create_run(svc, "demo", "../m.txt", b"a").status == 400
    assert api.create_run(svc, None, "m.txt", b"a").status == 400
    svc.settings.pipeline.limits.max_upload_bytes = 10
    too_big = api.create_run(svc, "demo", "m.txt", b"x" * 11)
    assert too_big.status == 413 and not svc.store.exists("transcripts/demo/m.txt")


def test_unreadable_upload_is_422_with_the_reason(pipe):
    svc, _ = pipe
    response = api.create_run(svc, "demo", "empty.txt", b"   \n")
    assert response.status == 422
    body = response.json()
    assert body["status"] == "failed" and "no text" in body["failure_reason"]
    assert body["errors"][0]["phase"] == "start"
    assert api.get_run(svc, body["run_id"]).json()["status"] == "failed"
