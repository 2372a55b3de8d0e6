"""A delivery that finds the outbox lease of its step held (by a host that was killed mid-send and
never released it) waits and takes the step over once the lease expires, instead of failing with
OutboxBusy and burning a dequeue; the messages still go out exactly once per marker."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from shared import layout
from shared.bus.memory import InProcessBus
from shared.models import SegmentMessage
from shared.pipeline.runs import OutboxBusy, send_once
from shared.storage import LeaseHeld
from shared.storage.local import LocalFolderStore
from tests.support.pipeline import fake_services


class HeldLeaseStore(LocalFolderStore):
    """A store whose leases are held by someone else for the first ``held`` attempts."""

    def __init__(self, root: str, held: int) -> None:
        super().__init__(root)
        self.held = held
        self.attempts = 0

    @contextmanager
    def lease(self, path: str, seconds: int = 60) -> Iterator[None]:
        self.attempts += 1
        if self.attempts <= self.held:
            raise LeaseHeld(path)
        with super().lease(path, seconds):
            yield


def services(tmp_path, held: int):
    store = HeldLeaseStore(str(tmp_path), held)
    bus = InProcessBus()
    return fake_services(store, bus), store, bus


def test_a_lease_left_by_a_crashed_holder_is_taken_over(tmp_path):
    svc, store, bus = services(tmp_path, held=5)
    sent = send_once(svc, "run-x", "start", [("synth-segment", SegmentMessage(run_id="run-x"))])
    assert sent is True and store.attempts == 6
    assert bus.pending() == 1 and store.exists(layout.outbox("run-x", "start"))
    # the step is done: another delivery sends nothing
    assert (
        send_once(svc, "run-x", "start", [("synth-segment", SegmentMessage(run_id="run-x"))])
        is False
    )
    assert bus.pending() == 1


def test_a_lease_held_past_the_wait_is_outbox_busy(tmp_path):
    svc, store, bus = services(tmp_path, held=10_000)
    with pytest.raises(OutboxBusy):
        send_once(
            svc,
            "run-x",
            "start",
            [("synth-segment", SegmentMessage(run_id="run-x"))],
            wait_seconds=0.3,
        )
    assert bus.pending() == 0 and store.attempts >= 2
