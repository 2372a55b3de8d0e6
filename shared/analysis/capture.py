"""Requirement capture: which statements of a meeting ask for something (issue 13).

A small learned classifier decides, per sentence, ``F`` (a functional need or decision), ``A`` (a
quality constraint) or ``NULL`` (chit-chat, agreement, meta talk, questions, findings). Its
features are the sentence's packaged MiniLM embedding (what it is about), the mean embedding of
its two neighbours (what is being discussed around it), lexical cues (how it is said: modals,
proposals, decisions, limits, hedges, meta talk, questions, agreement, findings; see
``language.cue_flags``), what kind of line it sits on (spoken turn, bullet, heading), and the
words and word pairs it uses, from a vocabulary learned on dev (only those said in at least three
different meetings, so it holds how people ask for things, not one product's nouns).
The weights are a multinomial logistic regression trained on ``datasets/capture-v1/dev`` with
``python -m shared.eval.train_capture`` and shipped as ``assets/capture_model.json`` with the
training data's hash; inference is a matrix product in numpy.

A sentence is a requirement when p(F) + p(A) reaches the model's ``threshold`` (chosen on dev by
leave-one-meeting-out). Questions never are: a real question about the topic becomes an open
question instead, verbatim. Sentences without a content word ("Yeah .", "Mm-hmm .") are ``NULL``
without being embedded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from shared.analysis.capture_encoder import CaptureEncoder, HeldOutEncoder
from shared.embeddings import Embedder
from shared.errors import SynthesizerError
from shared.text.language import (
    CUE_NAMES,
    clean,
    content_words,
    cue_flags,
    meaningful_word_count,
    sentence_cues,
)
from shared.text.textio import Span, line_spans, sentence_spans, speaker_of

MODEL_PATH = Path(__file__).resolve().parent / "assets" / "capture_model.json"
CLASSES = ("F", "A", "NULL")
MINILM_PREFIX = "all-MiniLM-L6-v2"
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_CHECKBOX = re.compile(r"^\s*(?:[-*+•]\s+)?\[[ xX]\]")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
LINE_KINDS = ("spoken", "bullet", "heading", "checkbox", "plain")
# what the classifier is told of a line: a spoken line and a plain one are both prose. Whether a
# speaker label was recognised says nothing of what is asked for (the dev meetings are all
# "Name: text"; a weight on "plain" learned from two lines of notes marked every sentence of a
# transcript in another format, or of notes written as prose, as talk)
FEATURE_LINE_KINDS = ("prose", "bullet", "heading", "checkbox")
_PROSE = frozenset(("spoken", "plain"))
LEXICAL_NAMES = (
    *CUE_NAMES,
    *(f"line_{k}" for k in FEATURE_LINE_KINDS),
    "question",
    "rhetorical_question",
    "log_words",
    "log_content_words",
    "short",
    "has_digit",
    "first_in_line",
)


class CaptureModelMissing(SynthesizerError, RuntimeError):
    """The capture model file is missing or unreadable (a packaging error, never user input)."""


@dataclass(frozen=True)
class Sentence:
    """A sentence of a text, where it is, and what kind of line it sits on."""

    span: Span
    text: str
    line_kind: str
    first_in_line: bool
    speaker: str | None = None


@dataclass(frozen=True)
class Verdict:
    """What the classifier says of one sentence."""

    label: str  # F, A or NULL
    p_requirement: float  # p(F) + p(A)
    p_quality: float  # p(A) / (p(F) + p(A)): how much of a quality constraint it is
    # p(F) + p(A) as the classifier said it, before ``relative_to_density`` read it against the
    # talk around it (None: not read so)
    p_as_said: float | None = None

    @property
    def p_to_write(self) -> float:
        """How sure the sentence is to start a need of its own or to give a criterion: the
        density reading may make it less sure, never more (dense talk is quoted more; it is not
        written into more needs or criteria)."""
        said = self.p_requirement if self.p_as_said is None else self.p_as_said
        return min(self.p_requirement, said)


def sentences_of(text: str, start: int = 0, end: int | None = None) -> list[Sentence]:
    """The sentences of ``text[start:end]`` (``textio.sentence_spans``) with their line kinds."""
    out: list[Sentence] = []
    end = len(text) if end is None else end
    for line in line_spans(text, start, end):
        raw = text[line.start : line.end]
        speaker, content_at = speaker_of(raw)
        body = raw[content_at:]
        if _HEADING.match(body):
            kind = "heading"
        elif _CHECKBOX.match(body):
            kind = "checkbox"
        elif _BULLET.match(body):
            kind = "bullet"
        elif speaker:
            kind = "spoken"
        else:
            kind = "plain"
        for k, span in enumerate(sentence_spans(text, line.start, line.end)):
            out.append(Sentence(span, text[span.start : span.end], kind, k == 0, speaker))
    return out


def lexical_features(sentence: Sentence) -> list[float]:
    flags = cue_flags(sentence.text)
    cues = sentence_cues(sentence.text)
    low = clean(sentence.text).lower()
    words = meaningful_word_count(low)
    content = len(set(content_words(low)))
    rhetorical = cues.is_question and "question" not in cues.categories
    values = [float(flags[name]) for name in CUE_NAMES]
    kind = "prose" if sentence.line_kind in _PROSE else sentence.line_kind
    values += [float(kind == k) for k in FEATURE_LINE_KINDS]
    values += [
        float(cues.is_question),
        float(rhetorical),
        math.log1p(words),
        math.log1p(content),
        float(words < 5),
        float(bool(re.search(r"\d", low))),
        float(sentence.first_in_line),
    ]
    return values


_TOKEN = re.compile(r"[a-z']+")


def ngrams(text: str) -> set[str]:
    """The words and adjacent word pairs of a sentence (cleaned, lowercased)."""
    tokens = _TOKEN.findall(clean(text).lower())
    return set(tokens) | {f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)}


def embed_text(sentence: Sentence) -> str:
    """What is embedded for a sentence: its cleaned text (markers and fillers out)."""
    return clean(sentence.text) or sentence.text


class CaptureModel:
    """The trained classifier (``assets/capture_model.json``)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.version: str = doc["version"]
        self.embedder: str = doc["embedder"]
        self.threshold: float = float(doc["threshold"])
        self.mean = np.asarray(doc["lexical_mean"], dtype=np.float64)
        self.scale = np.asarray(doc["lexical_scale"], dtype=np.float64)
        self.coef = np.asarray(doc["coef"], dtype=np.float64)
        self.intercept = np.asarray(doc["intercept"], dtype=np.float64)
        self.vocabulary: dict[str, int] = {g: k for k, g in enumerate(doc.get("ngrams", []))}
        self.ngram_scale = float(doc.get("ngram_scale", 0.0))
        self.encoder: CaptureEncoder | HeldOutEncoder | None = None
        self.encoder_weight = 0.0
        encoder = doc.get("encoder")
        if encoder:
            self.encoder_weight = float(encoder["weight"])
            held = encoder.get("held_out")
            self.encoder = (
                HeldOutEncoder(held["meeting"], held["probabilities"])
                if held
                else CaptureEncoder(encoder["sha256"], MODEL_PATH.parent / encoder["file"])
            )
        if list(doc["classes"]) != list(CLASSES) or list(doc["lexical_names"]) != list(
            LEXICAL_NAMES
        ):
            raise CaptureModelMissing(
                f"{MODEL_PATH.name} was trained with other classes or features; retrain it with "
                "python -m shared.eval.train_capture"
            )

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> CaptureModel:
        """The shipped model (or the one ``held_out`` put in place), or the one at ``path``."""
        if path == MODEL_PATH and _held_out:
            return _held_out[-1]
        return _load(str(path))

    def probabilities(
        self, sentences: list[Sentence], vectors: np.ndarray, context: np.ndarray
    ) -> np.ndarray:
        """(n, 3) class probabilities in ``CLASSES`` order; ``vectors`` and ``context`` as made by
        ``neighbour_context``. With an encoder (``capture_encoder``), the average of the
        classifier's and the encoder's, which reads each of ``sentences`` with the one before and
        after it in the list."""
        if not sentences:
            return np.zeros((0, len(CLASSES)))
        lexical = np.array([lexical_features(s) for s in sentences], dtype=np.float64)
        x = np.hstack(
            [
                (lexical - self.mean) / self.scale,
                vectors,
                context,
                ngram_matrix(sentences, self.vocabulary, self.ngram_scale),
            ]
        )
        logits = x @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        if self.encoder is None:
            return p
        read = self.encoder.probabilities([embed_text(s) for s in sentences])
        return mix(p, read, self.encoder_weight)


def mix(classifier: np.ndarray, encoder: np.ndarray, weight: float) -> np.ndarray:
    """The classifier's and the encoder's class probabilities averaged, the encoder's weighing
    ``weight``."""
    return (1.0 - weight) * classifier + weight * encoder


def ngram_matrix(sentences: list[Sentence], vocabulary: dict[str, int], scale: float) -> np.ndarray:
    """Binary presence of each vocabulary n-gram, times ``scale``."""
    out = np.zeros((len(sentences), len(vocabulary)))
    for row, sentence in enumerate(sentences):
        for gram in ngrams(sentence.text):
            col = vocabulary.get(gram)
            if col is not None:
                out[row, col] = scale
    return out


_held_out: list[CaptureModel] = []


@contextmanager
def held_out(model: CaptureModel) -> Iterator[CaptureModel]:
    """Within the block every run of this process classifies with ``model`` instead of the shipped
    one: ``eval capture --lomo`` runs each dev meeting with a model trained on the others."""
    _held_out.append(model)
    try:
        yield model
    finally:
        _held_out.remove(model)


@lru_cache(maxsize=4)
def _load(path: str) -> CaptureModel:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise CaptureModelMissing(
            f"the capture model {path} cannot be read ({err}); retrain it with "
            "python -m shared.eval.train_capture"
        ) from None
    return CaptureModel(doc)


def capture_embedder(embedder: Embedder | None) -> Embedder:
    """The packaged MiniLM the classifier was trained on: ``embedder`` when it is MiniLM."""
    if embedder is not None and getattr(embedder, "model_name", "").startswith(MINILM_PREFIX):
        return embedder
    return _minilm()


@lru_cache(maxsize=1)
def _minilm() -> Embedder:
    from shared.embeddings.minilm import MiniLMEmbedder

    return MiniLMEmbedder()


def neighbour_context(vectors: np.ndarray) -> np.ndarray:
    """Each row: the mean of the rows before and after it (zero rows where there is none)."""
    context = np.zeros_like(vectors)
    if len(vectors) > 1:
        context[1:] += vectors[:-1]
        context[:-1] += vectors[1:]
    return context / 2.0


def embed_all(sentences: list[Sentence], embedder: Embedder) -> tuple[np.ndarray, list[int]]:
    """Vectors of every sentence (zero rows for those without a content word, which are not
    embedded) and the positions of the embedded ones."""
    todo = [k for k, s in enumerate(sentences) if content_words(s.text)]
    vectors = np.zeros((len(sentences), int(getattr(embedder, "dimension", 384))))
    if todo:
        found = capture_embedder(embedder).embed([embed_text(sentences[k]) for k in todo])
        vectors = np.zeros((len(sentences), np.asarray(found).shape[1]))
        vectors[todo] = np.asarray(found, dtype=np.float64)
    return vectors, todo


def classify(
    sentences: list[Sentence], embedder: Embedder, model: CaptureModel | None = None
) -> tuple[list[Verdict], np.ndarray]:
    """A verdict per sentence (in text order, so neighbours are what was said around it), and
    the MiniLM vectors of the sentences, so callers can group requirements without embedding
    them again."""
    model = model or CaptureModel.load()
    vectors, todo = embed_all(sentences, embedder)
    out = [Verdict("NULL", 0.0, 0.0)] * len(sentences)
    if not todo:
        return out, vectors
    context = neighbour_context(vectors)
    probs = model.probabilities([sentences[k] for k in todo], vectors[todo], context[todo])
    for row, k in enumerate(todo):
        p_f, p_a, _ = probs[row]
        p_req = float(p_f + p_a)
        p_quality = float(p_a / p_req) if p_req > 0 else 0.0
        out[k] = _verdict(sentences[k], p_req, p_quality, model.threshold)
    return out, vectors


def _verdict(sentence: Sentence, p_req: float, p_quality: float, threshold: float) -> Verdict:
    label = "NULL"
    if p_req >= threshold and not sentence_cues(sentence.text).is_question:
        label = "A" if p_quality > 0.5 else "F"
    return Verdict(label, p_req, p_quality)


# How much the requirement density of a stretch of talk moves each sentence's p (in log-odds):
# ``DENSITY_WEIGHT`` times the log-odds of the stretch's mean p minus those of
# ``DENSITY_REFERENCE``, at most ``DENSITY_CAP`` either way. The reference is the mean p the
# classifier gives a dev meeting it was not trained on (leave one meeting out, each meeting
# weighing the same: 0.29); the mean of a stretch is drawn to it as if
# ``DENSITY_PRIOR_SENTENCES`` more sentences had said it (a third of a typical segment), so a
# few lines say little of their kind. Weight, cap and prior chosen on dev, leave one meeting out
# (docs/EVALUATION.md, section 5, gen-offline-v83).
DENSITY_WEIGHT = 0.5
DENSITY_REFERENCE = 0.29
DENSITY_CAP = 0.5
DENSITY_PRIOR_SENTENCES = 20


def relative_to_density(
    sentences: list[Sentence], verdicts: list[Verdict], model: CaptureModel | None = None
) -> list[Verdict]:
    """The verdicts with each p read against how much of the stretch (a segment) states needs.

    The classifier was trained on meetings of every kind at once, so its p means the same in a
    requirements workshop, where four statements in ten ask for something, and in a design
    meeting, where one in eight does: there it is too sure of talk, here too unsure of needs
    ("Okay, let's change it to twenty minutes for rooms." at 0.71). The mean p of the stretch
    says which kind of talk it is (a prior shift): each p moves by ``DENSITY_WEIGHT`` times the
    log-odds of that mean (drawn to the reference by ``DENSITY_PRIOR_SENTENCES``) against
    ``DENSITY_REFERENCE``, at most ``DENSITY_CAP`` either way, and the labels follow the model's
    threshold again. Sentences the classifier did not read (p 0) stay as they are; each verdict
    keeps the p the classifier said (``Verdict.p_as_said``)."""
    said = [v.p_requirement for v in verdicts]
    if not said:
        return verdicts
    model = model or CaptureModel.load()
    density = (sum(said) + DENSITY_PRIOR_SENTENCES * DENSITY_REFERENCE) / (
        len(said) + DENSITY_PRIOR_SENTENCES
    )
    shift = DENSITY_WEIGHT * (_log_odds(density) - _log_odds(DENSITY_REFERENCE))
    shift = max(-DENSITY_CAP, min(DENSITY_CAP, shift))
    out = []
    for sentence, v in zip(sentences, verdicts, strict=True):
        if v.p_requirement <= 0.0:
            out.append(v)
            continue
        p = 1.0 / (1.0 + math.exp(-(_log_odds(v.p_requirement) + shift)))
        read = _verdict(sentence, p, v.p_quality, model.threshold)
        out.append(replace(read, p_as_said=v.p_requirement))
    return out


def _log_odds(p: float) -> float:
    p = min(max(p, 1e-4), 1.0 - 1e-4)
    return math.log(p / (1.0 - p))


def requirement_spans(text: str, embedder: Embedder, offset: int = 0) -> list[tuple[int, int]]:
    """The requirement sentences of ``text`` as (start, end) offsets plus ``offset``: what the
    coverage figure counts, whatever engine wrote the stories."""
    sentences = sentences_of(text)
    verdicts, _ = classify(sentences, embedder)
    return [
        (offset + s.span.start, offset + s.span.end)
        for s, v in zip(sentences, verdicts, strict=True)
        if v.label != "NULL"
    ]
