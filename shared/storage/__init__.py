"""The artifact store port: every artifact of a run, the uploads, the ingestion records and the
embedded vector index live behind this small interface.

Paths are logical, ``"{area}/{rest}"`` (``runs/{run_id}/run.json``, ``uploads/{run_id}/raw.txt``). The
Azure adapter maps the first segment to a blob container; the local adapter to a folder.

The three write flavours carry the pipeline's guarantees:
- ``create``: write only if absent (at-least-once delivery: the first result wins, a redelivered
  message finds it and does no work twice);
- ``replace_if_match``: optimistic concurrency on an ETag (run status transitions);
- ``put``: plain overwrite, for outputs that are a pure function of what is already stored.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from shared.errors import SynthesizerError

M = TypeVar("M", bound=BaseModel)


class NotFound(SynthesizerError, KeyError):
    """The artifact does not exist."""


class PreconditionFailed(SynthesizerError, RuntimeError):
    """An ETag condition did not hold (someone else changed the artifact first)."""


class LeaseHeld(SynthesizerError, RuntimeError):
    """Another writer holds the lease on this artifact."""


class Lease(Protocol):
    """The handle of a held lease (a ``BlobLeaseClient``, a ``LocalLease``)."""

    def renew(self) -> None:
        """Extend the lease by its duration from now (a long holder calls it in time)."""
        ...


class ArtifactStore(Protocol):
    def get(self, path: str) -> bytes: ...

    def get_with_etag(self, path: str) -> tuple[bytes, str]: ...

    def etag(self, path: str) -> str | None: ...

    def exists(self, path: str) -> bool: ...

    def put(self, path: str, data: bytes, content_type: str | None = None) -> str: ...

    def create(self, path: str, data: bytes, content_type: str | None = None) -> bool: ...

    def replace_if_match(
        self, path: str, data: bytes, etag: str, content_type: str | None = None
    ) -> str: ...

    def list(self, prefix: str) -> list[str]: ...

    # ``builtins.list``: in the class body, ``list`` is the method above
    def children(self, prefix: str) -> builtins.list[str]: ...

    def delete(self, path: str) -> bool: ...

    def lease(self, path: str, seconds: int = 60) -> AbstractContextManager[Lease]:
        """A context manager: an exclusive claim on ``path`` that expires after ``seconds`` unless
        renewed; it yields a handle whose ``renew()`` extends it (LeaseHeld when taken)."""
        ...


# ------------------------------------------------------------------------------------------------
# helpers shared by all stores


def content_type_for(path: str) -> str:
    if path.endswith(".json"):
        return "application/json"
    if path.endswith(".jsonl"):
        return "application/x-ndjson"
    if path.endswith(".yaml"):
        return "application/yaml"
    if path.endswith((".txt", ".md", ".vtt", ".srt")):
        return "text/plain; charset=utf-8"
    if path.endswith(".png"):
        return "image/png"
    return "application/octet-stream"


def read_json(store: ArtifactStore, path: str) -> Any:
    return json.loads(store.get(path))


def read_model(store: ArtifactStore, path: str, model: type[M]) -> M:
    return model.model_validate_json(store.get(path))


def read_model_or_none(store: ArtifactStore, path: str, model: type[M]) -> M | None:
    try:
        return read_model(store, path, model)
    except NotFound:
        return None


def dump_model(model: BaseModel) -> bytes:
    return model.model_dump_json(indent=2).encode()


def dump_jsonl(models: list[Any]) -> bytes:
    lines = [m.model_dump_json() if isinstance(m, BaseModel) else json.dumps(m) for m in models]
    return ("\n".join(lines) + "\n").encode() if lines else b""


def read_jsonl(store: ArtifactStore, path: str, model: type[M]) -> list[M]:
    text = store.get(path).decode()
    return [model.model_validate_json(line) for line in text.splitlines() if line.strip()]


def create_model(store: ArtifactStore, path: str, model: BaseModel) -> bool:
    return store.create(path, dump_model(model), "application/json")
