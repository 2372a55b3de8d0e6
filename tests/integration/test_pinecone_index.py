"""The Pinecone adapter on the real ``pinecone`` SDK against the data-plane stand-in: batches,
namespaces, filters, fetch, delete, list, the dimension check, index by name, the loaders' prune."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devhost.standins.openai_standin import hermetic_env
from shared.embeddings import DimensionMismatch
from shared.indexing.indexer import index_work_items
from shared.models import WorkItem
from shared.retrieval.search import ADO_FILTER, USER_STORY_FILTER
from shared.services import build_index
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from shared.vectorstore import VectorRecord, check_index, drop_namespace
from shared.vectorstore.pinecone_index import PineconeIndex
from tests.support.fakes import HashEmbedder
from tests.support.pinecone_standin import PineconeStandIn

DIM = 8


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch):
    hermetic_env(monkeypatch)


@pytest.fixture
def pinecone() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=DIM) as standin:
        yield standin


def unit(i: int) -> list[float]:
    v = [0.0] * DIM
    v[i % DIM] = 1.0
    v[(i + 1) % DIM] = 0.5
    return v


def records(n: int, prefix: str = "ado-", **meta: object) -> list[VectorRecord]:
    return [VectorRecord(f"{prefix}{i}", unit(i), {"n": i, **meta}) for i in range(n)]


def test_upserts_are_batched_and_namespaces_kept_apart(pinecone):
    index = PineconeIndex.connect("key", DIM, host=pinecone.url)
    assert index.upsert("alpha", records(250)) == 250
    assert index.upsert("beta", records(3)) == 3
    assert pinecone.paths().count("/vectors/upsert") == 4  # 100 + 100 + 50, then 3
    assert index.count("alpha") == 250 and index.count("beta") == 3 and index.count("none") == 0


def test_query_with_a_namespace_and_a_metadata_filter(pinecone):
    index = PineconeIndex.connect("key", DIM, host=pinecone.url)
    index.upsert(
        "p",
        [
            VectorRecord(
                "ado-1", unit(1), {"source_type": "ado_backlog", "work_item_type": "Epic"}
            ),
            VectorRecord(
                "ado-2",
                unit(1),
                {"source_type": "ado_backlog", "work_item_type": "User Story", "parent_id": None},
            ),
            VectorRecord("arch-1", unit(1), {"doc_type": "architecture"}),
        ],
    )
    assert [m.id for m in index.query("p", unit(1), 5, ADO_FILTER)] == ["ado-1", "ado-2"]
    hits = index.query("p", unit(1), 5, USER_STORY_FILTER)
    assert [m.id for m in hits] == ["ado-2"]
    assert hits[0].score == pytest.approx(1.0) and "parent_id" not in hits[0].metadata
    assert index.query("other", unit(1), 5) == []


def test_fetch_delete_and_list_by_prefix_across_pages(pinecone):
    index = PineconeIndex.connect("key", DIM, host=pinecone.url)
    index.upsert("p", records(250) + records(5, prefix="arch-doc-"))
    got = index.fetch("p", ["ado-3", "ado-999"])
    assert list(got) == ["ado-3"] and got["ado-3"].metadata["n"] == 3
    assert len(index.list_ids("p", "ado-")) == 250  # three pages of 100
    assert sorted(index.list_ids("p", "arch-doc-")) == [f"arch-doc-{i}" for i in range(5)]
    assert index.delete("p", ["ado-1", "ado-2"]) == 2
    assert index.count("p") == 253 and "ado-1" not in index.list_ids("p", "ado-1")


def test_an_index_of_another_dimension_is_refused_before_any_query(pinecone):
    index = PineconeIndex.connect("key", 384, host=pinecone.url, embedder="all-MiniLM-L6-v2-int8")
    with pytest.raises(
        DimensionMismatch,
        match="has dimension 8 but the embedder all-MiniLM-L6-v2-int8 gives 384: use a "
        "Pinecone index of dimension 384",
    ):
        index.query("p", [0.0] * 384, 3)
    assert pinecone.paths() == ["/describe_index_stats"]
    # the pipeline's pre-run check says the same, from the same single stats call
    with pytest.raises(DimensionMismatch, match="has dimension 8"):
        check_index(index, "p", MiniLMLike())
    assert pinecone.paths() == ["/describe_index_stats"] * 2


class MiniLMLike:
    model_name = "all-MiniLM-L6-v2-int8"
    dimension = 384


def test_rebuild_empties_one_namespace(pinecone):
    index = PineconeIndex.connect("key", DIM, host=pinecone.url)
    index.upsert("p", records(5))
    index.upsert("q", records(3))
    drop_namespace(index, "p")
    assert index.count("p") == 0 and index.count("q") == 3


def test_the_index_by_name_is_resolved_on_the_control_plane(pinecone, monkeypatch):
    monkeypatch.setenv("PINECONE_CONTROLLER_HOST", pinecone.url)
    index = PineconeIndex.connect("key", DIM, name="brd-upload")
    index.upsert("p", records(2))
    assert pinecone.paths()[:2] == ["/indexes/brd-upload", "/describe_index_stats"]
    assert pinecone.requests[0].headers["api-key"] == "key"


def test_transient_errors_are_retried_by_the_sdk(pinecone):
    index = PineconeIndex.connect("key", DIM, host=pinecone.url)
    index.upsert("p", records(2))
    pinecone.fail_next(503)
    assert index.count("p") == 2


def test_settings_build_the_pinecone_index(pinecone, tmp_path):
    settings = Settings(storage_backend="local", pinecone_api_key="key", pinecone_host=pinecone.url)
    index = build_index(settings, LocalFolderStore(tmp_path), HashEmbedder())
    assert isinstance(index, PineconeIndex) and index.dimension == 384


def test_the_backlog_loader_upserts_skips_unchanged_and_prunes_through_pinecone():
    with PineconeStandIn(dimension=384) as pinecone:
        index = PineconeIndex.connect("key", 384, host=pinecone.url)
        embedder = HashEmbedder()
        items = [
            WorkItem(work_item_id=i, work_item_type="User Story", title=f"Story {i}")
            for i in range(1, 6)
        ]
        first = index_work_items(embedder, index, "p", items)
        assert first.upserted == 5 and pinecone.count("p") == 5
        second = index_work_items(embedder, index, "p", items[:3])
        assert second.skipped == 3 and second.upserted == 0 and second.deleted == 2
        assert sorted(index.list_ids("p", "ado-")) == ["ado-1", "ado-2", "ado-3"]
