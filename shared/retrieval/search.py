"""Retrieval for generation (seed §7.2) and tagging (seed §7.3), the same for both engines.

Generation: embed the segment's intent (dominant_intent + intent_labels + first 200 characters), query
the ADO backlog and the architecture chunks in parallel, rank by the composite score
``0.7·similarity + 0.2·recency + 0.1·priority``, drop near-duplicate chunks (token Jaccard > 0.9) and
trim to the context budget, lowest-ranked architecture chunks first.

Tagging: embed the story (title + description + ACs) and retrieve the top existing user stories:
the index's ``User Story`` items, which is what the loader calls the story type of every process
(a Scrum Product Backlog Item, a CMMI Requirement, a Basic Issue; see shared.ado.process); and the
nearest pending stories of the project's other runs (reviewed, not yet written:
shared/indexing/pending.py), which generation never sees.

Degradation (given the ``store``; docs/RELIABILITY.md "Degradation"): when the index cannot be
queried (any error but ``DimensionMismatch``, which is a configuration error and raised), or the
query cannot be embedded, the same queries go to keyword scoring over the last ingestion files
(``shared.retrieval.keyword``): three times ``top_k`` records by keyword, re-scored by the
embedder's cosine when it works (so tagging's thresholds keep their meaning), the best ``top_k``
kept. The unit records a warning starting with ``KEYWORD_RETRIEVAL``. An index that failed is left
alone for ``INDEX_RETRY_SECONDS`` in this process, so a run does not wait out the SDK's retries on
every unit.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import numpy as np

from shared.agents import Candidate, GenerationContext, RetrievedAdoItem, RetrievedChunk
from shared.embeddings import DimensionMismatch, Embedder
from shared.models import GeneratedItem, Segment, story_text
from shared.settings import RetrievalConfig
from shared.storage import ArtifactStore
from shared.text.textio import jaccard
from shared.text.tokens import count_tokens
from shared.vectorstore import Match, VectorIndex

log = logging.getLogger(__name__)

ADO_FILTER = {"source_type": {"$eq": "ado_backlog"}}
ARCHITECTURE_FILTER = {"doc_type": {"$eq": "architecture"}}
USER_STORY_FILTER = {
    "$and": [{"work_item_type": {"$eq": "User Story"}}, {"source_type": {"$eq": "ado_backlog"}}]
}
PENDING_TOP_K = 3  # pending stories of other runs a story is also compared with


def pending_filter(exclude_runs: Sequence[str]) -> dict[str, Any]:
    """Pending stories (shared/indexing/pending.py) of runs other than ``exclude_runs``."""
    return {
        "$and": [
            {"source_type": {"$eq": "pending_story"}},
            {"run_id": {"$nin": list(exclude_runs)}},
        ]
    }


KEYWORD_RETRIEVAL = "keyword retrieval"
INDEX_RETRY_SECONDS = 30.0
KEYWORD_POOL = 3  # keyword candidates per result kept, re-scored by the embedder


# ------------------------------------------------------------------------------------------------
# degradation: an index that cannot be queried


_down: weakref.WeakKeyDictionary[VectorIndex, tuple[float, str]] = weakref.WeakKeyDictionary()
_down_lock = threading.Lock()


def describe_error(err: BaseException, limit: int = 200) -> str:
    """``Type: message`` on one line, clipped and with anything secret-like redacted."""
    from shared.text.hygiene import scrub

    text = " ".join(f"{type(err).__name__}: {err}".split())
    return scrub(text[:limit])


def index_down(index: VectorIndex) -> str | None:
    """Why ``index`` failed within the last ``INDEX_RETRY_SECONDS`` in this process, or None."""
    with _down_lock:
        try:
            entry = _down.get(index)
        except TypeError:  # not weakly referenceable: never remembered
            return None
    if entry is None or entry[0] < time.monotonic():
        return None
    return entry[1]


def mark_index_down(index: VectorIndex, err: BaseException) -> str:
    reason = describe_error(err)
    log.warning("the vector index cannot be queried, keyword retrieval for a while: %s", reason)
    with _down_lock:
        try:
            _down[index] = (time.monotonic() + INDEX_RETRY_SECONDS, reason)
        except TypeError:
            pass
    return reason


def keyword_warning(reason: str) -> str:
    return (
        f"{KEYWORD_RETRIEVAL}: the vector index could not be queried ({reason}); the context was "
        "found by keyword scoring over the last ingestion files"
    )


def keyword_reason(warning: str) -> str:
    """The reason inside a ``keyword_warning``."""
    return warning.split("(", 1)[-1].rsplit(")", 1)[0]


def _query_all(
    index: VectorIndex,
    namespace: str,
    vector: list[float],
    queries: Sequence[tuple[int, dict[str, Any]]],
) -> list[list[Match]]:
    if len(queries) == 1:
        top_k, flt = queries[0]
        return [index.query(namespace, vector, top_k, flt)]
    with ThreadPoolExecutor(max_workers=len(queries)) as pool:
        futures = [pool.submit(index.query, namespace, vector, k, f) for k, f in queries]
        return [f.result() for f in futures]


def _rescored(
    embedder: Embedder, vector: list[float] | None, matches: list[Match], top_k: int
) -> list[Match]:
    """Keyword matches re-scored by the embedder's cosine to ``vector`` (kept as they are when
    there is no vector or the embedder fails), best ``top_k``."""
    if vector is not None and matches:
        from shared.retrieval.keyword import record_text

        try:
            found = np.asarray(embedder.embed([record_text(m.metadata) for m in matches]))
            q = np.asarray(vector, dtype=np.float64)
            q = q / max(float(np.linalg.norm(q)), 1e-12)
            norms = np.maximum(np.linalg.norm(found, axis=1), 1e-12)
            scores = (found @ q) / norms
            matches = [
                Match(m.id, round(float(s), 4), m.metadata)
                for m, s in zip(matches, scores, strict=True)
            ]
        except Exception:  # noqa: BLE001 - the keyword scores are the fallback's fallback
            log.warning("could not re-score keyword matches with the embedder", exc_info=True)
    return sorted(matches, key=lambda m: (-m.score, m.id))[:top_k]


def retrieve(
    embedder: Embedder,
    index: VectorIndex,
    namespace: str,
    query: str,
    queries: Sequence[tuple[int, dict[str, Any]]],
    *,
    store: ArtifactStore | None = None,
    keyword_text: str | None = None,
    query_vector: Sequence[float] | None = None,
) -> tuple[list[list[Match]], str | None]:
    """The matches of each ``(top_k, filter)`` query for ``query``, and the warning when they
    came from keyword retrieval (only with ``store``; without it every error is raised).
    ``query_vector``: ``embedder``'s vector of ``query``, when the caller has it already."""
    vector: list[float] | None = None
    reason = None
    try:
        if query_vector is not None:
            vector = [float(v) for v in query_vector]
        else:
            vector = [float(v) for v in embedder.embed([query])[0]]
    except Exception as err:
        if store is None:
            raise
        reason = f"the query could not be embedded: {describe_error(err)}"
    if vector is not None and store is not None:
        reason = index_down(index)
    if vector is not None and reason is None:
        try:
            return _query_all(index, namespace, vector, queries), None
        except DimensionMismatch:
            raise
        except Exception as err:
            if store is None:
                raise
            reason = mark_index_down(index, err)
    assert store is not None and reason is not None
    from shared.retrieval.keyword import keyword_index

    words = keyword_index(store, namespace)
    text = keyword_text or query
    found = [
        _rescored(embedder, vector, words.query(text, KEYWORD_POOL * k, flt), k)
        for k, flt in queries
    ]
    return found, keyword_warning(reason)


def intent_text(segment: Segment) -> str:
    parts = [segment.dominant_intent, " ".join(segment.intent_labels), segment.raw_text[:200]]
    return "\n".join(p for p in parts if p.strip())


def _parse_time(value: Any) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def recency(metadata: dict[str, Any], now: datetime, half_life_days: float) -> float:
    """1.0 for something changed today, 0.5 after one half-life; 0 when the date is unknown."""
    when = _parse_time(metadata.get("updated_at") or metadata.get("uploaded_at"))
    if when is None:
        return 0.0
    age_days = max(0.0, (now - when).total_seconds() / 86400)
    return math.pow(0.5, age_days / half_life_days)


def priority(metadata: dict[str, Any]) -> float:
    """ADO priority 1 (highest) .. 4 (lowest) as 1.0 .. 0.25; unknown is 0."""
    value = metadata.get("priority")
    if not isinstance(value, (int, float)) or not 1 <= value <= 4:
        return 0.0
    return (5 - float(value)) / 4


def composite(match: Match, cfg: RetrievalConfig, now: datetime) -> float:
    return (
        cfg.similarity_weight * match.score
        + cfg.recency_weight * recency(match.metadata, now, cfg.recency_half_life_days)
        + cfg.priority_weight * priority(match.metadata)
    )


def _ado_item(m: Match, score: float) -> RetrievedAdoItem:
    md = m.metadata
    return RetrievedAdoItem(
        work_item_id=int(md.get("work_item_id", 0)),
        work_item_type=str(md.get("work_item_type", "")),
        title=str(md.get("title", "")),
        description=str(md.get("description", "")),
        acceptance_criteria=list(md.get("acceptance_criteria") or []),
        state=str(md.get("state", "")),
        parent_id=md.get("parent_id") if isinstance(md.get("parent_id"), int) else None,
        similarity=round(m.score, 4),
        composite=round(score, 4),
    )


def _chunk(m: Match, score: float) -> RetrievedChunk:
    md = m.metadata
    return RetrievedChunk(
        chunk_id=str(md.get("chunk_id", m.id)),
        document_id=str(md.get("document_id", "")),
        file_name=str(md.get("file_name", "")),
        text=str(md.get("text", "")),
        similarity=round(m.score, 4),
        composite=round(score, 4),
    )


def ado_item_tokens(item: RetrievedAdoItem) -> int:
    return count_tokens(story_text(item.title, item.description, item.acceptance_criteria))


def generation_context(
    embedder: Embedder,
    index: VectorIndex,
    cfg: RetrievalConfig,
    namespace: str,
    segment: Segment,
    now: datetime | None = None,
    *,
    store: ArtifactStore | None = None,
) -> GenerationContext:
    now = now or datetime.now(UTC)
    query = intent_text(segment)
    (ado_matches, arch_matches), warning = retrieve(
        embedder,
        index,
        namespace,
        query,
        [(cfg.ado_top_k, ADO_FILTER), (cfg.architecture_top_k, ARCHITECTURE_FILTER)],
        store=store,
        keyword_text=f"{query}\n{segment.raw_text}",
    )

    ado = sorted(
        (_ado_item(m, composite(m, cfg, now)) for m in ado_matches),
        key=lambda i: (-i.composite, i.work_item_id),
    )
    ranked = sorted(
        (_chunk(m, composite(m, cfg, now)) for m in arch_matches),
        key=lambda c: (-c.composite, c.chunk_id),
    )
    chunks: list[RetrievedChunk] = []
    for chunk in ranked:
        if all(jaccard(chunk.text, kept.text) <= cfg.dedupe_jaccard for kept in chunks):
            chunks.append(chunk)

    # The budget covers the segment and everything retrieved. Architecture chunks are cut first
    # (lowest-ranked first); ADO items only when they alone do not fit.
    budget = cfg.segment_max_context_tokens - segment.token_count
    used = sum(ado_item_tokens(i) for i in ado)
    while ado and used > budget:
        used -= ado_item_tokens(ado.pop())
    kept: list[RetrievedChunk] = []
    for chunk in chunks:
        cost = count_tokens(chunk.text)
        if used + cost > budget:
            break
        kept.append(chunk)
        used += cost
    return GenerationContext(
        query_text=query,
        ado_items=ado,
        architecture_chunks=kept,
        dropped_chunks=len(ranked) - len(kept),
        warnings=[warning] if warning else [],
    )


def tagging_candidates(
    embedder: Embedder,
    index: VectorIndex,
    cfg: RetrievalConfig,
    namespace: str,
    story: GeneratedItem,
    *,
    store: ArtifactStore | None = None,
    notes: list[str] | None = None,
    pending_exclude: Sequence[str] | None = None,
    vector: Sequence[float] | None = None,
) -> list[Candidate]:
    """The ``tagging_top_k`` existing user stories nearest to ``story``; with ``pending_exclude``
    (the run itself and its earlier attempts) also the ``PENDING_TOP_K`` nearest pending stories
    of the project's other runs, each under its negative candidate id. Most similar first. With
    ``store``, keyword retrieval when the index cannot be queried, its warning appended to
    ``notes``. ``vector``: ``embedder``'s vector of the story's text (``story_text``), when the
    caller has it (its generation unit embedded it), else the story is embedded here."""
    text = story_text(story.title, story.description, story.acceptance_criteria)
    queries: list[tuple[int, dict[str, Any]]] = [(cfg.tagging_top_k, USER_STORY_FILTER)]
    if pending_exclude is not None:
        queries.append((PENDING_TOP_K, pending_filter(pending_exclude)))
    found, warning = retrieve(
        embedder, index, namespace, text, queries, store=store, query_vector=vector
    )
    if warning and notes is not None:
        notes.append(warning)
    candidates = [_candidate(m, int(m.metadata.get("work_item_id", 0))) for m in found[0]]
    if pending_exclude is not None:
        candidates += [
            _candidate(
                m,
                int(m.metadata["candidate_id"]),
                pending_run_id=str(m.metadata.get("run_id")),
                pending_story_id=str(m.metadata.get("story_id")),
            )
            for m in found[1]
            if isinstance(m.metadata.get("candidate_id"), int)
        ]
        candidates.sort(key=lambda c: -c.similarity)
    return candidates


def _candidate(m: Match, work_item_id: int, **pending: str) -> Candidate:
    return Candidate(
        work_item_id=work_item_id,
        title=str(m.metadata.get("title", "")),
        description=str(m.metadata.get("description", "")),
        acceptance_criteria=list(m.metadata.get("acceptance_criteria") or []),
        similarity=round(m.score, 4),
        state=str(m.metadata.get("state", "")),
        **pending,
    )
