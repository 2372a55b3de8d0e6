"""The capture encoder: MiniLM fine-tuned to tell a requirement from talk (issue 13).

The capture classifier (``capture.CaptureModel``) reads a sentence through the frozen MiniLM
vector of it and of its neighbours, plus how it is said. A vector of a whole sentence loses what
a reader goes by: "we need a power button" and "we need to know the user needs" are close in it.
This encoder is the same packaged all-MiniLM-L6-v2, fine-tuned on the labelled dev meetings
(``python -m shared.eval.train_encoder``) to give p(F), p(A), p(NULL) of a sentence read with the
sentence before and after it (a text pair: the sentence, then "before | after"). Its
probabilities are averaged with the classifier's (``CaptureModel.probabilities``); held out on
dev, the average ranks requirements better than either alone (docs/EVALUATION.md, section 5).

It ships as ``assets/capture_encoder.onnx``: compute in float32, weights stored as int8 (word
embeddings one scale per row, every other matrix one scale per 32 input rows of a column:
``train_encoder.store_int8``), checked against the sha256 the model file records before use.
Runs on onnxruntime with the packaged MiniLM tokenizer; no PyTorch at run time.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shared.embeddings.minilm import length_batches, onnx_session, packaged_tokenizer, verify_sha256

ENCODER_PATH = Path(__file__).resolve().parent / "assets" / "capture_encoder.onnx"
MAX_TOKENS = 128  # sentence and context together; the context is cut first
CONTEXT_JOIN = " | "
NO_CONTEXT = "."


def with_context(texts: Sequence[str]) -> list[tuple[str, str]]:
    """Each text with what it is read with: the text before it and the text after it (in the
    order given), joined by ``CONTEXT_JOIN``; training and inference both pair texts here."""
    out = []
    for k, text in enumerate(texts):
        before = texts[k - 1] if k > 0 else ""
        after = texts[k + 1] if k + 1 < len(texts) else ""
        out.append((text, (before + CONTEXT_JOIN + after).strip(" |") or NO_CONTEXT))
    return out


def tokenizer() -> Any:
    """The packaged MiniLM tokenizer (hash-checked), unpadded, pairs cut to ``MAX_TOKENS``."""
    return packaged_tokenizer(MAX_TOKENS)


def encode_batch(encodings: Sequence[Any]) -> dict[str, np.ndarray]:
    """The model's inputs for tokenized pairs: ids, attention mask, token types and the mask of
    the sentence's own tokens (type 0 after [CLS]), which the model averages over."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)  # [PAD] is token 0
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    own = np.zeros_like(ids)
    for row, e in enumerate(encodings):
        n = len(e.ids)
        ids[row, :n] = e.ids
        mask[row, :n] = 1
        types[row, :n] = e.type_ids
        own[row, 1:n] = 1 - np.asarray(e.type_ids[1:], dtype=np.int64)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "sentence_mask": own}


class CaptureEncoder:
    """The shipped encoder at ``path``, verified against ``sha256`` on first use. Like the
    embedder, a call of fewer than ``small_batch`` texts runs on the calling thread and a larger
    one on onnxruntime's pool; texts run in batches of similar token counts."""

    batch_size = 32
    small_batch = 8
    length_slack = 1.25
    length_step = 8

    def __init__(self, sha256: str, path: Path = ENCODER_PATH) -> None:
        self.path = path
        self.sha256 = sha256
        self._sessions: dict[int | None, Any] = {}
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _session(self, count: int) -> Any:
        threads = 1 if count < self.small_batch else None
        with self._lock:
            if self._tokenizer is None:
                verify_sha256(self.path, self.sha256)
                self._tokenizer = tokenizer()
            session = self._sessions.get(threads)
            if session is None:
                session = self._sessions[threads] = onnx_session(self.path, threads)
        return session

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 3) p(F), p(A), p(NULL) of each text read with its neighbours in ``texts``."""
        if not texts:
            return np.zeros((0, 3))
        session = self._session(len(texts))
        encodings = self._tokenizer.encode_batch(with_context(texts))
        out = np.zeros((len(texts), 3))
        lengths = [len(e.ids) for e in encodings]
        for idx in length_batches(lengths, self.batch_size, self.length_slack, self.length_step):
            inputs = encode_batch([encodings[i] for i in idx])
            out[idx] = session.run(None, inputs)[0]
        return out


class HeldOutEncoder:
    """The encoder's probabilities for one dev meeting from a model trained without it (read
    from ``train_encoder``'s held-out file), by sentence text: what ``eval capture --lomo`` and
    the training sweep run a meeting with, so no dev estimate uses an encoder that saw the
    meeting. The context a run pairs a sentence with is its segment's, the file's the meeting's:
    the two differ only at segment edges."""

    def __init__(self, meeting: str, table: dict[str, list[float]]) -> None:
        self.meeting = meeting
        self.table = table

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing:
            raise KeyError(
                f"the held-out encoder file has no probabilities for {missing[0]!r} of "
                f"{self.meeting}: rerun python -m shared.eval.train_encoder --lomo"
            )
        return np.array([self.table[t] for t in texts], dtype=np.float64).reshape(-1, 3)
