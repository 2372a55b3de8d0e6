"""The vector index port (a subset of Pinecone's data plane: namespaces, metadata filters).

Filters use Pinecone's syntax: ``{"field": value}``, ``{"field": {"$eq"|"$ne"|"$in"|"$nin": ...}}``
and ``{"$and": [...]}``; the embedded index evaluates the same subset so both behave alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from shared.embeddings import Embedder

from shared.errors import SynthesizerError


@dataclass
class VectorRecord:
    id: str
    values: Sequence[float]
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Match:
    id: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)


class DimensionMismatch(SynthesizerError, ValueError):
    """The index was loaded with another embedder than the one configured now: vectors of another
    size or, where the index records it, of another model. Never a query against garbage."""


MINILM_MODEL = "all-MiniLM-L6-v2-int8"  # shared.embeddings.minilm.MiniLMEmbedder.model_name
OPENAI_NATIVE_DIMENSION = 1536


def embedder_setting(name: str | None, dimension: int | None) -> str:
    """The settings that select the embedder an index was loaded with."""
    if name == MINILM_MODEL or (name is None and dimension == 384):
        return "SYNTH_EMBEDDER=minilm"
    if name:
        extra = (
            f" and SYNTH_PIPELINE__EMBEDDING__DIMENSIONS={dimension}"
            if dimension and dimension != OPENAI_NATIVE_DIMENSION
            else ""
        )
        return f"SYNTH_EMBEDDER=openai with SYNTH_PIPELINE__EMBEDDING__MODEL={name}{extra}"
    return f"an embedder that makes {dimension}-dimensional vectors"


def index_mismatch(
    where: str,
    namespace: str,
    *,
    index_dimension: int | None,
    index_embedder: str | None,
    embedder: str | None,
    dimension: int,
    reloadable: bool = True,
) -> DimensionMismatch:
    """The error for an index loaded with another embedder: what differs, and the two ways out
    (reload the index with the configured embedder, or configure the index's embedder)."""
    mine = f"the embedder {embedder}" if embedder else "the configured embedder"
    if index_dimension is not None and index_dimension != dimension:
        loaded = f" (loaded with {index_embedder})" if index_embedder else ""
        what = f"{where} has dimension {index_dimension}{loaded} but {mine} gives {dimension}"
    else:
        what = (
            f"{where} was loaded with {index_embedder} but {mine} is configured (both make "
            f"{dimension}-dimensional vectors, but vectors of two models are not comparable)"
        )
    if reloadable:
        fix = (
            "reload the index with this embedder (python -m loaders.ado_loader --project "
            f"{namespace} --rebuild [--file EXPORT], then python -m loaders.arch_loader DOCS "
            f"--project {namespace}; --rebuild empties the namespace first)"
        )
    else:
        fix = (
            f"use a Pinecone index of dimension {dimension} (PINECONE_INDEX or PINECONE_HOST) and "
            "load it with the loaders"
        )
    return DimensionMismatch(
        f"{what}: {fix}, or set {embedder_setting(index_embedder, index_dimension)}"
    )


def check_index(index: VectorIndex, namespace: str, embedder: Embedder) -> None:
    """Raise ``DimensionMismatch`` when ``namespace`` of ``index`` holds vectors another embedder
    made. Cheap (the embedded index reads a small info file, Pinecone its stats once): the
    pipeline calls it before a run's first model call, the loaders before loading. Both adapters
    have ``check_embedder``; an index without it (a test's wrapper) is not checked."""
    check = getattr(index, "check_embedder", None)
    if check is not None:
        check(namespace, getattr(embedder, "model_name", None), int(embedder.dimension))


class VectorIndex(Protocol):
    def upsert(self, namespace: str, records: Sequence[VectorRecord]) -> int: ...

    def query(
        self,
        namespace: str,
        vector: Sequence[float],
        top_k: int,
        filter: dict[str, Any] | None = None,
    ) -> list[Match]: ...

    def fetch(self, namespace: str, ids: Sequence[str]) -> dict[str, VectorRecord]: ...

    def delete(self, namespace: str, ids: Sequence[str]) -> int: ...

    def count(self, namespace: str) -> int: ...


def matches_filter(metadata: dict[str, Any], flt: dict[str, Any] | None) -> bool:
    if not flt:
        return True
    for key, cond in flt.items():
        if key == "$and":
            if not all(matches_filter(metadata, sub) for sub in cond):
                return False
            continue
        if key == "$or":
            if not any(matches_filter(metadata, sub) for sub in cond):
                return False
            continue
        value = metadata.get(key)
        if not isinstance(cond, dict):
            cond = {"$eq": cond}
        for op, arg in cond.items():
            values = value if isinstance(value, list) else [value]
            if op == "$eq" and arg not in values:
                return False
            if op == "$ne" and arg in values:
                return False
            if op == "$in" and not any(v in arg for v in values):
                return False
            if op == "$nin" and any(v in arg for v in values):
                return False
            if op not in ("$eq", "$ne", "$in", "$nin"):
                raise ValueError(f"unsupported filter operator {op!r}")
    return True


def drop_namespace(index: VectorIndex, namespace: str) -> int:
    """Empty ``namespace`` (the loaders' ``--rebuild``, after a change of embedder); the number of
    vectors removed (-1 when the index cannot tell)."""
    drop = getattr(index, "drop", None)
    if drop is None:
        raise ValueError(f"{type(index).__name__} cannot empty a namespace")
    return int(drop(namespace))
