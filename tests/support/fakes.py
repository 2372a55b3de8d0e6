"""Small deterministic stand-ins for the embedder and the agents, for tests of the pipeline's
mechanics (fan-out, fan-in, idempotency, poison handling) that must not depend on model quality.

The real offline engine and MiniLM are tested on their own and end to end.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Sequence

import numpy as np

from shared.agents import (
    Agents,
    Candidate,
    EpicDraft,
    FeatureDraft,
    GenerationContext,
    GenerationDraft,
    GenerationResult,
    SegmentationResult,
    SegmentSpan,
    StoryDraft,
    TagDecision,
    TaggingResult,
)
from shared.models import GeneratedItem, Segment
from shared.storage.local import LocalFolderStore
from shared.text.textio import sentence_spans, words


class HashEmbedder:
    """Bag-of-words hashed into 384 dimensions: texts sharing words are similar, others are not."""

    model_name = "hash-bow-384"
    dimension = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for w in words(text):
                h = int(hashlib.md5(w.encode()).hexdigest(), 16)
                out[row, h % self.dimension] += 1.0 if (h >> 20) & 1 else -1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out


class ParagraphSegmenter:
    """One segment per paragraph (blank-line separated)."""

    version = "seg-fake-v1"
    engine = "offline"
    model = None

    def segment(self, transcript: str) -> SegmentationResult:
        starts = [0] + [
            m.end() for m in re.finditer(r"\n\n+", transcript) if m.end() < len(transcript)
        ]
        ends = starts[1:] + [len(transcript)]
        return SegmentationResult(
            spans=[
                SegmentSpan(
                    start=s,
                    end=e,
                    intent_labels=["requirement"],
                    dominant_intent="para",
                    theme="Theme",
                )
                for s, e in zip(starts, ends, strict=True)
            ]
        )


class CueGenerator:
    """Every sentence with 'must' or 'should' becomes a story quoting it."""

    version = "gen-fake-v1"
    engine = "offline"
    model = None

    def generate(self, segment: Segment, context: GenerationContext) -> GenerationResult:
        stories = []
        for span in sentence_spans(segment.raw_text):
            sentence = span.text(segment.raw_text)
            if re.search(r"\b(must|should)\b", sentence, re.I):
                stories.append(
                    StoryDraft(
                        title=sentence[:60],
                        description=f"As a user, I want that {sentence}",
                        acceptance_criteria=[sentence],
                        feature_key="f1",
                        source_quotes=[sentence],
                    )
                )
        return GenerationResult(
            draft=GenerationDraft(
                epics=[EpicDraft(key="e1", title=segment.theme or "Theme")],
                features=[
                    FeatureDraft(key="f1", title=f"Feature of {segment.segment_id}", epic_key="e1")
                ]
                if stories
                else [],
                stories=stories,
            )
        )


class ThresholdTagger:
    """new / extend / duplicate by the best candidate's similarity."""

    version = "tag-fake-v1"
    engine = "offline"
    model = None

    def tag(self, story: GeneratedItem, candidates: list[Candidate]) -> TaggingResult:
        best = candidates[0]
        tag = (
            "duplicate" if best.similarity > 0.95 else "extend" if best.similarity > 0.5 else "new"
        )
        return TaggingResult(
            decision=TagDecision(
                decision_tag=tag,
                related_story_ids=[best.work_item_id] if tag != "new" else [],
                reasoning_excerpt=f"best similarity {best.similarity:.2f}",
            )
        )


def fake_agents() -> Agents:
    return Agents(
        segmenter=ParagraphSegmenter(), generator=CueGenerator(), tagger=ThresholdTagger()
    )


class Flaky:
    """Wrap an agent method: raise ``error()`` for the calls ``fail(call_number, *args)`` selects."""

    def __init__(
        self, inner: object, method: str, fail: Callable[..., bool], error: Callable[[], Exception]
    ):
        self.inner, self.method, self.fail, self.error = inner, method, fail, error
        self.calls = 0
        self._lock = threading.Lock()
        for attr in ("version", "engine", "model"):
            setattr(self, attr, getattr(inner, attr))
        setattr(self, method, self._call)

    def _call(self, *args: object) -> object:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self.fail(n, *args):
            raise self.error()
        return getattr(self.inner, self.method)(*args)


class CountingStore(LocalFolderStore):
    """Every storage call (each is one round trip on Azure Blob Storage), by method and path."""

    def __init__(self, root) -> None:
        super().__init__(root)
        self.calls: list[tuple[str, str]] = []
        self._calls_lock = threading.Lock()

    def _note(self, method: str, path: str) -> None:
        with self._calls_lock:
            self.calls.append((method, path))

    def get(self, path):
        self._note("get", path)
        return super().get(path)

    def get_with_etag(self, path):
        self._note("get_with_etag", path)
        return super().get_with_etag(path)

    def etag(self, path):
        self._note("etag", path)
        return super().etag(path)

    def exists(self, path):
        self._note("exists", path)
        return super().exists(path)

    def put(self, path, data, content_type=None):
        self._note("put", path)
        return super().put(path, data, content_type)

    def create(self, path, data, content_type=None):
        self._note("create", path)
        return super().create(path, data, content_type)

    def replace_if_match(self, path, data, etag, content_type=None):
        self._note("replace_if_match", path)
        return super().replace_if_match(path, data, etag, content_type)

    def list(self, prefix):
        self._note("list", prefix)
        return super().list(prefix)

    def children(self, prefix):
        self._note("children", prefix)
        return super().children(prefix)

    def delete(self, path):
        self._note("delete", path)
        return super().delete(path)

    def lease(self, path, seconds=60):
        self._note("lease", path)
        return super().lease(path, seconds)

    @property
    def gets(self) -> list[str]:
        """The paths read with ``get``, in order."""
        with self._calls_lock:
            return [path for method, path in self.calls if method == "get"]

    def clear(self) -> None:
        with self._calls_lock:
            self.calls.clear()
