"""The tagging pair model: features of a (generated story, existing story) pair and the learned
weights that turn them into a relation.

Each retrieved candidate gets one feature row (``FEATURES``): embedding similarities of the whole
texts, the titles, the bodies and the best sentence-to-sentence match (packaged MiniLM, whatever
embedder retrieved the candidates, so the model does not depend on the index); lexical overlap
(content-word Jaccard and an IDF-weighted overlap whose document frequencies come from the
candidates themselves, so words every candidate shares count little); the contradiction cues of
``contradiction`` one by one; whether the candidate states an open point; how many of the story's
criteria the candidate already says; and the candidate's rank among the others.

Two logistic regressions (``assets/tagging_model.json``, trained by
``python -m shared.eval.train_tagging``; numpy only at run time): the first gives every candidate
the probability that it is the story's related existing story; the second reads the most likely
candidate's row with those probabilities (``STORY_FEATURES``) and gives the five tags their
probabilities, softened by the temperature learned on held-out sources: the tag's calibrated
confidence.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from shared.agents import Candidate
from shared.analysis import contradiction as cx
from shared.analysis import magnitudes as mg
from shared.analysis.capture import capture_embedder
from shared.embeddings import Embedder
from shared.errors import SynthesizerError
from shared.models import TAGS, GeneratedItem, Tag, story_text
from shared.text.language import content_words
from shared.text.textio import short_text_cache

MODEL_PATH = Path(__file__).resolve().parent / "assets" / "tagging_model.json"
CUE_DETECTORS = {
    "number": cx.number_cues,
    "frequency": cx.frequency_cues,
    "negation": cx.negation_cues,
    "modal": cx.modal_cues,
    "quantifier": cx.quantifier_cues,
    "antonym": cx.antonym_cues,
}
FEATURES: tuple[str, ...] = (
    "sim",
    "sim_minus_top",
    "top_margin",
    "is_top",
    "cos_title",
    "cos_body",
    "cos_cross",
    "best_sentence",
    "mean_best_sentence",
    "ac_coverage",
    "story_has_acs",
    "jaccard",
    "weighted_overlap",
    "novelty",
    "reverse_novelty",
    *(f"cue_{k}" for k in CUE_DETECTORS),
    "any_cue",
    "cue_x_sim",
    "open_point",
    "open_point_x_sim",
    "story_numbers",
    "numbers_changed",
    "numbers_new",
    "negation_asymmetry",
    "modal_asymmetry",
    "exclusive_asymmetry",
    "length_ratio",
    "values_disjoint",
    "values_only_mine",
    "unit_change",
    "optional_asymmetry",
    "story_covered_min",
    "candidate_covered_mean",
    "candidate_covered_min",
    "clause_covered_min",
    "open_point_match",
    "char_cosine",
    "reverse_weighted_overlap",
)
COVERED_AT = 0.75  # a story sentence the candidate "already states": best cosine at least this
PLACEHOLDER = re.compile(
    r"\b(?:tbd|tbc|to be (?:decided|defined|determined|confirmed|clarified|agreed|specified|chosen)"
    r"|still (?:open|to be decided|undecided)|not (?:yet )?(?:defined|decided|specified|known|agreed)"
    r"|(?:has|have) not (?:yet )?been (?:\w+ )?(?:defined|decided|specified|agreed|set|chosen"
    r"|fixed|determined|confirmed)|not yet (?:chosen|set|fixed|determined|confirmed|final)"
    r"|(?:is|are) not final|undecided|unresolved|unknown|open (?:question|point|issue))\b|\?\?+",
    re.IGNORECASE,
)
_STORY_FRAME = re.compile(r"^\s*as an? [^,]{1,60},\s*i (?:want|need|would like)(?: to)?\s*", re.I)
_REASON = re.compile(r",?\s*so that\b.*$", re.I | re.S)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+")
# "only a couple of people use them" says how few, it restricts nothing
_EXCLUSIVE = re.compile(
    r"\b(?:only|exclusively|solely)\b(?!\s+(?:a\s+)?(?:couple|few|little|handful|bit)\b)", re.I
)
# plain negation of the requirement (not the wider cue list: "without leaving", "removed" are
# common in requirements that negate nothing)
_NEGATED = re.compile(
    r"\b(?:not|no|never|none|nor|neither|cannot|can't|won't|don't|doesn't|isn't|aren't"
    r"|mustn't|shouldn't|prohibited|forbidden|no longer|instead of|rather than|exclud\w*)\b",
    re.I,
)


def _values(text: str) -> set[float]:
    return {q.value for q in cx.quantities(text)}


def _asymmetric(pattern: re.Pattern[str], a: str, b: str) -> float:
    return 1.0 if bool(pattern.search(a)) != bool(pattern.search(b)) else 0.0


def _lexical_contrasts(mine: str, theirs: str) -> dict[str, float]:
    """Coarse contrasts the cue detectors miss: values on one side only or changed, a negation,
    a modal or an exclusive word on one side only (reasons left out)."""
    a = cx._REASON.sub(" ", mine.lower())
    b = cx._REASON.sub(" ", theirs.lower())
    va, vb = _values(a), _values(b)
    strong_a, strong_b = bool(cx._STRONG.search(a)), bool(cx._STRONG.search(b))
    optional_a, optional_b = bool(cx._OPTIONAL.search(a)), bool(cx._OPTIONAL.search(b))
    return {
        "numbers_changed": 1.0 if va and vb and not va <= vb else 0.0,
        "numbers_new": 1.0 if va and not vb else 0.0,
        "negation_asymmetry": _asymmetric(_NEGATED, a, b),
        "modal_asymmetry": 1.0
        if (strong_a and optional_b and not strong_b) or (strong_b and optional_a and not strong_a)
        else 0.0,
        "exclusive_asymmetry": _asymmetric(_EXCLUSIVE, a, b),
    }


class TaggingModelMissing(SynthesizerError, RuntimeError):
    """The pair model file is missing or unreadable."""


def body(description: str) -> str:
    """A description without the story frame ("As a ..., I want") and its reason ("so that")."""
    return _REASON.sub("", _STORY_FRAME.sub("", description.strip())).strip()


def settled(text: str) -> str:
    """``text`` without the sentences that state an open point (a hole is not a requirement)."""
    return " ".join(s for s in _SENTENCE.split(text) if s and not PLACEHOLDER.search(s))


def requirements_text(c: Candidate) -> str:
    """The candidate's settled text: what a story could contradict."""
    criteria = [settled(ac) for ac in c.acceptance_criteria]
    return story_text(settled(c.title), settled(c.description), [a for a in criteria if a])


def candidate_text(c: Candidate) -> str:
    return story_text(c.title, c.description, c.acceptance_criteria)


def _sentences(title: str, description: str, criteria: list[str]) -> list[str]:
    parts = [s for s in _SENTENCE.split(body(description)) if content_words(s)]
    parts += [settled(a) for a in criteria if content_words(settled(a))]
    return parts or [title]


def _unit(v: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


_CACHE_SIZE = 20_000  # texts (~1.5 KB each as float32): existing stories recur in every story
_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()


class _Vectors:
    """Embeds many texts at once, each distinct text once; keeps the most recent vectors, since
    the same existing stories are candidates of many generated stories."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.index: dict[str, int] = {}

    def add(self, text: str) -> int:
        return self.index.setdefault(text.strip() or ".", len(self.index))

    def compute(self) -> np.ndarray:
        name = str(getattr(self.embedder, "model_name", ""))
        texts = list(self.index)
        found: dict[str, np.ndarray] = {}
        with _cache_lock:
            for t in texts:
                hit = _cache.get((name, t))
                if hit is not None:
                    _cache.move_to_end((name, t))
                    found[t] = hit
        todo = [t for t in texts if t not in found]
        if todo:
            fresh = _unit(np.asarray(self.embedder.embed(todo), dtype=np.float64))
            with _cache_lock:
                for t, row in zip(todo, fresh, strict=True):
                    found[t] = row.astype(np.float32)
                    _cache[(name, t)] = found[t]
                while len(_cache) > _CACHE_SIZE:
                    _cache.popitem(last=False)
        return np.asarray([found[t] for t in texts], dtype=np.float64)


# where one sentence states two requirements: "... and shall issue an event", "...; ..."
_CLAUSE = re.compile(
    r";\s*|,?\s+(?:and|but|then)\s+(?:also\s+)?(?=(?:shall|must|will|should|to|it|the system|"
    r"the cfe|i)\b)|,\s+(?=(?:and\s+)?(?:shall|must|will)\b)|\s+(?=in addition\b)",
    re.I,
)


def _clauses(sentences: list[str]) -> list[str]:
    out = []
    for s in sentences:
        out += [c.strip() for c in _CLAUSE.split(s) if c and len(content_words(c)) >= 2]
    return out or sentences


@dataclass
class _Side:
    full: int
    title: int
    body: int
    sentences: list[int]
    sentence_texts: list[str]
    criteria: list[int]
    words: set[str]
    clauses: list[int]
    open_points: list[int]


def _side(vec: _Vectors, title: str, description: str, criteria: list[str], full: bool) -> _Side:
    text = story_text(title, description, criteria)
    sentences = _sentences(title, description, criteria)
    holes = [s for a in criteria for s in _SENTENCE.split(a) if PLACEHOLDER.search(s)]
    return _Side(
        full=vec.add(text) if full else -1,
        title=vec.add(title),
        body=vec.add(body(description) or title),
        sentences=[vec.add(s) for s in sentences],
        sentence_texts=sentences,
        criteria=[vec.add(a) for a in criteria if content_words(a)],
        words=set(content_words(" ".join([title, body(description), *criteria]))),
        clauses=[vec.add(c) for c in _clauses(sentences)],
        open_points=[vec.add(h) for h in holes],
    )


@short_text_cache()
def _char_grams(text: str) -> Mapping[str, int]:
    """Counts of the character 4-grams of the text's words (read-only: remembered per process,
    the same candidates recur in every story's comparisons)."""
    n = 4
    out: Counter[str] = Counter()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        padded = f" {w} "
        out.update(padded[i : i + n] for i in range(max(1, len(padded) - n + 1)))
    return MappingProxyType(out)


def _count_cosine(a: Mapping[str, int], b: Mapping[str, int]) -> float:
    dot = sum(v * b.get(k, 0) for k, v in a.items())
    norm = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def _magnitude_contrasts(mine: str, theirs: str) -> dict[str, float]:
    """Numbers, units and optionality of the story (reasons left out) against the
    candidate's settled text, as ``shared.analysis.magnitudes`` normalises them."""
    a = cx._REASON.sub(" ", mine.lower())
    b = cx._REASON.sub(" ", theirs.lower())
    return {
        "values_disjoint": 1.0 if mg.value_changes(a, b) else 0.0,
        "values_only_mine": 1.0 if mg.magnitudes(a) and not mg.magnitudes(b) else 0.0,
        "unit_change": 1.0 if mg.unit_changes(a, b) else 0.0,
        "optional_asymmetry": _asymmetric(mg.OPTIONAL, a, b),
    }


def pair_features(
    story: GeneratedItem, candidates: list[Candidate], embedder: Embedder | None
) -> np.ndarray:
    """One row of ``FEATURES`` per candidate (in the order given); ``embedder`` None: the
    packaged MiniLM's vectors throughout."""
    if not candidates:
        return np.zeros((0, len(FEATURES)))
    minilm = capture_embedder(embedder)
    # the candidates' similarity is MiniLM's already when MiniLM retrieved them
    full = minilm is not embedder
    vec = _Vectors(minilm)
    mine = _side(vec, story.title, story.description, story.acceptance_criteria, full)
    theirs = [_side(vec, c.title, c.description, c.acceptance_criteria, full) for c in candidates]
    v = vec.compute()
    if full:
        sims = np.array([float(v[mine.full] @ v[t.full]) for t in theirs])
    else:
        sims = np.array([c.similarity for c in candidates], dtype=np.float64)
    top = float(sims.max())
    story_words = mine.words
    df = Counter(w for t in theirs for w in t.words)
    n = len(theirs)

    def idf(w: str) -> float:
        return math.log((n + 1) / (df.get(w, 0) + 0.5))

    story_weight = sum(idf(w) for w in story_words) or 1.0
    mine_text = story_text(story.title, story.description, story.acceptance_criteria)
    mine_grams = _char_grams(_core_text(story))
    numbers = 1.0 if cx.quantities(mine_text) else 0.0
    rows = []
    for k, (c, t) in enumerate(zip(candidates, theirs, strict=True)):
        others = np.delete(sims, k)
        s = float(sims[k])
        cross = np.array(
            [[float(v[a] @ v[b]) for b in t.sentences] for a in mine.sentences]
        )  # story sentences x candidate sentences
        best = cross.max(axis=1)
        best_match = cross.argmax(axis=1)
        crit_best = (
            np.array([max(float(v[a] @ v[b]) for b in t.sentences) for a in mine.criteria])
            if mine.criteria
            else np.zeros(0)
        )
        clause_best = (v[mine.clauses] @ v[t.sentences].T).max(axis=1)
        covered = cross.max(axis=0)  # each candidate sentence: how well the story says it
        hole_match = float((v[mine.sentences] @ v[t.open_points].T).max()) if t.open_points else 0.0
        settled_text = requirements_text(c)
        cues = {
            name: 1.0 if fn(mine_text, settled_text) else 0.0 for name, fn in CUE_DETECTORS.items()
        }
        any_cue = 1.0 if any(cues.values()) else 0.0
        hole = 1.0 if PLACEHOLDER.search(candidate_text(c)) else 0.0
        union = story_words | t.words
        row = {
            "sim": s,
            "sim_minus_top": s - top,
            "top_margin": s - float(others.max()) if len(others) else 0.0,
            "is_top": 1.0 if s >= top else 0.0,
            "cos_title": float(v[mine.title] @ v[t.title]),
            "cos_body": float(v[mine.body] @ v[t.body]),
            "cos_cross": max(float(v[mine.title] @ v[t.body]), float(v[mine.body] @ v[t.title])),
            "best_sentence": float(best.max()),
            "mean_best_sentence": float(best.mean()),
            "ac_coverage": float((crit_best >= COVERED_AT).mean()) if len(crit_best) else 0.0,
            "story_has_acs": 1.0 if mine.criteria else 0.0,
            "jaccard": len(story_words & t.words) / len(union) if union else 0.0,
            "weighted_overlap": sum(idf(w) for w in story_words & t.words) / story_weight,
            "novelty": len(story_words - t.words) / len(story_words) if story_words else 0.0,
            "reverse_novelty": len(t.words - story_words) / len(t.words) if t.words else 0.0,
            **{f"cue_{k}": x for k, x in cues.items()},
            "any_cue": any_cue,
            "cue_x_sim": any_cue * s,
            "open_point": hole,
            "open_point_x_sim": hole * s,
            "story_numbers": numbers,
            # what the story says against the candidate's sentences that say the same thing
            # (not its whole text: "cannot be confused by touch" in another criterion of the
            # item is no negation of "a power button")
            **_lexical_contrasts(_core_text(story), _aligned(t, best_match)),
            "length_ratio": math.log((len(story_words) + 1) / (len(t.words) + 1)),
            **_magnitude_contrasts(_core_text(story), settled_text),
            "story_covered_min": float(best.min()),
            "candidate_covered_mean": float(covered.mean()),
            "candidate_covered_min": float(covered.min()),
            "clause_covered_min": float(clause_best.min()),
            "open_point_match": hole_match,
            "char_cosine": _count_cosine(
                mine_grams,
                _char_grams(" ".join([c.title, body(c.description), *c.acceptance_criteria])),
            ),
            "reverse_weighted_overlap": sum(idf(w) for w in story_words & t.words)
            / (sum(idf(w) for w in t.words) or 1.0),
        }
        rows.append([row[f] for f in FEATURES])
    return np.asarray(rows, dtype=np.float64)


def _aligned(side: _Side, best_match: np.ndarray) -> str:
    """The candidate's sentences that some story sentence is closest to, in their order."""
    return " ".join(settled(side.sentence_texts[j]) for j in sorted({int(b) for b in best_match}))


def _core_text(story: GeneratedItem) -> str:
    return " ".join([story.title, body(story.description), *story.acceptance_criteria])


STORY_FEATURES: tuple[str, ...] = (
    *FEATURES,
    "p_related",
    "p_second",
    "p_margin",
    "cue_top3",
    "open_point_top3",
    "max_sim",
)


def story_vector(features: np.ndarray, p_related: np.ndarray) -> tuple[np.ndarray, int]:
    """The story-level row (``STORY_FEATURES``): the features of the candidate most likely
    related, how likely it and the next one are related, and what the top three show."""
    order = np.argsort(-p_related, kind="stable")
    best = int(order[0])
    second = float(p_related[order[1]]) if len(order) > 1 else 0.0
    top3 = order[:3]
    col = {name: k for k, name in enumerate(FEATURES)}
    extra = [
        float(p_related[best]),
        second,
        float(p_related[best]) - second,
        float(features[top3, col["any_cue"]].max()),
        float(features[top3, col["open_point"]].max()),
        float(features[:, col["sim"]].max()),
    ]
    return np.concatenate([features[best], extra]), best


@dataclass
class TagScores:
    """What the pair model says about one story."""

    tag: Tag
    confidence: float
    scores: dict[str, float]  # per tag, calibrated
    runner_up: Tag
    runner_up_score: float
    candidate: int | None  # index of the candidate that decides the tag (None for new)
    p_related: np.ndarray  # per candidate: probability that it is related to the story
    logits: np.ndarray  # per tag (TAGS order), before the temperature


def _linear(part: dict[str, Any], x: np.ndarray) -> np.ndarray:
    z: np.ndarray = ((x - np.asarray(part["mean"])) / np.asarray(part["scale"])) @ np.asarray(
        part["coef"]
    ).T + np.asarray(part["intercept"])
    return z


class PairModel:
    """Two logistic regressions: ``related`` (per candidate: is it the existing story the
    generated one duplicates, extends, fills or contradicts?) and ``tagger`` (per story: which
    tag, from the most likely related candidate's features)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        if (
            tuple(doc.get("features", ())) != FEATURES
            or tuple(doc.get("story_features", ())) != STORY_FEATURES
            or tuple(doc.get("tags", ())) != TAGS
        ):
            raise TaggingModelMissing(
                "the tagging model was trained on other features; retrain it with "
                "python -m shared.eval.train_tagging"
            )
        self.doc = doc
        self.version = str(doc["version"])
        self.related = doc["related"]
        self.tagger = doc["tagger"]
        self.temperature = float(doc.get("temperature", 1.0))
        self.review_below = float(doc.get("review_below", 0.6))

    @classmethod
    def load(cls, path: Path | None = None) -> PairModel:
        return _load(str(path or MODEL_PATH))

    def related_probabilities(self, features: np.ndarray) -> np.ndarray:
        if not len(features):
            return np.zeros(0)
        z = _linear(self.related, features)[:, 0]
        return 1.0 / (1.0 + np.exp(-z))

    def score(self, features: np.ndarray, temperature: float | None = None) -> TagScores:
        t = self.temperature if temperature is None else temperature
        if not len(features):
            logits = np.array([0.0 if tag == "new" else -30.0 for tag in TAGS])
            return scores_from(logits, t, None, np.zeros(0))
        p = self.related_probabilities(features)
        row, best = story_vector(features, p)
        logits = _linear(self.tagger, row[None, :])[0]
        return scores_from(logits, t, best, p)


def scores_from(
    logits: np.ndarray, temperature: float, best: int | None, p_related: np.ndarray
) -> TagScores:
    z = logits / temperature
    e = np.exp(z - z.max())
    probs = e / e.sum()
    scores: dict[str, float] = {tag: float(probs[k]) for k, tag in enumerate(TAGS)}
    order = sorted(TAGS, key=lambda tag: (-scores[tag], TAGS.index(tag)))
    tag, second = order[0], order[1]
    return TagScores(
        tag=tag,
        confidence=scores[tag],
        scores=scores,
        runner_up=second,
        runner_up_score=scores[second],
        candidate=None if tag == "new" else best,
        p_related=p_related,
        logits=logits,
    )


@lru_cache(maxsize=4)
def _load(path: str) -> PairModel:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise TaggingModelMissing(
            f"the tagging model {path} cannot be read ({err}); retrain it with "
            "python -m shared.eval.train_tagging"
        ) from None
    return PairModel(doc)
