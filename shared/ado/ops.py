"""Pure helpers for Azure DevOps work items: WIQL text, JSON Patch operations, relations, tags.

No I/O here, so the loader, the writer and the tests build exactly the same requests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

PARENT_REL = "System.LinkTypes.Hierarchy-Reverse"  # on a child: points to its parent
CHILD_REL = "System.LinkTypes.Hierarchy-Forward"  # on a parent: points to a child

TITLE = "System.Title"
DESCRIPTION = "System.Description"
ACCEPTANCE_CRITERIA = "Microsoft.VSTS.Common.AcceptanceCriteria"
TAGS = "System.Tags"
STATE = "System.State"
WORK_ITEM_TYPE = "System.WorkItemType"
CHANGED_DATE = "System.ChangedDate"
PRIORITY = "Microsoft.VSTS.Common.Priority"

_ID_AT_END = re.compile(r"/workItems/(\d+)/?$", re.IGNORECASE)
_FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.]*$")


# ------------------------------------------------------------------------------------------------
# WIQL


def wiql_literal(value: str) -> str:
    """A WIQL string literal: single quotes doubled (the only escape WIQL has)."""
    return "'" + str(value).replace("'", "''") + "'"


def wiql_field(name: str) -> str:
    if not _FIELD_NAME.fullmatch(name):
        raise ValueError(f"not a field reference name: {name!r}")
    return f"[{name}]"


def work_items_query(
    work_item_types: Sequence[str] = (),
    *,
    after_id: int = 0,
    up_to_id: int | None = None,
    tag: str | None = None,
    conditions: Sequence[str] = (),
) -> str:
    """``SELECT [System.Id]`` of this project's work items, ordered by id, with an id window
    ``after_id < id <= up_to_id`` (keyset paging) and optional type and tag filters."""
    where = ["[System.TeamProject] = @project"]
    if work_item_types:
        where.append(
            "[System.WorkItemType] IN (" + ", ".join(wiql_literal(t) for t in work_item_types) + ")"
        )
    if tag is not None:
        where.append(f"[System.Tags] CONTAINS {wiql_literal(tag)}")
    where.append(f"[System.Id] > {int(after_id)}")
    if up_to_id is not None:
        where.append(f"[System.Id] <= {int(up_to_id)}")
    where.extend(conditions)
    return (
        "SELECT [System.Id] FROM WorkItems WHERE " + " AND ".join(where) + " ORDER BY [System.Id]"
    )


def changed_since(when: datetime) -> str:
    """``[System.ChangedDate] >= 'YYYY-MM-DDTHH:MM:SSZ'`` (UTC, to the second, rounded down):
    a condition for ``work_items_query`` that needs ``timePrecision`` (shared.ado.client)."""
    utc = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    return f"{wiql_field(CHANGED_DATE)} >= {wiql_literal(utc.strftime('%Y-%m-%dT%H:%M:%SZ'))}"


# ------------------------------------------------------------------------------------------------
# JSON Patch


def field_op(field: str, value: Any, op: str = "add") -> dict[str, Any]:
    """Set a field (``add`` and ``replace`` both set a plain field; on System.Tags ``add`` merges
    and ``replace`` overwrites)."""
    if op not in ("add", "replace", "remove"):
        raise ValueError(f"unsupported field operation {op!r}")
    wiql_field(field)  # validates the name
    operation: dict[str, Any] = {"op": op, "path": f"/fields/{field}"}
    if op != "remove":
        operation["value"] = value
    return operation


def fields_ops(fields: Mapping[str, Any], op: str = "add") -> list[dict[str, Any]]:
    return [field_op(name, value, op) for name, value in fields.items()]


def tags_value(tags: Iterable[str]) -> str:
    """ADO's tag list format: ``"a; b"`` (tags cannot contain ';')."""
    clean: list[str] = []
    for tag in tags:
        tag = str(tag).strip()
        if ";" in tag:
            raise ValueError(f"a tag cannot contain ';': {tag!r}")
        if tag and tag.lower() not in (t.lower() for t in clean):
            clean.append(tag)
    return "; ".join(clean)


def add_tags_op(tags: Iterable[str]) -> dict[str, Any]:
    """Adds tags to the item's tags (ADO merges on ``add``)."""
    return field_op(TAGS, tags_value(tags), "add")


def expect_rev_op(rev: int) -> dict[str, Any]:
    """Optimistic concurrency: the patch fails with 412 when the item is no longer at ``rev``."""
    return {"op": "test", "path": "/rev", "value": int(rev)}


def relation_op(rel: str, url: str, attributes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {"rel": rel, "url": url}
    if attributes:
        value["attributes"] = dict(attributes)
    return {"op": "add", "path": "/relations/-", "value": value}


def parent_op(parent_url: str) -> dict[str, Any]:
    """Link this item to its parent (one parent at most: a second one fails with TF201036)."""
    return relation_op(PARENT_REL, parent_url)


# ------------------------------------------------------------------------------------------------
# reading REST items


def id_from_url(url: str) -> int | None:
    match = _ID_AT_END.search(str(url or ""))
    return int(match.group(1)) if match else None


def parent_id_of(item: Mapping[str, Any]) -> int | None:
    """The parent from the item's Hierarchy-Reverse relation (children are Hierarchy-Forward)."""
    for rel in item.get("relations") or []:
        if rel.get("rel") == PARENT_REL:
            return id_from_url(rel.get("url", ""))
    parent = (item.get("fields") or {}).get("System.Parent")
    return int(parent) if parent not in (None, "") else None


def child_ids_of(item: Mapping[str, Any]) -> list[int]:
    out = []
    for rel in item.get("relations") or []:
        if rel.get("rel") == CHILD_REL:
            child = id_from_url(rel.get("url", ""))
            if child is not None:
                out.append(child)
    return out


def tags_of(item: Mapping[str, Any]) -> list[str]:
    raw = (item.get("fields") or {}).get(TAGS) or ""
    return [t.strip() for t in str(raw).split(";") if t.strip()]
