"""Phase 3 (seed §6, §7.3): per generated story, retrieve existing user stories and tag it.

Seed failure rules: no retrieved story → ``new`` without a model call; the agent retries once itself,
then the story is tagged ``new`` with ``tagging_failed=true`` and the failure goes to errors.jsonl.
Related ids the agent returns must be among the retrieved stories.

Degradation (shared/pipeline/fallback.py): candidates come from keyword retrieval when the index
cannot be queried, and the offline tagger decides when the model endpoint is unreachable after its
retries (``engine: offline-fallback``); the record's ``warnings`` say which, as they do for a
tagging that failed and defaulted to new. With a run token budget, a story whose tagging call
would not fit is tagged new with ``tagging_failed`` and ``needs_review`` and recorded as skipped
(shared/pipeline/budget.py).

The story's retrieval query is its generation unit's vector of it (``StoryVectors``, carried by
the tag message or stored in the part) when that is the configured embedder's; else the unit
embeds the story itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared import layout
from shared.agents import TagDecision, TaggingFailed
from shared.errors import error_record
from shared.indexing.pending import mode as pending_mode
from shared.models import (
    TERMINAL_STATES,
    ErrorRecord,
    GeneratedItem,
    GeneratedPart,
    PendingRef,
    RunStatus,
    SimilarityScore,
    TaggingRecord,
    TagMessage,
    TagPart,
    Usage,
)
from shared.pipeline.budget import budget_warning, refusal, tagging_need
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
from shared.pipeline.runs import load_run, record_error
from shared.retrieval.search import keyword_reason, tagging_candidates
from shared.services import Services
from shared.storage import create_model, read_model
from shared.text.textio import strip_markers


def failed_tag_part(
    svc: Services,
    run_id: str,
    segment_id: str,
    story_id: str,
    reason: str,
    usage: Usage | None = None,
) -> TagPart:
    """The seed's fallback: ``new`` with ``tagging_failed=true``."""
    thresholds = svc.settings.pipeline.thresholds
    return TagPart(
        record=TaggingRecord(
            run_id=run_id,
            segment_id=segment_id,
            story_id=story_id,
            decision_tag="new",
            reasoning_excerpt=f"tagging failed, defaulted to new: {reason}"[:500],
            thresholds_applied=thresholds.applied(),
            tagging_agent_version=svc.agents.tagger.version,
            tagging_failed=True,
            engine=svc.settings.resolved_engine(),
            timestamp=svc.clock(),
            warnings=[f"tagging failed, defaulted to new: {reason}"[:300]],
        ),
        usage=usage or Usage(),
    )


def handle_tag(svc: Services, msg: TagMessage) -> None:
    run = load_run(svc, msg.run_id)
    if run.status in TERMINAL_STATES:
        return
    path = layout.tag_part(run.run_id, msg.story_id)
    if not svc.store.exists(path):
        # the copies the generation unit sent from its stored part
        story, vectors = msg.story, msg.vectors
        if story is None or (story.run_id, story.segment_id, story.item_id) != (
            run.run_id,
            msg.segment_id,
            msg.story_id,
        ):
            generated = read_model(
                svc.store, layout.generated_part(run.run_id, msg.segment_id), GeneratedPart
            )
            story, vectors = generated.story(msg.story_id), generated.story_vectors
        vector = None
        if vectors is not None and vectors.fits(svc.embedder):
            vector = vectors.vector("query", msg.story_id)
        earlier = [run.retry_of] if run.retry_of else []
        part = tag_story(
            svc, run.run_id, run.project, story, run=run, earlier_runs=earlier, vector=vector
        )
        create_model(svc.store, path, part)
    check_completion(svc, run.run_id, after_tag=True)  # the tag part is written: see fanin


def tag_story(
    svc: Services,
    run_id: str,
    project: str,
    story: GeneratedItem,
    *,
    run: RunStatus | None = None,
    earlier_runs: Sequence[str] = (),
    vector: Sequence[float] | None = None,
) -> TagPart:
    """Retrieve the existing user stories of ``project`` and tag ``story`` (seed §7.3); a failed
    tagging is recorded under ``run_id`` and falls back to ``new``. The evaluation and the retag
    call this too, so the F1 it reports is the pipeline's own tagging step. ``run`` (the pipeline's
    tag unit): the run whose token budget applies and whose warnings a degradation is added to.
    Unless ``SYNTH_PENDING_STORIES`` is off, the pending stories of the project's other runs are
    candidates too (not those of ``run_id`` and of ``earlier_runs``, the attempts it retries); the
    record names them in ``pending_refs``. ``vector``: the configured embedder's vector of the
    story's text, when the caller has it (``tagging_candidates``)."""
    story_id = story.item_id
    thresholds = svc.settings.pipeline.thresholds
    notes: list[str] = []
    exclude = None if pending_mode(svc.settings) == "off" else [run_id, *earlier_runs]
    with svc.tracer.span(run_id, f"story_{story_id}_tagging_retrieval") as span:
        candidates = tagging_candidates(
            svc.embedder,
            svc.index,
            svc.settings.pipeline.retrieval,
            project,
            story,
            store=svc.store,
            notes=notes,
            pending_exclude=exclude,
            vector=vector,
        )
        span.update(retrieved_story_count=len(candidates), keyword_retrieval=bool(notes))
    notes = [masked(svc, n) for n in notes]
    if notes and run is not None:
        add_run_warning(svc, run, index_warning(keyword_reason(notes[0])))
    tagger = svc.agents.tagger
    if candidates and run is not None:
        skipped = refusal(svc, run, lambda: tagging_need(tagger, story, candidates))
        if skipped is not None:
            return _skip_for_budget(svc, run, story, skipped, notes)
    scores = [
        SimilarityScore(work_item_id=c.work_item_id, title=c.title, score=c.similarity)
        for c in candidates
    ]
    max_similarity = max((c.similarity for c in candidates), default=0.0)
    usage, model, failed = Usage(), None, False
    engine = tagger.engine
    with svc.tracer.span(run_id, f"story_{story_id}_tagging_agent") as span:
        if not candidates:
            decision = TagDecision(
                decision_tag="new", reasoning_excerpt="no existing user story was retrieved"
            )
        else:
            try:
                try:
                    result = tagger.tag(story, candidates)
                except Exception as err:
                    if not model_unreachable(err):
                        raise
                    reason = describe(err, svc)
                    tagger, engine = svc.fallback_agents.tagger, FALLBACK_ENGINE
                    result = tagger.tag(story, candidates)
                    notes.append(offline_warning("tagged this story", reason))
                    if run is not None:
                        add_run_warning(svc, run, model_warning(reason))
                    span.update(fallback="offline", fallback_reason=reason)
                decision, usage, model = result.decision, result.usage, result.model
            except TaggingFailed as err:
                record_error(
                    svc,
                    error_record(
                        run_id, "tag", story_id, err, outcome="tagged_new", timestamp=svc.clock()
                    ),
                )
                decision = TagDecision(
                    decision_tag="new", reasoning_excerpt=f"tagging failed, defaulted to new: {err}"
                )
                usage, failed = err.usage, True
                notes.append(f"tagging failed, defaulted to new: {err}"[:300])
        known = {c.work_item_id for c in candidates}
        related = [i for i in decision.related_story_ids if i in known]
        span.update(
            token_usage_prompt=usage.prompt_tokens,
            token_usage_completion=usage.completion_tokens,
            retrieved_story_count=len(candidates),
            decision_tag=decision.decision_tag,
            max_similarity=max_similarity,
            tagging_failed=failed,
        )
        trace_id = span.trace_id
    return TagPart(
        record=TaggingRecord(
            run_id=run_id,
            segment_id=story.segment_id,
            story_id=story_id,
            decision_tag=decision.decision_tag,
            similarity_scores=scores,
            max_similarity=round(max_similarity, 4),
            related_story_ids=related,
            pending_refs=[
                PendingRef(
                    candidate_id=c.work_item_id,
                    run_id=c.pending_run_id,
                    story_id=c.pending_story_id or "",
                    title=c.title,
                )
                for c in candidates
                if c.pending_run_id is not None
            ],
            # the model may quote the transcript in its reasoning: its markers go, its words stay
            reasoning_excerpt=strip_markers(decision.reasoning_excerpt)[:1000],
            confidence=decision.confidence,
            needs_review=decision.needs_review,
            review_reasons=[r[:300] for r in decision.review_reasons],
            runner_up_tag=decision.runner_up_tag,
            runner_up_score=decision.runner_up_score,
            model_tag=decision.model_tag,
            thresholds_applied=thresholds.applied(),
            tagging_agent_version=tagger.version,
            tagging_failed=failed,
            engine=engine,
            model=model,
            trace_id=trace_id,
            timestamp=svc.clock(),
            warnings=notes,
        ),
        usage=usage,
    )


def _skip_for_budget(
    svc: Services, run: RunStatus, story: GeneratedItem, error: ErrorRecord, notes: list[str]
) -> TagPart:
    """A story the run's token budget has no room to tag: recorded, no model call, tagged new
    with ``tagging_failed`` and held for a reviewer's decision (never silently new)."""
    error = error.model_copy(update={"phase": "tag", "unit_id": story.item_id})
    record_error(svc, error)
    add_run_warning(svc, run, budget_warning(run.token_budget or 0))
    part = failed_tag_part(svc, run.run_id, story.segment_id, story.item_id, error.message)
    part.record.needs_review = True
    part.record.review_reasons = ["not tagged: the run's token budget ran out"]
    part.record.warnings = [*notes, error.message]
    return part
