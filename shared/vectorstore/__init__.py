"""The vector index port (a subset of Pinecone's data plane: namespaces, metadata filters).

Filters use Pinecone's syntax: ``{"field": value}``, ``{"field": {"$eq"|"$ne"|"$in"|"$nin": ...}}``
and ``{"$and": [...]}``; the embedded index evaluates the same subset so both behave alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


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


class DimensionMismatch(ValueError):
    """The index was built with a different embedder than the one configured now."""


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
