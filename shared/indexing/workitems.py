"""Normalize Azure DevOps work items from any source into ``shared.models.WorkItem``.

Sources: the REST API's work item JSON (``workitemsbatch`` with ``$expand=relations``), ADO's flat CSV
export, and the normalized JSONL the loaders and evaluation datasets use. ``parse_*`` read leniently
(one error per unreadable record, so one bad row does not stop a load); ``read_backlog_file`` and
``from_csv`` are strict.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from shared.ado.ops import PARENT_REL, id_from_url
from shared.errors import SynthesizerError
from shared.indexing.html_text import criteria_list, html_to_text, split_criteria_section
from shared.models import WorkItem


class BacklogFormatError(SynthesizerError, ValueError):
    pass


def work_item_hash(item: WorkItem) -> str:
    """seed §2.1: sha256(title + description + parent_id + updated_at); ACs and state are included
    too, because a changed criterion must re-embed the item."""
    basis = "\x1f".join(
        [
            item.title,
            item.description,
            str(item.parent_id or ""),
            item.updated_at.isoformat() if item.updated_at else "",
            "\x1e".join(item.acceptance_criteria),
            item.state,
            item.work_item_type,
        ]
    )
    return hashlib.sha256(basis.encode()).hexdigest()


def _tags(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(t).strip() for t in value if str(t).strip()]
    return [t.strip() for t in str(value or "").split(";") if t.strip()]


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        for fmt in (
            "%m/%d/%Y %I:%M:%S %p",
            "%m/%d/%Y %H:%M",
            "%d/%m/%Y %H:%M:%S",
            "%Y-%m-%d %H:%M:%S",
        ):
            try:
                parsed = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
        else:
            raise BacklogFormatError(f"unreadable date {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _int(value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        raise BacklogFormatError(f"expected an integer, got {value!r}") from None


def _text_and_criteria(description: Any, criteria: Any) -> tuple[str, list[str]]:
    """Description as text and the criteria: from the Acceptance Criteria field, or, when that
    is empty (Basic has no such field), from an "Acceptance criteria" list in the description."""
    found = criteria_list(criteria)
    if found:
        return html_to_text(description), found
    return split_criteria_section(description)


def from_rest(raw: dict[str, Any]) -> WorkItem:
    """One work item as ADO REST 7.1 returns it (fields + relations)."""
    fields = raw.get("fields") or {}
    parent = None
    for rel in raw.get("relations") or []:
        if rel.get("rel") == PARENT_REL and (found := id_from_url(rel.get("url", ""))) is not None:
            parent = found
    if not isinstance(fields, dict):
        raise BacklogFormatError("'fields' is not an object")
    description, criteria = _text_and_criteria(
        fields.get("System.Description"), fields.get("Microsoft.VSTS.Common.AcceptanceCriteria")
    )
    work_item_id = _int(raw.get("id") or fields.get("System.Id"))
    if work_item_id is None:
        raise BacklogFormatError("the work item has no id")
    return WorkItem(
        work_item_id=work_item_id,
        work_item_type=str(fields.get("System.WorkItemType", "")),
        title=str(fields.get("System.Title", "")),
        description=description,
        acceptance_criteria=criteria,
        state=str(fields.get("System.State", "")),
        tags=_tags(fields.get("System.Tags")),
        parent_id=parent if parent is not None else _int(fields.get("System.Parent")),
        updated_at=_time(fields.get("System.ChangedDate")),
        url=raw.get("url"),
        priority=_int(fields.get("Microsoft.VSTS.Common.Priority")),
        rev=_int(raw.get("rev") if raw.get("rev") is not None else fields.get("System.Rev")),
    )


_CSV_COLUMNS = {
    "id": "ID",
    "type": "Work Item Type",
    "title": "Title",
    "state": "State",
    "tags": "Tags",
    "parent": "Parent",
    "changed": "Changed Date",
    "priority": "Priority",
    "description": "Description",
    "ac": "Acceptance Criteria",
}


def _csv_row(row: dict[str, str]) -> WorkItem:
    description, criteria = _text_and_criteria(
        row.get(_CSV_COLUMNS["description"]), row.get(_CSV_COLUMNS["ac"])
    )
    return WorkItem(
        work_item_id=int(row[_CSV_COLUMNS["id"]]),
        work_item_type=row[_CSV_COLUMNS["type"]].strip(),
        title=row[_CSV_COLUMNS["title"]].strip(),
        description=description,
        acceptance_criteria=criteria,
        state=(row.get(_CSV_COLUMNS["state"]) or "").strip(),
        tags=_tags(row.get(_CSV_COLUMNS["tags"])),
        parent_id=_int(row.get(_CSV_COLUMNS["parent"])),
        updated_at=_time(row.get(_CSV_COLUMNS["changed"])),
        priority=_int(row.get(_CSV_COLUMNS["priority"])),
    )


def parse_csv(text: str) -> tuple[list[WorkItem], list[dict[str, Any]]]:
    """ADO's flat query CSV export (columns named as ADO names them): the items, and one error per
    row that cannot be read (with its line and, when readable, its work item id)."""
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = set(reader.fieldnames or [])
    for required in ("id", "type", "title"):
        if _CSV_COLUMNS[required] not in header:
            raise BacklogFormatError(
                f"the CSV has no '{_CSV_COLUMNS[required]}' column (found: {sorted(header)})"
            )
    items, errors = [], []
    for n, row in enumerate(reader, start=2):
        try:
            items.append(_csv_row(row))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            error: dict[str, Any] = {"line": n, "error": f"CSV line {n}: {_reason(err)}"}
            raw_id = (row.get(_CSV_COLUMNS["id"]) or "").strip()
            if raw_id.isdigit():
                error["work_item_id"] = int(raw_id)
            errors.append(error)
    return items, errors


def from_csv(text: str) -> list[WorkItem]:
    """ADO's flat query CSV export; the first unreadable row is an error."""
    items, errors = parse_csv(text)
    if errors:
        raise BacklogFormatError(errors[0]["error"])
    return items


def _reason(err: Exception) -> str:
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return str(err)


def parse_records(rows: list[Any]) -> tuple[list[WorkItem], list[dict[str, Any]]]:
    """REST items (with ``fields``) or normalized records, one error per unreadable record."""
    items, errors = [], []
    for n, row in enumerate(rows):
        try:
            if not isinstance(row, dict):
                raise BacklogFormatError(f"expected an object, got {type(row).__name__}")
            items.append(from_rest(row) if "fields" in row else WorkItem.model_validate(row))
        except (ValueError, TypeError) as err:
            error: dict[str, Any] = {"record": n, "error": _reason(err)}
            raw_id = row.get("id", row.get("work_item_id")) if isinstance(row, dict) else None
            if isinstance(raw_id, int) or (isinstance(raw_id, str) and raw_id.isdigit()):
                error["work_item_id"] = int(raw_id)
            errors.append(error)
    return items, errors


def parse_backlog_file(path: str | Path) -> tuple[list[WorkItem], list[dict[str, Any]]]:
    """A backlog export read leniently: the items, and one error per unreadable record. A file
    that is not a backlog at all (format, columns, JSON syntax) raises BacklogFormatError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise BacklogFormatError(f"{path.name}: not UTF-8 text ({err.reason})") from None
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            return parse_csv(text)
        if suffix == ".jsonl":
            rows = []
            for n, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except ValueError as err:
                        raise BacklogFormatError(f"line {n}: {err}") from None
            return parse_records(rows)
        if suffix == ".json":
            data = json.loads(text)
            rows = data.get("value", []) if isinstance(data, dict) else data
            if not isinstance(rows, list):
                raise BacklogFormatError("expected a list of work items or {'value': [...]}")
            return parse_records(rows)
    except ValueError as err:
        raise BacklogFormatError(f"{path.name}: {err}") from None
    raise BacklogFormatError(f"{path.name}: unsupported backlog file (use .csv, .json or .jsonl)")


def read_backlog_file(path: str | Path) -> list[WorkItem]:
    """A backlog export: .csv (ADO export), .json (REST response or list), .jsonl (normalized);
    the first unreadable record is an error."""
    items, errors = parse_backlog_file(path)
    if errors:
        raise BacklogFormatError(f"{Path(path).name}: {errors[0]['error']}")
    return items
