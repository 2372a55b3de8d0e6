"""Each handler on real blobs and queues (Azurite), driven message by message.

The queue adapter must write base64 (what the Functions host expects); a message delivered twice
must leave identical artifacts and one set of downstream messages; the run's status changes are
ETag-guarded on real blob ETags.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

import pytest
from azure.storage.queue import QueueClient

from shared import layout
from shared.bus import FINALIZE_QUEUE, GENERATE_QUEUE, PIPELINE_QUEUES, SEGMENT_QUEUE, TAG_QUEUE
from shared.bus.azure_queue import AzureQueueBus
from shared.models import WorkItem
from shared.pipeline import process
from shared.pipeline.runs import load_run, start_run, update_run
from shared.services import Services
from shared.settings import Settings
from shared.storage import LeaseHeld, PreconditionFailed
from shared.storage.azure_blob import AzureBlobStore
from tests.support.pipeline import fake_services, load_backlog
from tests.support.transcripts import SMALL

FIXED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def services(conn: str) -> Services:
    svc = fake_services(
        AzureBlobStore.from_connection_string(conn),
        AzureQueueBus.from_connection_string(conn),
        settings=Settings(storage_backend="azure", engine="offline", embedder="minilm"),
    )
    svc.clock = lambda: FIXED
    load_backlog(
        svc,
        "demo",
        [
            WorkItem(
                work_item_id=11,
                work_item_type="User Story",
                title="Battery",
                description="The battery must last at least twelve months.",
            )
        ],
    )
    return svc


def raw_queue(conn: str, name: str) -> QueueClient:
    return QueueClient.from_connection_string(conn, name)


def pump(conn: str, svc: Services, *, deliveries: int = 1) -> dict[str, list[str]]:
    """Deliver every queued message ``deliveries`` times until the queues are empty; returns the
    decoded bodies seen per queue."""
    seen: dict[str, list[str]] = {q: [] for q in PIPELINE_QUEUES}
    while True:
        progressed = False
        for queue in PIPELINE_QUEUES:
            client = raw_queue(conn, queue)
            for msg in client.receive_messages(messages_per_page=16, visibility_timeout=30):
                body = base64.b64decode(msg.content).decode()  # the host's default encoding
                seen[queue].append(body)
                for n in range(deliveries):
                    process(svc, queue, body, n + 1)
                client.delete_message(msg)
                progressed = True
        if not progressed:
            return seen


def artifacts(svc: Services, run_id: str) -> dict[str, bytes]:
    return {
        p: svc.store.get(p)
        for p in svc.store.list(layout.run_prefix(run_id))
        if "/parts/outbox/" not in p and "/parts/attempts/" not in p
    }


def test_handlers_on_real_blobs_and_base64_queues(azurite_clean):
    conn = azurite_clean.connection_string
    svc = services(conn)
    svc.store.put("transcripts/demo/m.txt", SMALL.encode())
    run = start_run(svc, "transcripts/demo/m.txt", SMALL.encode())
    assert svc.store.exists(f"uploads/{run.run_id}/raw.txt")

    seen = pump(conn, svc)
    assert len(seen[SEGMENT_QUEUE]) == 1
    assert len(seen[GENERATE_QUEUE]) == 3
    assert len(seen[TAG_QUEUE]) == 5
    assert len(seen[FINALIZE_QUEUE]) >= 1
    assert all(json.loads(b)["run_id"] == run.run_id for bodies in seen.values() for b in bodies)
    done = load_run(svc, run.run_id)
    assert done.status == "completed" and done.story_count == 5
    for name in layout.FINAL_ARTIFACTS:
        assert svc.store.exists(layout.run_file(run.run_id, name)), name


def test_each_message_delivered_twice_on_azurite(azurite_clean):
    conn = azurite_clean.connection_string
    once_svc = services(conn)
    once_svc.store.put("transcripts/demo/m.txt", SMALL.encode())
    run = start_run(once_svc, "transcripts/demo/m.txt", SMALL.encode())
    once_seen = pump(conn, once_svc)
    once = artifacts(once_svc, run.run_id)

    for container in ("runs", "uploads"):
        once_svc.store.service.delete_container(container)
    twice_svc = services(conn)
    start_run(twice_svc, "transcripts/demo/m.txt", SMALL.encode())
    twice_seen = pump(conn, twice_svc, deliveries=2)

    assert artifacts(twice_svc, run.run_id) == once
    for queue in (SEGMENT_QUEUE, GENERATE_QUEUE, TAG_QUEUE):
        assert sorted(twice_seen[queue]) == sorted(once_seen[queue]), queue


def test_status_updates_are_etag_guarded_and_leases_exclusive(azurite_clean):
    svc = services(azurite_clean.connection_string)
    run = start_run(svc, "transcripts/demo/m.txt", SMALL.encode())
    path = layout.run_json(run.run_id)
    _, etag = svc.store.get_with_etag(path)
    update_run(svc, run.run_id, lambda r: r.model_copy(update={"phase": "segmenting"}))
    with pytest.raises(PreconditionFailed):
        svc.store.replace_if_match(path, b"{}", etag)
    assert load_run(svc, run.run_id).phase == "segmenting"
    assert not svc.store.create(path, b"{}")  # create-once on a real blob

    with svc.store.lease("runs/x/write.lock", seconds=15):
        with pytest.raises(LeaseHeld):
            with svc.store.lease("runs/x/write.lock", seconds=15):
                pass
    with svc.store.lease("runs/x/write.lock", seconds=15):  # released: free again
        pass
