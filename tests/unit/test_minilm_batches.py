"""MiniLM runs a call's texts in batches of similar token counts (less padding, less CPU), and a
text's vector does not depend on the batch it runs in: the generation unit's batched story
vectors are the ones the tagging unit would compute alone (docs/PERFORMANCE.md "Fan-out")."""

from __future__ import annotations

import numpy as np
import pytest

from shared.embeddings.minilm import MiniLMEmbedder

TEXTS = [
    "Pause the session",
    "",
    "As a viewer I want a big red power button that is easy to find in the dark, so that I can "
    "switch the TV off without looking for it; it must work on every TV we sell and cost less "
    "than twelve euros fifty to make.",
    "ok",
    "The remote has at most 8 buttons.",
    "Teletext is dropped.",
    " ".join(["a long requirement about the battery cover and the charging cradle"] * 12),
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder(threads=1)


def test_a_texts_vector_is_the_same_alone_and_in_any_batch(embedder: MiniLMEmbedder) -> None:
    alone = np.vstack([embedder.embed([t]) for t in TEXTS])
    together = embedder.embed(TEXTS)
    assert np.array_equal(together, alone)  # bitwise: padding and batch mates change nothing
    reordered = embedder.embed(TEXTS[::-1])
    assert np.array_equal(reordered, alone[::-1])
    assert (
        embedder.embed([TEXTS[0], TEXTS[6]]).tobytes() == np.vstack([alone[0], alone[6]]).tobytes()
    )


def test_batches_group_similar_lengths_shortest_first() -> None:
    e = MiniLMEmbedder()
    lengths = [40, 3, 9, 41, 12, 200, 44, 5]
    batches = e.batches(lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert [[lengths[i] for i in b] for b in batches] == [[3, 5, 9], [12], [40, 41, 44], [200]]
    for batch in batches:
        first = lengths[batch[0]]
        assert all(lengths[i] <= max(first * e.length_slack, first + e.length_step) for i in batch)


def test_a_batch_holds_at_most_batch_size_texts() -> None:
    e = MiniLMEmbedder()
    batches = e.batches([10] * (2 * e.batch_size + 1))
    assert [len(b) for b in batches] == [e.batch_size, e.batch_size, 1]
