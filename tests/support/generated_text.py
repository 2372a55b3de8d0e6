"""What counts as generated text in a run's records, and what must not be in it: transcript markers
({disfmarker}, {vocalsound}, {gap}) and fillers (uh, um). Quotes are not generated text: they are
the transcript's own words at their offsets and keep every marker."""

from __future__ import annotations

import re
from typing import Any

MARKER = re.compile(r"\{\s*[A-Za-z_]+\s*\}")
FILLER = re.compile(r"(?<![\w'-])(?:u+h+|u+m+|e+r+m+|mm-hmm|uh-huh)(?![\w'-])", re.IGNORECASE)


def generated_fields(item: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, text) of every generated text of one generated item (epic, feature or story)."""
    found = [("title", item["title"]), ("description", item.get("description") or "")]
    found += [("acceptance_criteria", c) for c in item.get("acceptance_criteria", [])]
    found += [("constraint_notes", n) for n in item.get("constraint_notes", [])]
    found += [("ac_delta_entries", d["criterion"]) for d in item.get("ac_delta_entries", [])]
    found += [("open_questions", q["question"]) for q in item.get("open_questions", [])]
    found += [("warnings", w) for w in item.get("warnings", [])]
    return found


def quotes(item: dict[str, Any]) -> list[dict[str, Any]]:
    """Every quote an item carries: its source quotes, superseded quotes and open questions'."""
    found = list(item.get("source_quotes", [])) + list(item.get("superseded_quotes", []))
    return found + [q["quote"] for q in item.get("open_questions", []) if q.get("quote")]


def unclean(items: list[dict[str, Any]]) -> list[str]:
    """'item_id field: text' for each generated text that still holds a marker or a filler."""
    return [
        f"{item['item_id']} {name}: {text}"
        for item in items
        for name, text in generated_fields(item)
        if MARKER.search(text) or FILLER.search(text)
    ]
