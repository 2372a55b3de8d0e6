"""The local host's configuration: where the app lives, host.json and local.settings.json.

Owns: the names every part of the host shares (``REPO_ROOT``, the ``AzureWebJobsStorage``
setting, ``HostError``), host.json loading, its ``extensions.queues`` section with the real
host's defaults (``QueueSettings``), and copying ``local.settings.json`` into the environment as
Core Tools does. Nothing here touches storage.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..expressions import timespan_seconds

REPO_ROOT = Path(__file__).resolve().parents[2]
STORAGE_SETTING = "AzureWebJobsStorage"


class HostError(RuntimeError):
    """The app or its configuration cannot be run by the local host."""


@dataclass(frozen=True)
class QueueSettings:
    """host.json ``extensions.queues`` with the real host's defaults."""

    batch_size: int = 16
    new_batch_threshold: int = 8
    max_dequeue_count: int = 5
    visibility_timeout: float = 0.0  # delay before a failed message is visible again
    max_polling_interval: float = 60.0
    message_encoding: str = "base64"

    @classmethod
    def from_host_json(cls, host_json: dict[str, Any]) -> QueueSettings:
        q = host_json.get("extensions", {}).get("queues", {})
        batch = int(q.get("batchSize", 16))
        encoding = str(q.get("messageEncoding", "base64")).lower()
        if encoding not in ("base64", "none"):
            raise HostError(f"host.json messageEncoding must be base64 or none, not {encoding!r}")
        return cls(
            batch_size=max(1, min(batch, 32)),  # the queue service hands out 32 at most
            new_batch_threshold=int(q.get("newBatchThreshold", batch // 2)),
            max_dequeue_count=int(q.get("maxDequeueCount", 5)),
            visibility_timeout=timespan_seconds(q.get("visibilityTimeout"), 0.0),
            max_polling_interval=timespan_seconds(q.get("maxPollingInterval"), 60.0),
            message_encoding=encoding,
        )


def load_local_settings(path: str | Path) -> list[str]:
    """Copy ``Values`` of local.settings.json into os.environ where not already set (as Core
    Tools does). Returns the names it set."""
    path = Path(path)
    if not path.is_file():
        return []
    values = json.loads(path.read_text(encoding="utf-8-sig")).get("Values", {})
    added = [k for k, v in values.items() if k not in os.environ and v is not None]
    for k in added:
        os.environ[k] = str(values[k])
    return added


def load_host_json(host_json: str | Path | dict[str, Any] | None, root: Path) -> dict[str, Any]:
    """host.json as a dict: given as one, read from a path (relative to ``root``), or
    ``root/host.json`` when None (``{}`` when that file does not exist)."""
    if isinstance(host_json, dict):
        return host_json
    path = Path(host_json) if host_json else root / "host.json"
    if not path.is_absolute():
        path = root / path
    if not path.is_file():
        if host_json:
            raise HostError(f"host.json not found: {path}")
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8-sig")))
