"""LLM segmentation (seed §4): the model chooses where segments start, the code cuts the text.

The rules:
1. The transcript becomes units (``prompting.transcript_units``: lines, long lines cut at sentence
   starts), shown to the model numbered. The model answers a start unit, intent labels, a
   dominant intent and a theme per segment (``SegmentationAnswer``). An answer with no segment,
   a start outside the units shown, or a segment without any intent is rejected; duplicates and
   order are fixed silently; the first segment always starts at the first unit shown.
2. Long transcripts: when the units exceed ``window_tokens``, they are cut into windows of whole
   units that overlap by about ``window_overlap_tokens``. Each window is one model call; window k
   decides the starts in its core, from the middle of its overlap with window k-1 to the middle
   of its overlap with window k+1, so every unit is decided by exactly one window.
3. Seed limits, after the model: a segment over ``max_segment_tokens`` is split at the unit gap
   that balances its tokens best (recursively); a segment under ``min_merge_threshold`` tokens is
   merged forward when its cosine divergence to the next segment is below
   ``cohesion_divergence_threshold`` (embedding cosine when an embedder is given, word overlap
   otherwise), else into the more similar neighbour. A merged segment keeps the labels of its
   larger part plus the other's labels. ``merge_operations`` counts the merges.
4. Retry: the shared rule (``base.ask``): once at temperature − 0.05, then ``SegmentationFailed``
   (the pipeline aborts the run with the reason in run.json).

Character offsets come only from unit boundaries, so the segments tile the transcript exactly.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from shared import prompts
from shared.agents import SegmentationFailed, SegmentationResult, SegmentSpan
from shared.embeddings import Embedder
from shared.engine.llm.base import Outcome, ask
from shared.engine.llm.prompting import (
    Annotator,
    Unit,
    annotation_notes,
    data_block,
    transcript_units,
    unit_lines,
)
from shared.engine.llm.schemas import SegmentationAnswer, SegmentProposal
from shared.errors import RejectedAnswer
from shared.llm import ChatModel
from shared.models import Engine, Usage
from shared.settings import SegmentationConfig
from shared.textio import jaccard
from shared.tokens import count_tokens

log = logging.getLogger(__name__)

MAX_OUTPUT_TOKENS = 4096
MAX_LABELS = 6


@dataclass
class _Seg:
    """A segment as a unit range [i, j) with its labels."""

    i: int
    j: int
    labels: list[str] = field(default_factory=list)
    dominant: str = ""
    theme: str = ""


class LLMSegmenter:
    engine: Engine = "llm"

    def __init__(
        self,
        chat: ChatModel,
        cfg: SegmentationConfig,
        embedder: Embedder | None = None,
        annotate: Annotator | None = None,
    ) -> None:
        self.chat = chat
        self.cfg = cfg
        self.embedder = embedder
        self.annotate = annotate
        self.template = prompts.load("segmentation")
        self.version = self.template.version
        self.model: str | None = chat.model

    # --------------------------------------------------------------------------------------------
    def segment(self, transcript: str) -> SegmentationResult:
        units = transcript_units(transcript)
        if not units:
            return SegmentationResult(spans=[], model=self.model)
        windows = plan_windows(units, self.cfg.window_tokens, self.cfg.window_overlap_tokens)
        usage, attempts, model = Usage(), 1, self.model
        starts: dict[int, SegmentProposal] = {}
        for k, (a, b) in enumerate(windows):
            lo = 0 if k == 0 else (windows[k][0] + windows[k - 1][1]) // 2
            hi = len(units) if k + 1 == len(windows) else (windows[k + 1][0] + b) // 2
            outcome = self._ask(transcript, units, a, b, len(windows))
            usage, attempts, model = (
                usage + outcome.usage,
                max(attempts, outcome.attempts),
                outcome.model,
            )
            for p in outcome.value:
                if lo <= p.start_unit < hi:
                    starts.setdefault(p.start_unit, p)
        plan = _Limits(transcript, units, self.cfg, self.embedder)
        segs = plan.enforce(plan.initial(starts))
        spans = [
            SegmentSpan(
                start=units[s.i].start,
                end=units[s.j - 1].end,
                intent_labels=s.labels[:MAX_LABELS],
                dominant_intent=s.dominant,
                theme=s.theme,
            )
            for s in segs
        ]
        return SegmentationResult(
            spans=spans, merge_operations=plan.merges, usage=usage, model=model, attempts=attempts
        )

    def window_messages(
        self, transcript: str, units: list[Unit], a: int, b: int, windows: int
    ) -> list[dict[str, str]]:
        """The prompt of the window of units [a, b) (one of ``windows``)."""
        shown = units[a:b]
        text = unit_lines(transcript, shown)
        tokens = sum(u.tokens for u in shown) or 1
        note = (
            f"(This is one of {windows} overlapping windows of a longer transcript; segment only "
            "the units shown.)\n"
            if windows > 1
            else ""
        )
        return self.template.messages(
            first_unit=a,
            last_unit=b - 1,
            unit_count=b - a,
            window_note=note,
            annotations=annotation_notes(text, self.annotate),
            units=data_block("transcript", text),
            max_segment_tokens=self.cfg.max_segment_tokens,
            max_segment_units=max(1, round(self.cfg.max_segment_tokens * len(shown) / tokens)),
            min_merge_threshold=self.cfg.min_merge_threshold,
        )

    def prompts(self, transcript: str) -> list[list[dict[str, str]]]:
        """Every prompt ``segment(transcript)`` sends when no answer is rejected (one per window),
        built without calling the model: what a run's token estimate counts."""
        units = transcript_units(transcript)
        if not units:
            return []
        windows = plan_windows(units, self.cfg.window_tokens, self.cfg.window_overlap_tokens)
        return [self.window_messages(transcript, units, a, b, len(windows)) for a, b in windows]

    def _ask(
        self, transcript: str, units: list[Unit], a: int, b: int, windows: int
    ) -> Outcome[list[SegmentProposal]]:
        messages = self.window_messages(transcript, units, a, b, windows)

        def check(answer: SegmentationAnswer) -> list[SegmentProposal]:
            if not answer.segments:
                raise RejectedAnswer("the answer has no segments")
            outside = sorted({p.start_unit for p in answer.segments if not a <= p.start_unit < b})
            if outside:
                raise RejectedAnswer(
                    f"start_unit {outside[:5]} outside the units shown ({a} to {b - 1})"
                )
            empty = [p.start_unit for p in answer.segments if not _labels(p)]
            if empty:
                raise RejectedAnswer(f"segments starting at units {empty[:5]} name no intent")
            proposals = sorted(answer.segments, key=lambda p: p.start_unit)
            first = proposals[0]
            if a == 0 and first.start_unit != 0:  # the text before the first start belongs to it
                proposals[0] = first.model_copy(update={"start_unit": 0})
            return proposals

        return ask(
            self.chat,
            messages,
            SegmentationAnswer,
            check,
            temperature=self.cfg.temperature,
            max_tokens=MAX_OUTPUT_TOKENS,
            failure=SegmentationFailed,
            what=f"segmentation of units {a}-{b - 1}",
        )


def _labels(p: SegmentProposal) -> list[str]:
    labels = [x.strip() for x in p.intent_labels if x.strip()]
    if not labels and p.dominant_intent.strip():
        labels = [p.dominant_intent.strip()]
    return labels


def plan_windows(
    units: list[Unit], window_tokens: int, overlap_tokens: int
) -> list[tuple[int, int]]:
    """Unit ranges [a, b) of at most ``window_tokens`` (at least one unit each) overlapping by
    about ``overlap_tokens``; one window when everything fits."""
    n = len(units)
    windows: list[tuple[int, int]] = []
    a = 0
    while True:
        b, used = a, 0
        while b < n and (b == a or used + units[b].tokens <= window_tokens):
            used += units[b].tokens
            b += 1
        windows.append((a, b))
        if b >= n:
            return windows
        nxt, back = b, 0
        while nxt - 1 > a + 1 and back + units[nxt - 1].tokens <= overlap_tokens:
            nxt -= 1
            back += units[nxt].tokens
        a = max(nxt, a + 1)


# ------------------------------------------------------------------------------------------------
# seed limits


class _Limits:
    def __init__(
        self, text: str, units: list[Unit], cfg: SegmentationConfig, embedder: Embedder | None
    ) -> None:
        self.text, self.units, self.cfg, self.embedder = text, units, cfg, embedder
        self.cum = np.concatenate([[0], np.cumsum([u.tokens for u in units])])
        self.merges = 0
        self._tokens: dict[tuple[int, int], int] = {}
        self._vectors: dict[tuple[int, int], np.ndarray] = {}

    def raw(self, i: int, j: int) -> str:
        return self.text[self.units[i].start : self.units[j - 1].end]

    def tokens(self, i: int, j: int) -> int:
        if (i, j) not in self._tokens:
            self._tokens[(i, j)] = count_tokens(self.raw(i, j))
        return self._tokens[(i, j)]

    def initial(self, starts: dict[int, SegmentProposal]) -> list[_Seg]:
        order = sorted(starts)
        if not order or order[0] != 0:
            order = [0, *order]
        segs = []
        for k, i in enumerate(order):
            j = order[k + 1] if k + 1 < len(order) else len(self.units)
            p = starts.get(i)
            segs.append(
                _Seg(i, j, _labels(p), p.dominant_intent.strip(), p.theme.strip())
                if p
                else _Seg(i, j)
            )
        return segs

    def enforce(self, segs: list[_Seg]) -> list[_Seg]:
        for _ in range(2 * len(self.units) + 2):
            merged = self._merge_small(segs)
            split = self._split_large(merged)
            if [(s.i, s.j) for s in split] == [(s.i, s.j) for s in segs]:
                return split
            segs = split
        return segs

    # -- splitting -------------------------------------------------------------------------------
    def _split_large(self, segs: list[_Seg]) -> list[_Seg]:
        out: list[_Seg] = []
        stack = list(reversed(segs))
        while stack:
            s = stack.pop()
            if s.j - s.i < 2 or self.tokens(s.i, s.j) <= self.cfg.max_segment_tokens:
                out.append(s)
                continue
            g = self._balanced_gap(s.i, s.j)
            stack.append(_Seg(g, s.j, list(s.labels), s.dominant, s.theme))
            stack.append(_Seg(s.i, g, list(s.labels), s.dominant, s.theme))
        return out

    def _balanced_gap(self, i: int, j: int) -> int:
        total = self.cum[j] - self.cum[i]
        return min(range(i + 1, j), key=lambda g: abs(2 * (self.cum[g] - self.cum[i]) - total))

    # -- merging ---------------------------------------------------------------------------------
    def _merge_small(self, segs: list[_Seg]) -> list[_Seg]:
        segs = list(segs)
        while len(segs) > 1:
            small = next(
                (
                    k
                    for k, s in enumerate(segs)
                    if self.tokens(s.i, s.j) < self.cfg.min_merge_threshold
                ),
                None,
            )
            if small is None:
                break
            me = segs[small]
            sim_next = self._similarity(me, segs[small + 1]) if small + 1 < len(segs) else None
            sim_prev = self._similarity(me, segs[small - 1]) if small > 0 else None
            forward = sim_next is not None and (
                1 - sim_next < self.cfg.cohesion_divergence_threshold
                or sim_prev is None
                or sim_next >= sim_prev
            )
            other = small + 1 if forward else small - 1
            a, b = sorted((small, other))
            segs[a : b + 1] = [self._join(segs[a], segs[b])]
            self.merges += 1
        return segs

    def _join(self, x: _Seg, y: _Seg) -> _Seg:
        big, little = (x, y) if self.tokens(x.i, x.j) >= self.tokens(y.i, y.j) else (y, x)
        labels = list(dict.fromkeys([*big.labels, *little.labels]))
        return _Seg(x.i, y.j, labels, big.dominant or little.dominant, big.theme or little.theme)

    def _similarity(self, x: _Seg, y: _Seg) -> float:
        if self.embedder is None:
            return jaccard(self.raw(x.i, x.j), self.raw(y.i, y.j))
        vx, vy = self._vector(x), self._vector(y)
        return float(vx @ vy)

    def _vector(self, s: _Seg) -> np.ndarray:
        key = (s.i, s.j)
        if key not in self._vectors:
            assert self.embedder is not None
            v = np.asarray(self.embedder.embed([self.raw(s.i, s.j)])[0], dtype=np.float64)
            self._vectors[key] = v / max(float(np.linalg.norm(v)), 1e-12)
        return self._vectors[key]
