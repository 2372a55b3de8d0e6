"""Offline backlog generation (seed §5): requirement-bearing sentences become quoted user stories.

Owns: turning one segment and its retrieved context into a ``GenerationDraft``. The rules:

1. Sentences (``textio.sentence_spans``) are read with ``language.sentence_cues``: modals and needs,
   the user-story form, "users can", imperative bullets, constraints with numbers and decisions make
   a requirement; fillers, sentences under 5 words, meta talk ("we need to wrap up") and questions
   do not. A bullet of written notes counts as a curated statement (``BULLET_BONUS``), so "No
   teletext button and no teletext functions." needs no modal; checkbox action items never count.
   A real question about the topic becomes an open question, verbatim, never answered.
2. A requirement said plainly (a modal with a short subject, the user-story form) gains strength,
   one buried in a long ramble loses some and may drop out (``phrasing.clarity``). Neighbouring
   requirement sentences (at most one sentence apart) that say the same thing (cosine >=
   ``MERGE_SIMILARITY``), and repeats anywhere in the segment (>= ``REPEAT_SIMILARITY``), become
   one story with several quotes. The strongest ``max_stories_per_segment`` stories are kept,
   in text order.
3. ``phrasing.write_story`` writes each story from its quotes: a title from the requirement's
   predicate ("We'll need only few buttons" -> "Only few buttons"), "As a <role>, I want <means>,
   so that <ends>" (ends from a "so that / because" clause, else from the segment's theme) and
   criteria that restate the quotes only (a "must" statement, Given/When/Then for a "when/if"
   clause, one per stated limit or figure), so no number is ever invented. Quotes are exact
   sentence spans of ``segment.raw_text``.
4. Stories group into one feature (two when there are more than three stories and they fall into two
   clearly separate clusters), named by the segment's keywords; one epic per segment theme.
5. Context: a retrieved Feature/Epic whose text has cosine >= ``PARENT_REUSE_AT_LEAST`` with the new
   one is reused (``existing_work_item_id``). A retrieved User Story with cosine >=
   ``thresholds.extend_similarity`` is listed in ``extends_work_item_ids``, and the story's criteria
   that the item lacks (word Jaccard < ``AC_DELTA_JACCARD`` against each of its criteria) go into
   ``ac_delta``. Architecture constraints (split at ids such as "ARC-03"; table rows dropped)
   that are related to a story (cosine >= ``CONSTRAINT_RELEVANCE``) and contradicted by it (a
   value beyond a maximum or minimum stated about the same thing, or something the constraint
   rules out) set ``constraint_violation`` with a note naming the constraint.

Deterministic; no model, Usage() zero.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from shared.agents import (
    EpicDraft,
    FeatureDraft,
    GenerationContext,
    GenerationDraft,
    GenerationResult,
    RetrievedChunk,
    StoryDraft,
)
from shared.embeddings import Embedder
from shared.engine.offline.contradiction import forbidden_mentions, limit_violations
from shared.engine.offline.language import (
    REQUIREMENT_STRENGTH,
    SentenceCues,
    clean,
    content_words,
    is_topical,
    sentence_cues,
)
from shared.engine.offline.phrasing import capital, clarity, write_story
from shared.models import Segment, story_text
from shared.settings import PipelineConfig
from shared.textio import Span, jaccard, sentence_spans

BULLET_BONUS = 2.0
MERGE_SIMILARITY = 0.65
REPEAT_SIMILARITY = 0.85
QUESTION_ATTACH = 0.5
PARENT_REUSE_AT_LEAST = 0.70
AC_DELTA_JACCARD = 0.6
CONSTRAINT_RELEVANCE = 0.35
MAX_OPEN_QUESTIONS = 10

_CATEGORY_LABELS = {"feature_request", "constraint", "decision", "question", "action_item"}
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?!\[[ xX]\])")
_ID = re.compile(r"\b([A-Z]{2,6}-\d{1,4})\b")
_ID_AT_LINE_START = re.compile(r"^[ \t]*(?:[-*+]\s+)?(?:\*\*)?([A-Z]{2,6}-\d{1,4})\b", re.MULTILINE)


@dataclass
class _Sentence:
    index: int
    span: Span
    text: str  # exact text of the span: the quote
    cues: SentenceCues
    bullet: bool = False


@dataclass
class _Story:
    sentences: list[_Sentence]
    strength: float


def requirement_sentences(text: str) -> list[Span]:
    """Spans of the sentences the offline engine treats as requirements (for coverage)."""
    return [s.span for s in _read(text) if s.cues.is_requirement]


def _read(text: str) -> list[_Sentence]:
    """The text's sentences with their cues. A bullet of written notes is a curated statement,
    so it needs no modal to count (``BULLET_BONUS``); action items and questions stay out."""
    out = []
    for k, span in enumerate(sentence_spans(text)):
        sentence = text[span.start : span.end]
        cues = sentence_cues(sentence)
        line = text[text.rfind("\n", 0, span.start) + 1 : span.start + 1]
        bullet = bool(_BULLET.match(line))
        if bullet and not cues.is_question and "action_item" not in cues.categories:
            cues = dataclasses.replace(cues, strength=cues.strength + BULLET_BONUS)
        out.append(_Sentence(k, span, sentence, cues, bullet))
    return out


class OfflineGenerator:
    version = "gen-offline-v1"
    engine = "offline"
    model: str | None = None

    def __init__(self, embedder: Embedder, cfg: PipelineConfig) -> None:
        self.embedder = embedder
        self.cfg = cfg

    def generate(self, segment: Segment, context: GenerationContext) -> GenerationResult:
        text = segment.raw_text
        sentences = _read(text)
        reqs = [s for s in sentences if s.cues.is_requirement]
        questions = [s for s in sentences if s.cues.is_open_question][:MAX_OPEN_QUESTIONS]
        vectors = self._embed([s.text for s in reqs + questions])
        req_vec = {s.index: vectors[k] for k, s in enumerate(reqs)}
        stories = self._group(reqs, req_vec)
        stories = sorted(stories, key=lambda st: (-st.strength, st.sentences[0].index))
        stories = stories[: self.cfg.generation.max_stories_per_segment]
        stories.sort(key=lambda st: st.sentences[0].index)

        theme = segment.theme or _keywords_phrase(segment) or "this topic"
        drafts = [
            write_story([s.text for s in st.sentences], _primary(st), theme) for st in stories
        ]
        story_vecs = [_unit(sum(req_vec[s.index] for s in st.sentences)) for st in stories]

        draft = GenerationDraft()
        for k, q in enumerate(questions):  # to the story it is about, else to the segment
            scores = [float(vectors[len(reqs) + k] @ v) for v in story_vecs]
            if scores and max(scores) >= QUESTION_ATTACH:
                drafts[int(np.argmax(scores))].open_questions.append(q.text)
            else:
                draft.open_questions.append(q.text)
        if not drafts:
            return GenerationResult(draft=draft, model=None)

        epic = EpicDraft(
            key="E1",
            title=capital(theme),
            description=f"Epic for the theme '{theme}' ({segment.dominant_intent}).",
        )
        features = self._features(drafts, story_vecs, segment, epic.key)
        self._reuse_parents(epic, features, drafts, context)
        self._extends(drafts, context)
        self._constraints(drafts, context.architecture_chunks)
        draft.epics, draft.features, draft.stories = [epic], features, drafts
        return GenerationResult(draft=draft, model=None)

    # --------------------------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self.embedder, "dimension", 1)), dtype=np.float64)
        return np.asarray(self.embedder.embed([clean(t) or t for t in texts]), dtype=np.float64)

    @staticmethod
    def _group(reqs: list[_Sentence], vec: dict[int, np.ndarray]) -> list[_Story]:
        stories: list[_Story] = []
        for s in reqs:
            target = None
            if stories:
                last = stories[-1].sentences[-1]
                if (
                    s.index - last.index <= 2
                    and float(vec[s.index] @ vec[last.index]) >= MERGE_SIMILARITY
                ):
                    target = stories[-1]
            if target is None:
                target = next(
                    (
                        st
                        for st in stories
                        if max(float(vec[s.index] @ vec[o.index]) for o in st.sentences)
                        >= REPEAT_SIMILARITY
                    ),
                    None,
                )
            if target is None:
                strength = s.cues.strength + clarity(s.text, s.bullet)
                if strength >= REQUIREMENT_STRENGTH:
                    stories.append(_Story([s], strength))
            elif len(target.sentences) < 4:
                target.sentences.append(s)
                target.strength = max(target.strength, s.cues.strength) + 0.25
        return stories

    @staticmethod
    def _features(
        drafts: list[StoryDraft], vecs: list[np.ndarray], segment: Segment, epic_key: str
    ) -> list[FeatureDraft]:
        groups = [list(range(len(drafts)))]
        if len(drafts) > 3:
            groups = _two_clusters(np.array(vecs)) or groups
        features: list[FeatureDraft] = []
        for k, members in enumerate(groups, start=1):
            key = f"F{k}"
            quotes = " ".join(q for m in members for q in drafts[m].source_quotes)
            titles = "; ".join(drafts[m].title for m in members)
            for m in members:
                drafts[m].feature_key = key
            features.append(
                FeatureDraft(
                    key=key,
                    title=_feature_title(quotes, segment, {f.title for f in features}),
                    description=f"Covers: {titles}.",
                    epic_key=epic_key,
                )
            )
        return features

    def _reuse_parents(
        self,
        epic: EpicDraft,
        features: list[FeatureDraft],
        drafts: list[StoryDraft],
        context: GenerationContext,
    ) -> None:
        """Point a new Feature/Epic at a retrieved one that is about the same thing."""
        pairs: list[tuple[EpicDraft | FeatureDraft, str, str]] = [
            (
                f,
                f"{f.title}. " + ". ".join(d.title for d in drafts if d.feature_key == f.key),
                "Feature",
            )
            for f in features
        ]
        pairs.append((epic, f"{epic.title}. " + ". ".join(f.title for f in features), "Epic"))
        for parent, text, kind in pairs:
            items = [i for i in context.ado_items if i.work_item_type == kind]
            if not items:
                continue
            vecs = self._embed([text] + [f"{i.title}. {i.description}" for i in items])
            sims = vecs[1:] @ vecs[0]
            best = int(np.argmax(sims))
            if sims[best] >= PARENT_REUSE_AT_LEAST:
                parent.existing_work_item_id = items[best].work_item_id

    def _extends(self, drafts: list[StoryDraft], context: GenerationContext) -> None:
        existing = [i for i in context.ado_items if i.work_item_type in ("User Story", "Story")]
        if not existing or not drafts:
            return
        texts = [story_text(d.title, d.description, d.acceptance_criteria) for d in drafts]
        texts += [story_text(i.title, i.description, i.acceptance_criteria) for i in existing]
        vecs = self._embed(texts)
        sims = vecs[: len(drafts)] @ vecs[len(drafts) :].T
        threshold = self.cfg.thresholds.extend_similarity
        for k, d in enumerate(drafts):
            order = sorted(
                range(len(existing)), key=lambda j: (-sims[k, j], existing[j].work_item_id)
            )
            hits = [existing[j] for j in order if sims[k, j] >= threshold]
            d.extends_work_item_ids = [i.work_item_id for i in hits]
            if hits:
                known = hits[0].acceptance_criteria
                d.ac_delta = [
                    ac
                    for ac in d.acceptance_criteria
                    if all(jaccard(ac, old) < AC_DELTA_JACCARD for old in known)
                ]

    def _constraints(self, drafts: list[StoryDraft], chunks: list[RetrievedChunk]) -> None:
        if not self.cfg.thresholds.constraint_violation_check or not drafts or not chunks:
            return
        constraints = [c for chunk in chunks for c in _split_constraints(chunk)]
        if not constraints:
            return
        story_texts = [f"{d.title}. {' '.join(d.source_quotes)}" for d in drafts]
        vecs = self._embed(story_texts + [text for _, text in constraints])
        sims = vecs[: len(drafts)] @ vecs[len(drafts) :].T
        for k, d in enumerate(drafts):
            notes = []
            for j, (cid, ctext) in enumerate(constraints):
                if sims[k, j] < CONSTRAINT_RELEVANCE:
                    continue
                cues = limit_violations(story_texts[k], ctext) or forbidden_mentions(
                    " ".join(d.source_quotes), ctext
                )
                if cues:
                    notes.append(f"{cid}: {cues[0]} (similarity {sims[k, j]:.2f})")
            if notes:
                d.constraint_violation = True
                d.constraint_notes = notes[:3]


def _feature_title(quotes: str, segment: Segment, taken: set[str]) -> str:
    """Two keywords of the segment that these stories use (else their most frequent words),
    neither repeating a word of the other nor a title already given in the segment."""
    said = content_words(quotes)
    counts = {w: said.count(w) for w in said if is_topical(w)}
    candidates = [
        k
        for k in segment.intent_labels
        if k not in _CATEGORY_LABELS and set(content_words(k)) & set(said)
    ]
    candidates += [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    chosen: list[str] = []
    used: set[str] = set()
    for term in candidates:
        words = set(content_words(term))
        if words and not words & used:
            chosen.append(term)
            used |= words
        title = capital(" and ".join(chosen))
        if len(chosen) == 2 and title not in taken:
            return title
        if len(chosen) == 2:
            chosen.pop()
    return capital(" and ".join(chosen)) if chosen else capital(segment.dominant_intent)


def _primary(story: _Story) -> int:
    """The sentence that states the story most strongly (the first on ties)."""
    strengths = [s.cues.strength for s in story.sentences]
    return strengths.index(max(strengths))


def _keywords_phrase(segment: Segment) -> str:
    kws = [k for k in segment.intent_labels if k not in _CATEGORY_LABELS]
    return " and ".join(kws[:2])


def _unit(v: np.ndarray) -> np.ndarray:
    return v / max(float(np.linalg.norm(v)), 1e-12)


def _two_clusters(vectors: np.ndarray) -> list[list[int]] | None:
    """Two groups when the stories clearly fall apart (2-means seeded by the least similar pair)."""
    sims = vectors @ vectors.T
    a, b = np.unravel_index(int(np.argmin(sims)), sims.shape)
    centres = np.array([vectors[a], vectors[b]])
    labels = np.zeros(len(vectors), dtype=int)
    for _ in range(10):
        labels = np.argmax(vectors @ centres.T, axis=1)
        if labels.min() == labels.max():
            return None
        centres = np.array([_unit(vectors[labels == c].sum(axis=0)) for c in (0, 1)])
    groups = [[i for i in range(len(vectors)) if labels[i] == c] for c in (0, 1)]
    within = np.mean([sims[i, j] for g in groups for i in g for j in g if i < j] or [1.0])
    between = np.mean([sims[i, j] for i in groups[0] for j in groups[1]])
    if within - between < 0.1:
        return None
    return sorted(groups, key=min)


def _split_constraints(chunk: RetrievedChunk) -> list[tuple[str, str]]:
    """(id, text) per numbered constraint of an architecture chunk, else per sentence."""
    text = chunk.text
    marks = list(_ID_AT_LINE_START.finditer(text)) or list(_ID.finditer(text))
    if marks:
        out = []
        for k, m in enumerate(marks):
            end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
            # table rows are dropped: flattened cells ("| Titanium | yes | no |") read as nonsense
            body = re.sub(r"(?m)^\s*\|.*$", " ", text[m.end() : end])
            body = re.sub(r"[*#]+", " ", body)
            out.append((m.group(1), re.sub(r"\s+", " ", body).strip(" -:")))
        return [(cid, body) for cid, body in out if body]
    return [
        (f"{chunk.chunk_id}#{k}", text[s.start : s.end])
        for k, s in enumerate(sentence_spans(text))
        if len(text[s.start : s.end].split()) >= 4
    ]
