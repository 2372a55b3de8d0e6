"""LLM tagging (seed §6, §7.3 step 3.3): one call per generated user story with candidates.

The prompt (``shared/prompts/tagging.txt``) has the seed's sections: the generated story, the
retrieved existing stories (id, title, description, acceptance criteria, similarity), the decision
instructions with the thresholds, the output schema. Both blocks are redacted as they are built,
and the existing stories' instruction-like spans listed before them (``prompting.outside_block``). Five tags: the seed's four plus ``duplicate``.

An answer is accepted when it parses into ``TaggingAnswer`` and is clear: a tag other than ``new``
must name at least one of the retrieved stories in ``related_story_ids`` (ids that were not
retrieved are dropped first). When the model rates its runner-up tag above its decision, the
higher-confidence tag wins; when the two are within ``AMBIGUITY_MARGIN`` the decision stands and a
warning is logged (seed §6 "Ambiguous decision"). Otherwise the shared retry rule applies: once at
temperature − 0.05, then ``TaggingFailed`` (the pipeline tags the story ``new`` with
``tagging_failed=true``). No candidates: ``new`` without a model call.

The answer is then checked in code against the scores (seed §6 thresholds are rules, not advice):
a ``duplicate`` or ``extend`` whose related stories all lie below ``newBelow`` is overridden to
``new``; a ``new`` with a candidate at or above ``duplicateAtLeast`` keeps its tag but needs a
review. With the pair model (``pipeline.tagging.scorer = pairs``) the record also carries the
model's calibrated probability of the answer as ``confidence``, the scores' own best tag as the
runner-up when it differs, and ``needs_review`` when that probability is below ``review_below``.
The model's own answer is kept in ``model_tag`` whenever it was overridden.
"""

from __future__ import annotations

import logging

from shared import prompts
from shared.agents import Candidate, TagDecision, TaggingFailed, TaggingResult
from shared.embeddings import Embedder
from shared.engine.llm.base import ask
from shared.engine.llm.prompting import Annotator, candidates_text, outside_block
from shared.engine.llm.schemas import TaggingAnswer
from shared.errors import RejectedAnswer
from shared.llm import ChatModel
from shared.models import Engine, GeneratedItem
from shared.settings import PipelineConfig

log = logging.getLogger(__name__)

MAX_OUTPUT_TOKENS = 800
AMBIGUITY_MARGIN = 0.1


class UnclearDecision(RejectedAnswer):
    """A tag other than new that names no retrieved story: the answer is rejected."""


def story_block(story: GeneratedItem, hygiene: object = None) -> str:
    lines = [f"Title: {story.title}", f"Description: {story.description}"]
    if story.acceptance_criteria:
        lines.append("Acceptance criteria:")
        lines.extend(f"- {ac}" for ac in story.acceptance_criteria)
    return outside_block("story", "\n".join(lines), hygiene=hygiene)


class LLMTagger:
    engine: Engine = "llm"

    def __init__(
        self,
        chat: ChatModel,
        cfg: PipelineConfig,
        embedder: Embedder | None = None,
        annotate: Annotator | None = None,
    ) -> None:
        self.chat = chat
        self.cfg = cfg
        self.annotate = annotate
        self.template = prompts.load("tagging")
        self.version = self.template.version
        self.model: str | None = chat.model
        self.scorer = None
        if embedder is not None and cfg.tagging.scorer == "pairs":
            from shared.engine.offline.tagging import OfflineTagger

            self.scorer = OfflineTagger(embedder, cfg.thresholds, cfg.tagging)

    def messages(self, story: GeneratedItem, candidates: list[Candidate]) -> list[dict[str, str]]:
        t = self.cfg.thresholds
        return self.template.messages(
            story=story_block(story, self.cfg.hygiene),
            candidates=candidates_text(
                candidates, hygiene=self.cfg.hygiene, annotate=self.annotate
            ),
            new_below=f"{t.new_below:g}",
            gap_at_least=f"{t.gap_at_least:g}",
            extend_similarity=f"{t.extend_similarity:g}",
            conflict_at_least=f"{t.conflict_at_least:g}",
            duplicate_at_least=f"{t.duplicate_at_least:g}",
        )

    def tag(self, story: GeneratedItem, candidates: list[Candidate]) -> TaggingResult:
        if not candidates:
            return TaggingResult(
                decision=TagDecision(
                    decision_tag="new", reasoning_excerpt="no existing user story was retrieved"
                ),
                model=None,
            )
        known = {c.work_item_id for c in candidates}

        def check(answer: TaggingAnswer) -> TagDecision:
            tag, confidence = answer.decision_tag, answer.confidence
            runner_up, runner_conf = answer.runner_up_tag, answer.runner_up_confidence
            if runner_up is not None and runner_conf is not None and runner_up != tag:
                if runner_conf > confidence:
                    log.warning(
                        "%s: runner-up %s (%.2f) rated above %s (%.2f); taking %s",
                        story.item_id,
                        runner_up,
                        runner_conf,
                        tag,
                        confidence,
                        runner_up,
                    )
                    tag = runner_up
                elif confidence - runner_conf < AMBIGUITY_MARGIN:
                    log.warning(
                        "%s: ambiguous tag, %s (%.2f) vs %s (%.2f); keeping %s",
                        story.item_id,
                        tag,
                        confidence,
                        runner_up,
                        runner_conf,
                        tag,
                    )
            related = [i for i in dict.fromkeys(answer.related_story_ids) if i in known]
            if tag != "new" and not related:
                raise UnclearDecision(
                    f"decision {tag!r} names none of the retrieved stories "
                    f"({', '.join(f'#{i}' for i in sorted(known))}) in related_story_ids"
                )
            return TagDecision(
                decision_tag=tag,
                related_story_ids=related if tag != "new" else [],
                reasoning_excerpt=answer.reasoning_excerpt.strip()[:1000],
            )

        outcome = ask(
            self.chat,
            self.messages(story, candidates),
            TaggingAnswer,
            check,
            temperature=self.cfg.tagging.temperature,
            max_tokens=MAX_OUTPUT_TOKENS,
            failure=TaggingFailed,
            what=f"tagging of {story.item_id}",
        )
        return TaggingResult(
            decision=self.checked(story, candidates, outcome.value),
            usage=outcome.usage,
            model=outcome.model,
            attempts=outcome.attempts,
        )

    def checked(
        self, story: GeneratedItem, candidates: list[Candidate], decision: TagDecision
    ) -> TagDecision:
        """The model's decision held against the scores (module docstring)."""
        t = self.cfg.thresholds
        by_id = {c.work_item_id: c for c in candidates}
        top = max(c.similarity for c in candidates)
        tag, related = decision.decision_tag, list(decision.related_story_ids)
        reasons: list[str] = []
        model_tag = None
        best_related = max((by_id[i].similarity for i in related if i in by_id), default=0.0)
        if tag in ("duplicate", "extend") and best_related < t.new_below:
            reasons.append(
                f"the model said {tag}, but its stories' similarity {best_related:.2f} is below "
                f"newBelow {t.new_below:.2f}: overridden to new"
            )
            model_tag, tag, related = tag, "new", []
        elif tag == "new" and top >= t.duplicate_at_least:
            reasons.append(
                f"the model said new, but a story is {top:.2f} similar "
                f"(duplicateAtLeast {t.duplicate_at_least:.2f})"
            )
        confidence = runner_up = runner_score = None
        if self.scorer is not None:
            sc = self.scorer.scores(story, candidates)
            confidence = round(sc.scores[tag], 4)
            alternative = sc.tag if sc.tag != tag else sc.runner_up
            runner_up, runner_score = alternative, round(sc.scores[alternative], 4)
            if confidence < self.scorer.review_below:
                reasons.append(
                    f"the scores give {tag} {confidence:.2f} (below {self.scorer.review_below:.2f})"
                    f" and {alternative} {runner_score:.2f}"
                )
        return decision.model_copy(
            update={
                "decision_tag": tag,
                "related_story_ids": related,
                "confidence": confidence,
                "needs_review": bool(reasons),
                "review_reasons": reasons,
                "runner_up_tag": runner_up,
                "runner_up_score": runner_score,
                "model_tag": model_tag,
            }
        )
