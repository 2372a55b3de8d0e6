"""The pipeline's handlers, one per phase, and the dispatch the Functions app and the in-process
bus share. Handlers take ``Services`` and a typed message; everything else is read from the store.
"""

from __future__ import annotations

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
)
from shared.bus.memory import InProcessBus
from shared.models import FinalizeMessage, GenerateMessage, Message, SegmentMessage, TagMessage
from shared.pipeline.finalize import handle_finalize
from shared.pipeline.generate import handle_generate
from shared.pipeline.poison import PHASES, handle_poison, unit_id
from shared.pipeline.runs import UnknownRun, start_run
from shared.pipeline.segment import handle_segment
from shared.pipeline.tag import handle_tag
from shared.services import Services

log = logging.getLogger(__name__)

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
        HANDLERS[queue](svc, message)
    except UnknownRun:
        log.warning("message on %s for unknown run %s dropped", queue, message.run_id)
    except Exception as err:
        try:  # remember why, so the poison handler can tell the user
            svc.store.put(
                layout.attempt_part(message.run_id, PHASES[queue], unit_id(message)),
                f"{type(err).__name__}: {err} (delivery {dequeue_count})".encode(),
            )
        except Exception:  # noqa: BLE001 - the original error matters more
            log.exception("could not record the failed attempt")
        raise
    finally:
        svc.tracer.flush()  # an invocation's spans leave with it (the tracer never raises)


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
        bus.bind(queue, lambda body, n, q=queue: process(svc, q, body, n))
        bus.bind(poison_queue(queue), lambda body, n, q=queue: process_poison(svc, q, body, n))


__all__ = ["bind_in_process", "process", "process_poison", "start_run", "HANDLERS"]
