"""Blob triggers: polling containers and running each blob version once.

Owns: scanning the watched containers for blobs that match a function's path and have no
receipt, the create-once receipts in ``azure-webjobs-hosts`` (one per function, blob name and
ETag, as the real host keys them), claims that keep a version from running twice while its
receipt is being written, retries after host.json ``visibilityTimeout`` and, after
``maxDequeueCount`` failures, a message to ``webjobs-blobtrigger-poison``.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from contextlib import suppress

from azure.core import MatchConditions
from azure.core.exceptions import (
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.functions.blob import InputStream

from ..expressions import literal_prefix
from .config import QueueSettings
from .discovery import FunctionInfo
from .invoke import Invoker
from .runtime import Runtime
from .storage import StorageClients

log = logging.getLogger("devhost")

RECEIPTS_CONTAINER = "azure-webjobs-hosts"
BLOB_POISON_QUEUE = "webjobs-blobtrigger-poison"


def _strip_etag(etag: str) -> str:
    return etag.strip('"')


class BlobTrigger:
    """The blob-triggered functions of one host: one poller thread scans for all of them.

    Containers are scanned after ``poll_interval``, doubling up to ``max_poll_interval`` while
    nothing new turns up; a waker (an output binding wrote a blob, ``wait_idle``) scans at once.
    """

    def __init__(
        self,
        functions: list[FunctionInfo],
        *,
        host_id: str,
        storage: StorageClients,
        runtime: Runtime,
        invoker: Invoker,
        queue_settings: QueueSettings,
        poll_interval: float,
        max_poll_interval: float,
    ) -> None:
        self.functions = functions
        self.host_id = host_id
        self.storage = storage
        self.runtime = runtime
        self.invoker = invoker
        self.queue_settings = queue_settings
        self.poll_interval = poll_interval
        self.max_poll_interval = max_poll_interval
        self._lock = threading.Lock()
        # blob versions handed to a worker and not yet seen with a receipt: a scan that listed
        # receipts just before a worker wrote one must not run the blob again
        self._blobs_claimed: set[tuple[str, str, str, str]] = set()
        self._blob_failures: dict[tuple[str, str, str, str], tuple[int, float]] = {}

    def start(self) -> None:
        """Create the receipts and watched containers, then start polling."""
        if not self.functions:
            return
        with suppress(ResourceExistsError):
            self.storage.blob_service().create_container(RECEIPTS_CONTAINER)
        for f in self.functions:
            with suppress(ResourceExistsError):
                self.storage.blob_service(f.connection).create_container(f.container)
        self.runtime.spawn("devhost-blobs", self._blob_loop)

    def _receipt_prefix(self, f: FunctionInfo) -> str:
        return f"blobreceipts/{self.host_id}/{f.name}/{f.container}/"

    def pending_blobs(self, f: FunctionInfo) -> list[tuple[str, str, int, dict[str, str]]]:
        """Blobs matching ``f``'s path that have no receipt: (name, etag, size, binding data)."""
        service = self.storage.blob_service(f.connection)
        prefix = self._receipt_prefix(f)
        receipts = {
            b.name[len(prefix) :]
            for b in self.storage.blob_service()
            .get_container_client(RECEIPTS_CONTAINER)
            .list_blobs(name_starts_with=prefix)
        }
        pending = []
        container = service.get_container_client(f.container)
        try:
            for b in container.list_blobs(name_starts_with=literal_prefix(f.path_template)):
                assert f.path_regex is not None
                m = f.path_regex.match(b.name)
                etag = _strip_etag(b.etag)
                if m and f"{b.name}/{etag}" not in receipts:
                    pending.append((b.name, etag, b.size, m.groupdict()))
        except ResourceNotFoundError:
            pass
        return pending

    def _blob_loop(self) -> None:
        waker, interval = self.runtime.waker(), self.poll_interval
        while not self.runtime.stop.is_set():
            submitted = 0
            for f in self.functions:
                try:
                    submitted += self._scan(f)
                except Exception as exc:  # noqa: BLE001 - storage down: keep polling
                    log.warning("blob scan for %s failed: %s", f.name, exc)
            interval = (
                self.poll_interval if submitted else min(interval * 2, self.max_poll_interval)
            )
            if waker.wait(interval):
                waker.clear()
                interval = self.poll_interval

    def _scan(self, f: FunctionInfo) -> int:
        submitted = 0
        now = time.monotonic()
        pending = self.pending_blobs(f)
        keys = {(f.name, f.container, name, etag) for name, etag, _, _ in pending}
        with self._lock:  # claims whose receipt is now listed (or whose blob is gone) can go
            self._blobs_claimed = {k for k in self._blobs_claimed if k[0] != f.name or k in keys}
            for k in [k for k in self._blob_failures if k[0] == f.name and k not in keys]:
                del self._blob_failures[k]
        for name, etag, size, data in pending:
            key = (f.name, f.container, name, etag)
            with self._lock:
                if key in self._blobs_claimed or self._blob_failures.get(key, (0, 0))[1] > now:
                    continue
                self._blobs_claimed.add(key)
            try:
                self.runtime.submit(self._process_blob, f, name, etag, size, data)
                submitted += 1
            except RuntimeError:
                with self._lock:
                    self._blobs_claimed.discard(key)
        return submitted

    def _process_blob(
        self, f: FunctionInfo, name: str, etag: str, size: int, data: dict[str, str]
    ) -> None:
        key = (f.name, f.container, name, etag)
        release = True  # give the claim back unless a receipt was written (or is moot)
        try:
            if self.runtime.stop.is_set():
                return
            client = self.storage.blob_service(f.connection).get_blob_client(f.container, name)
            try:
                downloader = client.download_blob(
                    etag=f'"{etag}"', match_condition=MatchConditions.IfNotModified
                )
                content = downloader.readall()
            except (ResourceNotFoundError, ResourceModifiedError):
                release = False  # deleted or overwritten since the scan: this version is moot
                return
            stream = InputStream(
                name=f"{f.container}/{name}",
                uri=client.url,
                length=len(content),
                data=content,
                blob_properties={
                    "ETag": etag,
                    "Length": size,
                    "ContentType": downloader.properties.content_settings.content_type,
                },
                metadata=dict(downloader.properties.metadata or {}),
            )
            binding_data = {**data, "blobTrigger": f"{f.container}/{name}", "uri": client.url}
            try:
                self.invoker.invoke(f, stream, binding_data)
            except Exception:  # noqa: BLE001 - any function failure is retried
                with self._lock:
                    count = self._blob_failures.get(key, (0, 0.0))[0] + 1
                    retry_at = time.monotonic() + self.queue_settings.visibility_timeout
                    self._blob_failures[key] = (count, retry_at)
                if count < self.queue_settings.max_dequeue_count:
                    return
                self._blob_poison(f, name, etag, count)
            self._write_receipt(f, name, etag)
            release = False
            with self._lock:
                self._blob_failures.pop(key, None)
        finally:
            if release:
                with self._lock:
                    self._blobs_claimed.discard(key)

    def _write_receipt(self, f: FunctionInfo, name: str, etag: str) -> None:
        receipt = self.storage.blob_service().get_blob_client(
            RECEIPTS_CONTAINER, f"{self._receipt_prefix(f)}{name}/{etag}"
        )
        with suppress(ResourceExistsError):
            receipt.upload_blob(b"", overwrite=False)  # create-once

    def _blob_poison(self, f: FunctionInfo, name: str, etag: str, tries: int) -> None:
        message = {
            "Type": "BlobTrigger",
            "FunctionId": f"Host.Functions.{f.name}",
            "BlobType": "BlockBlob",
            "ContainerName": f.container,
            "BlobName": name,
            "ETag": f'"{etag}"',
        }
        body = base64.b64encode(json.dumps(message).encode()).decode("ascii")
        self.storage.queue_client(BLOB_POISON_QUEUE).send_message(body)
        log.error(
            "%s: blob %s/%s failed %d times; moved to %s",
            f.name,
            f.container,
            name,
            tries,
            BLOB_POISON_QUEUE,
        )
