"""Offline tagging (seed §6): one tag per generated user story against the existing stories the
supervisor retrieved (``Candidate.similarity`` is the cosine of the two story texts).

Two scorers (``pipeline.tagging.scorer``, ``SYNTH_TAGGING_MODEL``):

``pairs`` (default, ``tag-offline-v2``): the learned pair model of ``pairs`` scores every
candidate; the tag is the best-scoring relation, the deciding candidate comes first in
``related_story_ids`` followed by the other candidates the model relates to the story. The record
carries the calibrated ``confidence``, the runner-up tag and ``needs_review`` when the confidence is
below ``review_below`` or a contradiction cue fired on a related candidate, or, for ``new``, on the
candidate the model still finds at least evenly likely to be related (``review_reasons`` says
which; the cues are the cue rules plus numbers and units normalised by
``shared.analysis.magnitudes``). An ``extend`` or ``gap`` whose candidate fired a cue is a *possible
conflict*. A story the offline generator wrote as a decision to leave something out ("Leave out
gesture control") is a ``conflict``, flagged, when a negation cue shows its related candidate asks
for that thing (``leaves_out_what_it_asks``).

``thresholds`` (``tag-offline-v1``, the seed's rules). With ``s`` the highest similarity and ``T``
the configured thresholds, the first rule that holds wins:

1. no candidates, or ``s < T.new_below``                        -> ``new`` (no related ids)
2. a candidate with similarity >= ``T.conflict_at_least`` and a contradiction cue against the story
   (numbers, negation, modal flip, quantifier, antonym; see ``contradiction``) -> ``conflict``
3. ``s >= T.duplicate_at_least`` and at most ``T.duplicate_max_novelty`` of the story's content words
   are missing from the candidate                                 -> ``duplicate``
4. ``s >= T.gap_at_least`` and the candidate holds an explicit placeholder ("TBD", "to be decided",
   "not yet defined") that the story fills with new content       -> ``gap``
5. ``s >= T.extend_similarity``                                    -> ``extend``
6. ``T.gap_at_least <= s < T.extend_similarity``                   -> ``gap``
7. otherwise (weak overlap)                                        -> ``new``

Sentences of a candidate that state an open point are left out when looking for contradiction
cues (a hole is not a requirement). A contradiction cue found below ``conflict_at_least`` does not
change the tag (the seed asks for high similarity before calling a conflict) but is named in the
reasoning so a reviewer sees it.
``related_story_ids`` holds the candidates at or above ``new_below``, the deciding one first.
Deterministic; no model, Usage() zero.
"""

from __future__ import annotations

import re

import numpy as np

from shared.agents import Candidate, TagDecision, TaggingResult
from shared.analysis.contradiction import contradiction_cues, quantities
from shared.analysis.magnitudes import unit_changes, value_changes
from shared.embeddings import Embedder
from shared.engine.offline.lexicon import leaves_out
from shared.engine.offline.pairs import CUE_DETECTORS, PairModel, TagScores, pair_features
from shared.models import Engine, GeneratedItem, Tag, story_text
from shared.settings import TaggingConfig, ThresholdsConfig
from shared.text.language import content_words

POSSIBLE_CONFLICT = "possible conflict"

_PLACEHOLDER = re.compile(
    r"\b(?:tbd|tbc|to be (?:decided|defined|determined|confirmed|clarified|agreed)"
    r"|still (?:open|to be decided)|not (?:yet )?(?:defined|decided|specified|known)|unknown"
    r"|open question)\b|\?\?+",
    re.IGNORECASE,
)
# Words the story template and the offline generator's criteria add; they are not content.
_TEMPLATE_WORDS = frozenset(
    """given product finished checked delivered matches match decision stated figure met possible
    provide agreed what role able""".split()
)
_STORY_FRAME = re.compile(r"^as an? [^,]{1,40},\s*i (?:want|need|would like)(?: to)?\s*", re.I)


class OfflineTagger:
    engine: Engine = "offline"
    model: str | None = None

    def __init__(
        self,
        embedder: Embedder | None,
        thresholds: ThresholdsConfig,
        tagging: TaggingConfig | None = None,
        pair_model: PairModel | None = None,
    ) -> None:
        self.embedder = embedder
        self.t = thresholds
        cfg = tagging or TaggingConfig()
        self.scorer = cfg.scorer
        self.pair_model: PairModel | None = None
        if self.scorer == "pairs":
            self.pair_model = pair_model or PairModel.load()
        model_default = self.pair_model.review_below if self.pair_model else 0.0
        self.review_below = cfg.review_below if cfg.review_below is not None else model_default
        self.version = (
            f"tag-offline-v2+{self.pair_model.version}" if self.pair_model else "tag-offline-v1"
        )

    def tag(self, story: GeneratedItem, candidates: list[Candidate]) -> TaggingResult:
        if self.pair_model is not None:
            return TaggingResult(decision=self.decide_by_pairs(story, candidates), model=None)
        tag, related, reasoning = self._decide(story, candidates)
        decision = TagDecision(
            decision_tag=tag, related_story_ids=related, reasoning_excerpt=reasoning
        )
        return TaggingResult(decision=decision, model=None)

    def scores(self, story: GeneratedItem, candidates: list[Candidate]) -> TagScores:
        """The pair model's view of ``story`` (the LLM tagger checks its answers against it);
        without an embedder, the packaged MiniLM's vectors."""
        model = self.pair_model or PairModel.load()
        return model.score(pair_features(story, candidates, self.embedder))

    def decide_by_pairs(self, story: GeneratedItem, candidates: list[Candidate]) -> TagDecision:
        if not candidates:
            return TagDecision(
                decision_tag="new", reasoning_excerpt="No existing stories were retrieved."
            )
        sc = self.scores(story, candidates)
        return pair_decision(story, candidates, sc, self.review_below)

    def _decide(
        self, story: GeneratedItem, candidates: list[Candidate]
    ) -> tuple[Tag, list[int], str]:
        t = self.t
        ranked = sorted(candidates, key=lambda c: (-c.similarity, c.work_item_id))
        if not ranked:
            return "new", [], "No existing stories were retrieved."
        top, s = ranked[0], ranked[0].similarity
        if s < t.new_below:
            return (
                "new",
                [],
                (
                    f"max similarity {s:.2f} to #{top.work_item_id} is below "
                    f"newBelow {t.new_below:.2f}."
                ),
            )
        mine = story_text(story.title, story.description, story.acceptance_criteria)
        related = [c.work_item_id for c in ranked if c.similarity >= t.new_below]

        for c in ranked:
            if c.similarity < t.conflict_at_least:
                break
            cues = contradiction_cues(mine, _requirements(c))
            if cues:
                ids = [c.work_item_id] + [i for i in related if i != c.work_item_id]
                return (
                    "conflict",
                    ids,
                    f"similarity {c.similarity:.2f} to #{c.work_item_id}; {cues[0]}.",
                )

        head = f"similarity {s:.2f} to #{top.work_item_id}"
        weak_cues = contradiction_cues(mine, _requirements(top))
        caveat = (
            f" Possible contradiction below conflictAtLeast: {weak_cues[0]}." if weak_cues else ""
        )
        novel, total = _novel_words(story, top)
        ratio = len(novel) / total if total else 0.0
        adds = f"adds: {', '.join(novel[:5])}" if novel else "adds no new content words"

        if s >= t.duplicate_at_least and ratio <= t.duplicate_max_novelty:
            return (
                "duplicate",
                related,
                (
                    f"{head} >= duplicateAtLeast {t.duplicate_at_least:.2f}, no contradiction, "
                    f"{len(novel)}/{total} content words new ({ratio:.0%})."
                ),
            )
        hole = _PLACEHOLDER.search(_text(top))
        if s >= t.gap_at_least and hole and (novel or quantities(mine)):
            return (
                "gap",
                related,
                (
                    f"{head}; it fills the open point '{hole.group(0)}' of "
                    f"#{top.work_item_id} ({adds})." + caveat
                ),
            )
        if s >= t.extend_similarity:
            return (
                "extend",
                related,
                (
                    f"{head} >= extendSimilarity {t.extend_similarity:.2f}, "
                    f"no contradiction; {adds}." + caveat
                ),
            )
        if s >= t.gap_at_least:
            return (
                "gap",
                related,
                (
                    f"{head} is in the gap band [{t.gap_at_least:.2f}, {t.extend_similarity:.2f}); "
                    f"{adds}." + caveat
                ),
            )
        return (
            "new",
            related,
            (f"{head} is below gapAtLeast {t.gap_at_least:.2f}: weak overlap, treated as new."),
        )


def _text(c: Candidate) -> str:
    return story_text(c.title, c.description, c.acceptance_criteria)


def _requirements(c: Candidate) -> str:
    """The candidate's text without the sentences that state an open point: "the target is TBD"
    or "password rules are not yet defined" leave a hole to fill, they say nothing to contradict."""

    def settled(text: str) -> str:
        return " ".join(s for s in re.split(r"(?<=[.;!?])\s+", text) if not _PLACEHOLDER.search(s))

    criteria = [settled(ac) for ac in c.acceptance_criteria]
    return story_text(settled(c.title), settled(c.description), [a for a in criteria if a])


def _novel_words(story: GeneratedItem, c: Candidate) -> tuple[list[str], int]:
    """The story's content words the candidate lacks (template phrasing ignored), and how many
    content words the story has."""
    description = _STORY_FRAME.sub("", story.description.strip())
    description = re.split(r",?\s*so that\b", description, maxsplit=1)[0]
    text = " ".join([story.title, description, *story.acceptance_criteria])
    mine = {w for w in content_words(text) if w not in _TEMPLATE_WORDS}
    theirs = set(content_words(_text(c)))
    novel = sorted(mine - theirs)
    return novel, len(mine)


def related_by_model(candidates: list[Candidate], sc: TagScores) -> list[int]:
    """The deciding candidate first, then the others the model relates to the story (p(related)
    at least one half), most similar first; none for ``new``."""
    if sc.tag == "new" or sc.candidate is None:
        return []
    first = candidates[sc.candidate].work_item_id
    others = [
        c.work_item_id
        for k, c in sorted(enumerate(candidates), key=lambda kc: -kc[1].similarity)
        if k != sc.candidate and sc.p_related[k] >= 0.5
    ]
    return [first, *others]


def fired_cues(story: GeneratedItem, c: Candidate) -> list[str]:
    """The contradiction cues between the story and the candidate's settled text: the cue rules,
    then numbers and units as ``shared.analysis.magnitudes`` normalises them."""
    mine = story_text(story.title, story.description, story.acceptance_criteria)
    theirs = _requirements(c)
    out: list[str] = []
    for detector in (*CUE_DETECTORS.values(), value_changes, unit_changes):
        out += detector(mine, theirs)
    return out


def cue_checked(candidates: list[Candidate], sc: TagScores, related: list[int]) -> list[int]:
    """The candidates whose cues call for a review: the related ones; for ``new``, the one the
    model still finds most likely related when it is at least even (a conflict the model missed
    should not be created as a new story unseen)."""
    if related or not len(sc.p_related):
        return related
    k = int(np.argmax(sc.p_related))
    return [candidates[k].work_item_id] if sc.p_related[k] >= 0.5 else []


def leaves_out_what_it_asks(story: GeneratedItem, c: Candidate) -> bool:
    """The story leaves out (``lexicon.leaves_out``) what ``c`` asks for: a negation cue between them
    ("Gesture control ... is dropped" against "Change the volume with a tilt gesture")."""
    if not leaves_out(story.title):
        return False
    mine = story_text(story.title, story.description, story.acceptance_criteria)
    return bool(CUE_DETECTORS["negation"](mine, _requirements(c)))


def pair_decision(
    story: GeneratedItem, candidates: list[Candidate], sc: TagScores, review_below: float
) -> TagDecision:
    """The tag, related ids, reasoning and review flags from the pair model's scores. A story that
    leaves out what its related candidate asks for is a conflict whatever the model's relation
    (the model learnt from requirements written as needs, not as decisions to drop one): it is
    flagged for review with the model's tag as the runner-up."""
    related = related_by_model(candidates, sc)
    by_id = {c.work_item_id: c for c in candidates}
    reasons: list[str] = []
    tag, confidence = sc.tag, sc.confidence
    runner_up, runner_up_score = sc.runner_up, sc.runner_up_score
    if tag in ("duplicate", "extend", "gap") and leaves_out_what_it_asks(story, by_id[related[0]]):
        runner_up, runner_up_score = tag, confidence
        tag, confidence = "conflict", sc.scores["conflict"]
        reasons.append(f"it leaves out what #{related[0]} asks for (the model: {runner_up})")
    if confidence < review_below:
        reasons.append(f"confidence {confidence:.2f} is below {review_below:.2f}")
    cue_text = ""
    for i in cue_checked(candidates, sc, related):
        cues = fired_cues(story, by_id[i])
        if cues:
            cue_text = f"#{i}: {cues[0]}"
            if tag in ("extend", "gap") and i == related[0]:
                reasons.append(f"{POSSIBLE_CONFLICT} with {cue_text}")
            else:
                reasons.append(f"contradiction cue on {cue_text}")
            break
    top = max(candidates, key=lambda c: c.similarity)
    if tag == "new":
        head = f"new ({confidence:.0%}): max similarity {top.similarity:.2f} to #{top.work_item_id}"
    else:
        c = by_id[related[0]]
        head = f"{tag} of #{c.work_item_id} ({confidence:.0%}): similarity {c.similarity:.2f}"
    reasoning = f"{head}; runner-up {runner_up} ({runner_up_score:.0%})."
    if cue_text and tag != "new":
        reasoning += f" Cue {cue_text}."
    return TagDecision(
        decision_tag=tag,
        related_story_ids=related,
        reasoning_excerpt=reasoning,
        confidence=round(confidence, 4),
        needs_review=bool(reasons),
        review_reasons=reasons,
        runner_up_tag=runner_up,
        runner_up_score=round(runner_up_score, 4),
    )
