"""The message bus port and the queue names of the pipeline.

Messages are small JSON documents (``shared.models.Message``); the Azure adapter base64-encodes them
because that is what the Functions host expects by default (host.json ``messageEncoding``).
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
