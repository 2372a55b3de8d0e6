"""Azure Storage queues (Azurite locally), base64-encoded as the Functions host expects."""

from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING, Any

from shared.models import Message

if TYPE_CHECKING:
    from azure.storage.queue import QueueServiceClient

MAX_DELAY_SECONDS = 7 * 24 * 3600  # the queue service's longest initial visibility


class AzureQueueBus:
    def __init__(self, service: QueueServiceClient) -> None:
        self.service = service
        self._clients: dict[str, Any] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_connection_string(cls, conn: str) -> AzureQueueBus:
        from azure.storage.queue import QueueServiceClient

        from shared.storage.azure_blob import sdk_options

        return cls(QueueServiceClient.from_connection_string(conn, **sdk_options()))

    @classmethod
    def from_service_uri(cls, uri: str, credential: Any) -> AzureQueueBus:
        from azure.storage.queue import QueueServiceClient

        from shared.storage.azure_blob import sdk_options

        return cls(QueueServiceClient(account_url=uri, credential=credential, **sdk_options()))

    def client(self, queue: str) -> Any:
        with self._lock:
            client = self._clients.get(queue)
            if client is None:
                from azure.core.exceptions import ResourceExistsError
                from azure.storage.queue import (
                    TextBase64DecodePolicy,
                    TextBase64EncodePolicy,
                )

                client = self.service.get_queue_client(
                    queue,
                    message_encode_policy=TextBase64EncodePolicy(),
                    message_decode_policy=TextBase64DecodePolicy(),
                )
                try:
                    client.create_queue()
                except ResourceExistsError:
                    pass
                self._clients[queue] = client
            return client

    def send(self, queue: str, message: Message) -> None:
        self.client(queue).send_message(message.model_dump_json())

    def send_later(self, queue: str, message: Message, delay_seconds: float) -> None:
        """Invisible for ``delay_seconds`` (whole seconds, at least 1; the service's unit)."""
        delay = max(1, min(MAX_DELAY_SECONDS, math.ceil(delay_seconds)))
        self.client(queue).send_message(message.model_dump_json(), visibility_timeout=delay)
