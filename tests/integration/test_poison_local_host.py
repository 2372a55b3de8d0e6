"""A unit that always fails, through the local host running the real function_app.py on Azurite:
the host retries it maxDequeueCount times, moves it to ``synth-tag-poison``, the poison function
records it, and the run still ends (completed_with_errors) with the error in errors.jsonl."""

from __future__ import annotations

import function_app
from devhost.host import LocalHost
from shared import layout
from shared.bus.azure_queue import AzureQueueBus
from shared.models import ErrorRecord, TaggingRecord, WorkItem
from shared.pipeline.runs import load_run, start_run
from shared.settings import Settings
from shared.storage import read_jsonl
from shared.storage.azure_blob import AzureBlobStore
from tests.support.fakes import Flaky, ThresholdTagger, fake_agents
from tests.support.pipeline import REPO, fake_services, load_backlog
from tests.support.transcripts import SMALL


def test_always_failing_tag_unit_is_poisoned_and_the_run_completes(azurite_clean, monkeypatch):
    conn = azurite_clean.connection_string
    agents = fake_agents()
    tagger = Flaky(
        ThresholdTagger(),
        "tag",
        lambda n, story, cands: "battery" in story.title.lower(),
        lambda: RuntimeError("the model endpoint is down"),
    )
    agents.tagger = tagger  # type: ignore[assignment]
    svc = fake_services(
        AzureBlobStore.from_connection_string(conn),
        AzureQueueBus.from_connection_string(conn),
        agents=agents,
        settings=Settings(storage_backend="azure", engine="offline", embedder="minilm"),
    )
    load_backlog(
        svc,
        "demo",
        [
            WorkItem(
                work_item_id=5,
                work_item_type="User Story",
                title="Battery",
                description="battery must last",
            )
        ],
    )
    monkeypatch.setattr(function_app, "app_services", lambda: svc)
    monkeypatch.setenv("AzureWebJobsStorage", conn)
    host_json = {
        "version": "2.0",
        "extensions": {
            "queues": {
                "maxDequeueCount": 3,
                "visibilityTimeout": "00:00:00",
                "batchSize": 8,
                "messageEncoding": "base64",
            }
        },
    }
    with LocalHost("function_app", host_json, port=None, root=REPO) as host:
        run = start_run(svc, "transcripts/demo/m.txt", SMALL.encode())
        host.wait_idle(timeout=120)
        poisoned = [i for i in host.invocations if i.function == "tag_poison"]

    done = load_run(svc, run.run_id)
    assert done.status == "completed_with_errors", done
    assert len(poisoned) == 1
    errors = read_jsonl(svc.store, layout.run_file(run.run_id, "errors.jsonl"), ErrorRecord)
    assert [(e.phase, e.outcome) for e in errors] == [("tag", "tagged_new")]
    assert "the model endpoint is down" in errors[0].message and errors[0].dequeue_count is not None
    records = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    assert len(records) == 5 and sum(r.tagging_failed for r in records) == 1
    bad_calls = tagger.calls - 4  # the four healthy stories are tagged once each
    assert bad_calls == 3
