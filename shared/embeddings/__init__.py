"""The embeddings port. Vectors are float32 rows, L2-normalized, so cosine similarity is a dot product.

``DimensionMismatch``: vectors of another size (or, where it is recorded, of another model) than
the configured embedder's: an index loaded with another embedder, or a model that answers another
size than expected. Never a query against garbage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from shared.errors import SynthesizerError

if TYPE_CHECKING:
    import numpy as np

OPENAI_NATIVE_DIMENSION = 1536  # text-embedding-3-small's own size


class DimensionMismatch(SynthesizerError, ValueError):
    """The index was loaded with another embedder than the one configured now: vectors of another
    size or, where the index records it, of another model. Never a query against garbage."""


class Embedder(Protocol):
    model_name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...
