"""The whole product with the LLM engine, end to end: the local Functions host runs function_app.py
on Azurite, the agents talk to the OpenAI stand-in through the ``openai`` SDK, retrieval goes to the
Pinecone stand-in through the ``pinecone`` SDK, and Langfuse spans are captured in memory.
A blob drop produces the whole artifact set, and the trace has one tree with the seed's span names."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from azure.storage.blob import BlobServiceClient
from langfuse._client.resource_manager import LangfuseResourceManager
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import function_app
from devhost.host import LocalHost
from devhost.standins.openai_standin import OpenAIStandIn, hermetic_env
from shared import layout
from shared.ids import content_sha256, make_run_id
from shared.indexing.documents import index_documents
from shared.indexing.indexer import index_work_items
from shared.indexing.workitems import read_backlog_file
from shared.models import TERMINAL_STATES, GeneratedItem, RunStatus, Segment, TaggingRecord
from shared.pipeline.runs import load_run
from shared.services import build_services, build_tracer
from shared.settings import Settings
from shared.storage import read_jsonl
from shared.tracing.langfuse import LangfuseTracer, root_span_id
from tests.support.pinecone_standin import PineconeStandIn
from tests.support.pipeline import REPO, SAMPLES

PROJECT = "remote-control"


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch):
    hermetic_env(monkeypatch)


HOST_JSON = {
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


@pytest.fixture
def standins() -> Iterator[tuple[OpenAIStandIn, PineconeStandIn]]:
    LangfuseResourceManager.reset()
    with OpenAIStandIn() as llm, PineconeStandIn(dimension=1536) as pinecone:
        yield llm, pinecone
    LangfuseResourceManager.reset()


def wait_terminal(svc, run_id: str, timeout: float = 180) -> RunStatus:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            run = load_run(svc, run_id)
        except Exception:  # noqa: BLE001 - not created yet
            run = None
        if run is not None and run.status in TERMINAL_STATES:
            return run
        time.sleep(0.2)
    raise TimeoutError(run_id)


def test_blob_drop_runs_the_llm_engine_with_pinecone_and_one_langfuse_trace(
    azurite_clean, standins, monkeypatch
):
    llm, pinecone = standins
    conn = azurite_clean.connection_string
    settings = Settings(
        storage_backend="azure",
        azure_storage_connection=conn,
        openai_api_key="x",
        openai_base_url=llm.base_url,
        pinecone_api_key="pinecone-key",
        pinecone_host=pinecone.url,
        langfuse_public_key="pk-lf-e2e",
        langfuse_secret_key="sk-lf-e2e",
        langfuse_host="http://127.0.0.1:9",
    )
    assert settings.resolved_engine() == "llm" and settings.resolved_vector_store() == "pinecone"
    exporter = InMemorySpanExporter()
    # build the services without Langfuse keys first: Langfuse keeps one exporter per public key,
    # and the in-memory one must be the first
    svc = build_services(settings.model_copy(update={"langfuse_public_key": None}))
    svc.settings = settings
    svc.tracer = build_tracer(settings, span_exporter=exporter)

    # the loaders put the sample backlog and architecture notes into Pinecone
    index_work_items(
        svc.embedder,
        svc.index,
        PROJECT,
        read_backlog_file(SAMPLES / "backlog" / "remote_control_backlog.csv"),
    )
    index_documents(
        svc.embedder,
        svc.index,
        PROJECT,
        sorted((SAMPLES / "architecture").glob("*.md")),
        settings.pipeline.external_loaders.architecture,
    )
    assert pinecone.count(PROJECT) > 10

    monkeypatch.setattr(function_app, "app_services", lambda: svc)
    monkeypatch.setenv("AzureWebJobsStorage", conn)
    data = (SAMPLES / "transcripts" / "remote_control_planning_notes.md").read_bytes()
    blob_path = f"transcripts/{PROJECT}/notes.md"
    run_id = make_run_id(blob_path, f"{content_sha256(data)}:{len(data)}")
    with LocalHost("function_app", HOST_JSON, port=None, root=REPO) as host:
        container = BlobServiceClient.from_connection_string(conn).get_container_client(
            "transcripts"
        )
        if not container.exists():
            container.create_container()
        container.upload_blob(f"{PROJECT}/notes.md", data, overwrite=True)
        run = wait_terminal(svc, run_id)
        host.wait_idle(timeout=60)

    # --- the run and its artifacts -------------------------------------------------------------
    assert run.status == "completed", run.failure_reason
    assert run.engine == "llm" and run.model == "gpt-4o"
    assert run.embedding_model == "text-embedding-3-small"
    present = set(svc.store.children(layout.run_prefix(run_id)))
    assert set(layout.FINAL_ARTIFACTS) <= present
    segments = read_jsonl(svc.store, layout.run_file(run_id, "segments.jsonl"), Segment)
    items = read_jsonl(svc.store, layout.run_file(run_id, "generated_backlog.jsonl"), GeneratedItem)
    tags = read_jsonl(svc.store, layout.run_file(run_id, "tagging_analysis.jsonl"), TaggingRecord)
    stories = [i for i in items if i.type == "User Story"]
    trace_id = LangfuseTracer.trace_id(run_id)
    assert stories and len(tags) == len(stories)
    assert {s.segmentation_version for s in segments} == {"seg-llm-v1"}
    assert {i.generation_agent_version for i in items} == {"gen-llm-v2"}
    assert {t.tagging_agent_version for t in tags} == {"tag-llm-v1"}
    assert {i.trace_id for i in items} == {t.trace_id for t in tags} == {trace_id}
    transcript = svc.store.get(layout.run_file(run_id, "transcript.txt")).decode()
    assert "".join(s.raw_text for s in segments) == transcript
    for quote in (q for s in stories for q in s.source_quotes):
        assert transcript[quote.start : quote.end] == quote.text
    assert any(i.context_ado_items for i in items)  # generation saw the ADO backlog
    assert any(i.context_architecture_chunks for i in items)  # ... and the architecture notes
    assert all(t.similarity_scores for t in tags)  # tagging retrieved existing stories

    # --- Pinecone saw the seed's retrieval: per-project namespace, the three filters -----------
    queries = [r.body for r in pinecone.requests if r.path == "/query"]
    assert {q["namespace"] for q in queries} == {PROJECT}
    filters = [q.get("filter") for q in queries]
    assert {"source_type": {"$eq": "ado_backlog"}} in filters
    assert {"doc_type": {"$eq": "architecture"}} in filters
    assert any("$and" in (f or {}) for f in filters)
    assert svc.store.list("index/_embedding-cache/")  # embeddings cached in the store

    # --- one trace, one tree, the seed's span names --------------------------------------------
    spans = [
        s for s in exporter.get_finished_spans() if format(s.context.trace_id, "032x") == trace_id
    ]
    assert len(spans) == len(exporter.get_finished_spans())  # nothing outside the run's trace
    root_id = root_span_id(run_id)
    roots = [s for s in spans if s.name == "synthesis_run"]
    assert len(roots) == 1  # written once, by finalize, with the run metrics
    assert all(s.parent is None and format(s.context.span_id, "016x") == root_id for s in roots)
    others = [s for s in spans if s.name != "synthesis_run"]
    assert all(format(s.parent.span_id, "016x") == root_id for s in others)
    expected = (
        {"synthesis_run", "segmentation"}
        | {f"segment_{s.segment_id}_retrieval" for s in segments}
        | {f"segment_{s.segment_id}_generation_agent" for s in segments}
        | {f"story_{s.item_id}_tagging_retrieval" for s in stories}
        | {f"story_{s.item_id}_tagging_agent" for s in stories}
    )
    assert {s.name for s in spans} == expected
    final = dict(roots[-1].attributes)
    assert final["langfuse.observation.metadata.story_count"] == str(len(stories))
    assert final["langfuse.observation.metadata.segment_count"] == str(len(segments))
