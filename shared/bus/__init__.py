"""The message bus port and the queue names of the pipeline.

Messages are small JSON documents (``shared.models.Message``); the Azure adapter base64-encodes them
because that is what the Functions host expects by default (host.json ``messageEncoding``).
``send_later`` sends one that becomes visible only after a delay (the queue's initial visibility
timeout); a bus without it (an older wrapper) gets ``send``, through ``send_later`` below.
"""

from __future__ import annotations

from typing import Protocol

from shared.models import Message

SEGMENT_QUEUE = "synth-segment"
GENERATE_QUEUE = "synth-generate"
TAG_QUEUE = "synth-tag"
FINALIZE_QUEUE = "synth-finalize"
PIPELINE_QUEUES = (SEGMENT_QUEUE, GENERATE_QUEUE, TAG_QUEUE, FINALIZE_QUEUE)
POISON_SUFFIX = "-poison"


def poison_queue(queue: str) -> str:
    return queue + POISON_SUFFIX


class MessageBus(Protocol):
    def send(self, queue: str, message: Message) -> None: ...

    def send_later(self, queue: str, message: Message, delay_seconds: float) -> None:
        """Send ``message`` invisible for ``delay_seconds`` (a unit re-queued to wait for model
        capacity: a new message, so its dequeue count starts again)."""
        ...


def send_later(bus: MessageBus, queue: str, message: Message, delay_seconds: float) -> None:
    """``bus.send_later`` where the bus has it, else ``bus.send`` (delivered at once)."""
    later = getattr(bus, "send_later", None)
    if later is None:
        bus.send(queue, message)
    else:
        later(queue, message, delay_seconds)
