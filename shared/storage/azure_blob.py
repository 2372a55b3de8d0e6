"""The Azure Blob adapter of the artifact store (Azurite locally).

The first segment of a logical path is the container (``runs``, ``uploads``, ``index``,
``ingestion``, ``eval``); containers are created on first use. Connections come from
``AzureWebJobsStorage`` (a connection string) or, in Azure, from its identity-based form
(``AzureWebJobsStorage__blobServiceUri`` + managed identity).
"""

from __future__ import annotations

import builtins
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from shared.storage import LeaseHeld, NotFound, PreconditionFailed, content_type_for

if TYPE_CHECKING:
    from azure.storage.blob import BlobLeaseClient, BlobServiceClient


def sdk_options() -> dict[str, Any]:
    """Options for the Azure Storage clients (blob and queue).

    ``requests`` (the SDK's transport) reads the proxy variables, the CA bundle variables and
    ``~/.netrc`` from the environment on every request when its session trusts the environment:
    about 0.1 ms of CPU per request with 40 variables (more with a Functions app's settings), for a
    run's 600+ storage requests. Where no proxy variable and no netrc file is set, the session is
    told not to, and a CA bundle variable (``REQUESTS_CA_BUNDLE``, then ``CURL_CA_BUNDLE``, as
    ``requests`` picks them) is passed as the transport's ``connection_verify``: the same requests
    go out. Anywhere else the SDK's default is kept."""
    names = {k.upper() for k in os.environ}
    if any(n.endswith("_PROXY") for n in names) or "NETRC" in names:
        return {}
    home = os.path.expanduser("~")
    if any(os.path.exists(os.path.join(home, f)) for f in (".netrc", "_netrc")):
        return {}
    options: dict[str, Any] = {"use_env_settings": False}
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle:
        options["connection_verify"] = bundle
    return options


class AzureBlobStore:
    # a BlobClient costs a pipeline configuration to build (and ~30 KB): the hot paths of a run
    # (run.json, the index blob, its parts) reuse theirs; clients are thread-safe
    CLIENT_CACHE = 128

    def __init__(self, service: BlobServiceClient) -> None:
        self.service = service
        self._containers: set[str] = set()
        self._lock = threading.Lock()
        self._clients: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"AzureBlobStore({self.service.url!r})"

    @classmethod
    def from_connection_string(cls, conn: str) -> AzureBlobStore:
        from azure.storage.blob import BlobServiceClient

        return cls(BlobServiceClient.from_connection_string(conn, **sdk_options()))

    @classmethod
    def from_service_uri(cls, uri: str, credential: Any) -> AzureBlobStore:
        from azure.storage.blob import BlobServiceClient

        return cls(BlobServiceClient(account_url=uri, credential=credential, **sdk_options()))

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _split(path: str) -> tuple[str, str]:
        container, _, blob = path.partition("/")
        if not container or not blob or ".." in path.split("/"):
            raise ValueError(f"invalid artifact path: {path!r}")
        return container, blob

    def _blob(self, path: str) -> Any:
        client = self._clients.get(path)
        if client is None:
            container, blob = self._split(path)
            client = self.service.get_blob_client(container, blob)
            if len(self._clients) >= self.CLIENT_CACHE:
                self._clients.clear()
            self._clients[path] = client
        return client

    def _ensure_container(self, container: str) -> None:
        if container in self._containers:
            return
        from azure.core.exceptions import ResourceExistsError

        with self._lock:
            try:
                self.service.create_container(container)
            except ResourceExistsError:
                pass
            self._containers.add(container)

    def _settings(self, path: str, content_type: str | None) -> Any:
        from azure.storage.blob import ContentSettings

        return ContentSettings(content_type=content_type or content_type_for(path))

    # -- reads ---------------------------------------------------------------------------------
    def get_with_etag(self, path: str) -> tuple[bytes, str]:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            downloader = self._blob(path).download_blob()
            return downloader.readall(), downloader.properties.etag
        except ResourceNotFoundError:
            raise NotFound(path) from None

    def get(self, path: str) -> bytes:
        return self.get_with_etag(path)[0]

    def etag(self, path: str) -> str | None:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            return str(self._blob(path).get_blob_properties().etag)
        except ResourceNotFoundError:
            return None

    def exists(self, path: str) -> bool:
        return self.etag(path) is not None

    def list(self, prefix: str) -> list[str]:
        from azure.core.exceptions import ResourceNotFoundError

        container, _, rest = prefix.partition("/")
        try:
            client = self.service.get_container_client(container)
            return sorted(f"{container}/{b}" for b in client.list_blob_names(name_starts_with=rest))
        except ResourceNotFoundError:
            return []

    def children(self, prefix: str) -> builtins.list[str]:  # ``list`` is the method above
        """Names directly under a folder-like prefix ('runs/' -> ['run-1', 'run-2'])."""
        from azure.core.exceptions import ResourceNotFoundError

        container, _, rest = prefix.partition("/")
        rest = rest if not rest or rest.endswith("/") else rest + "/"
        try:
            client = self.service.get_container_client(container)
            names = [
                b.name[len(rest) :].rstrip("/")
                for b in client.walk_blobs(name_starts_with=rest or None, delimiter="/")
            ]
        except ResourceNotFoundError:
            return []
        return sorted(n for n in names if n)

    # -- writes --------------------------------------------------------------------------------
    def _upload(self, path: str, data: bytes, content_type: str | None, **conditions: Any) -> str:
        from azure.core.exceptions import ResourceNotFoundError

        container, _ = self._split(path)
        self._ensure_container(container)
        blob = self._blob(path)
        try:
            result = blob.upload_blob(
                data, content_settings=self._settings(path, content_type), **conditions
            )
        except ResourceNotFoundError:
            # the container was deleted behind our back (tests, retention): recreate once
            self._containers.discard(container)
            self._ensure_container(container)
            result = blob.upload_blob(
                data, content_settings=self._settings(path, content_type), **conditions
            )
        return str(result["etag"])

    def put(self, path: str, data: bytes, content_type: str | None = None) -> str:
        return self._upload(path, data, content_type, overwrite=True)

    def create(self, path: str, data: bytes, content_type: str | None = None) -> bool:
        from azure.core.exceptions import ResourceExistsError

        try:
            self._upload(path, data, content_type, overwrite=False)
            return True
        except ResourceExistsError:
            return False

    def replace_if_match(
        self, path: str, data: bytes, etag: str, content_type: str | None = None
    ) -> str:
        from azure.core import MatchConditions
        from azure.core.exceptions import ResourceModifiedError, ResourceNotFoundError

        try:
            return self._upload(
                path,
                data,
                content_type,
                overwrite=True,
                etag=etag,
                match_condition=MatchConditions.IfNotModified,
            )
        except ResourceModifiedError:
            raise PreconditionFailed(f"{path}: etag {etag} is stale") from None
        except ResourceNotFoundError:
            raise NotFound(path) from None

    def delete(self, path: str) -> bool:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            self._blob(path).delete_blob(delete_snapshots="include")
            return True
        except ResourceNotFoundError:
            return False

    @contextmanager
    def lease(self, path: str, seconds: int = 60) -> Iterator[BlobLeaseClient]:
        """A blob lease on ``path`` (created empty if missing); LeaseHeld if someone else has it.
        Yields the ``BlobLeaseClient``: its ``renew()`` keeps a long holder's lease alive."""
        from azure.core.exceptions import HttpResponseError

        try:  # conditional: one round trip whether it exists or not (a HEAD first cost two)
            self.create(path, b"")
        except HttpResponseError as err:
            if err.status_code != 412:  # a leased blob may answer 412 rather than 409
                raise
        seconds = max(15, min(60, seconds))  # the service accepts 15..60 s (or infinite)
        try:
            lease = self._blob(path).acquire_lease(lease_duration=seconds)
        except HttpResponseError as err:
            if err.status_code == 409:
                raise LeaseHeld(path) from None
            raise
        try:
            yield lease
        finally:
            try:
                lease.release()
            except HttpResponseError:
                pass
