"""Azure DevOps (REST 7.1, work item tracking): the client the loader and the writer share.

``from shared.ado import AdoClient`` imports ``requests`` on first use only, so modules that just
catch these errors or build patch operations stay cheap to import (cold start).

- ``shared.ado.client``: ``AdoClient`` (WIQL paging, workitemsbatch, create / update / parent links)
- ``shared.ado.ports``: what the loader, the sync, the writer and the rollback use of it (protocols)
- ``shared.ado.ops``: WIQL text, JSON Patch operations, relations and tags of REST items
- ``shared.ado.process``: the project's process (Agile, Scrum, CMMI, Basic): its type names and
  acceptance-criteria field, from AZURE_DEVOPS_PROCESS or detected
- ``shared.ado.errors``: ``AdoError`` and its subclasses
- ``shared.ado.retry``: the backoff (1, 2, 4, 8, 16 s; Retry-After honoured)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shared.ado.errors import (
    AdoAuthError,
    AdoConflict,
    AdoConnectionError,
    AdoError,
    AdoNotFound,
    AdoQueryTooLarge,
    AdoThrottled,
)

if TYPE_CHECKING:
    from shared.ado.client import AdoClient

__all__ = [
    "AdoAuthError",
    "AdoClient",
    "AdoConflict",
    "AdoConnectionError",
    "AdoError",
    "AdoNotFound",
    "AdoQueryTooLarge",
    "AdoThrottled",
]


def __getattr__(name: str) -> Any:
    if name == "AdoClient":
        from shared.ado.client import AdoClient

        return AdoClient
    raise AttributeError(f"module 'shared.ado' has no attribute {name!r}")
