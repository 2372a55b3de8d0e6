"""Backlogs to seed the fake with: ``generate_items`` (any number of REST work items, epics over
features over stories, HTML rich text) and ``sample_items`` (the sample backlog, as a project of a
given process holds it).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from devhost.standins.fake_ado.schema import (
    _ID_AT_END,
    AC_FIELD,
    CHILD,
    PARENT,
    PROCESSES,
    _link_target,
)

REPO = Path(__file__).resolve().parents[3]
SAMPLE_REST = REPO / "samples" / "backlog" / "remote_control_backlog.rest.json"


_ROLES = ["viewer", "parent", "installer", "retailer", "support agent", "product owner", "tester"]
_VERBS = ["switch", "find", "configure", "pair", "lock", "dim", "record", "mute", "scroll", "sort"]
_OBJECTS = [
    "channels",
    "the volume",
    "the backlight",
    "favourite lists",
    "subtitles",
    "the sleep timer",
    "the battery level",
    "input sources",
    "the program guide",
    "parental controls",
]
_BENEFITS = [
    "I save time every evening",
    "my children stay safe",
    "I waste no batteries",
    "I can use it in the dark",
    "I never lose my settings",
    "guests understand it at once",
]
_TAG_POOL = ["v1", "v2", "hardware", "design", "firmware", "ux", "cost", "compliance"]


def generate_items(
    n: int, *, start_id: int = 1, seed: int = 0, changed: datetime | None = None
) -> list[dict[str, Any]]:
    """``n`` REST work items: about 1% epics, 8% features, the rest user stories, each story under
    a feature and each feature under an epic (relations on both ends), HTML rich text."""
    rng = random.Random(seed)
    base = changed or datetime(2026, 1, 1, tzinfo=UTC)
    n_epics = max(1, n // 100)
    n_features = max(1, min(n - n_epics, n // 12)) if n > 1 else 0
    items: list[dict[str, Any]] = []
    epics: list[int] = []
    features: list[int] = []
    for k in range(n):
        wid = start_id + k
        if k < n_epics:
            wtype, parent = "Epic", None
            epics.append(wid)
        elif k < n_epics + n_features:
            wtype, parent = "Feature", rng.choice(epics)
            features.append(wid)
        else:
            wtype, parent = "User Story", rng.choice(features or epics)
        verb, obj = rng.choice(_VERBS), rng.choice(_OBJECTS)
        title = f"{verb.capitalize()} {obj} #{wid}"
        description = (
            f"<div>As a {rng.choice(_ROLES)}, I want to {verb} {obj} quickly &amp; reliably, "
            f"so that {rng.choice(_BENEFITS)}.</div><div>Scope note {wid}: &lt;2 s response.</div>"
        )
        fields: dict[str, Any] = {
            "System.Id": wid,
            "System.WorkItemType": wtype,
            "System.Title": title,
            "System.State": rng.choice(("New", "Active", "Closed")),
            "System.Rev": 1 + rng.randrange(9),
            "System.ChangedDate": (base + timedelta(minutes=wid)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "Microsoft.VSTS.Common.Priority": 1 + rng.randrange(4),
            "System.Description": description,
        }
        if wtype == "User Story":
            fields["Microsoft.VSTS.Common.AcceptanceCriteria"] = (
                "<ul>"
                + "".join(
                    f"<li>Given a {rng.choice(_ROLES)}, when they {verb} {rng.choice(_OBJECTS)}, "
                    f"then it completes within {1 + rng.randrange(5)} s</li>"
                    for _ in range(2 + rng.randrange(2))
                )
                + "</ul>"
            )
        tags = rng.sample(_TAG_POOL, rng.randrange(3))
        if tags:
            fields["System.Tags"] = "; ".join(tags)
        item: dict[str, Any] = {"id": wid, "rev": fields["System.Rev"], "fields": fields}
        if parent is not None:
            item["relations"] = [{"rel": PARENT, "url": f"https://x/_apis/wit/workItems/{parent}"}]
        items.append(item)
    by_id = {i["id"]: i for i in items}
    for item in items:
        for rel in item.get("relations", []):
            parent_id = int(_ID_AT_END.search(rel["url"]).group(1))  # type: ignore[union-attr]
            by_id[parent_id].setdefault("relations", []).append(
                {"rel": CHILD, "url": f"https://x/_apis/wit/workItems/{item['id']}"}
            )
    return items


def sample_items(process: str = "agile") -> list[dict[str, Any]]:
    """The sample backlog's 51 items as ADO returns them (samples/backlog/*.rest.json), as a
    project of ``process`` holds them: its story type and states; in Basic (no Feature type)
    the features' stories hang under the features' epics and keep their criteria in the
    description, under an "Acceptance criteria" heading."""
    items = json.loads(SAMPLE_REST.read_text())["value"]
    spec = PROCESSES[process]
    if process == "agile":
        return items
    by_id = {i["id"]: i for i in items}
    parent_of = {i["id"]: _parent_id(i) for i in items}
    out = []
    for item in items:
        fields = item["fields"]
        kind = fields["System.WorkItemType"]
        if kind == "Feature" and spec.feature_type is None:
            continue
        fields["System.State"] = spec.from_agile_state.get(fields["System.State"], spec.states[0])
        parent = parent_of[item["id"]]
        if kind == "User Story":
            fields["System.WorkItemType"] = spec.story_type
            if spec.feature_type is None and parent is not None:
                parent = parent_of[parent]  # the feature's epic
        if AC_FIELD in fields and fields["System.WorkItemType"] not in spec.ac_types:
            criteria = fields.pop(AC_FIELD)
            fields["System.Description"] = (
                fields.get("System.Description", "") + "<h3>Acceptance criteria</h3>" + criteria
            )
        item["relations"] = (
            [{"rel": PARENT, "url": f"https://x/_apis/wit/workItems/{parent}"}] if parent else []
        )
        out.append(item)
    kept = {i["id"] for i in out}
    for item in out:
        for rel in list(item["relations"]):
            target = _link_target(rel)
            if target in kept:
                by_id[target]["relations"].append(
                    {"rel": CHILD, "url": f"https://x/_apis/wit/workItems/{item['id']}"}
                )
    return out


def _parent_id(item: dict[str, Any]) -> int | None:
    return next(
        (_link_target(r) for r in item.get("relations") or [] if r.get("rel") == PARENT), None
    )
