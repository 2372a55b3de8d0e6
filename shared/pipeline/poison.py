"""What happens to a unit the host gave up on (``{queue}-poison``): the run still ends.

A poisoned segmentation or finalize aborts the run with the reason; a poisoned generation becomes a
skipped segment and a poisoned tagging a ``new`` story with ``tagging_failed``, each recorded in
errors.jsonl; then completion is checked again, so no run is ever left waiting for a lost unit.
"""

from __future__ import annotations

import logging

from shared import layout
from shared.bus import FINALIZE_QUEUE, GENERATE_QUEUE, SEGMENT_QUEUE, TAG_QUEUE, poison_queue
from shared.errors import error_record
from shared.models import (
    TERMINAL_STATES,
    ErrorRecord,
    FinalizeMessage,
    GeneratedPart,
    GenerateMessage,
    Message,
    SegmentMessage,
    TagMessage,
)
from shared.pipeline.fanin import check_completion
from shared.pipeline.generate import send_tag_messages, skipped_part
from shared.pipeline.runs import (
    UnknownRun,
    abort_run,
    last_attempt_error,
    load_run,
    record_error,
)
from shared.pipeline.tag import failed_tag_part
from shared.services import Services
from shared.storage import create_model, read_model_or_none

log = logging.getLogger(__name__)

PHASES = {
    SEGMENT_QUEUE: "segment",
    GENERATE_QUEUE: "generate",
    TAG_QUEUE: "tag",
    FINALIZE_QUEUE: "finalize",
}


def unit_id(message: Message) -> str:
    if isinstance(message, TagMessage):
        return message.story_id
    if isinstance(message, GenerateMessage):
        return message.segment_id
    return message.run_id


def handle_poison(svc: Services, queue: str, message: Message, dequeue_count: int | None) -> None:
    try:
        run = load_run(svc, message.run_id)
    except UnknownRun:
        log.warning("poison message for unknown run %s on %s dropped", message.run_id, queue)
        return
    if run.status in TERMINAL_STATES:
        return
    phase = PHASES[queue]
    unit = unit_id(message)
    reason = last_attempt_error(svc, run.run_id, phase, unit)
    log.error("unit %s/%s of run %s poisoned: %s", phase, unit, run.run_id, reason)

    def error(outcome: str) -> ErrorRecord:
        return error_record(
            run.run_id,
            phase,
            unit,
            "Poisoned",
            message=f"moved to {poison_queue(queue)} after repeated failures; last error: {reason}",
            attempts=dequeue_count or 0,
            dequeue_count=dequeue_count,
            outcome=outcome,
            timestamp=svc.clock(),
        )

    if isinstance(message, (SegmentMessage, FinalizeMessage)):
        abort_run(svc, run.run_id, error("aborted"))
        return
    if isinstance(message, GenerateMessage):
        part_path = layout.generated_part(run.run_id, message.segment_id)
        part = read_model_or_none(svc.store, part_path, GeneratedPart)
        if part is None:
            record_error(svc, error("skipped"))
            create_model(svc.store, part_path, skipped_part(svc, run.run_id, message.segment_id))
            part = read_model_or_none(svc.store, part_path, GeneratedPart)
        if part is not None and part.story_ids:
            # the unit's work was stored but its fan-out failed: finish it rather than lose stories
            send_tag_messages(svc, part)
    elif isinstance(message, TagMessage):
        path = layout.tag_part(run.run_id, message.story_id)
        if not svc.store.exists(path):
            record_error(svc, error("tagged_new"))
            create_model(
                svc.store,
                path,
                failed_tag_part(svc, run.run_id, message.segment_id, message.story_id, reason),
            )
    check_completion(svc, run.run_id)
