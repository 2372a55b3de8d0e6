"""The pipeline's handlers, one per phase, and the dispatch the Functions app and the in-process
bus share. Handlers take ``Services`` and a typed message; everything else is read from the store.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from shared import layout
from shared.bus import (
    FINALIZE_QUEUE,
    GENERATE_QUEUE,
    PIPELINE_QUEUES,
    SEGMENT_QUEUE,
    TAG_QUEUE,
    poison_queue,
    send_later,
)
from shared.bus.memory import InProcessBus
from shared.llm import CapacityUnavailable
from shared.models import FinalizeMessage, GenerateMessage, Message, SegmentMessage, TagMessage
from shared.pipeline.finalize import handle_finalize
from shared.pipeline.generate import handle_generate
from shared.pipeline.poison import PHASES, handle_poison, unit_id
from shared.pipeline.runs import UnknownRun, start_run
from shared.pipeline.segment import handle_segment
from shared.pipeline.tag import handle_tag
from shared.services import Services

log = logging.getLogger(__name__)

# a unit waiting for model capacity comes back after the limiter's estimate, within these bounds
MIN_REQUEUE_DELAY_S = 1.0
MAX_REQUEUE_DELAY_S = 300.0
# re-queues after the service itself kept answering 429 (not the shared budget's waits): past this
# many the unit fails like any other error, so a deployment that never answers cannot hold a run
MAX_SERVICE_DEFERRALS = 10

MESSAGE_TYPES: dict[str, type[Message]] = {
    SEGMENT_QUEUE: SegmentMessage,
    GENERATE_QUEUE: GenerateMessage,
    TAG_QUEUE: TagMessage,
    FINALIZE_QUEUE: FinalizeMessage,
}
HANDLERS: dict[str, Callable[[Services, Any], None]] = {
    SEGMENT_QUEUE: handle_segment,
    GENERATE_QUEUE: handle_generate,
    TAG_QUEUE: handle_tag,
    FINALIZE_QUEUE: handle_finalize,
}


def _parse(queue: str, body: str | bytes) -> Message | None:
    try:
        return MESSAGE_TYPES[queue].model_validate_json(body)
    except ValidationError as err:
        # retrying cannot fix a malformed message: log it and let it go
        log.error("unreadable message on %s dropped: %s", queue, err)
        return None


def process(svc: Services, queue: str, body: str | bytes, dequeue_count: int = 1) -> None:
    """Run the handler of ``queue`` for one delivery; re-raise failures so the host retries."""
    message = _parse(queue, body)
    if message is None:
        return
    try:
        try:
            HANDLERS[queue](svc, message)
        except CapacityUnavailable as busy:
            if not (busy.service and message.deferrals >= MAX_SERVICE_DEFERRALS):
                _requeue(svc, queue, message, busy)
                return
            raise
    except UnknownRun:
        log.warning("message on %s for unknown run %s dropped", queue, message.run_id)
    except Exception as err:
        try:  # remember why, so the poison handler can tell the user
            svc.store.put(
                layout.attempt_part(message.run_id, PHASES[queue], unit_id(message)),
                f"{type(err).__name__}: {err} (delivery {dequeue_count})".encode(),
            )
        except Exception:  # the original error matters more
            log.exception("could not record the failed attempt")
        raise
    finally:
        svc.tracer.flush()  # an invocation's spans leave with it (the tracer never raises)


def _requeue(svc: Services, queue: str, message: Message, busy: CapacityUnavailable) -> None:
    """Send the unit again, invisible for the limiter's estimate: this delivery ends without an
    error (no attempt recorded, nothing towards poison), and the new message starts at dequeue 1."""
    delay = min(MAX_REQUEUE_DELAY_S, max(MIN_REQUEUE_DELAY_S, busy.retry_after))
    again = (
        message.model_copy(update={"deferrals": message.deferrals + 1}) if busy.service else message
    )
    send_later(svc.bus, queue, again, delay)
    log.info(
        "%s %s waits %.1f s for model capacity (re-queued): %s",
        PHASES[queue],
        unit_id(message),
        delay,
        busy,
    )


def process_poison(
    svc: Services, queue: str, body: str | bytes, dequeue_count: int | None = None
) -> None:
    """The handler of ``{queue}-poison`` (``queue`` is the original queue's name)."""
    message = _parse(queue, body)
    if message is not None:
        try:
            handle_poison(svc, queue, message, dequeue_count)
        finally:
            svc.tracer.flush()


def bind_in_process(bus: InProcessBus, svc: Services) -> None:
    """Wire the in-process bus the way function_app.py wires the Functions host."""
    for queue in PIPELINE_QUEUES:
        bus.bind(queue, functools.partial(process, svc, queue))
        bus.bind(poison_queue(queue), functools.partial(process_poison, svc, queue))


__all__ = ["bind_in_process", "process", "process_poison", "start_run", "HANDLERS"]
