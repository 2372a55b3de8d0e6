"""The embedded message bus: an in-process queue with the host's delivery semantics.

Used by the CLI ``run`` and by tests: messages are processed by a pool of worker threads; a handler
that raises gets the message again (``dequeue_count`` + 1) until ``max_dequeue_count``, then the
message moves to ``{queue}-poison`` and that queue's handler runs, exactly as the Functions host does
with Storage queues. Duplicate delivery can be switched on to prove handlers idempotent.
``send_later`` holds a message back for a delay, as a queue's initial visibility timeout does.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from shared.bus import poison_queue
from shared.models import Message

log = logging.getLogger(__name__)

# handler(body, dequeue_count)
Handler = Callable[[str, int], None]


@dataclass
class Delivery:
    queue: str
    body: str
    dequeue_count: int = 1
    not_before: float = 0.0  # time.monotonic() before which it is not delivered


class InProcessBus:
    def __init__(
        self, *, workers: int = 4, max_dequeue_count: int = 5, deliver_twice: bool = False
    ) -> None:
        self.workers = workers
        self.max_dequeue_count = max_dequeue_count
        self.deliver_twice = deliver_twice
        self.handlers: dict[str, Handler] = {}
        self.sent: list[tuple[str, str]] = []
        self.delayed: list[tuple[str, float]] = []  # (queue, delay) of every send_later
        self.dead: list[Delivery] = []
        self._pending: deque[Delivery] = deque()
        self._lock = threading.Lock()

    def bind(self, queue: str, handler: Handler) -> None:
        self.handlers[queue] = handler

    def send(self, queue: str, message: Message) -> None:
        self.send_raw(queue, message.model_dump_json())

    def send_raw(self, queue: str, body: str) -> None:
        with self._lock:
            self.sent.append((queue, body))
            self._pending.append(Delivery(queue, body))
            if self.deliver_twice:
                self._pending.append(Delivery(queue, body))

    def send_later(self, queue: str, message: Message, delay_seconds: float) -> None:
        body = message.model_dump_json()
        with self._lock:
            self.sent.append((queue, body))
            self.delayed.append((queue, delay_seconds))
            self._pending.append(
                Delivery(queue, body, not_before=time.monotonic() + max(0.0, delay_seconds))
            )

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def _run(self, delivery: Delivery) -> None:
        handler = self.handlers.get(delivery.queue)
        if handler is None:
            raise LookupError(f"no handler bound to queue {delivery.queue!r}")
        try:
            handler(delivery.body, delivery.dequeue_count)
        except Exception:
            log.exception(
                "handler for %s failed (dequeue %d)", delivery.queue, delivery.dequeue_count
            )
            with self._lock:
                if delivery.dequeue_count < self.max_dequeue_count:
                    delivery.dequeue_count += 1
                    self._pending.append(delivery)
                elif (
                    delivery.queue.endswith("-poison")
                    or poison_queue(delivery.queue) not in self.handlers
                ):
                    self.dead.append(delivery)
                else:
                    self._pending.append(Delivery(poison_queue(delivery.queue), delivery.body))

    def drain(self) -> None:
        """Process messages until no message is pending and no handler is running."""
        running: set[Future[None]] = set()
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="bus") as pool:
            while True:
                with self._lock:
                    now = time.monotonic()
                    ready = [d for d in self._pending if d.not_before <= now]
                    for delivery in ready[: self.workers - len(running)]:
                        self._pending.remove(delivery)
                        running.add(pool.submit(self._run, delivery))
                    if not running and not self._pending:
                        return
                    held = [d.not_before - now for d in self._pending if d.not_before > now]
                # wake for the first held-back delivery (send_later) unless a handler ends first
                due = max(0.0, min(held)) if held else None
                if not running:
                    time.sleep(due or 0.0)
                    continue
                done, running = wait(running, timeout=due, return_when=FIRST_COMPLETED)
                for fut in done:
                    fut.result()  # _run never raises except for an unbound queue
