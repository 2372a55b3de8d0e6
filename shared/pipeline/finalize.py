"""Finalize: merge the parts into the run's final artifacts and close the run.

Idempotent: the outputs are a pure function of the parts (which never change once written), so a
second finalize rewrites identical bytes; the status change is ETag-guarded and a terminal run is
never changed again.

Stories are compared for merging with the vectors their generation units stored in the parts
(``StoryVectors.main``) when they are the configured embedder's; only others are embedded here.
The reads after the completeness check go out together, and so do the four output writes.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from shared import layout
from shared.agents import SegmentationResult
from shared.indexing.pending import mode as pending_mode
from shared.indexing.pending import refresh_quietly
from shared.models import (
    TAGS,
    TERMINAL_STATES,
    Coverage,
    ErrorRecord,
    FinalizeMessage,
    GeneratedItem,
    GeneratedPart,
    RunState,
    RunStatus,
    Segment,
    Summary,
    TaggingRecord,
    TagPart,
    UnquotedStatement,
    Usage,
)
from shared.pipeline.budget import budget_report
from shared.pipeline.consolidate import annotate_quotes, carry_tags, main_text, merge_duplicates
from shared.pipeline.fallback import (
    FALLBACK_ENGINE,
    add_run_warning,
    describe,
    model_unreachable,
    model_warning,
)
from shared.pipeline.fanin import expected_story_ids, read_parts
from shared.pipeline.runs import load_run, read_errors, trace_run_end, update_run
from shared.pipeline.segment import read_segments
from shared.retrieval.search import KEYWORD_RETRIEVAL
from shared.services import Services
from shared.storage import NotFound, dump_jsonl, dump_model
from shared.text.textio import prefix_at

log = logging.getLogger(__name__)


def merge_items(parts: list[GeneratedPart], tags: dict[str, TaggingRecord]) -> list[GeneratedItem]:
    """All generated items in segment order; an epic shared by several segments appears once."""
    seen: set[str] = set()
    merged: list[GeneratedItem] = []
    for part in parts:
        for item in part.items:
            if item.item_id in seen:
                continue
            seen.add(item.item_id)
            if item.type == "User Story":
                record = tags.get(item.item_id)
                item = item.model_copy(
                    update={"assigned_tag": record.decision_tag if record else None}
                )
            merged.append(item)
    return merged


Embed = Callable[[Sequence[str]], np.ndarray]


def known_main_vectors(svc: Services, parts: list[GeneratedPart]) -> dict[str, list[float]]:
    """The parts' stored ``main`` vectors that are the configured embedder's, by their text."""
    found: dict[str, list[float]] = {}
    for part in parts:
        vectors = part.story_vectors
        if vectors is None or not vectors.fits(svc.embedder):
            continue
        for item in part.items:
            if item.type == "User Story" and item.source_quotes:
                vector = vectors.vector("main", item.item_id)
                if vector is not None:
                    found[main_text(item)] = vector
    return found


def embed_known(known: dict[str, list[float]], embed: Embed) -> Embed:
    """``embed`` that takes the vectors of ``known`` texts as they are and embeds the others."""

    def run(texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        found: dict[str, Any] = dict(known)
        if missing:
            found.update(zip(missing, embed(missing), strict=True))
        return np.asarray([found[t] for t in texts], dtype=np.float32)

    return run


def consolidate(
    svc: Services,
    items: list[GeneratedItem],
    transcript: str,
    notes: list[str] | None = None,
    known: dict[str, list[float]] | None = None,
) -> list[GeneratedItem]:
    """One need, one story (stories of several segments merged) and speakers and timecodes on
    every quote (``shared.pipeline.consolidate``). When the embeddings endpoint is unreachable
    the packaged MiniLM compares the stories (at its profile's ``duplicateAtLeast`` unless
    ``merge_similarity`` is set) and the reason goes to ``notes``. ``known``: the configured
    embedder's vectors of some ``main_text``s (``known_main_vectors``), not embedded again."""
    configured = svc.settings.pipeline.generation.merge_similarity
    threshold = configured
    if threshold is None:
        threshold = svc.settings.pipeline.thresholds.duplicate_at_least
    try:
        merged = merge_duplicates(
            items, embed_known(known or {}, svc.embedder.embed), threshold, transcript
        )
    except Exception as err:
        if not model_unreachable(err):
            raise
        from shared.analysis.capture import capture_embedder
        from shared.settings import THRESHOLD_PROFILES

        if notes is not None:
            notes.append(describe(err, svc))
        if configured is None:
            threshold = THRESHOLD_PROFILES["minilm"]["duplicate_at_least"]
        merged = merge_duplicates(
            items, capture_embedder(svc.embedder).embed, threshold, transcript
        )
    return annotate_quotes(transcript, merged)


def coverage(
    stories: list[GeneratedItem],
    requirement: list[tuple[int, int]],
    transcript: str = "",
    segments: Sequence[Segment] = (),
) -> Coverage:
    """Share of requirement statements that some story quotes (any overlap counts), and those
    no story quotes, with their words, segment, speaker and timecode (from ``transcript`` and
    ``segments``), for the reviewer to place.

    One definition of "requirement statement" whatever engine generated the stories: the capture
    classifier's (``shared.analysis.capture``), recorded per segment by the generation unit.
    """
    quoted = sorted((q.start, q.end) for s in stories for q in s.source_quotes)
    said = [any(x < b and a < y for x, y in quoted) for a, b in requirement]
    covered = sum(said)
    missed = sorted({span for span, ok in zip(requirement, said, strict=True) if not ok})
    share = covered / len(requirement) if requirement else 1.0

    def unquoted(a: int, b: int) -> UnquotedStatement:
        prefix = prefix_at(transcript, a)
        return UnquotedStatement(
            text=transcript[a:b],
            start=a,
            end=b,
            segment_id=next(
                (s.segment_id for s in segments if s.start_char <= a < s.end_char), None
            ),
            speaker=prefix.speaker,
            timecode=prefix.timecode,
        )

    return Coverage(
        requirement_sentences=len(requirement),
        quoted_sentences=covered,
        share=round(share, 4),
        unquoted=[unquoted(a, b) for a, b in missed],
    )


def requirement_statements(
    svc: Services, segments: list[Segment], parts: list[GeneratedPart]
) -> list[tuple[int, int]]:
    """Every segment's requirement statements: as its generation part recorded them, classified
    now for a part that has none (a skipped segment's requirements count as not covered)."""
    by_segment = {p.segment_id: p for p in parts}
    spans: list[tuple[int, int]] = []
    for segment in segments:
        part = by_segment.get(segment.segment_id)
        if part is not None and part.requirement_spans is not None:
            spans.extend((start, end) for start, end in part.requirement_spans)
            continue
        from shared.analysis.capture import requirement_spans

        spans.extend(requirement_spans(segment.raw_text, svc.embedder, segment.start_char))
    return spans


def fallbacks(
    segments: list[Segment], parts: list[GeneratedPart], records: list[TaggingRecord]
) -> dict[str, int]:
    """How many units were done another way than configured (docs/RELIABILITY.md)."""

    def keyword(warnings: list[str]) -> bool:
        return any(w.startswith(KEYWORD_RETRIEVAL) for w in warnings)

    return {
        "offline_segmentation": int(any(s.engine == FALLBACK_ENGINE for s in segments)),
        "offline_generation": sum(1 for p in parts if p.engine == FALLBACK_ENGINE),
        "keyword_generation": sum(1 for p in parts if keyword(p.warnings)),
        "offline_tagging": sum(1 for r in records if r.engine == FALLBACK_ENGINE),
        "keyword_tagging": sum(1 for r in records if keyword(r.warnings)),
    }


def build_summary(
    svc: Services,
    run: RunStatus,
    status: RunState,
    segments: list[Segment],
    parts: list[GeneratedPart],
    items: list[GeneratedItem],
    records: list[TaggingRecord],
    tag_usage: Usage,
    errors: list[ErrorRecord],
    transcript: str,
    seg_stats: SegmentationResult | None = None,
) -> Summary:
    """``seg_stats``: parts/segmentation.json (its usage counts), read here when not given."""
    stories = [i for i in items if i.type == "User Story"]
    usage = sum((p.usage for p in parts), Usage()) + tag_usage
    if seg_stats is None:
        seg_stats = read_segmentation(svc, run.run_id)
    if seg_stats is not None:
        usage = usage + seg_stats.usage
    pricing = svc.settings.pipeline.pricing
    cost = (
        usage.prompt_tokens * pricing.prompt_per_million
        + usage.completion_tokens * pricing.completion_per_million
    ) / 1e6
    distribution = Counter(r.decision_tag for r in records)
    total_tokens = sum(s.token_count for s in segments)
    return Summary(
        run_id=run.run_id,
        project=run.project,
        status=status,
        engine=run.engine,
        model=run.model,
        segment_count=len(segments),
        skipped_segments=sum(1 for p in parts if p.status == "skipped"),
        epic_count=sum(1 for i in items if i.type == "Epic"),
        feature_count=sum(1 for i in items if i.type == "Feature"),
        story_count=len(stories),
        tag_distribution={t: distribution.get(t, 0) for t in TAGS},
        tagging_failed=sum(1 for r in records if r.tagging_failed),
        constraint_violations=sum(1 for s in stories if s.constraint_violation),
        open_questions=sum(len(i.open_questions) for i in items),
        error_count=len(errors),
        avg_segment_tokens=round(total_tokens / len(segments), 1) if segments else 0.0,
        total_segment_tokens=total_tokens,
        usage=usage,
        cost_estimate_usd=round(cost, 6),
        coverage=coverage(
            stories, requirement_statements(svc, segments, parts), transcript, segments
        ),
        warnings=list(run.warnings),
        fallbacks=fallbacks(segments, parts, records),
        budget=budget_report(svc, run, usage, cost, errors),
    )


def read_segmentation(svc: Services, run_id: str) -> SegmentationResult | None:
    try:
        data = svc.store.get(layout.segmentation_part(run_id))
    except NotFound:
        return None
    return SegmentationResult.model_validate_json(data)


def handle_finalize(svc: Services, msg: FinalizeMessage) -> None:
    run = load_run(svc, msg.run_id)
    if run.status in TERMINAL_STATES:
        return
    expected = expected_story_ids(svc, run)
    tag_paths = svc.store.list(layout.tag_parts_prefix(run.run_id))  # read below too
    if expected is None or not set(expected) <= set(map(layout.unit_of, tag_paths)):
        # only the last unit sends finalize; an early one means a bug or a manual message
        log.warning("finalize for %s ignored: the run is not complete", run.run_id)
        return
    update_run(svc, run.run_id, lambda r: r.model_copy(update={"phase": "finalizing"}))

    with ThreadPoolExecutor(max_workers=5) as pool:  # independent reads, together
        segments_read = pool.submit(read_segments, svc, run.run_id)
        tag_parts_read = pool.submit(read_parts, svc, tag_paths, TagPart)
        transcript_read = pool.submit(svc.store.get, layout.transcript(run.run_id))
        errors_read = pool.submit(read_errors, svc, run.run_id)
        seg_stats_read = pool.submit(read_segmentation, svc, run.run_id)
        segments = segments_read.result() or []
        parts = read_parts(
            svc, [layout.generated_part(run.run_id, s.segment_id) for s in segments], GeneratedPart
        )
        tag_parts = dict(zip(map(layout.unit_of, tag_paths), tag_parts_read.result(), strict=True))
        transcript = transcript_read.result().decode()
        errors, seg_stats = errors_read.result(), seg_stats_read.result()
    tags = {sid: tp.record for sid, tp in tag_parts.items()}
    notes: list[str] = []
    items = consolidate(
        svc, merge_items(parts, tags), transcript, notes, known_main_vectors(svc, parts)
    )
    if notes:  # the embeddings endpoint was down: said once, in run.json and the summary
        add_run_warning(svc, run, model_warning(notes[0]))
        run = load_run(svc, run.run_id)
    carried = carry_tags([i for i in items if i.type == "User Story"], tags)
    items = [
        i.model_copy(update={"assigned_tag": carried[i.item_id].decision_tag})
        if i.item_id in carried
        else i
        for i in items
    ]
    story_order = [i.item_id for i in items if i.type == "User Story"]
    records = [carried[sid] for sid in story_order if sid in carried]
    status: RunState = "completed_with_errors" if errors else "completed"
    summary = build_summary(
        svc,
        run,
        status,
        segments,
        parts,
        items,
        records,
        sum((part.usage for part in tag_parts.values()), Usage()),  # merged stories cost too
        errors,
        transcript,
        seg_stats,
    )

    outputs = {
        layout.generated_backlog(run.run_id): dump_jsonl(items),
        layout.tagging_analysis(run.run_id): dump_jsonl(records),
        layout.run_errors(run.run_id): dump_jsonl(errors),
        layout.run_summary(run.run_id): dump_model(summary),
    }
    with ThreadPoolExecutor(max_workers=len(outputs)) as pool:  # before the run closes, together
        for written in [pool.submit(svc.store.put, path, data) for path, data in outputs.items()]:
            written.result()

    def close(r: RunStatus) -> RunStatus:
        r.status = status
        r.phase = "done"
        r.segment_count = len(segments)
        r.story_count = len(story_order)
        r.error_count = len(errors)
        r.completed_at = svc.clock()
        return r

    closed = update_run(svc, run.run_id, close)
    # the run's root observation, written once per run, with the seed §12 run metrics
    trace_run_end(
        svc,
        closed,
        segment_count=summary.segment_count,
        avg_segment_tokens=summary.avg_segment_tokens,
        story_count=summary.story_count,
        tag_distribution=summary.tag_distribution,
        tagging_failed=summary.tagging_failed,
        tagging_failure_rate=round(summary.tagging_failed / summary.story_count, 4)
        if summary.story_count
        else 0.0,
        error_count=len(errors),
        token_usage_prompt=summary.usage.prompt_tokens,
        token_usage_completion=summary.usage.completion_tokens,
    )
    log.info("run %s %s: %d stories, %d errors", run.run_id, status, len(story_order), len(errors))
    if pending_mode(svc.settings) == "completed":
        # SYNTH_PENDING_STORIES=completed: later runs are tagged against these stories too
        refresh_quietly(svc, run.run_id)
