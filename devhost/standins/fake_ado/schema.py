"""What a project of the fake holds: the four processes (their work item types, states and which
types have an Acceptance Criteria field), the hierarchy link types, and how a link names its target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PARENT = "System.LinkTypes.Hierarchy-Reverse"
CHILD = "System.LinkTypes.Hierarchy-Forward"
AC_FIELD = "Microsoft.VSTS.Common.AcceptanceCriteria"
STATES = ("New", "Active", "Resolved", "Closed", "Removed")  # Agile
TYPES = ("Epic", "Feature", "User Story", "Bug", "Task")  # Agile's, as the tests use them
_TEST_TYPES = ("Test Case", "Test Plan", "Test Suite", "Shared Steps", "Shared Parameter")


@dataclass(frozen=True)
class ProcessSpec:
    """What the fake knows of a process: its types, those with an Acceptance Criteria field, its
    states (the first is a new item's) and how the sample's Agile states read in it."""

    types: tuple[str, ...]
    story_type: str
    feature_type: str | None
    ac_types: frozenset[str]
    states: tuple[str, ...]
    from_agile_state: dict[str, str]


PROCESSES: dict[str, ProcessSpec] = {
    "agile": ProcessSpec(
        TYPES + ("Issue",) + _TEST_TYPES,
        "User Story",
        "Feature",
        frozenset({"Epic", "Feature", "User Story", "Bug"}),
        STATES,
        {s: s for s in STATES},
    ),
    "scrum": ProcessSpec(
        ("Epic", "Feature", "Product Backlog Item", "Bug", "Task", "Impediment") + _TEST_TYPES,
        "Product Backlog Item",
        "Feature",
        frozenset({"Epic", "Feature", "Product Backlog Item", "Bug"}),
        ("New", "Approved", "Committed", "In Progress", "To Do", "Done", "Removed"),
        {"New": "New", "Active": "Committed", "Resolved": "Committed", "Closed": "Done"},
    ),
    "cmmi": ProcessSpec(
        ("Epic", "Feature", "Requirement", "Bug", "Task", "Change Request", "Issue", "Review")
        + ("Risk",)
        + _TEST_TYPES,
        "Requirement",
        "Feature",
        frozenset({"Epic", "Feature", "Requirement", "Bug"}),
        ("Proposed", "Active", "Resolved", "Closed", "Removed"),
        {"New": "Proposed", "Active": "Active", "Resolved": "Resolved", "Closed": "Closed"},
    ),
    "basic": ProcessSpec(
        ("Epic", "Issue", "Task") + _TEST_TYPES,
        "Issue",
        None,
        frozenset(),
        ("To Do", "Doing", "Done"),
        {"New": "To Do", "Active": "Doing", "Resolved": "Doing", "Closed": "Done"},
    ),
}
_ID_AT_END = re.compile(r"/workItems/(\d+)/?$", re.IGNORECASE)


def _link_target(rel: dict[str, Any]) -> int | None:
    match = _ID_AT_END.search(str(rel.get("url", "")))
    return int(match.group(1)) if match else None
