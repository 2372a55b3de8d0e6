"""The plan and the results of a write, a rollback and a retag, as text tables for the command
line."""

from __future__ import annotations

from typing import Any

_COLUMNS = (("status", 9), ("action", 8), ("type", 10), ("item_id", 15), ("ado", 7))


def _cut(text: str, width: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _ado(row: dict[str, Any]) -> str:
    ado_id = row.get("ado_id") or row.get("existing_id")
    return f"#{ado_id}" if ado_id else "-"


def render_write(body: dict[str, Any], title_width: int = 48) -> str:
    """The plan (dry run) or the results of a write as a table, then the counts."""
    rows = body.get("plan") if body.get("dry_run") else body.get("results")
    head = (
        f"dry run of {body['run_id']}"
        + ("" if body.get("checked_against_ado") else " (not checked against Azure DevOps)")
        if body.get("dry_run")
        else f"write {body.get('write_id') or '-'} of {body['run_id']}"
    ) + (f", {body['process']} process" if body.get("process") else "")
    lines = [head, ""]
    header = "".join(name.upper().ljust(width) for name, width in _COLUMNS)
    lines.append(header + "TITLE".ljust(title_width + 2) + "NOTE")
    for row in rows or []:
        cells = {
            "status": row.get("status") or "",
            "action": row.get("action") or "",
            "type": "Story" if row.get("type") == "User Story" else row.get("type", ""),
            "item_id": row.get("item_id", ""),
            "ado": _ado(row),
        }
        line = "".join(_cut(cells[name], width - 1).ljust(width) for name, width in _COLUMNS)
        note = row.get("error") or row.get("reason") or ""
        lines.append(line + _cut(row.get("title", ""), title_width).ljust(title_width + 2) + note)
    counts = body.get("counts") or {}
    lines.append("")
    lines.append(", ".join(f"{k}: {v}" for k, v in counts.items()))
    if body.get("ado_error"):
        lines.append(f"checking against Azure DevOps stopped: {body['ado_error']}")
    return "\n".join(lines)


def render_retag(body: dict[str, Any]) -> str:
    lines = [
        f"retagged {body['run_id']} at {body['retagged_at']} ({body['engine']} engine): "
        f"{body['changed']} of {body['story_count']} stories changed tag"
    ]
    for change in body.get("changes") or []:
        lines.append(
            f"  {change['story_id']}: {change['from']} → {change['to']}  {_cut(change['title'], 60)}"
        )
    lines.append("tags: " + ", ".join(f"{k}: {v}" for k, v in body["tag_distribution"].items()))
    if body.get("snapshot"):
        lines.append(f"the previous tagging is kept in {body['snapshot']}")
    return "\n".join(lines)


_ROLLBACK_COLUMNS = (("status", 20), ("action", 8), ("type", 10), ("item_id", 15), ("ado", 7))


def render_rollback(body: dict[str, Any], title_width: int = 40) -> str:
    """A rollback (or its dry run) as a table, then the counts."""
    head = (
        f"dry run of the rollback of write {body['write_id']} of {body['run_id']}"
        + ("" if body.get("checked_against_ado") else " (not checked against Azure DevOps)")
        if body.get("dry_run")
        else f"rollback {body.get('rollback_id')} of write {body['write_id']} of {body['run_id']}"
    )
    lines = [head, ""]
    header = "".join(name.upper().ljust(width) for name, width in _ROLLBACK_COLUMNS)
    lines.append(header + "TITLE".ljust(title_width + 2) + "NOTE")
    for row in body.get("results") or []:
        cells = {
            "status": row.get("status") or "",
            "action": row.get("action") or "",
            "type": "Story" if row.get("type") == "User Story" else row.get("type", ""),
            "item_id": row.get("item_id", ""),
            "ado": f"#{row['ado_id']}" if row.get("ado_id") else "-",
        }
        line = "".join(
            _cut(cells[name], width - 1).ljust(width) for name, width in _ROLLBACK_COLUMNS
        )
        note = row.get("error") or row.get("reason") or ""
        if row.get("fields_reverted"):
            note = (note + "; " if note else "") + "fields: " + ", ".join(row["fields_reverted"])
        lines.append(line + _cut(row.get("title", ""), title_width).ljust(title_width + 2) + note)
    lines.append("")
    lines.append(", ".join(f"{k}: {v}" for k, v in (body.get("counts") or {}).items() if v))
    if body.get("ado_error"):
        lines.append(f"Azure DevOps stopped the rollback: {body['ado_error']}")
    return "\n".join(lines)
