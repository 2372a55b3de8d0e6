"""The OpenAI / Azure OpenAI embedder (``text-embedding-3-small`` by default), batched and cached.

Nothing is embedded twice: every vector is stored under the hash of (model, dimension, text) in
the artifact store (``index/_embedding-cache/...``; project namespaces cannot start with ``_``), and
kept in a bounded in-process cache in front of it. A call looks the texts up in memory, then in the
store (in parallel), embeds only what is still missing (each distinct text once, ``batch_size``
texts per request) and writes those vectors to the store create-once, so concurrent workers never
overwrite each other.

Vectors are L2-normalized float32 (the ``Embedder`` port). ``dimension`` is what the index
expects; a model that answers another size is a clear ``DimensionMismatch``, never a silently
different index. The ``dimensions`` request parameter is sent only when it differs from
text-embedding-3's native 1536 (models without the parameter then keep working at their size).

With a ``limiter`` (the shared rate limiter, ``shared.llm.limiter``) each request first reserves
its inputs' tokens and one request from the embedding deployment's budget.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from shared import layout
from shared.embeddings import OPENAI_NATIVE_DIMENSION, DimensionMismatch
from shared.storage import ArtifactStore, NotFound

if TYPE_CHECKING:
    from shared.llm.limiter import ModelLimiter

log = logging.getLogger(__name__)

CACHE_PREFIX = layout.EMBEDDING_CACHE_PREFIX
NATIVE_DIMENSION = OPENAI_NATIVE_DIMENSION
MAX_INPUT_TOKENS = 8000  # the API's limit is 8191 tokens per input
MEMORY_CACHE_SIZE = 20_000


def cache_key(model: str, dimension: int, text: str) -> str:
    return hashlib.sha256(f"{model}\n{dimension}\n{text}".encode()).hexdigest()


class OpenAIEmbedder:
    def __init__(
        self,
        client: Any,
        model: str,
        dimension: int = NATIVE_DIMENSION,
        *,
        store: ArtifactStore | None = None,
        batch_size: int = 256,
        lookup_threads: int = 8,
        limiter: ModelLimiter | None = None,
    ) -> None:
        self.client = client
        self.model_name = model
        self.dimension = dimension
        self.store = store
        self.batch_size = max(1, batch_size)
        self.lookup_threads = lookup_threads
        self.limiter = limiter
        self.embedded_texts = 0  # texts sent to the API by this instance (for tests and logs)
        self.requests = 0
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-") or "model"
        self._prefix = f"{CACHE_PREFIX}/{slug}-{dimension}"

    # ------------------------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        inputs = [self._clip(t) for t in texts]
        keys = [cache_key(self.model_name, self.dimension, t) for t in inputs]
        found = self._from_memory(keys)
        missing = sorted({k for k in keys if k not in found})
        if missing and self.store is not None:
            found.update(self._from_store(missing))
        todo: dict[str, str] = {}
        for key, text in zip(keys, inputs, strict=True):
            if key not in found:
                todo.setdefault(key, text)
        if todo:
            fresh = self._embed_api(list(todo.values()))
            for key, vector in zip(todo, fresh, strict=True):
                found[key] = vector
            self._to_store(dict(zip(todo, fresh, strict=True)))
        self._remember(found)
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def clear_memory_cache(self) -> None:
        """Forget the vectors kept in this process (the store's copies stay). For benchmarks that
        must embed a transcript as if it had never been seen."""
        with self._lock:
            self._memory.clear()

    # ------------------------------------------------------------------------------------------
    def _clip(self, text: str) -> str:
        text = text or " "  # the API rejects empty input
        if len(text) <= MAX_INPUT_TOKENS * 2:  # well under the limit at any tokenization
            return text
        from shared.text.tokens import encoding_for_model

        enc = encoding_for_model(self.model_name)
        tokens = enc.encode(text, disallowed_special=())
        return text if len(tokens) <= MAX_INPUT_TOKENS else enc.decode(tokens[:MAX_INPUT_TOKENS])

    def _from_memory(self, keys: list[str]) -> dict[str, np.ndarray]:
        with self._lock:
            hits = {}
            for key in keys:
                vector = self._memory.get(key)
                if vector is not None:
                    self._memory.move_to_end(key)
                    hits[key] = vector
            return hits

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            for key, vector in vectors.items():
                self._memory[key] = vector
                self._memory.move_to_end(key)
            while len(self._memory) > MEMORY_CACHE_SIZE:
                self._memory.popitem(last=False)

    def _path(self, key: str) -> str:
        return f"{self._prefix}/{key[:2]}/{key}.f32"

    def _from_store(self, keys: list[str]) -> dict[str, np.ndarray]:
        assert self.store is not None
        store = self.store

        def load(key: str) -> tuple[str, np.ndarray | None]:
            try:
                data = store.get(self._path(key))
            except NotFound:
                return key, None
            vector = np.frombuffer(data, dtype="<f4")
            return key, vector.astype(np.float32) if vector.size == self.dimension else None

        if len(keys) == 1:
            results = [load(keys[0])]
        else:
            with ThreadPoolExecutor(max_workers=min(self.lookup_threads, len(keys))) as pool:
                results = list(pool.map(load, keys))
        return {k: v for k, v in results if v is not None}

    def _to_store(self, vectors: dict[str, np.ndarray]) -> None:
        if self.store is None:
            return
        for key, vector in vectors.items():
            try:
                self.store.create(
                    self._path(key), vector.astype("<f4").tobytes(), "application/octet-stream"
                )
            except Exception:  # noqa: BLE001 - a cache write must never fail an embedding
                log.warning("could not cache an embedding under %s", self._path(key), exc_info=True)

    def _request(self, batch: list[str], extra: dict[str, Any]) -> Any:
        def call() -> Any:
            return self.client.embeddings.create(model=self.model_name, input=batch, **extra)

        if self.limiter is None:
            return call()
        from shared.llm.service import embedding_tokens

        return self.limiter.run(embedding_tokens(batch, self.model_name), call)

    def _embed_api(self, texts: list[str]) -> list[np.ndarray]:
        vectors: list[np.ndarray] = []
        extra: dict[str, Any] = {}
        if self.dimension != NATIVE_DIMENSION:
            extra["dimensions"] = self.dimension
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            response = self._request(batch, extra)
            self.requests += 1
            rows = sorted(response.data, key=lambda d: d.index)
            if len(rows) != len(batch):
                raise RuntimeError(
                    f"the embeddings endpoint returned {len(rows)} vectors for {len(batch)} texts"
                )
            for row in rows:
                vector = np.asarray(row.embedding, dtype=np.float32)
                if vector.shape[0] != self.dimension:
                    raise DimensionMismatch(
                        f"embedding model {self.model_name!r} returned {vector.shape[0]}-dimensional "
                        f"vectors but {self.dimension} are configured; set "
                        f"SYNTH_PIPELINE__EMBEDDING__DIMENSIONS={vector.shape[0]} and reload the "
                        "index, or choose a model of that size"
                    )
                norm = float(np.linalg.norm(vector))
                vectors.append(vector / max(norm, 1e-12))
            self.embedded_texts += len(batch)
        return vectors
