"""Build a pipeline over any store with the in-process bus, for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.agents import Agents
from shared.bus.memory import InProcessBus
from shared.indexing.indexer import index_work_items
from shared.models import RunStatus, WorkItem
from shared.pipeline import bind_in_process
from shared.pipeline.runs import load_run, start_run
from shared.services import Services
from shared.settings import Settings
from shared.storage import ArtifactStore
from shared.vectorstore.embedded import EmbeddedVectorIndex
from tests.support.fakes import HashEmbedder, fake_agents

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def fake_services(
    store: ArtifactStore,
    bus: Any,
    *,
    agents: Agents | None = None,
    embedder: Any = None,
    settings: Settings | None = None,
) -> Services:
    """Services over any store and bus with the hash embedder and the fake agents by default."""
    settings = settings or Settings(storage_backend="local", engine="offline", embedder="minilm")
    embedder = embedder or HashEmbedder()
    chosen = agents or fake_agents()
    return Services(
        settings=settings,
        store=store,
        bus=bus,
        embedder_factory=lambda s: embedder,
        index_factory=lambda s, st, e: EmbeddedVectorIndex(st, e.dimension),
        agents_factory=lambda s, e: chosen,
    )


def make_pipeline(
    store: ArtifactStore,
    *,
    agents: Agents | None = None,
    embedder: Any = None,
    deliver_twice: bool = False,
    max_dequeue_count: int = 3,
    workers: int = 4,
    settings: Settings | None = None,
) -> tuple[Services, InProcessBus]:
    bus = InProcessBus(
        workers=workers, max_dequeue_count=max_dequeue_count, deliver_twice=deliver_twice
    )
    svc = fake_services(store, bus, agents=agents, embedder=embedder, settings=settings)
    bind_in_process(bus, svc)
    return svc, bus


def load_backlog(svc: Services, project: str, items: list[WorkItem]) -> None:
    index_work_items(svc.embedder, svc.index, project, items)


def run_file(svc: Services, bus: InProcessBus, project: str, name: str, data: bytes) -> RunStatus:
    path = f"transcripts/{project}/{name}"
    svc.store.put(path, data)
    run = start_run(svc, path, data)
    bus.drain()
    return load_run(svc, run.run_id)


def artifact_bytes(svc: Services, run_id: str) -> dict[str, bytes]:
    """Every artifact of a run (parts included), minus what legitimately differs per delivery."""
    out = {}
    for path in svc.store.list(f"runs/{run_id}/"):
        if "/parts/attempts/" in path or "/parts/outbox/" in path:
            continue
        out[path] = svc.store.get(path)
    return out
