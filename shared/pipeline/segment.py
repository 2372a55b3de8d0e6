"""Phase 1 (seed §4, §7.1): segment the transcript and fan out one generation message per segment.

The agent proposes boundaries; this module cuts the original text at them, so the concatenation of
all segments equals the normalized transcript by construction, whatever the agent returned.

Before the first model call: the index must hold vectors of the configured embedder (else the run
fails), the run's estimated tokens must fit ``SYNTH_RUN_TOKEN_BUDGET`` (else the run fails with
the estimate and the budget, shared/pipeline/budget.py), and what the index lacks becomes run
warnings. An index that cannot be reached is not a failure: retrieval falls back to keyword
scoring and the run says so (``index_unreachable``). A model endpoint unreachable after its
retries makes the offline engine segment the transcript (segments ``engine: offline-fallback``,
run warning ``model_unreachable``; shared/pipeline/fallback.py).
"""

from __future__ import annotations

import logging
from datetime import datetime

from shared import ids, layout
from shared.agents import SegmentationFailed, SegmentationResult, SegmentSpan
from shared.bus import GENERATE_QUEUE
from shared.errors import error_record
from shared.models import (
    TERMINAL_STATES,
    GenerateMessage,
    RunStatus,
    RunWarning,
    Segment,
    SegmentMessage,
    inline_copy,
)
from shared.pipeline.budget import BUDGET_ERROR, estimate_run, over_budget_reason
from shared.pipeline.fallback import (
    FALLBACK_ENGINE,
    add_run_warning,
    describe,
    index_warning,
    masked,
    model_unreachable,
    model_warning,
)
from shared.pipeline.runs import abort_run, load_run, send_once, update_run
from shared.retrieval import ADO_FILTER, ARCHITECTURE_FILTER, index_down, mark_index_down
from shared.services import Services
from shared.storage import NotFound, dump_jsonl, read_jsonl
from shared.tokens import count_tokens
from shared.vectorstore import DimensionMismatch, check_index

log = logging.getLogger(__name__)


def cut_segments(
    run_id: str,
    transcript: str,
    result: SegmentationResult,
    *,
    version: str,
    engine: str,
    now: datetime,
) -> list[Segment]:
    """Segments from the agent's spans: only the starts are trusted, sorted and clipped; the first
    segment starts at 0 and each one ends where the next begins."""
    starts = sorted({min(max(s.start, 0), len(transcript)) for s in result.spans} | {0})
    starts = [s for s in starts if s < len(transcript)]
    by_start: dict[int, SegmentSpan] = {}
    for span in result.spans:
        by_start.setdefault(min(max(span.start, 0), len(transcript)), span)
    segments = []
    for order, start in enumerate(starts, start=1):
        end = starts[order] if order < len(starts) else len(transcript)
        span = by_start.get(start, SegmentSpan(start=start, end=end))
        raw = transcript[start:end]
        segments.append(
            Segment(
                run_id=run_id,
                segment_id=ids.segment_id(order),
                segment_order=order,
                raw_text=raw,
                start_char=start,
                end_char=end,
                token_count=count_tokens(raw),
                intent_labels=span.intent_labels,
                dominant_intent=span.dominant_intent,
                theme=span.theme,
                segmentation_version=version,
                engine=engine,
                timestamp=now,
            )
        )
    return segments


def read_segments(svc: Services, run_id: str) -> list[Segment] | None:
    try:
        return read_jsonl(svc.store, layout.run_file(run_id, "segments.jsonl"), Segment)
    except NotFound:
        return None


def handle_segment(svc: Services, msg: SegmentMessage) -> None:
    run = load_run(svc, msg.run_id)
    if run.status in TERMINAL_STATES:
        return
    segments = read_segments(svc, run.run_id)
    if segments is None:
        if not _index_fits_embedder(svc, run):
            return  # aborted: the index was loaded with another embedder
        checked = _within_budget(svc, run)
        if checked is None:
            return  # aborted: the run's estimate is over its token budget
        run = checked
        _record_index_warnings(svc, run)
        segments = _segment(svc, run)
        if segments is None:
            return  # aborted

    def to_generating(r: RunStatus) -> RunStatus | None:
        if r.phase not in ("queued", "segmenting"):
            return None
        r.status, r.phase, r.segment_count = "running", "generating", len(segments)
        return r

    update_run(svc, run.run_id, to_generating)
    send_once(
        svc,
        run.run_id,
        "segment",
        [
            (
                GENERATE_QUEUE,
                inline_copy(
                    GenerateMessage(run_id=run.run_id, segment_id=s.segment_id, segment=s),
                    "segment",
                ),
            )
            for s in segments
        ],
    )


INDEX_CODES = frozenset({"empty_index", "no_architecture_docs", "index_unreachable"})


def index_warnings(svc: Services, project: str) -> list[RunWarning]:
    """What the project's index lacks: any backlog item (every story would be tagged new, and a
    write would create them all), any architecture document (no constraint is checked). When the
    index cannot be queried: ``index_unreachable``, and what it lacks as the ingestion files (what
    keyword retrieval reads) tell it."""
    out = []
    reason = index_down(svc.index)
    has_backlog = has_architecture = False
    if reason is None:
        dim = int(svc.embedder.dimension)
        probe = [1.0 / dim**0.5] * dim  # any vector: the filter decides whether something is there
        try:
            has_backlog = bool(svc.index.query(project, probe, 1, ADO_FILTER))
            has_architecture = bool(svc.index.query(project, probe, 1, ARCHITECTURE_FILTER))
        except DimensionMismatch:
            raise
        except Exception as err:  # noqa: BLE001 - unreachable: keyword retrieval, recorded
            reason = mark_index_down(svc.index, err)
    if reason is not None:
        from shared.keyword_retrieval import keyword_index

        out.append(index_warning(masked(svc, reason)))
        records = keyword_index(svc.store, project).metadata
        has_backlog = any(m.get("source_type") == "ado_backlog" for m in records)
        has_architecture = any(m.get("doc_type") == "architecture" for m in records)
    if not has_backlog:
        out.append(
            RunWarning(
                code="empty_index",
                message=(
                    f"project '{project}' has no indexed backlog: every story is tagged new and "
                    "a write would create them all. Load the backlog (python -m loaders.ado_loader "
                    f"--project {project}) or check the project folder of the upload "
                    "(transcripts/{project}/...), then retag the run."
                ),
            )
        )
    if not has_architecture:
        out.append(
            RunWarning(
                code="no_architecture_docs",
                message=(
                    f"project '{project}' has no architecture documents in the index: no story "
                    "was checked against architecture constraints."
                ),
            )
        )
    return out


def with_index_warnings(current: list[RunWarning], found: list[RunWarning]) -> list[RunWarning]:
    """``current`` with its index warnings replaced by ``found`` (others, such as a model or
    budget warning, kept)."""
    return [w for w in current if w.code not in INDEX_CODES] + found


def _record_index_warnings(svc: Services, run: RunStatus) -> None:
    found = index_warnings(svc, run.project)
    if with_index_warnings(run.warnings, found) == run.warnings:
        return

    def put(r: RunStatus) -> RunStatus | None:
        merged = with_index_warnings(r.warnings, found)
        if merged == r.warnings:
            return None
        r.warnings = merged
        return r

    update_run(svc, run.run_id, put)
    for w in found:
        log.warning("run %s: %s", run.run_id, w.message)


def _within_budget(svc: Services, run: RunStatus) -> RunStatus | None:
    """The run with its token budget and estimate recorded, or None after failing it because the
    estimate is over the budget (shared/pipeline/budget.py). No budget: the run as it is."""
    budget = svc.settings.run_token_budget
    if not budget:
        return run
    if run.token_budget is not None and run.token_estimate is not None:
        return run  # checked by an earlier delivery
    transcript = svc.store.get(layout.run_file(run.run_id, "transcript.txt")).decode()
    estimate = estimate_run(svc, run, transcript)
    log.info(
        "run %s: estimated %d tokens in %d calls, budget %d",
        run.run_id,
        estimate.total,
        estimate.calls,
        budget,
    )

    def record(r: RunStatus) -> RunStatus | None:
        if r.token_budget is not None and r.token_estimate is not None:
            return None
        r.token_budget, r.token_estimate = budget, estimate
        return r

    run = update_run(svc, run.run_id, record)
    if run.token_estimate is not None and run.token_estimate.total > (run.token_budget or 0):
        abort_run(
            svc,
            run.run_id,
            error_record(
                run.run_id,
                "segment",
                run.run_id,
                BUDGET_ERROR,
                message=over_budget_reason(run.token_estimate, run.token_budget or 0),
                attempts=0,
                outcome="aborted",
                details={
                    "estimated_tokens": str(run.token_estimate.total),
                    "token_budget": str(run.token_budget),
                },
                timestamp=svc.clock(),
            ),
        )
        return None
    return run


def _index_fits_embedder(svc: Services, run: RunStatus) -> bool:
    """Fail the run at once, before any model call, when the project's index holds vectors of
    another embedder (every retrieval would fail): the reason and the fix go to run.json."""
    try:
        check_index(svc.index, run.project, svc.embedder)
    except DimensionMismatch as err:
        abort_run(
            svc,
            run.run_id,
            error_record(
                run.run_id, "segment", run.run_id, err, outcome="aborted", timestamp=svc.clock()
            ),
        )
        return False
    except Exception as err:  # noqa: BLE001 - unreachable: the run goes on with keyword retrieval
        add_run_warning(svc, run, index_warning(masked(svc, mark_index_down(svc.index, err))))
    return True


def _segment(svc: Services, run: RunStatus) -> list[Segment] | None:
    def to_segmenting(r: RunStatus) -> RunStatus | None:
        if r.phase != "queued":
            return None
        r.status, r.phase = "running", "segmenting"
        return r

    update_run(svc, run.run_id, to_segmenting)
    transcript = svc.store.get(layout.run_file(run.run_id, "transcript.txt")).decode()
    segmenter = svc.agents.segmenter
    engine, version = segmenter.engine, segmenter.version
    with svc.tracer.span(run.run_id, "segmentation") as span:
        try:
            result = segmenter.segment(transcript)
        except SegmentationFailed as err:
            abort_run(
                svc,
                run.run_id,
                error_record(
                    run.run_id,
                    "segment",
                    run.run_id,
                    err,
                    outcome="aborted",
                    timestamp=svc.clock(),
                ),
            )
            return None
        except Exception as err:
            if not model_unreachable(err):
                raise
            reason = describe(err, svc)
            log.warning("run %s: segmentation by the offline engine: %s", run.run_id, reason)
            fallback = svc.fallback_agents.segmenter
            result = fallback.segment(transcript)
            engine, version = FALLBACK_ENGINE, fallback.version
            add_run_warning(svc, run, model_warning(reason))
            span.update(fallback="offline", fallback_reason=reason)
        segments = cut_segments(
            run.run_id,
            transcript,
            result,
            version=version,
            engine=engine,
            now=svc.clock(),
        )
        total = sum(s.token_count for s in segments)
        span.update(
            segment_count=len(segments),
            avg_tokens=round(total / len(segments), 1),
            total_tokens=total,
            merge_operations=result.merge_operations,
            token_usage_prompt=result.usage.prompt_tokens,
            token_usage_completion=result.usage.completion_tokens,
        )
    stats = result.model_copy(update={"spans": []})
    svc.store.create(
        layout.run_file(run.run_id, "parts/segmentation.json"),
        stats.model_dump_json(indent=2).encode(),
    )
    if not svc.store.create(layout.run_file(run.run_id, "segments.jsonl"), dump_jsonl(segments)):
        existing = read_segments(svc, run.run_id)
        assert existing is not None
        segments = existing
    log.info("run %s: %d segments", run.run_id, len(segments))
    return segments
