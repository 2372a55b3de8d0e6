"""Run token budgets: ``SYNTH_RUN_TOKEN_BUDGET`` model tokens (prompt + completion) per run; 0 is
unlimited and costs nothing (no estimate is made, no part is read).

**Before any model call** (the segment unit, after the index check) the run's need is estimated
from its transcript with the agents' own prompt builders (``estimate_run``):

- segmentation: every window prompt the LLM segmenter would send, counted exactly
  (``LLMSegmenter.prompts``), plus a typical answer per expected segment;
- generation: the transcript cut at unit boundaries into the segments it is expected to make
  (``TYPICAL_SEGMENT_SHARE`` of ``max_segment_tokens`` each), each rendered with the generation
  prompt, plus the retrieved context the project's ingestion files make likely (``top_k`` items of
  their average size, within ``segment_max_context_tokens``), plus a typical answer for the
  stories such a segment holds (one per ``TOKENS_PER_STORY`` transcript tokens, at most
  ``max_stories_per_segment``);
- tagging: per expected story, the tagging prompt with a story of typical size and ``tagging_top_k``
  existing stories of the index's average size, plus a typical answer; nothing when the project
  has no indexed user story (no candidate, no call).

Retries are not counted (a retried unit costs twice). An estimate over the budget fails the run at
once, the estimate and the budget in ``failure_reason``; no model is called. The estimate and the
budget are kept in run.json (``token_estimate``, ``token_budget``).

**During the run**, before a unit's model call: the tokens the run has used (the usage every unit
recorded in its part: ``parts/segmentation.json``, the generation parts, the tag parts; what the
endpoint reported) plus the unit's own estimate (its prompt counted exactly, a typical answer)
must fit in the budget. A unit that would not fit is skipped: a generation unit writes a skipped
part, a tagging unit tags its story ``new`` with ``tagging_failed`` and ``needs_review``; both are
in errors.jsonl (``error_type: BudgetExceeded``, ``outcome: skipped``, ``details.skipped:
budget``), the run gets a ``token_budget`` warning and ends ``completed_with_errors``;
summary.json's ``budget`` shows tokens and cost used against the budget. Units running in parallel
each check before they call, so the budget can be overshot by what the units already in flight use
(at most one unit per worker).
"""

from __future__ import annotations

import logging
import math
import threading
import weakref
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeGuard

from shared import ids, layout
from shared.agents import (
    Candidate,
    GenerationContext,
    Generator,
    PromptedGenerator,
    PromptedSegmenter,
    PromptedTagger,
    Segmenter,
    Tagger,
)
from shared.errors import error_record
from shared.models import (
    BudgetReport,
    ErrorRecord,
    GeneratedItem,
    RunStatus,
    RunWarning,
    Segment,
    SourceQuote,
    TagPart,
    TokenEstimate,
    Usage,
)
from shared.services import Services
from shared.storage import ArtifactStore, NotFound
from shared.tokens import count_tokens

log = logging.getLogger(__name__)

# typical sizes (tokens) behind the estimate; see the module docstring
TYPICAL_SEGMENT_SHARE = 0.25  # of max_segment_tokens
TOKENS_PER_STORY = 100  # transcript tokens per generated story
COMPLETION_PER_SEGMENT_PROPOSAL = 40  # segmentation answer, per segment
COMPLETION_GENERATION_BASE = 150  # epics, features, the JSON frame
COMPLETION_PER_STORY = 220  # a story with its criteria and quotes
COMPLETION_TAGGING = 150
STORY_BLOCK_TOKENS = 120  # a generated story as the tagging prompt shows it
ITEM_HEAD_TOKENS = 12  # "[#123] User Story · state New · similarity 0.812"
MESSAGE_OVERHEAD = 4  # per chat message
CALL_OVERHEAD = 3  # per call

BUDGET_ERROR = "BudgetExceeded"


def message_tokens(messages: Sequence[dict[str, Any]], model: str | None = None) -> int:
    """Prompt tokens of a chat call (contents plus the chat format's overhead)."""
    return CALL_OVERHEAD + sum(
        MESSAGE_OVERHEAD + count_tokens(str(m.get("content") or ""), model) for m in messages
    )


def _prompted_segmenter(agent: Segmenter) -> TypeGuard[PromptedSegmenter]:
    return agent.engine == "llm" and callable(getattr(agent, "prompts", None))


def _prompted_generator(agent: Generator) -> TypeGuard[PromptedGenerator]:
    return agent.engine == "llm" and callable(getattr(agent, "messages", None))


def _prompted_tagger(agent: Tagger) -> TypeGuard[PromptedTagger]:
    return agent.engine == "llm" and callable(getattr(agent, "messages", None))


# ------------------------------------------------------------------------------------------------
# what the project's index makes likely


class _IndexSizes:
    """Counts and average token sizes of what retrieval can return, from the ingestion files."""

    def __init__(self, svc: Services, project: str) -> None:
        from shared.keyword_retrieval import ingestion_paths, read_records, record_text

        self.items = self.stories = self.chunks = 0
        item_tokens = story_tokens = chunk_tokens = 0
        for path in ingestion_paths(project):
            try:
                records = read_records(svc.store, path)
            except Exception:  # noqa: BLE001 - an estimate without context is still one
                log.warning("could not read %s for the token estimate", path, exc_info=True)
                continue
            for _, meta in records:
                tokens = count_tokens(record_text(meta))
                if meta.get("doc_type") == "architecture":
                    self.chunks += 1
                    chunk_tokens += tokens
                elif meta.get("source_type") == "ado_backlog":
                    self.items += 1
                    item_tokens += tokens
                    if meta.get("work_item_type") == "User Story":
                        self.stories += 1
                        story_tokens += tokens
        self.item_tokens = item_tokens / self.items if self.items else 0.0
        self.story_tokens = story_tokens / self.stories if self.stories else 0.0
        self.chunk_tokens = chunk_tokens / self.chunks if self.chunks else 0.0

    def generation_context(self, svc: Services, segment_tokens: int) -> int:
        cfg = svc.settings.pipeline.retrieval
        room = max(0, cfg.segment_max_context_tokens - segment_tokens)
        ado = min(self.items, cfg.ado_top_k) * (self.item_tokens + ITEM_HEAD_TOKENS)
        arch = min(self.chunks, cfg.architecture_top_k) * (self.chunk_tokens + ITEM_HEAD_TOKENS)
        return int(min(room, ado + arch))

    def tagging_candidates(self, svc: Services) -> int:
        top_k = svc.settings.pipeline.retrieval.tagging_top_k
        return int(min(self.stories, top_k) * (self.story_tokens + ITEM_HEAD_TOKENS))


# ------------------------------------------------------------------------------------------------
# the estimate before the first call


def _pseudo_segments(run_id: str, transcript: str, count: int) -> list[Segment]:
    """The transcript cut at unit boundaries into ``count`` parts of about equal tokens."""
    from shared.engine.llm.prompting import transcript_units

    units = transcript_units(transcript)
    if not units or count <= 0:
        return []
    target = sum(u.tokens for u in units) / count
    groups: list[list[Any]] = [[]]
    used = 0
    for unit in units:
        if groups[-1] and used >= target and len(groups) < count:
            groups.append([])
            used = 0
        groups[-1].append(unit)
        used += unit.tokens
    now = datetime.now(UTC)
    out = []
    for order, group in enumerate(groups, start=1):
        start, end = group[0].start, group[-1].end
        out.append(
            Segment(
                run_id=run_id,
                segment_id=ids.segment_id(order),
                segment_order=order,
                raw_text=transcript[start:end],
                start_char=start,
                end_char=end,
                token_count=sum(u.tokens for u in group),
                segmentation_version="estimate",
                engine="llm",
                timestamp=now,
            )
        )
    return out


def _pseudo_story(run_id: str) -> GeneratedItem:
    return GeneratedItem(
        run_id=run_id,
        segment_id=ids.segment_id(1),
        segment_order=1,
        type="User Story",
        item_id="estimate",
        story_id="estimate",
        title="estimate",
        source_doc="estimate",
        source_doc_segment="0-1",
        source_quotes=[SourceQuote(text="x", start=0, end=1)],
        generation_agent_version="estimate",
        engine="llm",
    )


def stories_in(svc: Services, segment_tokens: int) -> int:
    limit = svc.settings.pipeline.generation.max_stories_per_segment
    return min(limit, max(1, math.ceil(segment_tokens / TOKENS_PER_STORY)))


def estimate_run(svc: Services, run: RunStatus, transcript: str) -> TokenEstimate:
    """The run's expected model tokens (module docstring); zero for agents that call no model."""
    agents = svc.agents
    cfg = svc.settings.pipeline
    detail: dict[str, int] = {}
    prompt = completion = calls = 0
    total = count_tokens(transcript)
    typical = max(
        cfg.segmentation.min_merge_threshold,
        int(cfg.segmentation.max_segment_tokens * TYPICAL_SEGMENT_SHARE),
        1,
    )
    expected_segments = math.ceil(total / typical) if total else 0
    sizes: _IndexSizes | None = None

    segmenter = agents.segmenter
    if _prompted_segmenter(segmenter):
        windows = segmenter.prompts(transcript)
        p = sum(message_tokens(m, segmenter.model) for m in windows)
        c = expected_segments * COMPLETION_PER_SEGMENT_PROPOSAL
        prompt, completion, calls = prompt + p, completion + c, calls + len(windows)
        detail["segmentation"] = p + c

    segments = _pseudo_segments(run.run_id, transcript, expected_segments)
    stories = sum(stories_in(svc, s.token_count) for s in segments)
    generator = agents.generator
    if _prompted_generator(generator) and segments:
        sizes = sizes or _IndexSizes(svc, run.project)
        p = c = 0
        for segment in segments:
            p += message_tokens(generator.messages(segment, GenerationContext()), generator.model)
            p += sizes.generation_context(svc, segment.token_count)
            c += COMPLETION_GENERATION_BASE + stories_in(svc, segment.token_count) * (
                COMPLETION_PER_STORY
            )
        prompt, completion, calls = prompt + p, completion + c, calls + len(segments)
        detail["generation"] = p + c

    tagger = agents.tagger
    if _prompted_tagger(tagger) and stories:
        sizes = sizes or _IndexSizes(svc, run.project)
        if sizes.stories:  # no candidate, no call
            frame = message_tokens(tagger.messages(_pseudo_story(run.run_id), []), tagger.model)
            per_story = frame + STORY_BLOCK_TOKENS + sizes.tagging_candidates(svc)
            p, c = stories * per_story, stories * COMPLETION_TAGGING
            prompt, completion, calls = prompt + p, completion + c, calls + stories
            detail["tagging"] = p + c
    return TokenEstimate(
        prompt_tokens=prompt,
        completion_tokens=completion,
        calls=calls,
        segments=len(segments),
        stories=stories,
        detail=detail,
    )


def over_budget_reason(estimate: TokenEstimate, budget: int) -> str:
    parts = []
    if "segmentation" in estimate.detail:
        parts.append(f"segmentation {estimate.detail['segmentation']:,}")
    if "generation" in estimate.detail:
        parts.append(
            f"generation {estimate.detail['generation']:,} for about {estimate.segments} segments"
        )
    if "tagging" in estimate.detail:
        parts.append(f"tagging {estimate.detail['tagging']:,} for about {estimate.stories} stories")
    return (
        f"over the run token budget: the run needs an estimated {estimate.total:,} model tokens "
        f"({estimate.prompt_tokens:,} prompt + {estimate.completion_tokens:,} completion in "
        f"{estimate.calls} calls: {', '.join(parts) or 'no call'}), over the budget of "
        f"{budget:,} (SYNTH_RUN_TOKEN_BUDGET); no model was called. Raise the budget or split "
        "the transcript, then run it again (POST /api/runs/{run_id}/retry)"
    )


# ------------------------------------------------------------------------------------------------
# during the run

# usage per part, per store (weakly): parts never change once written, so each is read once
_used: weakref.WeakKeyDictionary[ArtifactStore, dict[str, int]] = weakref.WeakKeyDictionary()
_used_lock = threading.Lock()
_USED_LIMIT = 200_000


def _part_tokens(svc: Services, path: str) -> int:
    with _used_lock:
        try:
            seen = _used.setdefault(svc.store, {})
        except TypeError:  # a store that cannot be weakly referenced: no cache
            seen = {}
        if path in seen:
            return seen[path]
    try:
        data = svc.store.get(path)
    except NotFound:
        return 0
    if "/parts/tags/" in path:
        usage = TagPart.model_validate_json(data).usage
    else:  # a generation part or parts/segmentation.json: both carry "usage"
        usage = Usage.model_validate(_usage_field(data))
    tokens = usage.prompt_tokens + usage.completion_tokens
    with _used_lock:
        if len(seen) > _USED_LIMIT:
            seen.clear()
        seen[path] = tokens
    return tokens


def _usage_field(data: bytes) -> dict[str, Any]:
    import json

    value = json.loads(data).get("usage") or {}
    return value if isinstance(value, dict) else {}


def tokens_used(svc: Services, run_id: str) -> int:
    """Model tokens the run's units have recorded so far (actual usage, every part)."""
    paths = [layout.run_file(run_id, "parts/segmentation.json")]
    paths += svc.store.list(layout.generated_parts_prefix(run_id))
    paths += svc.store.list(layout.tag_parts_prefix(run_id))
    return sum(_part_tokens(svc, p) for p in paths)


def generation_need(
    svc: Services, generator: Generator, segment: Segment, context: GenerationContext
) -> int:
    """A generation call's tokens: its prompt exactly, a typical answer (0: no model)."""
    if not _prompted_generator(generator):
        return 0
    prompt = message_tokens(generator.messages(segment, context), generator.model)
    answer = COMPLETION_GENERATION_BASE + stories_in(svc, segment.token_count) * (
        COMPLETION_PER_STORY
    )
    return prompt + answer


def tagging_need(tagger: Tagger, story: GeneratedItem, candidates: list[Candidate]) -> int:
    """A tagging call's tokens: its prompt exactly, a typical answer (0: no model or no call)."""
    if not _prompted_tagger(tagger) or not candidates:
        return 0
    return message_tokens(tagger.messages(story, candidates), tagger.model) + COMPLETION_TAGGING


def refusal(svc: Services, run: RunStatus, estimate: Callable[[], int]) -> ErrorRecord | None:
    """None when a unit needing ``estimate()`` tokens fits in the run's budget (or the run has
    none: then nothing is estimated or read), else the skipped unit's error record (the caller
    sets its phase and unit)."""
    budget = run.token_budget
    if not budget:
        return None
    need = estimate()
    used = tokens_used(svc, run.run_id)
    if used + need <= budget and used < budget:
        return None
    message = (
        f"skipped: the run's token budget has no room for this unit ({used:,} of {budget:,} "
        "tokens used"
        + (f", the unit needs about {need:,}" if need else "")
        + "; SYNTH_RUN_TOKEN_BUDGET)"
    )
    return error_record(
        run.run_id,
        "generate",
        run.run_id,
        BUDGET_ERROR,
        message=message,
        attempts=0,
        outcome="skipped",
        details={
            "skipped": "budget",
            "tokens_used": str(used),
            "token_budget": str(budget),
            "unit_estimate": str(need),
        },
        timestamp=svc.clock(),
    )


def budget_warning(budget: int) -> RunWarning:
    return RunWarning(
        code="token_budget",
        message=(
            f"the run's token budget of {budget:,} tokens (SYNTH_RUN_TOKEN_BUDGET) ran out: "
            "the units past it were skipped (errors.jsonl, outcome skipped, details.skipped "
            "budget); raise the budget and run it again to complete them"
        ),
    )


def budget_report(
    svc: Services,
    run: RunStatus,
    usage: Usage,
    cost_used: float,
    errors: Sequence[ErrorRecord],
) -> BudgetReport | None:
    """summary.json's ``budget`` (None when the run had no budget)."""
    budget = run.token_budget
    if not budget:
        return None
    pricing = svc.settings.pipeline.pricing
    used = usage.prompt_tokens + usage.completion_tokens
    estimate = run.token_estimate
    estimated_cost = None
    per_token = pricing.prompt_per_million / 1e6
    if estimate is not None and estimate.total:
        estimated_cost = (
            estimate.prompt_tokens * pricing.prompt_per_million
            + estimate.completion_tokens * pricing.completion_per_million
        ) / 1e6
        per_token = estimated_cost / estimate.total
    skipped = sum(1 for e in errors if e.details.get("skipped") == "budget")
    return BudgetReport(
        token_budget=budget,
        tokens_used=used,
        tokens_left=max(0, budget - used),
        estimated_tokens=estimate.total if estimate is not None else None,
        cost_used_usd=round(cost_used, 6),
        cost_budget_usd=round(budget * per_token, 6),
        estimated_cost_usd=round(estimated_cost, 6) if estimated_cost is not None else None,
        skipped_units=skipped,
        exhausted=skipped > 0 or used >= budget,
    )
