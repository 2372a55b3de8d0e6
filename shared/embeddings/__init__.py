"""The embeddings port. Vectors are float32 rows, L2-normalized, so cosine similarity is a dot product."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np


class Embedder(Protocol):
    model_name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...
