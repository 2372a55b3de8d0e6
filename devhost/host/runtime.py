"""The host's running state, shared by its triggers: threads, workers, wake-ups and busy counts.

Owns: the stop flag, the worker pool that runs invocations, the poller threads, the wakers that
cut a poller's sleep short (all at once, or the pumps of named queues), and the count of work
queued or running that ``LocalHost.wait_idle`` reads. Knows nothing of functions or storage.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

log = logging.getLogger("devhost")


class Runtime:
    """Threads, the worker pool, wakers and the busy count of one host."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._busy = 0  # invocations queued or running (for wait_idle)
        self._activity = 0  # bumped whenever work starts or ends
        self._wakers: list[threading.Event] = []
        self._queue_wakers: dict[str, list[threading.Event]] = {}  # queue -> its pumps' wakers
        self._threads: list[threading.Thread] = []
        self._pool: ThreadPoolExecutor | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def open(self, max_workers: int) -> None:
        """Clear the stop flag and start the worker pool."""
        self.stop.clear()
        self._pool = ThreadPoolExecutor(max_workers, thread_name_prefix="devhost-fn")

    def halt(self) -> None:
        """Set the stop flag and wake every poller so that it sees it."""
        self.stop.set()
        self.kick()

    def join(self, timeout: float) -> None:
        """Wait for the poller threads to end; forget them and their wakers."""
        for t in self._threads:
            t.join(timeout)
        self._threads.clear()
        self._wakers.clear()
        self._queue_wakers.clear()

    def close(self) -> None:
        """Shut the worker pool down once its tasks are done."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)  # queued message tasks release their messages
            self._pool = None

    def spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        """Start a daemon poller thread, joined by ``join``."""
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(t)
        t.start()

    # -- wake-ups ----------------------------------------------------------------------------
    def waker(self, queue: str | None = None) -> threading.Event:
        """A new waker set by ``kick`` (and by ``wake_queues(queue)`` when ``queue`` is given)."""
        ev = threading.Event()
        with self._lock:
            self._wakers.append(ev)
            if queue is not None:
                self._queue_wakers.setdefault(queue, []).append(ev)
        return ev

    def kick(self) -> None:
        """Wake all pollers now (when a test waits for idle, or the host stops)."""
        with self._lock:
            wakers = list(self._wakers)
        for ev in wakers:
            ev.set()

    def wake_queues(self, *queues: str) -> None:
        """Wake the pumps of ``queues`` now."""
        with self._lock:
            wakers = [ev for q in queues for ev in self._queue_wakers.get(q, ())]
        for ev in wakers:
            ev.set()

    # -- work in progress --------------------------------------------------------------------
    @contextmanager
    def working(self) -> Iterator[None]:
        """Count the body as busy."""
        self._begin()
        try:
            yield
        finally:
            self._end()

    def _begin(self) -> None:
        with self._lock:
            self._busy += 1
            self._activity += 1

    def _end(self) -> None:
        with self._lock:
            self._busy -= 1
            self._activity += 1

    def counts(self) -> tuple[int, int]:
        """(work queued or running, a counter bumped whenever work starts or ends)."""
        with self._lock:
            return self._busy, self._activity

    def submit(self, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn`` on the pool, counted as busy from now until it returns."""
        assert self._pool is not None
        self._begin()

        def run() -> None:
            try:
                fn(*args)
            except Exception:
                log.exception("devhost: unexpected error in %s", getattr(fn, "__name__", fn))
            finally:
                self._end()

        try:
            self._pool.submit(run)
        except RuntimeError:  # pool shut down
            self._end()
            raise
