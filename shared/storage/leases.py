"""Holding a blob lease for as long as a block runs: renewed in the background, released at its
end; a process that dies loses it within ``seconds``. The ADO writer (one write of a run, one ADO
write at a time) and the index of a project's backlog (one sync or load at a time) use it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from shared.errors import SynthesizerError
from shared.storage import ArtifactStore, Lease, LeaseHeld

log = logging.getLogger("shared.storage")

LEASE_SECONDS = 60  # the longest finite blob lease; renewed every third of it


class LeaseBusy(SynthesizerError, RuntimeError):
    """Someone else holds the lease; the message says who (a write, a sync, ...)."""


class _Renewer(threading.Thread):
    def __init__(self, handle: Lease, every: float) -> None:
        super().__init__(name="lease-renewer", daemon=True)
        self.handle = handle
        self.every = every
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            try:
                self.handle.renew()
            except Exception as err:  # noqa: BLE001 - the holder goes on; a lost lease: 409
                log.warning("renewing the lease failed: %s", err)

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=5)


@contextmanager
def held_lease(
    store: ArtifactStore,
    path: str,
    busy: str,
    seconds: int = LEASE_SECONDS,
    *,
    error: type[LeaseBusy] = LeaseBusy,
    wait: float = 0.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[None]:
    """Hold the lease on ``path`` for the block, renewing it; ``error(busy)`` when it is taken
    and stays taken for ``wait`` seconds (tried again every second)."""
    deadline = time.monotonic() + wait
    with ExitStack() as stack:
        while True:
            try:
                handle = stack.enter_context(store.lease(path, seconds=seconds))
                break
            except LeaseHeld:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise error(busy) from None
                sleep(min(1.0, left))
        if hasattr(handle, "renew"):
            renewer = _Renewer(handle, max(0.2, seconds / 3))
            renewer.start()
            stack.callback(renewer.stop)
        yield
