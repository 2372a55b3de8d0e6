"""Running a failed run again (shared/pipeline/runs.py "attempts").

A run the model failed (the OpenAI stand-in answering segmentation with garbage, as a misconfigured
model or a hit quota would) is run again with the current settings, here without a model, through
the CLI and through the HTTP API: the new attempt completes, records ``retry_of`` and ``attempt``,
the old run ``retried_by``, and both stay readable. Retrying is idempotent (a repeated or concurrent
retry starts one attempt), refused for runs that did not fail (409), and the same bytes dropped
again as a new blob version after a failure are a new attempt while a duplicate event of either
version starts nothing (real blob ETags on Azurite, through function_app.py's blob trigger).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import azure.functions as func
import pytest
import yaml

import function_app
from devhost.standins.openai_standin import OpenAIStandIn, Reply, hermetic_env
from shared import api, layout
from shared.bus import SEGMENT_QUEUE
from shared.bus.memory import InProcessBus
from shared.cli import main
from shared.engine.llm import build_llm_agents
from shared.models import RunStatus
from shared.pipeline.runs import load_run, update_run
from shared.services import Services
from shared.settings import Settings
from shared.storage import ArtifactStore, read_model
from shared.storage.azure_blob import AzureBlobStore
from shared.storage.local import LocalFolderStore
from tests.support.fakes import HashEmbedder
from tests.support.pipeline import make_pipeline
from tests.support.transcripts import SMALL

PROJECT = "demo"
NAME = "meeting.txt"
BLOB = f"transcripts/{PROJECT}/{NAME}"


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic_env(monkeypatch)


@pytest.fixture
def llm() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as standin:
        yield standin


def fail_segmentation(llm: OpenAIStandIn, times: int = 1) -> None:
    """The next ``times`` segmentations answer garbage twice (the agent's one retry included), so
    each of those runs is aborted at segmentation."""
    for _ in range(times):
        llm.script(Reply.malformed(), Reply.schema_violation(), match="SegmentationAnswer")


def llm_pipeline(store: ArtifactStore, llm: OpenAIStandIn) -> tuple[Services, InProcessBus]:
    """The settings with a model (the stand-in)."""
    cfg = Settings(
        storage_backend="local",
        engine="llm",
        openai_api_key="x",
        openai_base_url=llm.base_url,
        openai_max_retries=0,
    )
    embedder = HashEmbedder()
    agents = build_llm_agents(cfg, embedder)
    return make_pipeline(store, agents=agents, embedder=embedder, settings=cfg)


def offline_pipeline(store: ArtifactStore) -> tuple[Services, InProcessBus]:
    """The settings after the model was taken out: the offline engine."""
    return make_pipeline(store)


def run_ids(store: ArtifactStore) -> set[str]:
    return {r for r in store.children("runs/") if store.exists(layout.run_json(r))}


def run_json(store: ArtifactStore, run_id: str) -> RunStatus:
    return read_model(store, layout.run_json(run_id), RunStatus)


def failed_run(svc: Services, bus: InProcessBus) -> RunStatus:
    created = api.create_run(svc, PROJECT, NAME, SMALL.encode())
    assert created.status == 202, created.json()
    bus.drain()
    run = load_run(svc, created.json()["run_id"])
    assert run.status == "failed" and run.failure_reason.startswith("segment: "), run
    return run


def user_function(name: str) -> Callable[..., Any]:
    """A function of function_app.py as the host calls it (the decorators keep it inside)."""
    function_app.app.functions_bindings = None  # get_functions() is one-shot otherwise
    for fn in function_app.app.get_functions():
        if fn.get_function_name() == name:
            return fn.get_user_function()
    raise KeyError(name)


# ------------------------------------------------------------------------------------------------
# CLI


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(tmp_path / "store"))
    (tmp_path / NAME).write_text(SMALL)
    return tmp_path


def test_cli_retry_runs_a_model_failed_run_again_without_the_model(
    workdir: Path, llm: OpenAIStandIn, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    fail_segmentation(llm)
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert main(["run", NAME, "--project", PROJECT, "--out", "out", "--json"]) == 1
    first = json.loads(capsys.readouterr().out)
    assert first["status"] == "failed" and "segmentation" in first["failure_reason"]
    old_id = first["run_id"]

    # the model is taken out of the settings; the same file run again is still the old run
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert main(["run", NAME, "--project", PROJECT, "--out", "out", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["run_id"] == old_id

    assert main(["retry", old_id, "--out", "again", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    new_id = printed["run_id"]
    assert new_id != old_id and printed["status"] == "completed"
    assert printed["retry_of"] == old_id and printed["attempt"] == 2
    assert printed["path"] == str(Path("again") / new_id)

    store = LocalFolderStore(workdir / "store")
    old, new = run_json(store, old_id), run_json(store, new_id)
    assert old.status == "failed" and old.retried_by == new_id and old.attempt == 1
    assert old.failure_reason == first["failure_reason"]  # the old run is kept as it ended
    assert (new.retry_of, new.attempt, new.retried_by) == (old_id, 2, None)
    assert (old.engine, new.engine) == ("llm", "offline")  # the current settings
    assert new.source_path == old.source_path and new.content_sha256 == old.content_sha256
    assert new.source_etag == old.source_etag and new.source_etag is not None
    snapshot = yaml.safe_load(store.get(layout.run_file(new_id, "config_snapshot.yaml")))
    assert snapshot["run"] == {
        "run_id": new_id,
        "pipeline_version": snapshot["run"]["pipeline_version"],
        "retry_of": old_id,
        "attempt": 2,
    }
    assert snapshot["runtime"]["engine"] == "offline"
    pulled = json.loads((workdir / "again" / new_id / "run.json").read_text())
    assert pulled["retry_of"] == old_id and pulled["status"] == "completed"

    # both stay readable
    assert main(["status", old_id]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["status"] == "failed" and status["retried_by"] == new_id

    # the same retry again answers the attempt it started: no third run
    assert main(["retry", old_id, "--out", "again", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["run_id"] == new_id
    assert f"already run again as {new_id}" in captured.err
    assert run_ids(store) == {old_id, new_id}

    # a completed run is not run again; an unknown run is an error, a malformed id too
    assert main(["retry", new_id]) == 1
    assert "is completed" in capsys.readouterr().err
    assert main(["retry", "run-0123456789abcdef0123"]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["retry", "../runs"]) == 2
    assert "invalid run_id" in capsys.readouterr().err
    assert run_ids(store) == {old_id, new_id}


# ------------------------------------------------------------------------------------------------
# HTTP


def test_http_retry_starts_one_attempt_that_completes_and_both_stay_readable(
    tmp_path: Path, llm: OpenAIStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalFolderStore(tmp_path)
    fail_segmentation(llm)
    old = failed_run(*llm_pipeline(store, llm))
    svc, bus = offline_pipeline(store)  # the model taken out of the settings

    response = api.retry_run(svc, old.run_id)
    assert response.status == 202, response.json()
    body = response.json()
    new_id = body["run_id"]
    assert body["retry_of"] == old.run_id and body["attempt"] == 2 and body["started"] is True
    assert body["status"] == "queued" and body["status_url"] == f"/api/runs/{new_id}"
    bus.drain()

    new = api.get_run(svc, new_id)
    assert new.status == 200 and new.json()["status"] == "completed"
    assert new.json()["engine"] == "offline" and new.json()["tagged_stories"] == 5
    was = api.get_run(svc, old.run_id)
    assert was.status == 200
    assert was.json()["status"] == "failed" and was.json()["retried_by"] == new_id
    assert was.json()["failure_reason"] == old.failure_reason
    assert api.get_backlog(svc, new_id).status == 200
    assert api.get_backlog(svc, old.run_id).status == 409
    listed = {r["run_id"]: r for r in api.list_runs(svc).json()["runs"]}
    assert listed[new_id]["retry_of"] == old.run_id and listed[new_id]["attempt"] == 2
    assert listed[old.run_id]["retried_by"] == new_id

    # a duplicate POST answers the same attempt (200, not started) through the real route
    monkeypatch.setattr(function_app, "app_services", lambda: svc)
    request = func.HttpRequest(
        method="POST",
        url=f"/api/runs/{old.run_id}/retry",
        route_params={"run_id": old.run_id},
        body=b"",
    )
    again = user_function("retry_post")(request)
    assert again.status_code == 200
    repeated = json.loads(again.get_body())
    assert repeated["run_id"] == new_id and repeated["started"] is False
    assert run_ids(store) == {old.run_id, new_id}


def test_concurrent_retries_of_one_run_start_one_attempt(
    tmp_path: Path, llm: OpenAIStandIn
) -> None:
    store = LocalFolderStore(tmp_path)
    fail_segmentation(llm)
    old = failed_run(*llm_pipeline(store, llm))
    svc, bus = offline_pipeline(store)
    barrier = threading.Barrier(6)
    answers: list[api.ApiResponse] = []
    lock = threading.Lock()

    def retry() -> None:
        barrier.wait()
        response = api.retry_run(svc, old.run_id)
        with lock:
            answers.append(response)

    threads = [threading.Thread(target=retry) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(a.status for a in answers) == [200] * 5 + [202]
    assert len({a.json()["run_id"] for a in answers}) == 1
    new_id = answers[0].json()["run_id"]
    assert run_ids(store) == {old.run_id, new_id}
    # one start message was sent for the attempt: it runs once, to the end
    starts = [body for queue, body in bus.sent if queue == SEGMENT_QUEUE]
    assert [json.loads(b)["run_id"] for b in starts] == [new_id]
    bus.drain()
    assert load_run(svc, new_id).status == "completed"
    assert load_run(svc, old.run_id).retried_by == new_id


def test_an_attempt_that_fails_again_is_retried_into_attempt_3(
    tmp_path: Path, llm: OpenAIStandIn
) -> None:
    store = LocalFolderStore(tmp_path)
    fail_segmentation(llm, times=2)
    llm_svc, llm_bus = llm_pipeline(store, llm)
    first = failed_run(llm_svc, llm_bus)

    # retried with the model still failing: attempt 2 fails too
    response = api.retry_run(llm_svc, first.run_id)
    assert response.status == 202
    llm_bus.drain()
    second = load_run(llm_svc, response.json()["run_id"])
    assert second.status == "failed" and (second.retry_of, second.attempt) == (first.run_id, 2)

    # retrying the first run again answers its attempt (whatever it became), never a new one
    repeated = api.retry_run(llm_svc, first.run_id)
    assert repeated.status == 200 and repeated.json()["run_id"] == second.run_id

    # the newest attempt is retried, without the model: attempt 3 completes
    svc, bus = offline_pipeline(store)
    response = api.retry_run(svc, second.run_id)
    assert response.status == 202
    bus.drain()
    third = load_run(svc, response.json()["run_id"])
    assert third.status == "completed"
    assert (third.retry_of, third.attempt) == (second.run_id, 3)
    assert load_run(svc, first.run_id).retried_by == second.run_id
    assert load_run(svc, second.run_id).retried_by == third.run_id
    assert run_ids(store) == {first.run_id, second.run_id, third.run_id}
    # the same upload posted again (same bytes, same local ETag) answers the newest attempt
    reposted = api.create_run(svc, PROJECT, NAME, SMALL.encode())
    assert reposted.status == 202 and reposted.json()["run_id"] == third.run_id


def test_retry_is_refused_unless_the_run_failed(tmp_path: Path) -> None:
    store = LocalFolderStore(tmp_path)
    svc, bus = offline_pipeline(store)
    queued = api.create_run(svc, PROJECT, NAME, SMALL.encode()).json()["run_id"]
    refused = api.retry_run(svc, queued)
    assert refused.status == 409 and refused.json()["status"] == "queued"
    assert "only a failed or completed_with_errors run can be run again" in refused.json()["error"]

    update_run(svc, queued, lambda r: r.model_copy(update={"status": "running"}))
    refused = api.retry_run(svc, queued)
    assert refused.status == 409 and refused.json()["status"] == "running"
    assert "has not ended yet" in refused.json()["error"]

    bus.drain()
    assert load_run(svc, queued).status == "completed"
    refused = api.retry_run(svc, queued)
    assert refused.status == 409 and refused.json()["status"] == "completed"
    assert "completed without errors" in refused.json()["error"]

    assert api.retry_run(svc, "run-0123456789abcdef0123").status == 404
    for bad in ("../../etc", "run-..", "runs"):
        response = api.retry_run(svc, bad)
        assert response.status == 400 and "invalid run_id" in response.json()["error"]
    assert run_ids(store) == {queued}
    assert load_run(svc, queued).retried_by is None


def test_a_failed_run_whose_upload_is_gone_is_a_409(tmp_path: Path, llm: OpenAIStandIn) -> None:
    store = LocalFolderStore(tmp_path)
    fail_segmentation(llm)
    old = failed_run(*llm_pipeline(store, llm))
    svc, _ = offline_pipeline(store)
    store.delete(layout.upload(old.run_id, "txt"))
    store.put(BLOB, b"Someone else's meeting, dropped over it since.\n")
    response = api.retry_run(svc, old.run_id)
    assert response.status == 409 and "upload the file again" in response.json()["error"]
    assert run_ids(store) == {old.run_id}


def test_an_old_run_json_without_the_attempt_fields_still_loads(tmp_path: Path) -> None:
    store = LocalFolderStore(tmp_path)
    svc, bus = offline_pipeline(store)
    run_id = api.create_run(svc, PROJECT, NAME, SMALL.encode()).json()["run_id"]
    bus.drain()
    data = json.loads(store.get(layout.run_json(run_id)))
    for field in ("attempt", "retry_of", "retried_by", "source_etag"):
        del data[field]
    store.put(layout.run_json(run_id), json.dumps(data).encode())
    run = load_run(svc, run_id)
    assert (run.attempt, run.retry_of, run.retried_by, run.source_etag) == (1, None, None, None)
    assert api.get_run(svc, run_id).json()["attempt"] == 1


# ------------------------------------------------------------------------------------------------
# blob events (Azurite: every upload is a new blob version with a new ETag)


class Trigger:
    """function_app.py's blob trigger, called the way the host calls it for one blob version."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.svc: Services | None = None
        monkeypatch.setattr(function_app, "app_services", lambda: self.svc)
        self.function = user_function("start_run")

    def fire(self, path: str, data: bytes, etag: str) -> None:
        stream = func.blob.InputStream(
            name=path,
            uri=f"http://azurite/{path}",
            length=len(data),
            data=data,
            # the dev host strips the quotes of the ETag, Azure's host may not: both are one version
            blob_properties={"ETag": etag, "Length": len(data)},
        )
        self.function(stream)


@pytest.fixture
def azure_store(azurite_clean: Any) -> AzureBlobStore:
    return AzureBlobStore.from_connection_string(azurite_clean.connection_string)


def test_the_same_blob_event_twice_starts_one_run(
    azure_store: AzureBlobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    trigger = Trigger(monkeypatch)
    svc, bus = offline_pipeline(azure_store)
    trigger.svc = svc
    data = SMALL.encode()
    etag = azure_store.put(BLOB, data)
    trigger.fire(BLOB, data, etag.strip('"'))
    trigger.fire(BLOB, data, etag)  # the same version again (quoted this time)
    [run_id] = run_ids(azure_store)
    assert [q for q, _ in bus.sent] == [SEGMENT_QUEUE]  # one start message
    bus.drain()
    run = load_run(svc, run_id)
    assert run.status == "completed" and run.source_etag == etag.strip('"')
    assert run.attempt == 1 and run.retry_of is None
    # a duplicate event after the run ended starts nothing either
    trigger.fire(BLOB, data, etag)
    assert run_ids(azure_store) == {run_id}


def test_the_same_bytes_uploaded_again_after_a_failure_are_a_new_attempt(
    azure_store: AzureBlobStore, llm: OpenAIStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    trigger = Trigger(monkeypatch)
    data = SMALL.encode()
    fail_segmentation(llm)
    llm_svc, llm_bus = llm_pipeline(azure_store, llm)
    trigger.svc = llm_svc
    first_etag = azure_store.put(BLOB, data)
    trigger.fire(BLOB, data, first_etag.strip('"'))
    llm_bus.drain()
    [first_id] = run_ids(azure_store)
    assert load_run(llm_svc, first_id).status == "failed"

    # the model is taken out; the same bytes are dropped again: a new version, a new attempt
    svc, bus = offline_pipeline(azure_store)
    trigger.svc = svc
    second_etag = azure_store.put(BLOB, data)
    assert second_etag != first_etag
    trigger.fire(BLOB, data, second_etag.strip('"'))
    trigger.fire(BLOB, data, second_etag)  # a duplicate event for the new version
    trigger.fire(BLOB, data, first_etag)  # a late duplicate of the first version
    new_ids = run_ids(azure_store) - {first_id}
    assert len(new_ids) == 1
    [second_id] = new_ids
    bus.drain()
    second = load_run(svc, second_id)
    assert second.status == "completed" and second.engine == "offline"
    assert (second.retry_of, second.attempt) == (first_id, 2)
    assert second.source_etag == second_etag.strip('"')
    first = load_run(svc, first_id)
    assert first.status == "failed" and first.retried_by == second_id
    assert first.source_etag == first_etag.strip('"')

    # uploaded again after the attempt completed: nothing new starts
    third_etag = azure_store.put(BLOB, data)
    trigger.fire(BLOB, data, third_etag)
    assert run_ids(azure_store) == {first_id, second_id}


def test_a_post_of_the_same_bytes_after_a_failure_is_a_new_attempt_and_its_event_no_other(
    azure_store: AzureBlobStore, llm: OpenAIStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POST /api/runs writes the blob, whose trigger fires too: both find one run per version."""
    trigger = Trigger(monkeypatch)
    data = SMALL.encode()
    fail_segmentation(llm)
    llm_svc, llm_bus = llm_pipeline(azure_store, llm)
    trigger.svc = llm_svc
    posted = api.create_run(llm_svc, PROJECT, NAME, data).json()
    first_etag = azure_store.etag(BLOB)
    assert posted["source_etag"] == first_etag.strip('"')
    trigger.fire(BLOB, data, first_etag)  # the upload's own blob event
    llm_bus.drain()
    assert run_ids(azure_store) == {posted["run_id"]}
    assert load_run(llm_svc, posted["run_id"]).status == "failed"

    svc, bus = offline_pipeline(azure_store)
    trigger.svc = svc
    again = api.create_run(svc, PROJECT, NAME, data)
    assert again.status == 202
    attempt = again.json()
    assert attempt["retry_of"] == posted["run_id"] and attempt["attempt"] == 2
    trigger.fire(BLOB, data, azure_store.etag(BLOB))
    bus.drain()
    assert run_ids(azure_store) == {posted["run_id"], attempt["run_id"]}
    assert load_run(svc, attempt["run_id"]).status == "completed"

    # posted again once more, after the success: the completed attempt, nothing new
    done = api.create_run(svc, PROJECT, NAME, data)
    assert done.status == 202 and done.json()["run_id"] == attempt["run_id"]
    trigger.fire(BLOB, data, azure_store.etag(BLOB))
    assert run_ids(azure_store) == {posted["run_id"], attempt["run_id"]}
