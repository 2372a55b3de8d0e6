"""Queue triggers: one pump per queue-triggered function, with host.json queue semantics.

Owns: receiving batches of ``batchSize`` messages while no more than ``newBatchThreshold`` are in
flight, holding each received message invisible for the message lease and renewing it while its
invocation runs, deleting a message once it succeeded, making a failed one visible again after
``visibilityTimeout``, and moving it to ``{queue}-poison`` after ``maxDequeueCount`` tries (or
when it cannot be decoded as ``messageEncoding`` says). An idle queue is polled less and less
often; a waker (a message sent to it from this process, ``wait_idle``) receives at once.
"""

from __future__ import annotations

import binascii
import json
import logging
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from azure.core.exceptions import ResourceNotFoundError
from azure.functions.queue import QueueMessage
from azure.storage.queue import QueueMessage as StorageMessage

from .config import QueueSettings
from .discovery import FunctionInfo
from .invoke import Invoker
from .runtime import Runtime
from .storage import StorageClients, decode_message

log = logging.getLogger("devhost")


@dataclass
class _InFlight:
    """A received queue message being processed; its lease is renewed by the pump."""

    message: StorageMessage
    pop_receipt: str
    renewed: float = field(default_factory=time.monotonic)
    done: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class PumpTiming:
    """How a pump polls and holds messages (see ``LocalHost`` for each)."""

    poll_interval: float
    max_poll_interval: float
    message_lease: float
    wake_coalesce: float


class QueuePump:
    """Receives ``f``'s queue and runs each message on the worker pool."""

    def __init__(
        self,
        f: FunctionInfo,
        *,
        storage: StorageClients,
        runtime: Runtime,
        invoker: Invoker,
        queue_settings: QueueSettings,
        timing: PumpTiming,
    ) -> None:
        self.f = f
        self.storage = storage
        self.runtime = runtime
        self.invoker = invoker
        self.queue_settings = queue_settings
        self.timing = timing
        self.client = storage.queue_client(f.queue_name, f.connection)  # creates the queue
        self._lock = threading.Lock()
        self._in_flight: dict[str, _InFlight] = {}

    def start(self) -> None:
        self.runtime.spawn(f"devhost-queue-{self.f.queue_name}", self._queue_loop)

    def _queue_loop(self) -> None:
        f, qs, timing, client = self.f, self.queue_settings, self.timing, self.client
        in_flight = self._in_flight
        waker, interval = self.runtime.waker(f.queue_name), timing.poll_interval
        last_receive = 0.0
        while not self.runtime.stop.is_set():
            self._renew_leases()
            received = 0
            if len(in_flight) <= qs.new_batch_threshold:
                last_receive = time.monotonic()
                try:
                    pages = client.receive_messages(
                        messages_per_page=qs.batch_size,
                        visibility_timeout=int(timing.message_lease),
                    ).by_page()
                    for msg in next(pages, []):  # one request: a single batch
                        received += 1
                        rec = _InFlight(msg, msg.pop_receipt or "")
                        with self._lock:
                            in_flight[msg.id] = rec
                        self.runtime.submit(self._process_message, rec)
                except RuntimeError:  # pool shut down while stopping
                    break
                except Exception as exc:  # noqa: BLE001 - the poller must outlive storage
                    log.warning("receive from %s failed: %s", f.queue_name, exc)
            if received:
                interval = timing.poll_interval
                continue
            interval = min(interval * 2, timing.max_poll_interval)
            if waker.wait(interval):
                waker.clear()
                interval = timing.poll_interval
                # invocations end in bursts, each waking this pump: one receive serves a burst
                self.runtime.stop.wait(last_receive + timing.wake_coalesce - time.monotonic())

    def _renew_leases(self) -> None:
        lease = self.timing.message_lease
        now = time.monotonic()
        with self._lock:
            records = list(self._in_flight.values())
        for rec in records:
            if now - rec.renewed < lease / 2:
                continue
            with rec.lock:
                if rec.done:
                    continue
                try:
                    r = self.client.update_message(
                        rec.message.id, rec.pop_receipt, visibility_timeout=int(lease)
                    )
                    rec.pop_receipt, rec.renewed = r.pop_receipt or rec.pop_receipt, now
                except Exception as exc:  # noqa: BLE001 - the renewer must outlive storage
                    log.warning("could not renew message %s: %s", rec.message.id, exc)

    def _process_message(self, rec: _InFlight) -> None:
        f, msg, qs = self.f, rec.message, self.queue_settings
        dequeue_count = msg.dequeue_count or 0
        try:
            if self.runtime.stop.is_set():  # never started: make it visible again for the next run
                self._finish(rec, visibility=0)
                return
            if dequeue_count > qs.max_dequeue_count:  # e.g. the host died mid-invocation
                self._poison_message(rec)
                return
            try:
                body = decode_message(msg.content, qs.message_encoding)
                binding_data = self._message_binding_data(msg, body)
                trigger = QueueMessage(
                    id=msg.id,
                    body=body,
                    dequeue_count=msg.dequeue_count,
                    expiration_time=msg.expires_on,
                    insertion_time=msg.inserted_on,
                    time_next_visible=msg.next_visible_on,
                    pop_receipt=rec.pop_receipt,
                )
            except (binascii.Error, ValueError) as exc:
                log.error(
                    "%s: message %s is not valid %s: %s", f.name, msg.id, qs.message_encoding, exc
                )
                ok = False
            else:
                try:
                    self.invoker.invoke(f, trigger, binding_data)
                    ok = True
                except Exception:  # noqa: BLE001 - any failure: retry or poison
                    ok = False
            if ok:
                self._finish(rec, delete=True)
            elif dequeue_count >= qs.max_dequeue_count:
                self._poison_message(rec)
            else:
                self._finish(rec, visibility=qs.visibility_timeout)
        finally:
            with self._lock:
                self._in_flight.pop(msg.id, None)
                freed = len(self._in_flight) == qs.new_batch_threshold  # the pump may fetch again
            if freed:
                self.runtime.wake_queues(f.queue_name)

    @staticmethod
    def _message_binding_data(msg: StorageMessage, body: bytes) -> dict[str, Any]:
        data: dict[str, Any] = {
            "Id": msg.id,
            "DequeueCount": msg.dequeue_count,
            "InsertionTime": msg.inserted_on,
            "ExpirationTime": msg.expires_on,
            "NextVisibleTime": msg.next_visible_on,
            "PopReceipt": msg.pop_receipt,
        }
        with suppress(ValueError):
            payload = json.loads(body)
            if isinstance(payload, dict):
                data.update(payload)
        return data

    def _finish(self, rec: _InFlight, *, delete: bool = False, visibility: float = 0) -> None:
        with rec.lock:
            rec.done = True
            try:
                if delete:
                    self.client.delete_message(rec.message.id, rec.pop_receipt)
                else:
                    self.client.update_message(
                        rec.message.id, rec.pop_receipt, visibility_timeout=int(visibility)
                    )
            except ResourceNotFoundError:
                log.warning("message %s vanished (lease lost?)", rec.message.id)

    def _poison_message(self, rec: _InFlight) -> None:
        f = self.f
        poison = f"{f.queue_name}-poison"
        content = rec.message.content  # as received
        self.storage.queue_client(poison, f.connection).send_message(content)
        self._finish(rec, delete=True)
        log.error(
            "%s: message %s failed %d times; moved to %s",
            f.name,
            rec.message.id,
            rec.message.dequeue_count,
            poison,
        )
