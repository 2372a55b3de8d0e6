"""Phase 1 (seed §4, §7.1): segment the transcript and fan out one generation message per segment.

The agent proposes boundaries; this module cuts the original text at them, so the concatenation of
all segments equals the normalized transcript by construction, whatever the agent returned.
"""

from __future__ import annotations

import logging
from datetime import datetime

from shared import ids, layout
from shared.agents import SegmentationFailed, SegmentationResult, SegmentSpan
from shared.bus import GENERATE_QUEUE
from shared.models import (
    TERMINAL_STATES,
    ErrorRecord,
    GenerateMessage,
    RunStatus,
    RunWarning,
    Segment,
    SegmentMessage,
    inline_copy,
)
from shared.pipeline.runs import abort_run, load_run, send_once, update_run
from shared.retrieval import ADO_FILTER, ARCHITECTURE_FILTER
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
                engine=engine,  # type: ignore[arg-type]
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


def index_warnings(svc: Services, project: str) -> list[RunWarning]:
    """What the project's index lacks: any backlog item (every story would be tagged new, and a
    write would create them all), any architecture document (no constraint is checked)."""
    dim = int(svc.embedder.dimension)
    probe = [1.0 / dim**0.5] * dim  # any vector: the filter decides whether something is there
    out = []
    if not svc.index.query(project, probe, 1, ADO_FILTER):
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
    if not svc.index.query(project, probe, 1, ARCHITECTURE_FILTER):
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


def _record_index_warnings(svc: Services, run: RunStatus) -> None:
    found = index_warnings(svc, run.project)
    if found == run.warnings:
        return

    def put(r: RunStatus) -> RunStatus | None:
        if r.warnings == found:
            return None
        r.warnings = found
        return r

    update_run(svc, run.run_id, put)
    for w in found:
        log.warning("run %s: %s", run.run_id, w.message)


def _index_fits_embedder(svc: Services, run: RunStatus) -> bool:
    """Fail the run at once, before any model call, when the project's index holds vectors of
    another embedder (every retrieval would fail): the reason and the fix go to run.json."""
    try:
        check_index(svc.index, run.project, svc.embedder)
    except DimensionMismatch as err:
        abort_run(
            svc,
            run.run_id,
            ErrorRecord(
                run_id=run.run_id,
                phase="segment",
                unit_id=run.run_id,
                error_type="DimensionMismatch",
                message=str(err),
                outcome="aborted",
                timestamp=svc.clock(),
            ),
        )
        return False
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
    with svc.tracer.span(run.run_id, "segmentation") as span:
        try:
            result = segmenter.segment(transcript)
        except SegmentationFailed as err:
            abort_run(
                svc,
                run.run_id,
                ErrorRecord(
                    run_id=run.run_id,
                    phase="segment",
                    unit_id=run.run_id,
                    error_type=type(err).__name__,
                    message=str(err),
                    attempts=err.attempts,
                    outcome="aborted",
                    details={"raw_output": err.raw_output[:2000]} if err.raw_output else {},
                    timestamp=svc.clock(),
                ),
            )
            return None
        segments = cut_segments(
            run.run_id,
            transcript,
            result,
            version=segmenter.version,
            engine=segmenter.engine,
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
