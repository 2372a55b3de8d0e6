"""Azurite fixtures shared by integration and e2e tests: one in-memory emulator per test session, and a
function-scoped variant that hands each test empty storage.

Markers come from the directory (``pytest_collection_modifyitems``): every test under
tests/integration is ``integration``, tests/e2e ``e2e``, tests/chaos ``chaos`` and tests/browser
``browser``, so ``-m "not browser"`` and the like need no marker in the test modules. A module marks
only what its directory does not say (tests/chaos/test_faults.py is ``integration`` too,
tests/browser ``e2e``, tests/e2e/test_demo_first_run.py's Chromium test ``browser``).

A session stopped by SIGTERM or SIGHUP is interrupted like a Ctrl-C (``pytest_configure``), so its
fixtures are torn down and every Azurite it started is stopped; SIGTERM's default action would end
the process and leave them running.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueServiceClient

from devhost.azurite import Azurite
from devhost.lifecycle import exit_on_signals


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM and SIGHUP interrupt the session (SIGINT keeps pytest's own handling)."""
    exit_on_signals(interrupt=False)


TESTS = Path(__file__).resolve().parent
# the first directory under tests/ -> the marker every test in it gets
DIRECTORY_MARKERS = {
    "integration": "integration",
    "e2e": "e2e",
    "chaos": "chaos",
    "browser": "browser",
}


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by -m
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test gets the marker of its directory (``DIRECTORY_MARKERS``)."""
    for item in items:
        try:
            relative = item.path.resolve().relative_to(TESTS)
        except ValueError:  # a test outside tests/ (none today)
            continue
        marker = DIRECTORY_MARKERS.get(relative.parts[0])
        if marker is not None:
            item.add_marker(marker)


@pytest.fixture(scope="session")
def azurite() -> Iterator[Azurite]:
    """A private Azurite (blob + queue, in memory, free ports) for the whole session; stopped at
    the session's end, also when the session is interrupted (Ctrl-C, SIGTERM, SIGHUP)."""
    with Azurite() as emulator:
        yield emulator


@pytest.fixture
def azurite_clean(azurite: Azurite) -> Azurite:
    """The session's Azurite with every container and queue deleted first."""
    if not azurite.running:  # a test stopped or crashed it: bring it back
        azurite.start()
    blobs = BlobServiceClient.from_connection_string(azurite.connection_string)
    for container in blobs.list_containers():
        blobs.delete_container(container.name)
    queues = QueueServiceClient.from_connection_string(azurite.connection_string)
    for queue in queues.list_queues():
        queues.delete_queue(queue.name)
    return azurite
