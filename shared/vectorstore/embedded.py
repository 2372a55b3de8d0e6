"""The embedded vector index: exact cosine search in numpy, persisted through the artifact store.

One namespace is one blob (``index/{namespace}/vectors.npz``: ids, float32 matrix, metadata JSON,
and ``info``: the embedder that made the vectors and their dimension). A small copy of ``info``
(with the vector count) is written beside it, ``index/{namespace}/index.json``, so a run can check
the index against the configured embedder before its first model call without reading the vectors
(``check_embedder``). A namespace loaded with another embedder (another dimension, or another
model where both are recorded) is a ``DimensionMismatch`` saying how to fix it, never a search
over garbage. A process keeps each namespace in memory and reloads it when the blob's ETag
changes, so several function workers see the loaders' writes. Writes are read-modify-write under an
ETag condition.

Freshness: by default every query checks the blob's ETag (one storage round trip). With
``recheck_seconds`` > 0 (the Functions app: ``INDEX_RECHECK_SECONDS``) a query made within that
many seconds of the last check in this process uses the copy in memory, so a burst of queries (36
taggings of one run start together) costs one check instead of 36. Another process's write is then
seen at most ``recheck_seconds`` later; this process's own writes are seen at once. Writes always
read the blob as stored.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shared import layout
from shared.embeddings import DimensionMismatch
from shared.storage import ArtifactStore, NotFound, PreconditionFailed
from shared.vectorstore import (
    Match,
    VectorRecord,
    index_mismatch,
    matches_filter,
)


@dataclass
class _Namespace:
    etag: str | None
    ids: list[str]
    vectors: np.ndarray  # (n, dim) float32, L2-normalized
    metadata: list[dict[str, Any]]
    masks: dict[str, np.ndarray] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # {"embedder": ..., "dimension": ...}
    checked: float = field(default_factory=time.monotonic)  # when the ETag was last checked

    def mask(self, flt: dict[str, Any]) -> np.ndarray:
        """Which rows pass the filter; computed once per filter and index version."""
        key = json.dumps(flt, sort_keys=True)
        found = self.masks.get(key)
        if found is None:
            found = np.fromiter(
                (matches_filter(m, flt) for m in self.metadata), dtype=bool, count=len(self.ids)
            )
            self.masks[key] = found
        return found

    @property
    def position(self) -> dict[str, int]:
        return {id_: i for i, id_ in enumerate(self.ids)}


def _encode(ns: _Namespace) -> bytes:
    buf = io.BytesIO()
    meta = json.dumps(ns.metadata, separators=(",", ":")).encode()
    info = json.dumps(ns.info, separators=(",", ":")).encode()
    np.savez(
        buf,
        ids=np.array(ns.ids, dtype=np.str_),
        vectors=ns.vectors.astype(np.float32),
        metadata=np.frombuffer(meta, dtype=np.uint8),
        info=np.frombuffer(info, dtype=np.uint8),
    )
    return buf.getvalue()


def _decode(data: bytes, etag: str) -> _Namespace:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        ids = [str(x) for x in npz["ids"]]
        vectors = npz["vectors"].astype(np.float32)
        metadata = json.loads(npz["metadata"].tobytes().decode() or "[]")
        # indexes written before the info was recorded: the dimension is the matrix's
        info = json.loads(npz["info"].tobytes().decode() or "{}") if "info" in npz.files else {}
    if ids:
        info.setdefault("dimension", int(vectors.shape[1]))
    return _Namespace(etag, ids, vectors, metadata, info=info)


def _normalize(v: Any) -> np.ndarray:
    arr = np.asarray(v, dtype=np.float32)
    norm = np.linalg.norm(arr, axis=-1, keepdims=True)
    return arr / np.maximum(norm, 1e-12)


class EmbeddedVectorIndex:
    """``embedder``: the name of the model whose vectors this index holds (recorded on write,
    checked on read when both sides know it); ``dimension``: their size (always checked);
    ``recheck_seconds``: how long a query may use the copy in memory without checking the blob's
    ETag (0: every query checks; see the module docstring)."""

    def __init__(
        self,
        store: ArtifactStore,
        dimension: int,
        embedder: str | None = None,
        *,
        recheck_seconds: float = 0.0,
    ) -> None:
        self.store = store
        self.dimension = dimension
        self.embedder = embedder
        self.recheck_seconds = recheck_seconds
        self._cache: dict[str, _Namespace] = {}
        self._lock = threading.Lock()

    # -- loading -------------------------------------------------------------------------------
    def _empty(self) -> _Namespace:
        return _Namespace(None, [], np.zeros((0, self.dimension), dtype=np.float32), [])

    def _read(self, namespace: str) -> _Namespace:
        """The namespace as stored (cached per ETag), not checked against the embedder."""
        path = layout.index_blob(namespace)
        checked = time.monotonic()
        etag = self.store.etag(path)
        cached = self._cache.get(namespace)
        if cached is not None and cached.etag == etag:
            cached.checked = checked
            return cached
        if etag is None:
            ns = self._empty()
        else:
            try:
                data, etag = self.store.get_with_etag(path)
            except NotFound:
                ns = self._empty()
            else:
                ns = _decode(data, etag)
        ns.checked = checked
        self._cache[namespace] = ns
        return ns

    def _load(self, namespace: str) -> _Namespace:
        ns = self._read(namespace)
        if ns.ids:
            self._check(namespace, ns.info, self.embedder, self.dimension)
        return ns

    def _check(
        self, namespace: str, info: dict[str, Any], embedder: str | None, dimension: int
    ) -> None:
        stored_dim = info.get("dimension")
        stored_name = info.get("embedder")
        if (stored_dim is not None and stored_dim != dimension) or (
            stored_name and embedder and stored_name != embedder
        ):
            raise index_mismatch(
                f"index namespace {namespace!r}",
                namespace,
                index_dimension=stored_dim,
                index_embedder=stored_name,
                embedder=embedder,
                dimension=dimension,
            )

    def _current(self, namespace: str) -> _Namespace:
        """The namespace as stored now, for reading. The ETag check is made outside the lock:
        holding it across that round trip made concurrent queries (36 taggings of one run) queue
        behind each other. Only a changed or unknown ETag takes the lock (and checks again).
        Within ``recheck_seconds`` of the last check the copy in memory is used without a check;
        a check in flight counts (its start is recorded first), so a burst of queries makes one."""
        cached = self._cache.get(namespace)
        now = time.monotonic()
        if cached is not None and self.recheck_seconds > 0:
            if now - cached.checked < self.recheck_seconds:
                if cached.ids:
                    self._check(namespace, cached.info, self.embedder, self.dimension)
                return cached
            cached.checked = now  # queries during this check use the copy (at most one check)
        etag = self.store.etag(layout.index_blob(namespace))
        if cached is not None and cached.etag == etag:
            cached.checked = now
            if cached.ids:
                self._check(namespace, cached.info, self.embedder, self.dimension)
            return cached
        with self._lock:
            return self._load(namespace)

    def _save(self, namespace: str, ns: _Namespace, base_etag: str | None) -> None:
        path = layout.index_blob(namespace)
        ns.info = {
            "embedder": self.embedder or ns.info.get("embedder"),
            "dimension": self.dimension,
        }
        data = _encode(ns)
        if base_etag is None:
            if not self.store.create(path, data, "application/octet-stream"):
                raise PreconditionFailed(path)
        else:
            self.store.replace_if_match(path, data, base_etag, "application/octet-stream")
        self._cache.pop(namespace, None)
        # the cheap copy for check_embedder (the blob above stays the authority)
        summary = {**ns.info, "count": len(ns.ids)}
        self.store.put(
            layout.index_info(namespace), json.dumps(summary).encode(), "application/json"
        )

    def describe(self, namespace: str) -> dict[str, Any] | None:
        """``{"embedder", "dimension", "count"}`` of a namespace (None when it is empty), from the
        small info file; an index written before it existed is read whole once."""
        try:
            info = json.loads(self.store.get(layout.index_info(namespace)))
        except (NotFound, ValueError):
            with self._lock:
                ns = self._read(namespace)
            if not ns.ids:
                return None
            return {**ns.info, "count": len(ns.ids)}
        return info if info.get("count") else None

    def check_embedder(self, namespace: str, embedder: str | None, dimension: int) -> None:
        """Raise ``DimensionMismatch`` when ``namespace`` holds vectors of another embedder."""
        info = self.describe(namespace)
        if info:
            self._check(namespace, info, embedder or self.embedder, dimension)

    def drop(self, namespace: str) -> int:
        """Delete the namespace (``--rebuild`` after a change of embedder); vectors removed."""
        with self._lock:
            try:
                count = len(self._read(namespace).ids)
            except Exception:  # noqa: BLE001 - an unreadable namespace is dropped all the same
                count = -1
            self.store.delete(layout.index_blob(namespace))
            self.store.delete(layout.index_info(namespace))
            self._cache.pop(namespace, None)
        return count

    def _modify(self, namespace: str, change: Any) -> int:
        for _ in range(10):
            with self._lock:
                ns = self._load(namespace)
                new_ns, changed = change(ns)
                if not changed:
                    return 0
                try:
                    self._save(namespace, new_ns, ns.etag)
                    return changed
                except PreconditionFailed:
                    continue
        raise PreconditionFailed(f"index namespace {namespace!r}: too many concurrent writers")

    # -- port ----------------------------------------------------------------------------------
    def upsert(self, namespace: str, records: Sequence[VectorRecord]) -> int:
        if not records:
            return 0
        vectors = _normalize([r.values for r in records])
        if vectors.shape[1] != self.dimension:
            raise DimensionMismatch(
                f"vectors have {vectors.shape[1]} dimensions, the index {self.dimension}"
            )

        def change(ns: _Namespace) -> tuple[_Namespace, int]:
            pos = ns.position
            ids, meta = list(ns.ids), list(ns.metadata)
            mat = ns.vectors
            new_rows = []
            for rec, vec in zip(records, vectors, strict=True):
                if rec.id in pos:
                    i = pos[rec.id]
                    if mat is ns.vectors:
                        mat = mat.copy()
                    mat[i] = vec
                    meta[i] = dict(rec.metadata)
                else:
                    pos[rec.id] = len(ids)
                    ids.append(rec.id)
                    meta.append(dict(rec.metadata))
                    new_rows.append(vec)
            if new_rows:
                mat = np.vstack([mat, np.asarray(new_rows, dtype=np.float32)])
            return _Namespace(ns.etag, ids, mat, meta, info=ns.info), len(records)

        return self._modify(namespace, change)

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        gone = set(ids)

        def change(ns: _Namespace) -> tuple[_Namespace, int]:
            keep = [i for i, id_ in enumerate(ns.ids) if id_ not in gone]
            removed = len(ns.ids) - len(keep)
            if not removed:
                return ns, 0
            return (
                _Namespace(
                    ns.etag,
                    [ns.ids[i] for i in keep],
                    ns.vectors[keep],
                    [ns.metadata[i] for i in keep],
                    info=ns.info,
                ),
                removed,
            )

        return self._modify(namespace, change)

    def query(
        self,
        namespace: str,
        vector: Sequence[float],
        top_k: int,
        filter: dict[str, Any] | None = None,
    ) -> list[Match]:
        ns = self._current(namespace)
        if not ns.ids or top_k <= 0:
            return []
        q = _normalize(vector)
        if q.shape[-1] != self.dimension:
            raise DimensionMismatch(
                f"query has {q.shape[-1]} dimensions, the index {self.dimension}"
            )
        # A matrix-vector product is memory-bound: BLAS threads only contend with the other
        # workers. einsum stays on one thread (50k x 384 on 2 busy cores: p50 2.4 ms against
        # 10 ms for ``@``; benchmarks/bench_retrieval.py).
        scores = np.einsum("ij,j->i", ns.vectors, q) if q.ndim == 1 else ns.vectors @ q
        if filter:
            with self._lock:
                allowed = ns.mask(filter)
            scores = np.where(allowed, scores, -np.inf)
        k = min(top_k, len(ns.ids))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [
            Match(ns.ids[i], float(scores[i]), dict(ns.metadata[i]))
            for i in top
            if np.isfinite(scores[i])
        ]

    def fetch(self, namespace: str, ids: Sequence[str]) -> dict[str, VectorRecord]:
        ns = self._current(namespace)
        pos = ns.position
        return {
            i: VectorRecord(i, ns.vectors[pos[i]].tolist(), dict(ns.metadata[pos[i]]))
            for i in ids
            if i in pos
        }

    def count(self, namespace: str) -> int:
        with self._lock:
            return len(self._load(namespace).ids)

    def list_ids(self, namespace: str, prefix: str = "") -> list[str]:
        with self._lock:
            return [i for i in self._load(namespace).ids if i.startswith(prefix)]
