"""The shared rate limiter against the OpenAI stand-in enforcing a deployment's quota (tokens and
requests per window, 429 with Retry-After past it): runs through the real agents and the real
``openai`` SDK complete with no failed unit and no poison, where the same quota without the
limiter fails units; 429s reach the limiter; the queue bus re-queues with a visibility delay on
Azurite; and the Functions app on the local host keeps its budget in the storage account."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from azure.storage.queue import QueueClient

from devhost.standins.openai_standin import OpenAIStandIn, RateLimits, Reply, hermetic_env
from shared import layout
from shared.bus.azure_queue import AzureQueueBus
from shared.engine.llm import build_llm_agents
from shared.llm.bucket import BucketState
from shared.llm.limiter import ModelLimits
from shared.models import SegmentMessage, WorkItem
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from tests.support.fakes import HashEmbedder
from tests.support.pipeline import load_backlog, make_pipeline, run_file

MEETING = """Product Owner: Today we plan the new remote control.
Marketing: The remote must have fewer than ten buttons. It should glow in the dark.

Engineer: The battery must last at least twelve months. We need a low battery warning.
Designer: The case should be made of recycled plastic.

Marketing: Users want to find a lost remote, so it should beep when the TV asks.
Project Manager: Okay, that is all for today.
"""
BACKLOG = [
    WorkItem(
        work_item_id=101,
        work_item_type="User Story",
        title="Battery lasts six months",
        description="The battery must last at least six months.",
    )
]
# a small deployment on a fast clock: 12,000 tokens and 600 requests per 2-second "minute"
QUOTA = RateLimits(tokens=12_000, requests=600, window_s=2.0)


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic_env(monkeypatch)


def pipeline(llm: OpenAIStandIn, tmp_path: Path, *, limited: bool):
    cfg = Settings(
        storage_backend="local",
        engine="llm",
        openai_api_key="x",
        openai_base_url=llm.base_url,
        openai_max_retries=0,  # every 429 reaches the caller: the limiter must absorb them
        model_tpm=QUOTA.tokens if limited else 0,
        model_rpm=QUOTA.requests if limited else 0,
        model_limit_window_seconds=QUOTA.window_s,
    )
    cfg.pipeline.segmentation.min_merge_threshold = 10
    store = LocalFolderStore(tmp_path)
    limits = ModelLimits.from_settings(cfg, store)
    embedder = HashEmbedder()
    agents = build_llm_agents(cfg, embedder, limits=limits)
    svc, bus = make_pipeline(store, agents=agents, embedder=embedder, settings=cfg)
    load_backlog(svc, "demo", BACKLOG)
    return svc, bus, limits


def test_a_binding_quota_with_the_limiter_fails_no_unit(tmp_path: Path) -> None:
    with OpenAIStandIn(units_per_segment=2, limits=QUOTA) as llm:
        svc, bus, limits = pipeline(llm, tmp_path, limited=True)
        done = run_file(svc, bus, "demo", "meeting.txt", MEETING.encode())
        admitted = [r for r in llm.chat_requests if r.counted]
    assert done.status == "completed" and done.error_count == 0, done.failure_reason
    assert not bus.dead and not svc.store.list(f"runs/{done.run_id}/parts/attempts/")
    # the quota was binding: the run needed several windows' worth of tokens, and calls waited
    assert sum(r.counted for r in admitted) > 2 * QUOTA.tokens
    assert limits is not None
    chat = limits.chat("gpt-4o")
    assert chat is not None and chat.stats.sleeps + chat.stats.deferred > 0
    assert svc.store.exists(layout.model_limit("gpt-4o"))


def test_the_same_quota_without_the_limiter_fails_units(tmp_path: Path) -> None:
    with OpenAIStandIn(units_per_segment=2, limits=QUOTA) as llm:
        svc, bus, limits = pipeline(llm, tmp_path, limited=False)
        done = run_file(svc, bus, "demo", "meeting.txt", MEETING.encode())
        refused = [r for r in llm.requests if r.answered_with == "limited"]
    assert limits is None and not svc.store.list("ingestion/limits/")
    assert refused and done.error_count > 0 and done.status != "completed"


def test_a_429_the_sdk_retries_itself_still_reaches_the_limiter(tmp_path: Path) -> None:
    with OpenAIStandIn(units_per_segment=2) as llm:
        cfg = Settings(
            storage_backend="local",
            engine="llm",
            openai_api_key="x",
            openai_base_url=llm.base_url,
            openai_max_retries=2,
            model_tpm=1_000_000,
        )
        store = LocalFolderStore(tmp_path)
        limits = ModelLimits.from_settings(cfg, store)
        agents = build_llm_agents(cfg, HashEmbedder(), limits=limits)
        llm.script(Reply.rate_limited(retry_after=0.2), match="SegmentationAnswer")
        result = agents.segmenter.segment(MEETING)
    assert result.spans  # the SDK's retry got the answer
    assert limits is not None
    chat = limits.chat("gpt-4o")
    assert chat is not None and chat.stats.throttled == 1
    state = BucketState.parse(store.get(layout.model_limit("gpt-4o")))
    assert state.factor < 1.0 and state.blocked_until > 0


def test_send_later_keeps_the_message_invisible_on_azurite(azurite_clean) -> None:
    bus = AzureQueueBus.from_connection_string(azurite_clean.connection_string)
    bus.send_later("synth-generate", SegmentMessage(run_id="r1"), 30.0)
    queue = QueueClient.from_connection_string(azurite_clean.connection_string, "synth-generate")
    assert queue.get_queue_properties().approximate_message_count == 1
    assert list(queue.peek_messages(max_messages=5)) == []  # there, but not visible yet
    bus.send("synth-generate", SegmentMessage(run_id="r2"))
    assert len(list(queue.peek_messages(max_messages=5))) == 1


def test_the_functions_app_keeps_its_budget_in_the_storage_account(
    azurite_clean, monkeypatch: pytest.MonkeyPatch
) -> None:
    import function_app
    from devhost.host import LocalHost
    from shared.ids import content_sha256, make_run_id
    from shared.models import TERMINAL_STATES
    from shared.pipeline.runs import load_run
    from shared.services import build_services
    from tests.support.pipeline import REPO

    conn = azurite_clean.connection_string
    host_json = {
        "version": "2.0",
        "extensions": {
            "queues": {
                "maxDequeueCount": 3,
                "visibilityTimeout": "00:00:00",
                "maxPollingInterval": "00:00:00.500",
                "messageEncoding": "base64",
            }
        },
    }
    with OpenAIStandIn(units_per_segment=2, limits=QUOTA) as llm:
        settings = Settings(
            storage_backend="azure",
            azure_storage_connection=conn,
            engine="llm",
            embedder="openai",
            vector_store="embedded",
            openai_api_key="x",
            openai_base_url=llm.base_url,
            openai_max_retries=0,
            model_tpm=QUOTA.tokens,
            model_rpm=QUOTA.requests,
            model_limit_window_seconds=QUOTA.window_s,
        )
        settings.pipeline.segmentation.min_merge_threshold = 10
        svc = build_services(settings)
        monkeypatch.setattr(function_app, "app_services", lambda: svc)
        monkeypatch.setenv("AzureWebJobsStorage", conn)
        data = MEETING.encode()
        run_id = make_run_id("transcripts/demo/m.txt", f"{content_sha256(data)}:{len(data)}")
        with LocalHost("function_app", host_json, port=None, root=REPO) as host:
            svc.store.put("transcripts/demo/m.txt", data)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    run = load_run(svc, run_id)
                except Exception:  # noqa: BLE001 - not created yet
                    run = None
                if run is not None and run.status in TERMINAL_STATES:
                    break
                time.sleep(0.2)
            host.wait_idle(timeout=60)
            invocations = list(host.invocations)
    assert run is not None and run.status == "completed" and run.error_count == 0
    assert all(i.succeeded for i in invocations)
    assert not [i for i in invocations if i.function.endswith("_poison")]
    # one budget per deployment, chat and embeddings, in the ingestion container
    assert sorted(svc.store.list("ingestion/limits/")) == [
        layout.model_limit("gpt-4o"),
        layout.model_limit("text-embedding-3-small"),
    ]
