"""Wake-ups for messages sent from this process.

The real host's shared queue watcher starts a queue's pump at once when a function of the app
writes to that queue through an output binding. This app sends through the SDK (its outbox),
which the real host only sees at its next poll. The local host runs the app in its own process,
so it hooks ``QueueClient.send_message`` and wakes the pump of the queue written to: a message
sent here, by a binding or the SDK, is picked up without a polling delay, and no pump polls
just in case. Messages from other processes are found by polling.

Owns: the process-wide hook (installed once, shared by every host in the process) and
``SendWatcher``, one host's map from queue URLs to the queues it watches.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from azure.storage.queue import QueueClient

_send_listeners: list[Callable[[str], None]] = []
_send_lock = threading.Lock()
_send_hook_installed = False


def _queue_key(url: str) -> str:
    """A queue's identity from its URL: host, port and path (no scheme, no SAS)."""
    parts = urlsplit(url)
    return f"{parts.netloc}{parts.path}".rstrip("/").lower()


def _install_send_hook() -> None:
    global _send_hook_installed
    with _send_lock:
        if _send_hook_installed:
            return
        original = QueueClient.send_message

        @functools.wraps(original)
        def send_message(self: QueueClient, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            with _send_lock:
                listeners = list(_send_listeners)
            if listeners:
                key = _queue_key(self.url)
                for listener in listeners:
                    listener(key)
            return result

        # the hook wraps the SDK's method on purpose (mypy: assigning to a method)
        QueueClient.send_message = send_message  # type: ignore[method-assign]
        _send_hook_installed = True


class SendWatcher:
    """One host's watched queues; wakes their pumps through ``wake_queues`` when a message is
    sent to one of them from this process."""

    def __init__(self, wake_queues: Callable[..., None]) -> None:
        self._wake_queues = wake_queues
        self._queue_keys: dict[str, str] = {}  # _queue_key(url) -> watched queue name

    def listen(self) -> None:
        """Install the hook (once per process) and hear every send from now on."""
        _install_send_hook()
        with _send_lock:
            _send_listeners.append(self._on_send)

    def watch(self, queue: str, client: QueueClient) -> None:
        """Wake ``queue``'s pumps when a message is sent to ``client``'s queue."""
        self._queue_keys[_queue_key(client.url)] = queue

    def close(self) -> None:
        """Forget the watched queues and stop listening."""
        self._queue_keys.clear()
        with _send_lock:
            if self._on_send in _send_listeners:
                _send_listeners.remove(self._on_send)

    def _on_send(self, key: str) -> None:
        """A message was sent from this process (see ``_install_send_hook``)."""
        queue = self._queue_keys.get(key)
        if queue is not None:
            self._wake_queues(queue)
