"""The embedded vector index: exact cosine, Pinecone-style filters, persistence, dimension checks."""

from __future__ import annotations

import numpy as np
import pytest

from shared.storage.local import LocalFolderStore
from shared.vectorstore import DimensionMismatch, VectorRecord, matches_filter
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


def test_dimension_mismatch_is_a_clear_error(tmp_path, index):
    with pytest.raises(DimensionMismatch):
        index.upsert("p", [VectorRecord("x", [1.0, 0.0], {})])
    wrong = EmbeddedVectorIndex(LocalFolderStore(tmp_path), dimension=384)
    with pytest.raises(DimensionMismatch, match="reload the index"):
        wrong.query("p", [0.1] * 384, 1)


def test_filter_operators():
    md = {"a": 1, "t": ["x"]}
    assert matches_filter(md, {"$and": [{"a": 1}, {"t": {"$in": ["x", "z"]}}]})
    assert not matches_filter(md, {"a": {"$ne": 1}})
    assert matches_filter(md, {"t": {"$nin": ["q"]}})
    with pytest.raises(ValueError):
        matches_filter(md, {"a": {"$gt": 0}})
