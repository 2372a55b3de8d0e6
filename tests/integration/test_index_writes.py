"""The index after a write when it cannot follow at once (shared/indexing/writes.py): the write
stands, says why, and writing again or the next sync indexes what it wrote. A hand-made run
(tests/support/review_run.py) written to the fake ADO server with the hash embedder."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from devhost.standins.fake_ado import FakeAdo
from shared.indexing import writes
from shared.indexing.backlog import index_lease, load_backlog
from shared.indexing.sync import sync_project
from shared.storage.local import LocalFolderStore
from shared.vectorstore import VectorRecord
from shared.vectorstore.embedded import EmbeddedVectorIndex
from shared.writer.runs import write_run
from tests.support.fakes import HashEmbedder
from tests.support.pipeline import fake_services
from tests.support.review_run import review_backlog, store_run

PROJECT = "rc"


class BrokenIndex(EmbeddedVectorIndex):
    """Refuses every upsert while ``broken``."""

    broken = True

    def upsert(self, namespace: str, records: Sequence[VectorRecord]) -> int:
        if self.broken:
            raise OSError("the vector store is unreachable")
        return super().upsert(namespace, records)


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[dict[str, Any]]:
    embedder = HashEmbedder()
    store = LocalFolderStore(tmp_path)
    index = BrokenIndex(store, embedder.dimension)
    index.broken = False
    svc = fake_services(store, None, embedder=embedder)
    svc.index_factory = lambda s, st, e: index
    with FakeAdo() as fake:
        fake.seed_sample()
        with fake.client(sleep=lambda s: None) as client:
            load_backlog(svc, PROJECT, client=client, show_progress=False)
            b, _ = review_backlog()
            run_id = store_run(svc, b)
            yield {"svc": svc, "client": client, "index": index, "run_id": run_id, "fake": fake}


def created(body: dict[str, Any]) -> list[int]:
    return [r["ado_id"] for r in body["results"] if r["status"] == "created"]


def in_index(svc: Any, ids: list[int]) -> set[int]:
    return {int(v[4:]) for v in svc.index.fetch(PROJECT, [f"ado-{i}" for i in ids])}


def test_a_write_while_a_sync_runs_is_indexed_by_the_next_sync(
    setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    svc, client, run_id = setup["svc"], setup["client"], setup["run_id"]
    monkeypatch.setattr(writes, "INDEX_WAIT_SECONDS", 0.0)
    with index_lease(svc, PROJECT):  # a sync or load of the project is running
        body = write_run(svc, run_id, client)
    ids = created(body)
    assert ids and body["counts"]["failed"] == 0  # the write stands
    update = body["index_update"]
    assert update["status"] == "deferred" and "next sync" in update["error"]
    assert all(r["indexed"] is False for r in body["results"] if r["status"] == "created")
    assert in_index(svc, ids) == set()

    report = sync_project(svc, PROJECT, client)
    assert set(ids) <= set(report.added)
    assert in_index(svc, ids) == set(ids)


def test_an_index_that_fails_never_fails_the_write_and_writing_again_finishes_it(
    setup: dict[str, Any],
) -> None:
    svc, client, run_id, index = (setup[k] for k in ("svc", "client", "run_id", "index"))
    index.broken = True
    body = write_run(svc, run_id, client)
    ids = created(body)
    assert ids and body["counts"]["failed"] == 0
    assert body["index_update"]["status"] == "failed"
    assert "unreachable" in body["index_update"]["error"]

    index.broken = False
    again = write_run(svc, run_id, client)
    assert again["counts"]["created"] == again["counts"]["modified"] == 0
    update = again["index_update"]
    assert update["status"] == "updated" and set(ids) <= set(update["indexed_ids"])
    assert all(r["indexed"] for r in again["results"] if r["status"] in ("existing", "modified"))
    assert in_index(svc, ids) == set(ids)

    # and once more: nothing new to embed, the index as it was
    third = write_run(svc, run_id, client)
    assert third["index_update"]["embedded"] == 0 and third["index_update"]["added"] == 0
