"""The merged backlog as a tree (epic → feature → story) for the API, the CLI and the demo.

Items that hang under an existing ADO work item (parent reuse) are grouped under that work item;
stories without a feature are listed at the end.
"""

from __future__ import annotations

import textwrap
from typing import Any

from shared.models import GeneratedItem, TaggingRecord


def _story(item: GeneratedItem, tags: dict[str, TaggingRecord]) -> dict[str, Any]:
    record = tags.get(item.item_id)
    return {
        "item": item.model_dump(mode="json"),
        "tag": record.model_dump(mode="json") if record else None,
    }


def build_tree(items: list[GeneratedItem], tags: dict[str, TaggingRecord]) -> dict[str, Any]:
    epics = [i for i in items if i.type == "Epic"]
    features = [i for i in items if i.type == "Feature"]
    stories = [i for i in items if i.type == "User Story"]
    feature_nodes: dict[str, dict[str, Any]] = {
        f.item_id: {"item": f.model_dump(mode="json"), "stories": []} for f in features
    }
    existing: dict[int, dict[str, Any]] = {}
    orphans: list[dict[str, Any]] = []

    def existing_node(work_item_id: int) -> dict[str, Any]:
        return existing.setdefault(
            work_item_id, {"work_item_id": work_item_id, "features": [], "stories": []}
        )

    for story in stories:
        node = _story(story, tags)
        if story.feature_id and story.feature_id in feature_nodes:
            feature_nodes[story.feature_id]["stories"].append(node)
        elif story.parent_work_item_id is not None:
            existing_node(story.parent_work_item_id)["stories"].append(node)
        else:
            orphans.append(node)

    epic_nodes: dict[str, dict[str, Any]] = {
        e.item_id: {"item": e.model_dump(mode="json"), "features": []} for e in epics
    }
    for feature in features:
        node = feature_nodes[feature.item_id]
        if feature.epic_id and feature.epic_id in epic_nodes:
            epic_nodes[feature.epic_id]["features"].append(node)
        elif feature.parent_work_item_id is not None:
            existing_node(feature.parent_work_item_id)["features"].append(node)
        else:
            orphans.append(node)
    return {
        "epics": list(epic_nodes.values()),
        "existing_parents": [existing[k] for k in sorted(existing)],
        "unparented": orphans,
    }


def _tag_label(tag: dict[str, Any] | None) -> str:
    if not tag:
        return "[untagged]"
    label = tag["decision_tag"]
    if tag.get("related_story_ids"):
        label += " → " + ", ".join(f"#{i}" for i in tag["related_story_ids"][:3])
    if tag.get("tagging_failed"):
        label += " (tagging failed)"
    return f"[{label}]"


def _render_story(node: dict[str, Any], indent: str, width: int) -> list[str]:
    item = node["item"]
    lines = [f"{indent}STORY {_tag_label(node['tag'])} {item['title']}  ({item['item_id']})"]
    for quote in item["source_quotes"][:2]:
        text = quote["text"] if len(quote["text"]) <= 160 else quote["text"][:157] + "..."
        lines.extend(
            textwrap.wrap(
                f"“{text}” (chars {quote['start']}–{quote['end']})",
                width=width,
                initial_indent=indent + "    ",
                subsequent_indent=indent + "     ",
            )
        )
    if item.get("constraint_violation"):
        notes = (
            "; ".join(item.get("constraint_notes") or []) or "violates an architecture constraint"
        )
        lines.append(f"{indent}    ! constraint: {notes[:150]}")
    for q in item.get("open_questions") or []:
        lines.append(f"{indent}    ? {q['question'][:150]}")
    return lines


def _render_feature(node: dict[str, Any], indent: str, width: int) -> list[str]:
    item = node["item"]
    lines = [f"{indent}FEATURE {item['title']}  ({item['item_id']})"]
    for q in item.get("open_questions") or []:
        lines.append(f"{indent}    ? {q['question'][:150]}")
    for story in node["stories"]:
        lines.extend(_render_story(story, indent + "  ", width))
    return lines


def render_tree(tree: dict[str, Any], width: int = 110) -> str:
    lines: list[str] = []
    for epic in tree["epics"]:
        lines.append(f"EPIC {epic['item']['title']}  ({epic['item']['item_id']})")
        for feature in epic["features"]:
            lines.extend(_render_feature(feature, "  ", width))
    for parent in tree["existing_parents"]:
        lines.append(f"EXISTING #{parent['work_item_id']}")
        for feature in parent["features"]:
            lines.extend(_render_feature(feature, "  ", width))
        for story in parent["stories"]:
            lines.extend(_render_story(story, "  ", width))
    if tree["unparented"]:
        lines.append("WITHOUT A PARENT")
        for node in tree["unparented"]:
            if node["item"]["type"] == "Feature":
                lines.extend(_render_feature(node, "  ", width))
            else:
                lines.extend(_render_story(node, "  ", width))
    return "\n".join(lines)
