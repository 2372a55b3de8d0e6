"""LLM backlog generation (seed §5, §7.2 steps 2.4-2.5): one call per segment.

The prompt (``shared/prompts/generation.txt``) has the seed's sections in the seed's order: the
segment's original text, the retrieved ADO work items, the retrieved architecture constraints, then
the task with the schema notes. The transcript and the retrieved texts are data blocks
(``prompting.data_block``); the hygiene gate's annotations, when given, are listed before the
segment and before the retrieved blocks, whose secrets are redacted as they are built
(``prompting.outside_block``).

An answer is accepted when it parses into ``GenerationAnswer``, converts into the engine-neutral
``GenerationDraft`` (every story has at least one quote) and every story quote, superseded ones
included, is found verbatim in the segment (``shared.agents.locate_quote``). Speakers and
timecodes on quotes, and merging a need stated in several segments into one story, happen at
finalize for both engines (``shared.pipeline.consolidate``). Stories beyond ``max_stories_per_segment`` are
dropped (logged). Existing work item ids that were not retrieved are left for the pipeline's
``assemble`` to drop with a warning on the record. Otherwise the shared retry rule applies: once at
temperature − 0.05 with the reason fed back, then ``GenerationFailed`` (the pipeline skips the
segment with an errors.jsonl record).
"""

from __future__ import annotations

import logging

from shared import prompts
from shared.agents import (
    GenerationContext,
    GenerationDraft,
    GenerationFailed,
    GenerationResult,
    QuoteNotFound,
    locate_quote,
)
from shared.engine.llm.base import ask
from shared.engine.llm.prompting import (
    Annotator,
    ado_items_text,
    annotation_notes,
    architecture_text,
    data_block,
)
from shared.engine.llm.schemas import GenerationAnswer
from shared.llm import ChatModel, validated
from shared.models import Engine, Segment
from shared.settings import PipelineConfig

log = logging.getLogger(__name__)

MAX_OUTPUT_TOKENS = 4096


class LLMGenerator:
    engine: Engine = "llm"

    def __init__(
        self, chat: ChatModel, cfg: PipelineConfig, annotate: Annotator | None = None
    ) -> None:
        self.chat = chat
        self.cfg = cfg
        self.annotate = annotate
        self.template = prompts.load("generation")
        self.version = self.template.version
        self.model: str | None = chat.model

    def messages(self, segment: Segment, context: GenerationContext) -> list[dict[str, str]]:
        return self.template.messages(
            segment_order=segment.segment_order,
            dominant_intent=segment.dominant_intent or "(none)",
            intent_labels=", ".join(segment.intent_labels) or "(none)",
            theme=segment.theme or "(none)",
            annotations=annotation_notes(segment.raw_text, self.annotate),
            segment_text=data_block("transcript", segment.raw_text),
            ado_items=ado_items_text(
                context.ado_items, hygiene=self.cfg.hygiene, annotate=self.annotate
            ),
            architecture_chunks=architecture_text(
                context.architecture_chunks, hygiene=self.cfg.hygiene, annotate=self.annotate
            ),
            max_stories=self.cfg.generation.max_stories_per_segment,
            default_persona=self.cfg.generation.default_persona,
        )

    def generate(self, segment: Segment, context: GenerationContext) -> GenerationResult:
        limit = self.cfg.generation.max_stories_per_segment

        def check(answer: GenerationAnswer) -> GenerationDraft:
            draft = validated(GenerationDraft, answer.model_dump())
            missing = []
            for n, story in enumerate(draft.stories, start=1):
                for quote in [*story.source_quotes, *story.superseded_quotes]:
                    try:
                        locate_quote(segment, quote)
                    except QuoteNotFound:
                        missing.append(f"story {n} ({story.title[:60]!r}): {quote[:120]!r}")
            if missing:
                raise QuoteNotFound(
                    "these source_quotes are not exact substrings of the segment text: "
                    + "; ".join(missing[:5])
                )
            if len(draft.stories) > limit:
                log.warning(
                    "%s: %d stories, keeping the first %d",
                    segment.segment_id,
                    len(draft.stories),
                    limit,
                )
                draft.stories = draft.stories[:limit]
            return draft

        outcome = ask(
            self.chat,
            self.messages(segment, context),
            GenerationAnswer,
            check,
            temperature=self.cfg.generation.temperature,
            max_tokens=MAX_OUTPUT_TOKENS,
            failure=GenerationFailed,
            what=f"generation for {segment.segment_id}",
        )
        return GenerationResult(
            draft=outcome.value,
            usage=outcome.usage,
            model=outcome.model,
            attempts=outcome.attempts,
        )
