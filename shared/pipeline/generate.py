"""Phase 2 (seed §5, §7.2): per segment, retrieve context, generate, fan out one tag message per story.

The generation agent returns a draft; ``assemble`` turns it into records. Model output is data: every
quote must be found verbatim in the segment, ids of existing work items must be among those that were
retrieved, anything else is dropped with a warning on the record.

Every generated text field, whichever engine wrote it (the LLM's after its output was validated),
is cleaned here with ``tidy``: titles, descriptions, acceptance criteria, constraint notes, the
criteria added to existing items and open questions lose transcript markers ({disfmarker},
{vocalsound}, {gap}), fillers, doubled words and cut-off word starts. Quotes never are: they are the
transcript's text at their offsets, verbatim.

Degradation: retrieval falls back to keyword scoring when the index cannot be queried, and the
offline engine generates the segment when the model endpoint is unreachable after its retries;
either way every item of the segment, and its part, carries the warning, and the run gets its
``index_unreachable`` / ``model_unreachable`` warning (shared/pipeline/fallback.py). With a run
token budget, a segment whose call would not fit is skipped (shared/pipeline/budget.py).

The unit embeds its stories in one batch (``embed_stories``: each story's text, the tagging
unit's retrieval query, and its title with its first quote, what finalize compares to merge
stories) and stores the vectors with the part; each tag message carries its story's, so neither
the tagging units nor finalize embed the stories again (docs/PERFORMANCE.md, "Fan-out").
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from shared import ids, layout
from shared.agents import (
    GenerationContext,
    GenerationFailed,
    GenerationResult,
    QuoteNotFound,
    locate_quote,
    locate_quotes,
)
from shared.bus import TAG_QUEUE
from shared.embeddings import Embedder
from shared.errors import error_record
from shared.models import (
    TERMINAL_STATES,
    AcDelta,
    ContextAdoItem,
    ContextArchitectureChunk,
    ErrorRecord,
    GeneratedItem,
    GeneratedPart,
    GenerateMessage,
    Message,
    OpenQuestion,
    RunStatus,
    Segment,
    StoryVectors,
    TagMessage,
    encode_vector,
    inline_copy,
    story_text,
)
from shared.pipeline.budget import budget_warning, generation_need, refusal
from shared.pipeline.fallback import (
    FALLBACK_ENGINE,
    add_run_warning,
    describe,
    index_warning,
    masked,
    model_unreachable,
    model_warning,
    offline_warning,
)
from shared.pipeline.fanin import check_completion
from shared.pipeline.runs import load_run, record_error, send_once
from shared.pipeline.segment import read_segments
from shared.retrieval.search import generation_context, keyword_reason
from shared.services import Services
from shared.storage import create_model, read_model, read_model_or_none
from shared.text.textio import clean_spoken

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Parent:
    """Where a generated item hangs: generated ancestors and/or an existing ADO work item."""

    epic_id: str | None = None
    feature_id: str | None = None
    work_item_id: int | None = None


REVISED_WARNING = "revised during the meeting"
NO_CRITERIA_WARNING = (
    "no acceptance criteria: the meeting gave no condition, figure or detail beyond the title; "
    "add them in the review"
)


def _open_question(segment: Segment, text: str) -> OpenQuestion | None:
    """The question cleaned of transcript markers and fillers; its quote (when it is one) kept
    verbatim. None when nothing is left to ask (a question of markers and fillers only)."""
    question = tidy(text)
    if not question:
        return None
    try:
        return OpenQuestion(question=question, quote=locate_quote(segment, text))
    except QuoteNotFound:
        return OpenQuestion(question=question)


def _open_questions(segment: Segment, texts: list[str]) -> list[OpenQuestion]:
    return [q for q in (_open_question(segment, t) for t in texts) if q is not None]


_WORD = re.compile(r"\w")
# "it's it's", "don't don't": clean_spoken's doubled-word rule stops at apostrophes (it also feeds
# the capture classifier, whose features stay as trained); generated text drops these too
_REPEATED_CONTRACTION = re.compile(r"(?<![\w'])(\w+'\w+)(?:\s+\1)+(?![\w'])", re.IGNORECASE)


# a letter the transcript spells on its own ("the blue function key and F_ eight", "version
# three point O_"): the letter, in generated text ("F eight"); quotes keep the transcript's
_SPELLED_ALONE = re.compile(r"\b([A-Z])_(?![A-Za-z0-9_])")


def tidy(text: str) -> str:
    """A generated text field without transcript markers ({disfmarker}), fillers or doubled
    words (quotes are never tidied: they stay verbatim); "" when no word is left (the field held
    only markers and fillers), never the text with its markers."""
    cleaned = _REPEATED_CONTRACTION.sub(r"\1", clean_spoken(text))
    cleaned = _SPELLED_ALONE.sub(r"\1", cleaned)
    return cleaned if _WORD.search(cleaned) else ""


def tidy_all(texts: list[str]) -> list[str]:
    """Each text tidied; those that leave nothing are dropped."""
    return [t for t in map(tidy, texts) if t]


def _title(text: str, kind: str) -> str:
    """A tidied title; a title of markers alone (a model's slip) says what is missing."""
    return tidy(text) or f"Untitled {kind.lower()}"


def assemble(
    run: RunStatus,
    segment: Segment,
    result: GenerationResult,
    context: GenerationContext,
    *,
    version: str,
    engine: str,
    trace_id: str | None,
) -> list[GeneratedItem]:
    """Records from a generation draft. Raises QuoteNotFound when a story's quote is not verbatim."""
    draft = result.draft
    retrieved = {i.work_item_id: i for i in context.ado_items}
    common = dict(
        run_id=run.run_id,
        segment_id=segment.segment_id,
        segment_order=segment.segment_order,
        context_ado_items=[
            ContextAdoItem(
                work_item_id=i.work_item_id,
                work_item_type=i.work_item_type,
                title=i.title,
                similarity=i.similarity,
                composite_score=i.composite,
            )
            for i in context.ado_items
        ],
        context_architecture_chunks=[
            ContextArchitectureChunk(
                chunk_id=c.chunk_id,
                document_id=c.document_id,
                file_name=c.file_name,
                similarity=c.similarity,
                composite_score=c.composite,
            )
            for c in context.architecture_chunks
        ],
        source_doc=run.source_name,
        source_doc_segment=f"{segment.start_char}-{segment.end_char}",
        generation_agent_version=version,
        engine=engine,
        model=result.model,
        trace_id=trace_id,
    )

    def existing(
        work_item_id: int | None, types: tuple[str, ...], warnings: list[str]
    ) -> int | None:
        if work_item_id is None:
            return None
        item = retrieved.get(work_item_id)
        if item is None or item.work_item_type not in types:
            warnings.append(
                f"ignored existing parent #{work_item_id}: not a retrieved {'/'.join(types)}"
            )
            return None
        return work_item_id

    items: list[GeneratedItem] = []
    epics: dict[str, _Parent] = {}
    for epic in draft.epics:
        warnings: list[str] = []
        reused = existing(epic.existing_work_item_id, ("Epic",), warnings)
        if reused is not None:
            epics[epic.key] = _Parent(work_item_id=reused)
            continue
        eid = ids.epic_id(run.run_id, epic.title)
        epics[epic.key] = _Parent(epic_id=eid)
        items.append(
            GeneratedItem(
                **common,
                type="Epic",
                item_id=eid,
                epic_id=eid,
                title=_title(epic.title, "Epic"),
                description=tidy(epic.description),
                warnings=warnings,
            )
        )

    features: dict[str, _Parent] = {}
    for n, feature in enumerate(draft.features, start=1):
        warnings = []
        parent = epics.get(feature.epic_key or "", _Parent())
        reused = existing(feature.existing_work_item_id, ("Feature",), warnings)
        if reused is not None:
            features[feature.key] = _Parent(work_item_id=reused)  # its epic is its own parent
            continue
        fid = ids.feature_id(segment.segment_id, n)
        features[feature.key] = _Parent(epic_id=parent.epic_id, feature_id=fid)
        items.append(
            GeneratedItem(
                **common,
                type="Feature",
                item_id=fid,
                epic_id=parent.epic_id,
                feature_id=fid,
                title=_title(feature.title, "Feature"),
                description=tidy(feature.description),
                parent_work_item_id=parent.work_item_id,
                warnings=warnings,
            )
        )

    for n, story in enumerate(draft.stories, start=1):
        warnings = []
        parent = features.get(story.feature_key or "", _Parent())
        located = locate_quotes(segment, story.source_quotes + story.superseded_quotes)
        quotes, superseded = (
            located[: len(story.source_quotes)],
            located[len(story.source_quotes) :],
        )
        if superseded:
            warnings.append(
                f"{REVISED_WARNING}: the story states the later decision; the earlier "
                f"statement{'s are' if len(superseded) > 1 else ' is'} under superseded_quotes"
            )
        criteria = tidy_all(story.acceptance_criteria)
        if not criteria:
            warnings.append(NO_CRITERIA_WARNING)
        extends = [i for i in story.extends_work_item_ids if i in retrieved]
        if len(extends) < len(story.extends_work_item_ids):
            warnings.append("ignored extends ids that were not among the retrieved work items")
        sid = ids.story_id(segment.segment_id, n)
        items.append(
            GeneratedItem(
                **common,
                type="User Story",
                item_id=sid,
                epic_id=parent.epic_id,
                feature_id=parent.feature_id,
                story_id=sid,
                title=_title(story.title, "User Story"),
                description=tidy(story.description),
                acceptance_criteria=criteria,
                parent_work_item_id=parent.work_item_id,
                extends_work_item_ids=extends,
                constraint_violation=story.constraint_violation,
                constraint_notes=tidy_all(story.constraint_notes),
                ac_delta_entries=[
                    AcDelta(criterion=c, work_item_id=extends[0] if extends else None)
                    for c in tidy_all(story.ac_delta)
                ],
                source_quotes=quotes,
                superseded_quotes=superseded,
                open_questions=_open_questions(segment, story.open_questions),
                warnings=warnings,
            )
        )

    # questions the draft could not pin to a story belong to the segment's first feature or story
    if draft.open_questions:
        holder = next((i for i in items if i.type == "Feature"), None) or next(
            (i for i in items if i.type == "User Story"), None
        )
        if holder is not None:
            holder.open_questions.extend(_open_questions(segment, draft.open_questions))
    return items


def handle_generate(svc: Services, msg: GenerateMessage) -> None:
    run = load_run(svc, msg.run_id)
    if run.status in TERMINAL_STATES:
        return
    path = layout.generated_part(run.run_id, msg.segment_id)
    part = read_model_or_none(svc.store, path, GeneratedPart)
    if part is None:
        segment = msg.segment  # the copy the segment unit sent from segments.jsonl
        if segment is None or (segment.run_id, segment.segment_id) != (run.run_id, msg.segment_id):
            segments = read_segments(svc, run.run_id) or []
            segment = next((s for s in segments if s.segment_id == msg.segment_id), None)
        if segment is None:
            raise LookupError(f"run {run.run_id} has no segment {msg.segment_id}")
        part = _generate(svc, run, segment)
        created = create_model(svc.store, path, part)
        if not created:
            part = read_model(svc.store, path, GeneratedPart)  # a concurrent delivery won
    else:
        created = False
    send_tag_messages(svc, part, fresh=created)
    # the run as read above: its phase may have moved on since, which only makes the check look
    # at the parts (fanin.check_completion)
    check_completion(svc, run.run_id, run=run)


def send_tag_messages(svc: Services, part: GeneratedPart, *, fresh: bool = False) -> None:
    """The part's tag messages, once per generation step (without the outbox lease: a duplicate
    tag message only finds its tag part written, see ``send_once``). ``fresh``: this delivery
    has just created the part, so no delivery can have sent them yet (no marker to look for)."""
    send_once(
        svc,
        part.run_id,
        f"generate-{part.segment_id}",
        tag_messages(part),
        exclusive=False,
        unsent=fresh,
    )


def tag_messages(part: GeneratedPart) -> list[tuple[str, Message]]:
    """One tag message per story of a stored generation part, each with a copy of its story and
    of its vectors (the part is written once, so the copies are what the tag unit would read)."""
    vectors = part.story_vectors
    return [
        (
            TAG_QUEUE,
            inline_copy(
                TagMessage(
                    run_id=part.run_id,
                    segment_id=part.segment_id,
                    story_id=i.item_id,
                    story=i,
                    vectors=vectors.for_tagging(i.item_id) if vectors is not None else None,
                ),
                "story",
                "vectors",
            ),
        )
        for i in part.items
        if i.type == "User Story"
    ]


def embed_stories(embedder: Embedder, stories: list[GeneratedItem]) -> StoryVectors | None:
    """The stories' ``query`` and ``main`` vectors (``StoryVectors``) from one ``embed`` call;
    None when there is no story, or when the embedder fails (then the tag units and finalize
    embed them, and degrade, as they always did: this is never a reason to fail the unit)."""
    from shared.pipeline.consolidate import main_text

    keys: list[tuple[str, str]] = []
    texts: list[str] = []
    for story in stories:
        keys.append(("query", story.item_id))
        texts.append(story_text(story.title, story.description, story.acceptance_criteria))
        if story.source_quotes:
            keys.append(("main", story.item_id))
            texts.append(main_text(story))
    if not texts:
        return None
    try:
        rows = embedder.embed(texts)
    except Exception:  # noqa: BLE001 - an optimization: the readers embed without it
        log.warning("could not embed the segment's stories; the tag units will", exc_info=True)
        return None
    out = StoryVectors(model=str(embedder.model_name), dimension=int(embedder.dimension))
    for (kind, story_id), row in zip(keys, rows, strict=True):
        (out.query if kind == "query" else out.main)[story_id] = encode_vector(row)
    return out


def skipped_part(svc: Services, run_id: str, segment_id: str) -> GeneratedPart:
    return GeneratedPart(
        run_id=run_id, segment_id=segment_id, status="skipped", timestamp=svc.clock()
    )


def _generate(svc: Services, run: RunStatus, segment: Segment) -> GeneratedPart:
    sid = segment.segment_id
    cfg = svc.settings.pipeline.retrieval
    with svc.tracer.span(run.run_id, f"segment_{sid}_retrieval") as span:
        context = generation_context(
            svc.embedder, svc.index, cfg, run.project, segment, svc.clock(), store=svc.store
        )
        span.update(
            ado_items=len(context.ado_items),
            architecture_chunks=len(context.architecture_chunks),
            dropped_chunks=context.dropped_chunks,
            keyword_retrieval=bool(context.warnings),
        )
    warnings = [masked(svc, w) for w in context.warnings]
    if warnings:
        add_run_warning(svc, run, index_warning(keyword_reason(warnings[0])))
    generator = svc.agents.generator
    skipped = refusal(svc, run, lambda: generation_need(svc, generator, segment, context))
    if skipped is not None:
        return _skip_for_budget(svc, run, sid, skipped)
    engine = generator.engine
    with svc.tracer.span(run.run_id, f"segment_{sid}_generation_agent") as span:
        try:
            try:
                result = generator.generate(segment, context)
            except Exception as err:
                if not model_unreachable(err):
                    raise
                reason = describe(err, svc)
                log.warning("%s: generated by the offline engine: %s", sid, reason)
                generator, engine = svc.fallback_agents.generator, FALLBACK_ENGINE
                result = generator.generate(segment, context)
                warnings.append(offline_warning("generated this segment", reason))
                add_run_warning(svc, run, model_warning(reason))
                span.update(fallback="offline", fallback_reason=reason)
            try:
                items = assemble(
                    run,
                    segment,
                    result,
                    context,
                    version=generator.version,
                    engine=engine,
                    trace_id=span.trace_id,
                )
            except (QuoteNotFound, ValueError) as err:
                raise GenerationFailed(
                    f"invalid generation output: {err}",
                    attempts=result.attempts,
                    raw_output=result.draft.model_dump_json()[:4000],
                    usage=result.usage,
                ) from err
        except GenerationFailed as err:
            record_error(
                svc,
                error_record(
                    run.run_id, "generate", sid, err, outcome="skipped", timestamp=svc.clock()
                ),
            )
            span.update(status="skipped", error=str(err)[:500])
            part = skipped_part(svc, run.run_id, sid)
            part.usage = err.usage
            part.engine, part.warnings = engine, warnings
            return part
        for item in items:
            item.warnings = [*warnings, *item.warnings]
        stories = [i for i in items if i.type == "User Story"]
        span.update(
            token_usage_prompt=result.usage.prompt_tokens,
            token_usage_completion=result.usage.completion_tokens,
            item_count=len(items),
            story_count=len(stories),
            constraint_violations=sum(1 for s in stories if s.constraint_violation),
        )
    spans = result.requirement_spans
    if spans is None:  # an engine that does not classify statements itself
        from shared.analysis.capture import requirement_spans

        spans = requirement_spans(segment.raw_text, svc.embedder, segment.start_char)
    return GeneratedPart(
        run_id=run.run_id,
        segment_id=sid,
        status="generated",
        items=items,
        usage=result.usage,
        timestamp=svc.clock(),
        requirement_spans=spans,
        engine=engine,
        warnings=warnings,
        story_vectors=embed_stories(svc.embedder, stories),
    )


def _skip_for_budget(
    svc: Services, run: RunStatus, segment_id: str, error: ErrorRecord
) -> GeneratedPart:
    """A segment the run's token budget has no room for: recorded and skipped, no model call."""
    error = error.model_copy(update={"phase": "generate", "unit_id": segment_id})
    record_error(svc, error)
    add_run_warning(svc, run, budget_warning(run.token_budget or 0))
    log.warning("%s: %s", segment_id, error.message)
    part = skipped_part(svc, run.run_id, segment_id)
    part.warnings = [error.message]
    return part
