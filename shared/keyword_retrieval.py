"""Keyword retrieval over the ingestion files: what retrieval falls back to when the vector index
cannot be queried (docs/RELIABILITY.md "Degradation").

The loaders rewrite ``ingestion/ado/{project}/ado_vectors.jsonl`` and
``ingestion/architecture/{project}/arch_vectors.jsonl`` on every load, one line per vector with
the metadata the index holds for it (``shared/layout.py``). With the index down, those lines are
the index: each record's text (title, description and acceptance criteria of a work item, the text
of a document chunk) is scored against the query by TF-IDF cosine over content words (lemmas,
stopwords out), the index's own metadata filters applied (``shared.vectorstore.matches_filter``),
so the answer has the shape of ``VectorIndex.query``'s: ``Match(id, score in [0, 1], metadata)``.
Retrieval then re-scores what it found with the embedder where it can (``shared.retrieval``), so
the similarities that tagging compares with its thresholds stay on the embedder's scale.

The files are read once and kept per store and project; their ETags are checked again at most
every ``RECHECK_SECONDS``, so a load is seen soon after it is written.
"""

from __future__ import annotations

import json
import math
import threading
import time
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from shared import layout
from shared.engine.offline.language import content_words
from shared.models import story_text
from shared.storage import ArtifactStore, NotFound
from shared.vectorstore import Match, matches_filter

RECHECK_SECONDS = 5.0


def record_text(metadata: dict[str, Any]) -> str:
    """The text a record was embedded from, as the loaders embedded it."""
    if metadata.get("doc_type") == "architecture":
        return str(metadata.get("text") or "")
    criteria = metadata.get("acceptance_criteria") or []
    return story_text(
        str(metadata.get("title") or ""),
        str(metadata.get("description") or ""),
        [str(c) for c in criteria] if isinstance(criteria, list) else [str(criteria)],
    )


@dataclass
class KeywordIndex:
    """TF-IDF vectors of the records of one project's ingestion files."""

    ids: list[str] = field(default_factory=list)
    metadata: list[dict[str, Any]] = field(default_factory=list)
    vectors: list[dict[str, float]] = field(default_factory=list)
    idf: dict[str, float] = field(default_factory=dict)

    @classmethod
    def build(cls, records: list[tuple[str, dict[str, Any]]]) -> KeywordIndex:
        bags = [Counter(content_words(record_text(meta))) for _, meta in records]
        df: Counter[str] = Counter()
        for bag in bags:
            df.update(bag.keys())
        n = len(bags)
        idf = {term: math.log((1 + n) / (1 + count)) + 1.0 for term, count in df.items()}
        vectors = [
            _normalized({t: (1 + math.log(c)) * idf[t] for t, c in bag.items()}) for bag in bags
        ]
        return cls(
            ids=[vid for vid, _ in records],
            metadata=[meta for _, meta in records],
            vectors=vectors,
            idf=idf,
        )

    def __len__(self) -> int:
        return len(self.ids)

    def query(self, text: str, top_k: int, filter: dict[str, Any] | None = None) -> list[Match]:
        """The ``top_k`` records that pass ``filter`` and share a content word with ``text``, best
        first (ties by id), scored by cosine of their TF-IDF vectors."""
        if top_k <= 0:
            return []
        bag = Counter(content_words(text))
        query = _normalized(
            {t: (1 + math.log(c)) * self.idf[t] for t, c in bag.items() if t in self.idf}
        )
        if not query:
            return []
        scored = []
        for vid, meta, vector in zip(self.ids, self.metadata, self.vectors, strict=True):
            score = sum(w * vector.get(t, 0.0) for t, w in query.items())
            if score > 0 and matches_filter(meta, filter):
                scored.append(Match(vid, round(min(score, 1.0), 4), dict(meta)))
        scored.sort(key=lambda m: (-m.score, m.id))
        return scored[:top_k]


def _normalized(weights: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(w * w for w in weights.values()))
    return {t: w / norm for t, w in weights.items()} if norm else {}


# ------------------------------------------------------------------------------------------------
# reading the ingestion files


def ingestion_paths(project: str) -> tuple[str, str]:
    return layout.ado_vectors(project), layout.arch_vectors(project)


def read_records(store: ArtifactStore, path: str) -> list[tuple[str, dict[str, Any]]]:
    """(vector id, metadata) of every line of an ingestion file; none when it does not exist."""
    try:
        data = store.get(path)
    except NotFound:
        return []
    out = []
    for line in data.decode("utf-8").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue  # one damaged line does not hide the others
        meta = row.get("metadata")
        if isinstance(meta, dict):
            out.append((str(row.get("vector_id") or meta.get("chunk_id") or ""), meta))
    return out


@dataclass
class _Cached:
    etags: tuple[str | None, ...]
    checked: float
    index: KeywordIndex


# per store (weakly: a store that is gone takes its indexes with it), per project
_cache: weakref.WeakKeyDictionary[ArtifactStore, dict[str, _Cached]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _cached(store: ArtifactStore) -> dict[str, _Cached]:
    with _lock:
        try:
            return _cache.setdefault(store, {})
        except TypeError:  # a store that cannot be weakly referenced: no cache
            return {}


def keyword_index(store: ArtifactStore, project: str) -> KeywordIndex:
    """The project's keyword index from its ingestion files (cached, see the module docstring)."""
    paths = ingestion_paths(project)
    by_project = _cached(store)
    with _lock:
        cached = by_project.get(project)
        if cached is not None and time.monotonic() - cached.checked < RECHECK_SECONDS:
            return cached.index
    etags = tuple(store.etag(p) for p in paths)
    if cached is not None and cached.etags == etags:
        with _lock:
            cached.checked = time.monotonic()
        return cached.index
    records = [r for p in paths for r in read_records(store, p)]
    index = KeywordIndex.build(records)
    with _lock:
        by_project[project] = _Cached(etags, time.monotonic(), index)
    return index
