"""Azurite fixtures shared by integration and e2e tests: one in-memory emulator per test session, and a
function-scoped variant that hands each test empty storage.

A session stopped by SIGTERM or SIGHUP is interrupted like a Ctrl-C (``pytest_configure``), so its
fixtures are torn down and every Azurite it started is stopped; SIGTERM's default action would end
the process and leave them running.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueServiceClient

from devhost.azurite import Azurite
from devhost.lifecycle import exit_on_signals


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM and SIGHUP interrupt the session (SIGINT keeps pytest's own handling)."""
    exit_on_signals(interrupt=False)


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
