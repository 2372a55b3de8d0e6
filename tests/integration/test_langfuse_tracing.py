"""The Langfuse tracer with spans captured by an in-memory OpenTelemetry exporter: one trace per
run across separate invocations, seed span names, secrets never sent, flush per invocation,
no-op without keys."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langfuse._client.resource_manager import LangfuseResourceManager
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from shared.services import build_tracer
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from shared.tracing import NullTracer
from shared.tracing_langfuse import LangfuseTracer, root_span_id
from tests.support.openai_standin import hermetic_env
from tests.support.pipeline import make_pipeline, run_file
from tests.support.transcripts import SMALL

pytestmark = pytest.mark.integration
KEYS = {"langfuse_public_key": "pk-lf-test-public", "langfuse_secret_key": "sk-lf-test-secret"}


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch):
    hermetic_env(monkeypatch)


@pytest.fixture(autouse=True)
def fresh_langfuse() -> Iterator[None]:
    LangfuseResourceManager.reset()  # clients are singletons per public key
    yield
    LangfuseResourceManager.reset()


def tracer(exporter: InMemorySpanExporter) -> LangfuseTracer:
    settings = Settings(storage_backend="local", langfuse_host="http://127.0.0.1:9", **KEYS)
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
    with first.span("run-aaaa", "synthesis_run", project="demo"):
        pass
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
