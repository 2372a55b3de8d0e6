"""The Langfuse tracer with spans captured by an in-memory OpenTelemetry exporter (what the SDK
would send to Langfuse): one trace per run across separate invocations, its root written once per
run (Langfuse v4 stores every record it receives), seed span names and metrics, secrets never sent,
flush per invocation and bounded by LANGFUSE_TIMEOUT when Langfuse is unreachable, no-op without
keys."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from langfuse._client.resource_manager import LangfuseResourceManager
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from devhost.standins.openai_standin import hermetic_env
from shared import layout
from shared.agents import Agents, SegmentationFailed
from shared.models import ErrorRecord, GeneratedItem, Segment, TaggingRecord
from shared.pipeline import process
from shared.pipeline.runs import abort_run, trace_run_end
from shared.services import build_tracer
from shared.settings import ObservabilityConfig, PipelineConfig, Settings
from shared.storage import read_jsonl
from shared.storage.local import LocalFolderStore
from shared.tracing import NullTracer
from shared.tracing.langfuse import LangfuseTracer, root_span_id
from tests.support.fakes import CueGenerator, Flaky, ParagraphSegmenter, ThresholdTagger
from tests.support.pipeline import make_pipeline, run_file
from tests.support.transcripts import SMALL

KEYS = {"langfuse_public_key": "pk-lf-test-public", "langfuse_secret_key": "sk-lf-test-secret"}
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch):
    hermetic_env(monkeypatch)


@pytest.fixture(autouse=True)
def fresh_langfuse() -> Iterator[None]:
    LangfuseResourceManager.reset()  # clients are singletons per public key
    yield
    LangfuseResourceManager.reset()


def tracer(exporter: InMemorySpanExporter | None, **settings_values) -> LangfuseTracer:
    values = {"langfuse_host": "http://127.0.0.1:9", **settings_values}
    settings = Settings(storage_backend="local", **KEYS, **values)
    built = build_tracer(settings, span_exporter=exporter)
    assert isinstance(built, LangfuseTracer)
    return built


def hexid(n: int) -> str:
    return format(n, "016x")


def all_attribute_text(spans) -> str:
    return " ".join(f"{k}={v}" for s in spans for k, v in (s.attributes or {}).items())


def test_spans_of_separate_invocations_join_one_trace_under_the_root():
    exporter = InMemorySpanExporter()
    first = tracer(exporter)
    first.run_root("run-aaaa", started_at=NOW, ended_at=NOW, project="demo")
    first.flush()
    LangfuseResourceManager.reset()  # another worker process
    second = tracer(exporter)
    with second.span("run-aaaa", "segmentation") as span:
        span.update(segment_count=3, token_usage_prompt=120, token_usage_completion=30)
        trace_id = span.trace_id
    with second.span("run-bbbb", "segmentation"):
        pass
    second.flush()

    spans = {(s.name, format(s.context.trace_id, "032x")): s for s in exporter.get_finished_spans()}
    root = spans[("synthesis_run", trace_id)]
    child = spans[("segmentation", trace_id)]
    assert root.parent is None and hexid(root.context.span_id) == root_span_id("run-aaaa")
    assert hexid(child.parent.span_id) == root_span_id("run-aaaa")
    assert trace_id == LangfuseTracer.trace_id("run-aaaa") != LangfuseTracer.trace_id("run-bbbb")
    attrs = dict(child.attributes)
    assert attrs["langfuse.trace.name"] == "synthesis_run"
    assert attrs["langfuse.observation.type"] == "generation"
    assert '"input": 120' in attrs["langfuse.observation.usage_details"]
    assert attrs["langfuse.observation.metadata.segment_count"] == "3"


def test_no_secret_is_ever_sent():
    exporter = InMemorySpanExporter()
    t = tracer(exporter)
    with t.span(
        "run-cccc",
        "segment_seg-0001_generation_agent",
        api_key="sk-proj-abcdefghijklmnopqrstuvwxyz",
        connection_string="DefaultEndpointsProtocol=https;AccountKey=c2VjcmV0;",
        note="called with Bearer abcdefghijklmnopqrstuvwxyz0123",
    ) as span:
        span.update(error="auth failed for sk-proj-zyxwvutsrqponmlkjihgfedcba", item_count=2)
    t.flush()
    text = all_attribute_text(exporter.get_finished_spans())
    for secret in ("sk-proj-", "AccountKey=c2V", "Bearer abc", KEYS["langfuse_secret_key"]):
        assert secret not in text
    assert "item_count" in text and "[REDACTED]" in text


def test_without_keys_tracing_is_a_no_op():
    assert isinstance(build_tracer(Settings(storage_backend="local")), NullTracer)
    half = Settings(storage_backend="local", langfuse_public_key="pk-lf-only")
    assert isinstance(build_tracer(half), NullTracer)
    off = Settings(storage_backend="local", **KEYS)
    off.pipeline.observability.enable_langfuse = False
    assert isinstance(build_tracer(off), NullTracer)


def test_a_tracing_failure_never_fails_the_caller(monkeypatch):
    t = tracer(InMemorySpanExporter())

    def broken(**kwargs):
        raise RuntimeError("langfuse is down")

    monkeypatch.setattr(t.client, "start_observation", broken)
    with t.span("run-dddd", "segmentation") as span:
        span.update(segment_count=1)
        assert span.trace_id == LangfuseTracer.trace_id("run-dddd")


def test_every_invocation_flushes_its_spans(tmp_path, monkeypatch):
    # no background export during the test: only flush() sends
    monkeypatch.setenv("LANGFUSE_FLUSH_INTERVAL", "600")
    monkeypatch.setenv("LANGFUSE_FLUSH_AT", "2048")
    exporter = InMemorySpanExporter()
    svc, bus = make_pipeline(LocalFolderStore(tmp_path))
    svc.tracer = tracer(exporter)
    with svc.tracer.span("run-eeee", "segmentation"):
        pass
    assert exporter.get_finished_spans() == ()  # not sent until someone flushes

    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "completed"
    spans = [s for s in exporter.get_finished_spans() if "run-eeee" not in all_attribute_text([s])]
    names = {s.name for s in spans}
    segments = {f"segment_seg-{k:04d}_generation_agent" for k in range(1, 4)}
    assert {"synthesis_run", "segmentation"} | segments <= names
    assert {format(s.context.trace_id, "032x") for s in spans} == {
        LangfuseTracer.trace_id(run.run_id)
    }


# ------------------------------------------------------------------------------------------------
# one root per run, the seed's span names and metrics


def spans_of(exporter: InMemorySpanExporter, run_id: str) -> list:
    trace_id = LangfuseTracer.trace_id(run_id)
    return [
        s for s in exporter.get_finished_spans() if format(s.context.trace_id, "032x") == trace_id
    ]


def meta(span) -> dict[str, object]:
    """The observation metadata Langfuse would store (the SDK sends each value as JSON)."""
    prefix = "langfuse.observation.metadata."
    return {
        k[len(prefix) :]: json.loads(v) for k, v in span.attributes.items() if k.startswith(prefix)
    }


@pytest.mark.parametrize("deliver_twice", [False, True], ids=["once", "every-message-twice"])
def test_a_run_is_one_trace_with_one_root_and_the_seed_spans(tmp_path, deliver_twice):
    exporter = InMemorySpanExporter()
    svc, bus = make_pipeline(LocalFolderStore(tmp_path), deliver_twice=deliver_twice)
    svc.tracer = tracer(exporter)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "completed"
    segments = read_jsonl(svc.store, layout.run_file(run.run_id, "segments.jsonl"), Segment)
    records = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    spans = spans_of(exporter, run.run_id)
    assert len(spans) == len(exporter.get_finished_spans())  # nothing outside the run's trace

    # exactly one root, whatever the deliveries: Langfuse v4 would keep every copy
    [root] = [s for s in spans if s.name == "synthesis_run"]
    assert root.parent is None and hexid(root.context.span_id) == root_span_id(run.run_id)
    assert root.start_time == int(run.created_at.timestamp() * 1e9)  # it spans the whole run
    assert root.end_time == int(run.completed_at.timestamp() * 1e9)
    assert min(s.start_time for s in spans) >= root.start_time
    root_meta = meta(root)
    # seed §12: run_id, project, segment_count, story_count, embedding_model, the metrics
    assert root_meta["run_id"] == run.run_id and root_meta["project"] == "demo"
    assert root_meta["segment_count"] == len(segments)
    assert root_meta["story_count"] == len(records)
    assert (
        root_meta["embedding_model"] == run.embedding_model and root_meta["status"] == "completed"
    )
    for key in ("avg_segment_tokens", "tag_distribution", "tagging_failure_rate"):
        assert key in root_meta
    assert sum(root_meta["tag_distribution"].values()) == len(records)
    assert root_meta["tagging_failure_rate"] == 0.0

    # every other span is a child of that root, named as seed §7.4, once each
    children = [s for s in spans if s.name != "synthesis_run"]
    assert all(hexid(s.parent.span_id) == root_span_id(run.run_id) for s in children)
    expected = (
        ["segmentation"]
        + [
            f"segment_{s.segment_id}_{kind}"
            for s in segments
            for kind in ("retrieval", "generation_agent")
        ]
        + [
            f"story_{r.story_id}_{kind}"
            for r in records
            for kind in ("tagging_retrieval", "tagging_agent")
        ]
    )
    if deliver_twice:
        # a duplicate delivery that really did the work again shows as its own span (another
        # span id, so another record, which is what happened); the root never does
        assert {s.name for s in children} == set(expected)
    else:
        assert sorted(s.name for s in children) == sorted(expected)
    assert all(s.attributes["langfuse.trace.name"] == "synthesis_run" for s in spans)
    segmentation = next(s for s in children if s.name == "segmentation")
    assert meta(segmentation)["segment_count"] == len(segments)
    assert "avg_tokens" in meta(segmentation)
    assert svc.store.exists(layout.outbox(run.run_id, "trace_root"))


def test_per_segment_spans_off_leaves_out_the_segment_spans_only(tmp_path):
    exporter = InMemorySpanExporter()
    svc, bus = make_pipeline(LocalFolderStore(tmp_path))
    off = PipelineConfig(observability=ObservabilityConfig(per_segment_spans=False))
    svc.tracer = tracer(exporter, pipeline=off)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "completed"
    names = [s.name for s in spans_of(exporter, run.run_id)]
    assert names.count("synthesis_run") == 1 and names.count("segmentation") == 1
    assert not [n for n in names if n.startswith("segment_")]
    records = read_jsonl(
        svc.store, layout.run_file(run.run_id, "tagging_analysis.jsonl"), TaggingRecord
    )
    assert sorted(n for n in names if n.startswith("story_")) == sorted(
        f"story_{r.story_id}_{kind}"
        for r in records
        for kind in ("tagging_retrieval", "tagging_agent")
    )
    # the generated items still name the run's trace
    items = read_jsonl(
        svc.store, layout.run_file(run.run_id, "generated_backlog.jsonl"), GeneratedItem
    )
    assert {i.trace_id for i in items} == {LangfuseTracer.trace_id(run.run_id)}


def test_a_failed_run_has_one_root_with_the_reason(tmp_path):
    exporter = InMemorySpanExporter()
    agents = Agents(
        segmenter=Flaky(
            ParagraphSegmenter(),
            "segment",
            lambda *a: True,
            lambda: SegmentationFailed("boundaries out of order", attempts=2),
        ),  # type: ignore[arg-type]
        generator=CueGenerator(),
        tagger=ThresholdTagger(),
    )
    svc, bus = make_pipeline(LocalFolderStore(tmp_path), agents=agents)
    svc.tracer = tracer(exporter)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "failed"
    # a late duplicate of the failure (e.g. the poison handler) writes no second root
    errors = read_jsonl(svc.store, layout.run_file(run.run_id, "errors.jsonl"), ErrorRecord)
    abort_run(svc, run.run_id, errors[0])
    assert not trace_run_end(svc, run)
    svc.tracer.flush()
    [root] = [s for s in spans_of(exporter, run.run_id) if s.name == "synthesis_run"]
    assert root.attributes["langfuse.observation.level"] == "ERROR"
    assert "boundaries out of order" in root.attributes["langfuse.observation.status_message"]
    assert meta(root)["status"] == "failed"


def test_without_tracing_no_root_marker_is_written(tmp_path):
    svc, bus = make_pipeline(LocalFolderStore(tmp_path))
    assert isinstance(svc.tracer, NullTracer)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert not svc.store.exists(layout.outbox(run.run_id, "trace_root"))


# ------------------------------------------------------------------------------------------------
# an unreachable Langfuse costs at most LANGFUSE_TIMEOUT per invocation


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts connections and never answers (a hanging Langfuse)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(1)
    for conn in held:
        conn.close()
    server.close()


def timed_flush(t: LangfuseTracer) -> float:
    with t.span("run-ffff", "segmentation") as span:
        span.update(segment_count=1)
    start = time.perf_counter()
    t.flush()
    return time.perf_counter() - start


def test_the_default_export_timeout_is_documented_and_bounded():
    assert Settings(storage_backend="local").langfuse_timeout == 2.0
    t = tracer(None, langfuse_host=f"http://127.0.0.1:{closed_port()}")
    assert t.timeout == 2.0
    assert timed_flush(t) < 2.0 + 0.3  # the SDK's default (5 s) cost about 3 s here


@pytest.mark.parametrize("kind", ["refused", "hanging"])
def test_an_unreachable_langfuse_costs_at_most_the_timeout(monkeypatch, silent_server, kind):
    port = closed_port() if kind == "refused" else silent_server
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "1")
    t = tracer(None, langfuse_host=f"http://127.0.0.1:{port}")
    assert t.timeout == 1.0
    costs = [timed_flush(t) for _ in range(2)]
    assert max(costs) < 1.0 + 0.3, costs


def test_an_unreachable_langfuse_never_fails_the_handlers(tmp_path, monkeypatch):
    monkeypatch.setenv("LANGFUSE_TIMEOUT", "0.5")
    monkeypatch.setenv("LANGFUSE_FLUSH_INTERVAL", "600")  # only the handlers' flushes send
    svc, bus = make_pipeline(LocalFolderStore(tmp_path), workers=1)
    svc.tracer = tracer(None, langfuse_host=f"http://127.0.0.1:{closed_port()}")
    costs: list[float] = []
    flush = svc.tracer.flush

    def measured() -> None:
        start = time.perf_counter()
        flush()
        costs.append(time.perf_counter() - start)

    monkeypatch.setattr(svc.tracer, "flush", measured)
    run = run_file(svc, bus, "demo", "m.txt", SMALL.encode())
    assert run.status == "completed"  # every handler finished despite the refused exports
    assert len(costs) >= 1 + 3 + 5  # segment, one per segment, one per story, finalize ...
    assert max(costs) < 0.5 + 0.3, costs
    # a handler called directly behaves the same: no exception, bounded
    start = time.perf_counter()
    process(svc, "synth-finalize", f'{{"run_id": "{run.run_id}"}}')
    assert time.perf_counter() - start < 0.5 + 0.5
