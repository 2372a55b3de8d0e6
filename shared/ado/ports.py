"""The work items port: what the loader, the index sync, the writer and the rollback use of an
Azure DevOps client. ``shared.ado.client.AdoClient`` implements all three; tests drive it against
``devhost/standins/fake_ado/`` over HTTP.

- ``WorkItemReader``: items by id and the project's work item types (its process); what
  re-indexing after a write or a rollback and the process detection need.
- ``BacklogSource``: a reader that also lists the project's items by WIQL (the loader, the sync).
- ``WorkItemWriter``: a reader that also creates, updates and deletes items (the writer, the
  rollback).

Items are ADO's REST JSON (``{"id", "rev", "fields", "relations"}``), read with
``shared.ado.ops``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from shared.ado.client import WiqlResult


class WorkItemReader(Protocol):
    project: str

    def work_item_types(self) -> list[dict[str, Any]]: ...

    def get_work_item(self, work_item_id: int) -> dict[str, Any]: ...

    def get_work_items(
        self, ids: Iterable[int], *, batch_size: int = ...
    ) -> Iterator[dict[str, Any]]: ...

    def close(self) -> None: ...


class BacklogSource(WorkItemReader, Protocol):
    def iter_ids(
        self,
        work_item_types: Sequence[str] = (),
        *,
        tag: str | None = None,
        conditions: Sequence[str] = (),
        time_precision: bool = False,
    ) -> Iterator[int]: ...

    def listing(
        self,
        work_item_types: Sequence[str] = (),
        *,
        conditions: Sequence[str] = (),
        time_precision: bool = False,
    ) -> WiqlResult: ...


class WorkItemWriter(WorkItemReader, Protocol):
    def ids_with_tag(self, tag: str, work_item_types: Sequence[str] = ()) -> list[int]: ...

    def create_work_item(
        self,
        work_item_type: str,
        fields: Mapping[str, Any],
        *,
        parent_id: int | None = None,
        operations: Sequence[Mapping[str, Any]] = (),
        validate_only: bool = False,
    ) -> dict[str, Any]: ...

    def update_work_item(
        self,
        work_item_id: int,
        operations: Sequence[Mapping[str, Any]],
        *,
        expected_rev: int | None = None,
        validate_only: bool = False,
    ) -> dict[str, Any]: ...

    def delete_item(self, work_item_id: int) -> dict[str, Any] | None: ...

    def work_item_url(self, work_item_id: int) -> str:
        """The API URL ADO uses in relations."""
        ...

    def web_url(self, work_item_id: int) -> str:
        """Where a person opens the item in the browser."""
        ...
