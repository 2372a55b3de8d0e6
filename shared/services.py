"""The composition root: the one place that builds real dependencies from settings.

Handlers take a ``Services`` holder and never build clients themselves. Expensive members (the
embedder, the vector index, the agents) are created on first use, so an HTTP status call never loads
an ONNX model and cold start stays small.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from shared.agents import Agents
from shared.bus import MessageBus
from shared.embeddings import Embedder
from shared.errors import ConfigurationError
from shared.models import utcnow
from shared.settings import Settings, get_settings
from shared.storage import ArtifactStore
from shared.tracing import NullTracer, Tracer
from shared.vectorstore import VectorIndex

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from shared.llm.limiter import ModelLimits

# how long the embedded index's copy in memory is used without checking the blob's ETag: a burst
# of queries (a run's 36 taggings) makes one check; another process's write (a loader) is seen at
# most this much later (shared/vectorstore/embedded.py)
INDEX_RECHECK_SECONDS = 1.0


T = TypeVar("T")


@dataclass
class Services:
    settings: Settings
    store: ArtifactStore
    bus: MessageBus
    tracer: Tracer = field(default_factory=NullTracer)
    clock: Callable[[], datetime] = utcnow
    embedder_factory: Callable[[Settings], Embedder] | None = None
    index_factory: Callable[[Settings, ArtifactStore, Embedder], VectorIndex] | None = None
    agents_factory: Callable[[Settings, Embedder], Agents] | None = None
    fallback_agents_factory: Callable[[Settings, Embedder], Agents] | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def _lazy(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name not in self._cache:
                self._cache[name] = build()
            return self._cache[name]

    @property
    def limits(self) -> ModelLimits | None:
        """The shared rate limiter's per-deployment budgets (``shared.llm.limiter``); None when
        ``SYNTH_MODEL_TPM`` / ``RPM`` (and the embedding ones) are 0: no limiter, no storage call."""

        def build() -> ModelLimits | None:
            from shared.llm.limiter import ModelLimits

            return ModelLimits.from_settings(self.settings, self.store)

        return self._lazy("limits", build)

    @property
    def embedder(self) -> Embedder:
        if self.embedder_factory is None:  # the default factory caches vectors in the store
            return self._lazy(
                "embedder", lambda: build_embedder(self.settings, self.store, self.limits)
            )
        factory = self.embedder_factory
        return self._lazy("embedder", lambda: factory(self.settings))

    @property
    def index(self) -> VectorIndex:
        factory = self.index_factory or build_index
        return self._lazy("index", lambda: factory(self.settings, self.store, self.embedder))

    @property
    def agents(self) -> Agents:
        if self.agents_factory is None:  # the default factory's model calls share the limits
            return self._lazy(
                "agents", lambda: build_agents(self.settings, self.embedder, self.limits)
            )
        factory = self.agents_factory
        return self._lazy("agents", lambda: factory(self.settings, self.embedder))

    @property
    def fallback_agents(self) -> Agents:
        """The offline engine, for the units of an LLM run whose model endpoint was unreachable
        (shared/pipeline/fallback.py); built on first use."""
        factory = self.fallback_agents_factory or build_fallback_agents
        return self._lazy("fallback_agents", lambda: factory(self.settings, self.embedder))

    @property
    def engine(self) -> str:
        return self.settings.resolved_engine()


# ------------------------------------------------------------------------------------------------
# factories


def _azure_credential(settings: Settings) -> Any:
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential(managed_identity_client_id=settings.azure_storage_client_id)


def build_store(settings: Settings) -> ArtifactStore:
    if settings.resolved_storage_backend() == "local":
        from shared.storage.local import LocalFolderStore

        return LocalFolderStore(settings.local_store_dir)
    from shared.storage.azure_blob import AzureBlobStore

    if settings.azure_storage_connection:
        return AzureBlobStore.from_connection_string(
            settings.azure_storage_connection.get_secret_value()
        )
    if settings.azure_blob_service_uri:
        return AzureBlobStore.from_service_uri(
            settings.azure_blob_service_uri, _azure_credential(settings)
        )
    raise ConfigurationError(
        "Azure storage selected but neither AzureWebJobsStorage nor "
        "AzureWebJobsStorage__blobServiceUri is set"
    )


def build_bus(settings: Settings) -> MessageBus:
    from shared.bus.azure_queue import AzureQueueBus

    if settings.azure_storage_connection:
        return AzureQueueBus.from_connection_string(
            settings.azure_storage_connection.get_secret_value()
        )
    if settings.azure_queue_service_uri:
        return AzureQueueBus.from_service_uri(
            settings.azure_queue_service_uri, _azure_credential(settings)
        )
    raise ConfigurationError(
        "the Azure queue bus needs AzureWebJobsStorage or AzureWebJobsStorage__queueServiceUri"
    )


def build_embedder(
    settings: Settings, store: ArtifactStore | None = None, limits: ModelLimits | None = None
) -> Embedder:
    """The embedder the settings choose; ``limits``: the shared rate limiter for the OpenAI one."""
    if settings.resolved_embedder() == "minilm":
        from shared.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    from shared.embeddings.openai_embedder import OpenAIEmbedder
    from shared.llm.client import build_openai_client
    from shared.llm.config import embedding_model

    try:
        client = build_openai_client(
            settings, event_hooks=limits.event_hooks() if limits is not None else None
        )
    except ConfigurationError as err:
        raise ConfigurationError(f"SYNTH_EMBEDDER=openai: {err}") from None
    cfg = settings.pipeline.embedding
    model = embedding_model(settings)
    return OpenAIEmbedder(
        client,
        model,
        cfg.dimensions,
        store=store,  # content-hash cache: nothing is embedded twice
        batch_size=cfg.batch_size,
        limiter=limits.embeddings(model) if limits is not None else None,
    )


def build_index(settings: Settings, store: ArtifactStore, embedder: Embedder) -> VectorIndex:
    if settings.resolved_vector_store() == "embedded":
        from shared.vectorstore.embedded import EmbeddedVectorIndex

        return EmbeddedVectorIndex(
            store,
            embedder.dimension,
            embedder.model_name,
            recheck_seconds=INDEX_RECHECK_SECONDS,
        )
    key = settings.pinecone_api_key.get_secret_value() if settings.pinecone_api_key else ""
    if not key:
        raise ConfigurationError("SYNTH_VECTOR_STORE=pinecone needs PINECONE_API_KEY")
    from shared.vectorstore.pinecone_index import PineconeIndex

    return PineconeIndex.connect(
        key,
        embedder.dimension,
        host=settings.pinecone_host,
        name=settings.pinecone_index,
        embedder=embedder.model_name,
    )


def build_agents(
    settings: Settings, embedder: Embedder, limits: ModelLimits | None = None
) -> Agents:
    """The engine the settings choose; ``limits``: the shared rate limiter for the LLM engine."""
    if settings.resolved_engine() == "offline":
        from shared.engine.offline import build_offline_agents

        return build_offline_agents(embedder, settings.pipeline)
    from shared.engine.llm import build_llm_agents
    from shared.hygiene import find_annotations

    # the hygiene gate's instruction-like spans, listed in the prompt before each data block
    annotate = find_annotations if settings.pipeline.hygiene.annotate_instructions else None
    return build_llm_agents(settings, embedder, annotate=annotate, limits=limits)


def build_fallback_agents(settings: Settings, embedder: Embedder) -> Agents:
    """The offline engine on the packaged MiniLM (the embedder it was built and calibrated with,
    and one that needs no endpoint: an OpenAI embedder may be down with the chat model)."""
    from shared.engine.offline import build_offline_agents
    from shared.engine.offline.capture import capture_embedder

    return build_offline_agents(capture_embedder(embedder), settings.pipeline)


def build_tracer(settings: Settings, *, span_exporter: SpanExporter | None = None) -> Tracer:
    """Langfuse when both keys are set (and ``observability.enable_langfuse``), else no-op.
    ``span_exporter`` replaces Langfuse's OTLP exporter (tests capture spans in memory)."""
    secret = settings.langfuse_secret_key.get_secret_value() if settings.langfuse_secret_key else ""
    if not (settings.pipeline.observability.enable_langfuse and settings.langfuse_public_key):
        return NullTracer()
    if not secret:
        logging.getLogger(__name__).warning(
            "LANGFUSE_PUBLIC_KEY is set but LANGFUSE_SECRET_KEY is not: tracing is off"
        )
        return NullTracer()
    from shared import __version__
    from shared.tracing_langfuse import LangfuseTracer

    return LangfuseTracer(
        settings.langfuse_public_key,
        secret,
        settings.langfuse_host,
        span_exporter=span_exporter,
        release=__version__,
        timeout=settings.langfuse_timeout,
        per_segment_spans=settings.pipeline.observability.per_segment_spans,
    )


def build_services(
    settings: Settings | None = None,
    *,
    store: ArtifactStore | None = None,
    bus: MessageBus | None = None,
) -> Services:
    settings = settings or get_settings()
    return Services(
        settings=settings,
        store=store if store is not None else build_store(settings),
        bus=bus if bus is not None else build_bus(settings),
        tracer=build_tracer(settings),
    )


@functools.lru_cache(maxsize=1)
def app_services() -> Services:
    """The Functions app's services: built once per worker process, on first use."""
    return build_services()
