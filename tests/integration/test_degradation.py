"""Degradation, recorded (docs/RELIABILITY.md "Degradation"): with the vector index down (the
Pinecone stand-in stopped, or answering 503) retrieval falls back to keyword scoring over the
ingestion files; with the model endpoint unreachable after its retries (5xx, connection refused)
the offline engine does the unit. Either way the run ends, every degraded record says so
(``engine: offline-fallback``, ``warnings``), and run.json and summary.json carry the run's
warning; a request the endpoint rejects (400) is not "unreachable" and keeps its own handling."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import TypeVar

import httpx
import openai
import pytest
from pydantic import BaseModel

from devhost.standins.openai_standin import Failures, OpenAIStandIn, Reply, hermetic_env
from shared import layout
from shared.agents import Agents
from shared.bus.memory import InProcessBus
from shared.engine.llm import build_llm_agents
from shared.indexing.backlog import FetchedBacklog, load_work_items
from shared.indexing.documents import load_documents
from shared.models import (
    ErrorRecord,
    GeneratedItem,
    RunStatus,
    Segment,
    Summary,
    TaggingRecord,
    WorkItem,
)
from shared.pipeline import bind_in_process
from shared.pipeline.fallback import model_unreachable
from shared.retrieval.search import KEYWORD_RETRIEVAL
from shared.services import Services
from shared.settings import Settings
from shared.storage import read_jsonl, read_model
from shared.storage.local import LocalFolderStore
from shared.vectorstore.pinecone_index import PineconeIndex
from tests.support.fakes import HashEmbedder, fake_agents
from tests.support.pinecone_standin import PineconeStandIn
from tests.support.pipeline import run_file

M = TypeVar("M", bound=BaseModel)

PROJECT = "demo"
MEETING = """Product Owner: Today we plan the new remote control.
Marketing: The remote must have fewer than ten buttons. It should glow in the dark.

Engineer: The battery must last at least twelve months. We need a low battery warning.
Designer: The case should be made of recycled plastic.

Marketing: Users want to find a lost remote, so it should beep when the TV asks.
Project Manager: Okay, that is all for today.
"""
BACKLOG = [
    WorkItem(work_item_id=100, work_item_type="Epic", title="Remote control hardware"),
    WorkItem(
        work_item_id=101,
        work_item_type="User Story",
        title="Battery lasts six months",
        description="The battery must last at least six months on two AA batteries.",
        acceptance_criteria=["Battery lasts six months with daily use"],
        parent_id=100,
    ),
    WorkItem(
        work_item_id=102,
        work_item_type="User Story",
        title="Lost remote beeps",
        description="The remote beeps when the TV asks so users can find a lost remote.",
    ),
    WorkItem(
        work_item_id=103,
        work_item_type="User Story",
        title="Voice search for channels",
        description="Users search channels by voice.",
    ),
]
ARCHITECTURE = """# Power

The remote runs on two replaceable AA batteries; battery life is measured with daily use.

# Materials

The case is made of recycled plastic, at least 70 percent by weight.
"""


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic_env(monkeypatch)


def services(
    store: LocalFolderStore,
    bus: InProcessBus,
    *,
    pinecone_url: str | None = None,
    agents: Agents | None = None,
    settings: Settings | None = None,
) -> Services:
    """Services with the hash embedder, Pinecone at ``pinecone_url`` (else the embedded index)."""
    embedder = HashEmbedder()
    settings = settings or Settings(storage_backend="local", engine="offline", embedder="minilm")
    chosen = agents or fake_agents()
    kwargs = {}
    if pinecone_url is not None:
        kwargs["index_factory"] = lambda s, st, e: PineconeIndex.connect(
            "pc-key", e.dimension, host=pinecone_url, embedder=e.model_name
        )
    svc = Services(
        settings=settings,
        store=store,
        bus=bus,
        embedder_factory=lambda s: embedder,
        agents_factory=lambda s, e: chosen,
        **kwargs,
    )
    bind_in_process(bus, svc)
    return svc


def load(svc: Services, tmp_path: Path) -> None:
    """The backlog and the architecture notes into the index and the ingestion files."""
    load_work_items(svc, PROJECT, FetchedBacklog(list(BACKLOG)))
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "constraints.md").write_text(ARCHITECTURE)
    summary = load_documents(svc, PROJECT, [docs], show_progress=False)
    assert not summary.errors and summary.upserted >= 1


def records(svc: Services, run: RunStatus, name: str, model: type[M]) -> list[M]:
    return read_jsonl(svc.store, layout.run_file(run.run_id, name), model)


# ------------------------------------------------------------------------------------------------
# the vector index down


@pytest.mark.parametrize("outage", ["stopped", "failing"])
def test_index_down_keyword_retrieval_over_the_ingestion_files(tmp_path, outage):
    store = LocalFolderStore(tmp_path / "store")
    standin = PineconeStandIn(dimension=HashEmbedder.dimension).start()
    try:
        load(services(store, InProcessBus(workers=2), pinecone_url=standin.url), tmp_path)
        assert standin.count(PROJECT) == len(BACKLOG) + 1
        if outage == "stopped":
            standin.stop()
        else:
            standin.fail_next(503, 10_000)  # every data-plane request, the SDK's retries too
        bus = InProcessBus(workers=2)
        svc = services(store, bus, pinecone_url=standin.url)  # a new process: a new client
        done = run_file(svc, bus, PROJECT, "meeting.txt", MEETING.encode())
    finally:
        if outage == "failing":
            standin.stop()

    assert done.status == "completed", done.failure_reason
    codes = [w.code for w in done.warnings]
    assert "index_unreachable" in codes
    assert "empty_index" not in codes and "no_architecture_docs" not in codes  # files say so
    items = records(svc, done, "generated_backlog.jsonl", GeneratedItem)
    stories = [i for i in items if i.type == "User Story"]
    assert stories and all(any(w.startswith(KEYWORD_RETRIEVAL) for w in i.warnings) for i in items)
    # the keywords found what the vectors would have: the battery segment's context holds the
    # battery story and the power constraint
    battery = next(s for s in stories if "battery" in s.title.lower())
    assert 101 in [c.work_item_id for c in battery.context_ado_items]
    assert any(c.file_name == "constraints.md" for c in battery.context_architecture_chunks)
    tags = records(svc, done, "tagging_analysis.jsonl", TaggingRecord)
    assert len(tags) == len(stories)
    assert all(any(w.startswith(KEYWORD_RETRIEVAL) for w in t.warnings) for t in tags)
    battery_tag = next(t for t in tags if t.story_id == battery.item_id)
    assert battery_tag.similarity_scores and battery_tag.similarity_scores[0].work_item_id == 101
    summary = read_model(svc.store, layout.run_file(done.run_id, "summary.json"), Summary)
    assert "index_unreachable" in [w.code for w in summary.warnings]
    assert summary.fallbacks["keyword_tagging"] == len(stories)
    assert summary.fallbacks["keyword_generation"] == summary.segment_count
    assert summary.fallbacks["offline_generation"] == 0


def test_a_reachable_index_leaves_no_degradation_behind(tmp_path):
    store = LocalFolderStore(tmp_path / "store")
    with PineconeStandIn(dimension=HashEmbedder.dimension) as standin:
        bus = InProcessBus(workers=2)
        svc = services(store, bus, pinecone_url=standin.url)
        load(svc, tmp_path)
        done = run_file(svc, bus, PROJECT, "meeting.txt", MEETING.encode())
    assert done.status == "completed" and done.warnings == []
    items = records(svc, done, "generated_backlog.jsonl", GeneratedItem)
    assert items and all(i.warnings == [] or "keyword" not in " ".join(i.warnings) for i in items)
    summary = read_model(svc.store, layout.run_file(done.run_id, "summary.json"), Summary)
    assert set(summary.fallbacks.values()) == {0}


# ------------------------------------------------------------------------------------------------
# the model endpoint down


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def llm_services(
    store: LocalFolderStore, bus: InProcessBus, base_url: str, tmp_path: Path
) -> Services:
    settings = Settings(
        storage_backend="local",
        engine="llm",
        openai_api_key="sk-test-not-a-real-key-0000000000000000",
        openai_base_url=base_url,
        openai_max_retries=1,
        openai_timeout_seconds=5,
    )
    settings.pipeline.segmentation.min_merge_threshold = 10  # several segments of MEETING
    embedder = HashEmbedder()
    svc = services(store, bus, agents=build_llm_agents(settings, embedder), settings=settings)
    load(svc, tmp_path)
    return svc


@pytest.mark.parametrize("outage", ["5xx after retries", "connection refused"])
def test_model_down_the_offline_engine_does_the_units_and_says_so(tmp_path, outage):
    store = LocalFolderStore(tmp_path / "store")
    bus = InProcessBus(workers=2)
    if outage == "connection refused":
        svc = llm_services(store, bus, f"http://127.0.0.1:{closed_port()}/v1", tmp_path)
        done = run_file(svc, bus, PROJECT, "meeting.txt", MEETING.encode())
        chat: list = []
    else:
        failing = Failures(rate=1.0, kinds={"500": 1.0})
        with OpenAIStandIn(failures=failing) as llm:
            svc = llm_services(store, bus, llm.base_url, tmp_path)
            done = run_file(svc, bus, PROJECT, "meeting.txt", MEETING.encode())
            chat = llm.chat_requests
        assert chat and {c.status for c in chat} == {500}
        assert max(c.retry_count for c in chat) == 1  # the SDK retried before we fell back

    assert done.status == "completed", done.failure_reason
    assert done.engine == "llm"  # the run's configuration; its units say what did them
    warning = next(w for w in done.warnings if w.code == "model_unreachable")
    assert "offline-fallback" in warning.message
    assert "sk-test-not-a-real-key" not in warning.message
    segments = records(svc, done, "segments.jsonl", Segment)
    assert segments and {s.engine for s in segments} == {"offline-fallback"}
    items = records(svc, done, "generated_backlog.jsonl", GeneratedItem)
    stories = [i for i in items if i.type == "User Story"]
    assert stories and {i.engine for i in items} == {"offline-fallback"}
    assert all(any(w.startswith("offline fallback") for w in i.warnings) for i in items)
    tags = records(svc, done, "tagging_analysis.jsonl", TaggingRecord)
    assert len(tags) == len(stories)
    # no tag is silently defaulted: each was made by the offline tagger and says so
    assert all(t.engine == "offline-fallback" and not t.tagging_failed for t in tags)
    assert all(any(w.startswith("offline fallback") for w in t.warnings) for t in tags)
    assert records(svc, done, "errors.jsonl", ErrorRecord) == []
    summary = read_model(svc.store, layout.run_file(done.run_id, "summary.json"), Summary)
    assert "model_unreachable" in [w.code for w in summary.warnings]
    assert summary.fallbacks["offline_segmentation"] == 1
    assert summary.fallbacks["offline_generation"] == summary.segment_count
    assert summary.fallbacks["offline_tagging"] == len(stories)


def test_the_whole_endpoint_down_chat_and_embeddings_the_run_still_ends(tmp_path):
    """The OpenAI embedder too: the queries cannot be embedded (keyword retrieval), the agents
    cannot call (offline engine), finalize cannot compare stories (MiniLM does)."""
    from shared.services import build_services

    with OpenAIStandIn(units_per_segment=2) as llm:
        settings = Settings(
            storage_backend="local",
            engine="llm",
            embedder="openai",
            vector_store="embedded",
            openai_api_key="sk-test-not-a-real-key-0000000000000000",
            openai_base_url=llm.base_url,
            openai_max_retries=0,
        )
        settings.pipeline.segmentation.min_merge_threshold = 10
        bus = InProcessBus(workers=2)
        svc = build_services(settings, store=LocalFolderStore(tmp_path / "store"), bus=bus)
        bind_in_process(bus, svc)
        load(svc, tmp_path)  # while the endpoint is up
        llm.failures = Failures(rate=1.0, kinds={"500": 1.0}, routes=("chat", "embeddings"))
        done = run_file(svc, bus, PROJECT, "meeting.txt", MEETING.encode())
        failed = {r.route for r in llm.requests if r.status == 500}
    assert failed == {"chat", "embeddings"}
    assert done.status == "completed", done.failure_reason
    assert {"model_unreachable", "index_unreachable"} <= {w.code for w in done.warnings}
    items = records(svc, done, "generated_backlog.jsonl", GeneratedItem)
    assert items and {i.engine for i in items} == {"offline-fallback"}
    assert all(any("could not be embedded" in w for w in i.warnings) for i in items)
    tags = records(svc, done, "tagging_analysis.jsonl", TaggingRecord)
    called = [t for t in tags if t.similarity_scores]  # the others had no candidate, no call
    assert called, "keyword retrieval found no candidate"
    assert {t.engine for t in called} == {"offline-fallback"}
    assert records(svc, done, "errors.jsonl", ErrorRecord) == []


def test_a_rejected_request_is_not_unreachable_and_keeps_its_own_handling(tmp_path):
    """A 400 on a generation call: the segment is skipped and recorded (the seed's rule), the
    offline engine does not step in."""
    store = LocalFolderStore(tmp_path / "store")
    bus = InProcessBus(workers=2)
    with OpenAIStandIn(units_per_segment=2) as llm:
        svc = llm_services(store, bus, llm.base_url, tmp_path)
        llm.script(
            Reply.status_code(400, message="context_length_exceeded"), match="GenerationAnswer"
        )
        done = run_file(svc, bus, PROJECT, "meeting.txt", MEETING.encode())
    assert done.status == "completed_with_errors"
    assert "model_unreachable" not in [w.code for w in done.warnings]
    [error] = records(svc, done, "errors.jsonl", ErrorRecord)
    assert error.phase == "generate" and error.outcome == "skipped"
    items = records(svc, done, "generated_backlog.jsonl", GeneratedItem)
    assert items and {i.engine for i in items} == {"llm"}


def _request() -> httpx.Request:
    return httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


@pytest.mark.parametrize(
    ("error", "unreachable"),
    [
        (openai.APIConnectionError(request=_request()), True),
        (openai.APITimeoutError(request=_request()), True),
        (
            openai.InternalServerError(
                "boom", response=httpx.Response(503, request=_request()), body=None
            ),
            True,
        ),
        (
            openai.BadRequestError(
                "no", response=httpx.Response(400, request=_request()), body=None
            ),
            False,
        ),
        (
            openai.RateLimitError(
                "slow", response=httpx.Response(429, request=_request()), body=None
            ),
            False,
        ),
        (
            openai.AuthenticationError(
                "key", response=httpx.Response(401, request=_request()), body=None
            ),
            False,
        ),
        (ValueError("the answer does not match the schema"), False),
    ],
    ids=["connection", "timeout", "503", "400", "429", "401", "invalid-output"],
)
def test_which_errors_mean_the_model_is_unreachable(error, unreachable):
    assert model_unreachable(error) is unreachable
    try:  # raised from inside another error (a wrapper around the call) it is still found
        try:
            raise error
        except Exception as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert model_unreachable(outer) is unreachable
