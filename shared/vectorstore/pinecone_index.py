"""The Pinecone adapter of the vector index port (``pinecone`` SDK, REST data plane).

- The index is reached by host (``PINECONE_HOST``: no control-plane call) or by name
  (``PINECONE_INDEX``: one describe call on the control plane resolves the host, on first use, so
  that an unreachable Pinecone fails a query, which retrieval can fall back from, not the build).
- One namespace per project (the port's ``namespace`` argument); metadata filters are passed
  through in Pinecone's own syntax (the embedded index evaluates the same subset).
- Upserts go in batches of ``upsert_batch`` vectors, fetches and deletes in batches of ids;
  ``list_ids(namespace, prefix)`` pages through the serverless list API (the loaders prune with it).
- Before the first operation the index's dimension (``describe_index_stats``) is compared with the
  embedder's: a mismatch is a clear ``DimensionMismatch``, never a query against garbage. The
  pipeline checks it before a run's first model call (``check_embedder``).
- Metadata is made Pinecone-safe on upsert: nulls dropped (Pinecone rejects them), lists turned
  into lists of strings, nested objects into JSON text.

The SDK retries 408/429/5xx itself (3 retries with backoff).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from shared.embeddings import DimensionMismatch
from shared.vectorstore import Match, VectorRecord, index_mismatch


def pinecone_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in metadata.items():
        if value is None:
            continue
        if isinstance(value, bool | int | float | str):
            out[key] = value
        elif isinstance(value, list | tuple | set):
            out[key] = [v if isinstance(v, str) else json.dumps(v) for v in value]
        else:
            out[key] = json.dumps(value, default=str)
    return out


class _OnFirstUse:
    """An SDK index object built when an attribute is first needed (then kept)."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._target: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        if self._target is None:
            with self._lock:
                if self._target is None:
                    self._target = self._build()
        return getattr(self._target, name)


class PineconeIndex:
    def __init__(
        self,
        index: Any,
        dimension: int,
        *,
        name: str = "",
        embedder: str | None = None,
        upsert_batch: int = 100,
        fetch_batch: int = 100,
        delete_batch: int = 1000,
    ) -> None:
        self.index = index
        self.dimension = dimension
        self.embedder = embedder
        self.name = name or "(by host)"
        self.upsert_batch = upsert_batch
        self.fetch_batch = fetch_batch
        self.delete_batch = delete_batch
        self._checked = False
        self._lock = threading.Lock()

    @classmethod
    def connect(
        cls,
        api_key: str,
        dimension: int,
        *,
        host: str | None = None,
        name: str = "",
        embedder: str | None = None,
    ) -> PineconeIndex:
        from pinecone import Pinecone

        client = Pinecone(api_key=api_key)
        if host:
            index: Any = client.Index(host=host)
        else:  # resolved on first use: an unreachable control plane fails a query, not the build
            index = _OnFirstUse(lambda: client.Index(name=name))
        return cls(index, dimension, name=name or host or "", embedder=embedder)

    # ------------------------------------------------------------------------------------------
    def check_dimension(self) -> None:
        """Raise DimensionMismatch when the index stores vectors of another size (checked once)."""
        if self._checked:
            return
        with self._lock:
            if self._checked:
                return
            stats = self.index.describe_index_stats()
            if stats.dimension is not None and stats.dimension != self.dimension:
                raise index_mismatch(
                    f"Pinecone index {self.name!r}",
                    "PROJECT",
                    index_dimension=int(stats.dimension),
                    index_embedder=None,
                    embedder=self.embedder,
                    dimension=self.dimension,
                    reloadable=False,
                )
            self._checked = True

    def check_embedder(self, namespace: str, embedder: str | None, dimension: int) -> None:
        """The port's pre-run check: a Pinecone index has one dimension for all namespaces."""
        if dimension != self.dimension:
            raise DimensionMismatch(
                f"the embedder makes {dimension}-dimensional vectors, this client expects "
                f"{self.dimension}"
            )
        self.check_dimension()

    def drop(self, namespace: str) -> int:
        """Delete every vector of ``namespace`` (``--rebuild``); -1: Pinecone does not say how
        many. The index's dimension stays what it was created with."""
        self.index.delete(delete_all=True, namespace=namespace)
        return -1

    # -- port ----------------------------------------------------------------------------------
    def upsert(self, namespace: str, records: Sequence[VectorRecord]) -> int:
        if not records:
            return 0
        self.check_dimension()
        for rec in records:
            if len(rec.values) != self.dimension:
                raise DimensionMismatch(
                    f"vector {rec.id!r} has {len(rec.values)} dimensions, the index {self.dimension}"
                )
        upserted = 0
        for start in range(0, len(records), self.upsert_batch):
            batch = records[start : start + self.upsert_batch]
            response = self.index.upsert(
                vectors=[
                    {
                        "id": r.id,
                        "values": [float(v) for v in r.values],
                        "metadata": pinecone_metadata(r.metadata),
                    }
                    for r in batch
                ],
                namespace=namespace,
            )
            upserted += int(response.upserted_count)
        return upserted

    def query(
        self,
        namespace: str,
        vector: Sequence[float],
        top_k: int,
        filter: dict[str, Any] | None = None,
    ) -> list[Match]:
        if top_k <= 0:
            return []
        self.check_dimension()
        if len(vector) != self.dimension:
            raise DimensionMismatch(
                f"query has {len(vector)} dimensions, the index {self.dimension}"
            )
        response = self.index.query(
            vector=[float(v) for v in vector],
            top_k=top_k,
            namespace=namespace,
            filter=filter or None,
            include_metadata=True,
        )
        return [Match(m.id, float(m.score), dict(m.metadata or {})) for m in response.matches or []]

    def fetch(self, namespace: str, ids: Sequence[str]) -> dict[str, VectorRecord]:
        out: dict[str, VectorRecord] = {}
        ids = list(dict.fromkeys(ids))
        for start in range(0, len(ids), self.fetch_batch):
            response = self.index.fetch(
                ids=ids[start : start + self.fetch_batch], namespace=namespace
            )
            for vid, vec in (response.vectors or {}).items():
                out[vid] = VectorRecord(vid, list(vec.values or []), dict(vec.metadata or {}))
        return out

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        ids = list(dict.fromkeys(ids))
        for start in range(0, len(ids), self.delete_batch):
            self.index.delete(ids=ids[start : start + self.delete_batch], namespace=namespace)
        return len(ids)

    def count(self, namespace: str) -> int:
        stats = self.index.describe_index_stats()
        summary = (stats.namespaces or {}).get(namespace)
        return int(summary.vector_count) if summary is not None else 0

    def list_ids(self, namespace: str, prefix: str = "") -> list[str]:
        ids: list[str] = []
        for page in self.index.list(prefix=prefix or None, namespace=namespace):
            ids.extend(item.id for item in page.vectors if item.id)
        return ids
