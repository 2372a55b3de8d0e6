"""The embedded vector index: exact cosine, Pinecone-style filters, persistence, the recorded
embedder and the dimension / model checks, rebuild."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shared import layout
from shared.storage.local import LocalFolderStore
from shared.vectorstore import (
    DimensionMismatch,
    VectorRecord,
    drop_namespace,
    embedder_setting,
    index_mismatch,
    matches_filter,
)
from shared.vectorstore.embedded import EmbeddedVectorIndex


def unit(*v):
    a = np.array(v, dtype=np.float32)
    return (a / np.linalg.norm(a)).tolist()


@pytest.fixture
def index(tmp_path):
    idx = EmbeddedVectorIndex(LocalFolderStore(tmp_path), dimension=3)
    idx.upsert(
        "p",
        [
            VectorRecord("a", unit(1, 0, 0), {"kind": "story", "n": 1}),
            VectorRecord("b", unit(1, 1, 0), {"kind": "story", "n": 2}),
            VectorRecord("c", unit(0, 0, 1), {"kind": "doc", "n": 3, "tags": ["x", "y"]}),
        ],
    )
    return idx


def test_query_ranks_by_cosine_and_filters(index):
    hits = index.query("p", unit(1, 0.1, 0), top_k=3)
    assert [h.id for h in hits] == ["a", "b", "c"]
    assert hits[0].score == pytest.approx(0.995, abs=1e-3)
    assert [h.id for h in index.query("p", unit(1, 0, 0), 5, {"kind": {"$eq": "doc"}})] == ["c"]
    assert [h.id for h in index.query("p", unit(1, 0, 0), 5, {"n": {"$in": [2, 3]}})] == ["b", "c"]
    assert [h.id for h in index.query("p", unit(1, 0, 0), 5, {"tags": "y"})] == ["c"]
    assert index.query("other", unit(1, 0, 0), 5) == []


def test_upsert_replaces_delete_removes_and_it_persists(tmp_path, index):
    index.upsert("p", [VectorRecord("a", unit(0, 0, 1), {"kind": "doc"})])
    assert index.count("p") == 3
    assert index.delete("p", ["b", "missing"]) == 1
    fresh = EmbeddedVectorIndex(LocalFolderStore(tmp_path), dimension=3)  # another process
    assert fresh.count("p") == 2
    assert fresh.fetch("p", ["a"])["a"].metadata == {"kind": "doc"}
    assert {h.id for h in fresh.query("p", unit(0, 0, 1), 2)} == {"a", "c"}


def test_another_writer_is_seen_by_a_cached_reader(tmp_path, index):
    index.query("p", unit(1, 0, 0), 1)  # cache it
    other = EmbeddedVectorIndex(LocalFolderStore(tmp_path), dimension=3)
    other.upsert("p", [VectorRecord("d", unit(0, 1, 0), {})])
    assert index.query("p", unit(0, 1, 0), 1)[0].id == "d"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class EtagCounter(LocalFolderStore):
    def __init__(self, root) -> None:
        super().__init__(root)
        self.etags = 0

    def etag(self, path):
        self.etags += 1
        return super().etag(path)


def test_a_recheck_window_checks_once_and_sees_another_writer_after_it(
    tmp_path, index, monkeypatch
):
    from shared.vectorstore import embedded

    clock = Clock()
    monkeypatch.setattr(embedded, "time", clock)
    store = EtagCounter(tmp_path)
    reader = EmbeddedVectorIndex(store, dimension=3, recheck_seconds=1.0)
    assert reader.query("p", unit(1, 0, 0), 1)[0].id == "a"  # loads it
    store.etags = 0
    for _ in range(5):  # a burst within the window: no check
        reader.query("p", unit(0, 1, 0), 1)
    assert store.etags == 0
    other = EmbeddedVectorIndex(LocalFolderStore(tmp_path), dimension=3)
    other.upsert("p", [VectorRecord("d", unit(0, 1, 0), {})])
    clock.now += 0.5
    assert reader.query("p", unit(0, 1, 0), 1)[0].id == "b"  # not seen yet: at most 1 s stale
    clock.now += 0.6
    assert reader.query("p", unit(0, 1, 0), 1)[0].id == "d"  # the window has passed: checked
    assert store.etags >= 1
    reader.upsert("p", [VectorRecord("e", unit(0, 0.1, 1), {})])  # its own write: seen at once
    assert reader.query("p", unit(0, 0.1, 1), 1)[0].id == "e"


def test_without_a_recheck_window_every_query_checks(tmp_path, index):
    store = EtagCounter(tmp_path)
    reader = EmbeddedVectorIndex(store, dimension=3)
    reader.query("p", unit(1, 0, 0), 1)
    store.etags = 0
    for _ in range(3):
        reader.query("p", unit(1, 0, 0), 1)
    assert store.etags == 3


def test_dimension_mismatch_is_a_clear_error(tmp_path, index):
    with pytest.raises(DimensionMismatch):
        index.upsert("p", [VectorRecord("x", [1.0, 0.0], {})])
    wrong = EmbeddedVectorIndex(LocalFolderStore(tmp_path), dimension=384)
    with pytest.raises(DimensionMismatch, match="reload the index"):
        wrong.query("p", [0.1] * 384, 1)


def test_the_index_records_its_embedder_beside_the_vectors(tmp_path):
    store = LocalFolderStore(tmp_path)
    idx = EmbeddedVectorIndex(store, dimension=3, embedder="model-a")
    idx.upsert("p", [VectorRecord("a", unit(1, 0, 0), {}), VectorRecord("b", unit(0, 1, 0), {})])
    info = {"embedder": "model-a", "dimension": 3, "count": 2}
    assert json.loads(store.get(layout.index_info("p"))) == info
    assert idx.describe("p") == info and idx.describe("empty") is None
    idx.check_embedder("p", "model-a", 3)
    idx.check_embedder("empty", "other", 99)  # nothing loaded: nothing to disagree with
    # the same size from another model is refused too, by the check and by every read
    with pytest.raises(DimensionMismatch, match="was loaded with model-a but the embedder model-b"):
        idx.check_embedder("p", "model-b", 3)
    other = EmbeddedVectorIndex(store, dimension=3, embedder="model-b")
    with pytest.raises(DimensionMismatch, match="vectors of two models are not comparable"):
        other.query("p", unit(1, 0, 0), 1)
    with pytest.raises(DimensionMismatch, match="has dimension 3 .loaded with model-a. but"):
        EmbeddedVectorIndex(store, dimension=384).check_embedder("p", None, 384)
    # a writer that does not know its model keeps the recorded one
    EmbeddedVectorIndex(store, dimension=3).upsert("p", [VectorRecord("c", unit(0, 0, 1), {})])
    assert idx.describe("p") == {**info, "count": 3}


def test_the_check_reads_the_info_file_not_the_vectors(tmp_path, monkeypatch):
    store = LocalFolderStore(tmp_path)
    EmbeddedVectorIndex(store, dimension=3, embedder="m").upsert(
        "p", [VectorRecord("a", unit(1, 0, 0), {})]
    )
    reads: list[str] = []
    get = store.get
    monkeypatch.setattr(store, "get", lambda path: reads.append(path) or get(path))
    monkeypatch.setattr(store, "get_with_etag", lambda path: pytest.fail("read the vectors"))
    with pytest.raises(DimensionMismatch):
        EmbeddedVectorIndex(store, dimension=384, embedder="n").check_embedder("p", "n", 384)
    assert reads == [layout.index_info("p")]


def test_an_index_written_before_the_info_existed_is_checked_by_its_vectors(tmp_path):
    store = LocalFolderStore(tmp_path)
    EmbeddedVectorIndex(store, dimension=3).upsert("p", [VectorRecord("a", unit(1, 0, 0), {})])
    store.delete(layout.index_info("p"))
    idx = EmbeddedVectorIndex(store, dimension=384, embedder="text-embedding-3-small")
    assert idx.describe("p") == {"embedder": None, "dimension": 3, "count": 1}
    with pytest.raises(DimensionMismatch, match="has dimension 3 but the embedder "):
        idx.check_embedder("p", "text-embedding-3-small", 384)


def test_the_message_names_the_fix():
    err = index_mismatch(
        "index namespace 'demo'",
        "demo",
        index_dimension=384,
        index_embedder="all-MiniLM-L6-v2-int8",
        embedder="text-embedding-3-small",
        dimension=1536,
    )
    text = str(err)
    assert text.startswith(
        "index namespace 'demo' has dimension 384 (loaded with all-MiniLM-L6-v2-int8) but the "
        "embedder text-embedding-3-small gives 1536: reload the index with this embedder "
        "(python -m loaders.ado_loader --project demo --rebuild"
    )
    assert text.endswith("or set SYNTH_EMBEDDER=minilm")
    assert embedder_setting("text-embedding-3-small", 1536) == (
        "SYNTH_EMBEDDER=openai with SYNTH_PIPELINE__EMBEDDING__MODEL=text-embedding-3-small"
    )
    assert embedder_setting(None, 384) == "SYNTH_EMBEDDER=minilm"


def test_drop_empties_the_namespace(tmp_path, index):
    assert drop_namespace(index, "p") == 3
    assert index.count("p") == 0 and index.describe("p") is None
    index.upsert("p", [VectorRecord("z", unit(0, 1, 0), {})])
    assert index.count("p") == 1


def test_filter_operators():
    md = {"a": 1, "t": ["x"]}
    assert matches_filter(md, {"$and": [{"a": 1}, {"t": {"$in": ["x", "z"]}}]})
    assert not matches_filter(md, {"a": {"$ne": 1}})
    assert matches_filter(md, {"t": {"$nin": ["q"]}})
    with pytest.raises(ValueError):
        matches_filter(md, {"a": {"$gt": 0}})
