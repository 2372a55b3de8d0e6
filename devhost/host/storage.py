"""The host's storage clients and the queue message wire format.

Owns: resolving a binding's ``connection`` app setting to a connection string (with the
``connection_string`` override for AzureWebJobsStorage), one cached blob service client per
connection string, one cached queue client per queue (created on first use), and encoding queue
message bodies as host.json ``messageEncoding`` says (base64, strict like .NET, or none).
"""

from __future__ import annotations

import base64
import os
from contextlib import suppress

from azure.core.exceptions import ResourceExistsError
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient, QueueServiceClient

from .config import STORAGE_SETTING, HostError


class StorageClients:
    """Blob and queue clients for the connections the app's bindings name."""

    def __init__(self, connection_override: str | None = None) -> None:
        self._connection_override = connection_override
        self._blob_clients: dict[str, BlobServiceClient] = {}
        self._queue_clients: dict[tuple[str, str], QueueClient] = {}

    def connection_string(self, setting: str = STORAGE_SETTING) -> str:
        """The connection string an app setting names (``AzureWebJobs<Name>`` also tried)."""
        if setting == STORAGE_SETTING and self._connection_override:
            return self._connection_override
        for key in (setting, f"AzureWebJobs{setting}"):
            if os.environ.get(key):
                return os.environ[key]
        raise HostError(f"connection setting {setting!r} is not set (env or local.settings.json)")

    def blob_service(self, setting: str = STORAGE_SETTING) -> BlobServiceClient:
        conn = self.connection_string(setting)
        if conn not in self._blob_clients:
            self._blob_clients[conn] = BlobServiceClient.from_connection_string(conn)
        return self._blob_clients[conn]

    def queue_client(self, queue: str, setting: str = STORAGE_SETTING) -> QueueClient:
        conn = self.connection_string(setting)
        key = (conn, queue)
        if key not in self._queue_clients:
            client = QueueServiceClient.from_connection_string(conn).get_queue_client(queue)
            with suppress(ResourceExistsError):
                client.create_queue()
            self._queue_clients[key] = client
        return self._queue_clients[key]


def encode_message(body: str | bytes, encoding: str) -> str:
    """A message body as sent to the queue under host.json ``messageEncoding``."""
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    if encoding == "base64":
        return base64.b64encode(raw).decode("ascii")
    return raw.decode("utf-8")


def decode_message(content: str, encoding: str) -> bytes:
    """A received message's body; raises ``binascii.Error`` on invalid base64."""
    if encoding == "base64":
        # strict like .NET's Convert.FromBase64String, which only skips whitespace
        return base64.b64decode("".join(content.split()), validate=True)
    return content.encode("utf-8")
