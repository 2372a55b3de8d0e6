"""LLM tagging (seed §6, §7.3 step 3.3): one call per generated user story with candidates.

The prompt (``shared/prompts/tagging.txt``) has the seed's sections: the generated story, the
retrieved existing stories (id, title, description, acceptance criteria, similarity), the decision
instructions with the thresholds, the output schema. Five tags: the seed's four plus ``duplicate``.

An answer is accepted when it parses into ``TaggingAnswer`` and is clear: a tag other than ``new``
must name at least one of the retrieved stories in ``related_story_ids`` (ids that were not
retrieved are dropped first). When the model rates its runner-up tag above its decision, the
higher-confidence tag wins; when the two are within ``AMBIGUITY_MARGIN`` the decision stands and a
warning is logged (seed §6 "Ambiguous decision"). Otherwise the shared retry rule applies: once at
temperature − 0.05, then ``TaggingFailed`` (the pipeline tags the story ``new`` with
``tagging_failed=true``). No candidates: ``new`` without a model call.
"""

from __future__ import annotations

import logging

from shared import prompts
from shared.agents import Candidate, TagDecision, TaggingFailed, TaggingResult
from shared.engine.llm.base import ask
from shared.engine.llm.prompting import candidates_text, data_block
from shared.engine.llm.schemas import TaggingAnswer
from shared.llm import ChatModel
from shared.models import GeneratedItem
from shared.settings import PipelineConfig

log = logging.getLogger(__name__)

MAX_OUTPUT_TOKENS = 800
AMBIGUITY_MARGIN = 0.1


class UnclearDecision(ValueError):
    pass


def story_block(story: GeneratedItem) -> str:
    lines = [f"Title: {story.title}", f"Description: {story.description}"]
    if story.acceptance_criteria:
        lines.append("Acceptance criteria:")
        lines.extend(f"- {ac}" for ac in story.acceptance_criteria)
    return data_block("story", "\n".join(lines))


class LLMTagger:
    engine = "llm"

    def __init__(self, chat: ChatModel, cfg: PipelineConfig) -> None:
        self.chat = chat
        self.cfg = cfg
        self.template = prompts.load("tagging")
        self.version = self.template.version
        self.model: str | None = chat.model

    def messages(self, story: GeneratedItem, candidates: list[Candidate]) -> list[dict[str, str]]:
        t = self.cfg.thresholds
        return self.template.messages(
            story=story_block(story),
            candidates=candidates_text(candidates),
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
            decision=outcome.value,
            usage=outcome.usage,
            model=outcome.model,
            attempts=outcome.attempts,
        )
