"""The local folder store's lease (the blob-lease equivalent the outbox relies on) under contention:
a lease asked for while its holder releases it is either held or free, never an error."""

from __future__ import annotations

import threading
from pathlib import Path

from shared.storage import LeaseHeld
from shared.storage.local import LocalFolderStore


def test_contended_leases_are_held_or_taken_never_an_error(tmp_path: Path) -> None:
    store = LocalFolderStore(tmp_path)
    errors: list[BaseException] = []
    taken = [0]
    lock = threading.Lock()
    start = threading.Barrier(4)

    def worker() -> None:
        start.wait()
        for _ in range(300):
            try:
                with store.lease("runs/r/parts/outbox/start.sent.lock", seconds=15):
                    with lock:
                        taken[0] += 1
            except LeaseHeld:
                continue
            except Exception as err:  # noqa: BLE001 - what the test looks for
                errors.append(err)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert taken[0] > 0  # and nothing is left held:
    with store.lease("runs/r/parts/outbox/start.sent.lock", seconds=15):
        pass
