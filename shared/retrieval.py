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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from shared.agents import Candidate, GenerationContext, RetrievedAdoItem, RetrievedChunk
from shared.embeddings import Embedder
from shared.models import GeneratedItem, Segment, story_text
from shared.settings import RetrievalConfig
from shared.textio import jaccard
from shared.tokens import count_tokens
from shared.vectorstore import Match, VectorIndex

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
) -> GenerationContext:
    now = now or datetime.now(UTC)
    query = intent_text(segment)
    vector = embedder.embed([query])[0].tolist()
    with ThreadPoolExecutor(max_workers=2) as pool:
        ado_future = pool.submit(index.query, namespace, vector, cfg.ado_top_k, ADO_FILTER)
        arch_future = pool.submit(
            index.query, namespace, vector, cfg.architecture_top_k, ARCHITECTURE_FILTER
        )
        ado_matches, arch_matches = ado_future.result(), arch_future.result()

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
    )


def tagging_candidates(
    embedder: Embedder,
    index: VectorIndex,
    cfg: RetrievalConfig,
    namespace: str,
    story: GeneratedItem,
    *,
    pending_exclude: Sequence[str] | None = None,
) -> list[Candidate]:
    """The ``tagging_top_k`` existing user stories nearest to ``story``; with ``pending_exclude``
    (the run itself and its earlier attempts) also the ``PENDING_TOP_K`` nearest pending stories
    of the project's other runs, each under its negative candidate id. Most similar first."""
    vector = embedder.embed(
        [story_text(story.title, story.description, story.acceptance_criteria)]
    )[0].tolist()
    matches = index.query(namespace, vector, cfg.tagging_top_k, USER_STORY_FILTER)
    candidates = [_candidate(m, int(m.metadata.get("work_item_id", 0))) for m in matches]
    if pending_exclude is not None:
        pending = index.query(namespace, vector, PENDING_TOP_K, pending_filter(pending_exclude))
        candidates += [
            _candidate(
                m,
                int(m.metadata["candidate_id"]),
                pending_run_id=str(m.metadata.get("run_id")),
                pending_story_id=str(m.metadata.get("story_id")),
            )
            for m in pending
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
