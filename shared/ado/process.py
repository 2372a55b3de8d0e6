"""Which Azure DevOps process a project follows, and what its backlog types are called there.

The generated backlog always speaks of ``Epic``, ``Feature`` and ``User Story`` (``ItemType`` in
shared.models); Azure DevOps names them after the project's process. The mapping lives here only:

| process | epic | feature | story | acceptance criteria |
|---|---|---|---|---|
| agile | Epic | Feature | User Story | Microsoft.VSTS.Common.AcceptanceCriteria |
| scrum | Epic | Feature | Product Backlog Item | Microsoft.VSTS.Common.AcceptanceCriteria |
| cmmi | Epic | Feature | Requirement | Microsoft.VSTS.Common.AcceptanceCriteria |
| basic | Epic | (none) | Issue | (none: the criteria go into System.Description) |

Basic's backlog is Epic → Issue → Task: it has no Feature type, and an Epic under an Epic, which
the REST API accepts, is same-category nesting: the backlog then disables reordering and the board
shows only the child (Microsoft's "Fix backlog reorder and nesting issues"). So in a Basic project
the writer creates no features: each story is created as an Issue directly under its feature's
parent (the epic), and its description names the feature (see shared.writer.plan).

Whether the story type has the Acceptance Criteria field is read from the same answer (each type
lists its ``fields``): a detected process whose story type lacks it writes the criteria into the
description, as Basic does. This matters for CMMI, whose Requirement is specified here with the
field while Microsoft's field index lists it for Bug, Epic, Feature, Product Backlog Item and User
Story only; and for inherited processes that removed it. A process set with AZURE_DEVOPS_PROCESS
is taken as the table says (no request); where a type lacks the field ADO answers TF51535, which
the writer reports per item.

The process is ``AZURE_DEVOPS_PROCESS`` (agile, scrum, cmmi or basic), or, when that is unset or
``auto``, detected from the project's work item types (``GET {org}/{project}/_apis/wit/
workitemtypes``): "User Story" → agile, "Product Backlog Item" → scrum, "Requirement" → cmmi,
"Issue" without any of those → basic (Agile and CMMI have an Issue type too, for impediments).
A detection is cached per client, so a load or a write asks once.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from shared.errors import SynthesizerError

if TYPE_CHECKING:
    from shared.ado.ports import WorkItemReader
    from shared.models import WorkItem

AC_FIELD = "Microsoft.VSTS.Common.AcceptanceCriteria"
AUTO = "auto"
EPIC, FEATURE, STORY = "Epic", "Feature", "User Story"  # the generated backlog's own kinds
KINDS: tuple[str, ...] = (EPIC, FEATURE, STORY)


class ProcessError(SynthesizerError, ValueError):
    """An unknown AZURE_DEVOPS_PROCESS value, or a project whose process cannot be told."""


@dataclass(frozen=True)
class Process:
    """One process: the ADO names of the three backlog levels and its acceptance-criteria field."""

    name: str
    epic_type: str
    feature_type: str | None  # None: the process has no feature level (Basic)
    story_type: str
    ac_field: str | None  # None: the criteria are written into the description (Basic)

    @property
    def backlog_types(self) -> tuple[str, ...]:
        """The ADO types of its backlog levels, top down (Epic, Feature, story type)."""
        return tuple(t for t in (self.epic_type, self.feature_type, self.story_type) if t)

    def _levels(self) -> dict[str, str | None]:
        return {EPIC: self.epic_type, FEATURE: self.feature_type, STORY: self.story_type}

    def ado_type(self, kind: str) -> str:
        """The ADO type a generated ``Epic`` / ``Feature`` / ``User Story`` is created as."""
        if kind not in KINDS:
            raise ProcessError(f"{kind!r} is not one of {', '.join(KINDS)}")
        found = self._levels()[kind]
        if found is None:
            raise ProcessError(f"the {self.name} process has no {kind} work item type")
        return found

    def kind_of(self, type_name: str) -> str | None:
        """The generated backlog's kind for an ADO type of this process (``Product Backlog Item``
        → ``User Story``); None for types outside the backlog levels (Bug, Task, ...)."""
        folded = type_name.strip().casefold()
        return next(
            (k for k, name in self._levels().items() if name and name.casefold() == folded), None
        )

    def ado_types(self, names: Iterable[str]) -> list[str]:
        """Configured type names as this project calls them: the kinds ``Epic`` / ``Feature`` /
        ``User Story`` become the process's types (Feature is left out where there is none);
        any other name (``Bug``, ``Product Backlog Item``) is kept as given."""
        out: list[str] = []
        for name in names:
            kind = next((k for k in KINDS if k.casefold() == name.strip().casefold()), None)
            mapped = name.strip() if kind is None else self._levels()[kind]
            if mapped and mapped.casefold() not in {o.casefold() for o in out}:
                out.append(mapped)
        return out


AGILE = Process("agile", "Epic", "Feature", "User Story", AC_FIELD)
SCRUM = Process("scrum", "Epic", "Feature", "Product Backlog Item", AC_FIELD)
CMMI = Process("cmmi", "Epic", "Feature", "Requirement", AC_FIELD)
BASIC = Process("basic", "Epic", None, "Issue", None)
PROCESSES: Mapping[str, Process] = {p.name: p for p in (AGILE, SCRUM, CMMI, BASIC)}
# detection: the first story type the project has wins (Issue last: Agile and CMMI have one too)
_DETECTION_ORDER = (AGILE, SCRUM, CMMI, BASIC)


def by_name(name: str) -> Process:
    """``agile`` / ``scrum`` / ``cmmi`` / ``basic`` (any case); a clear error otherwise."""
    found = PROCESSES.get(str(name).strip().lower())
    if found is None:
        raise ProcessError(
            f"AZURE_DEVOPS_PROCESS must be one of {', '.join(PROCESSES)} or {AUTO} (detect it "
            f"from the project's work item types), not {name!r}"
        )
    return found


def from_type_names(names: Iterable[str]) -> Process | None:
    """The process whose story type is among ``names`` (see the module docstring), or None."""
    present = {str(n).strip().casefold() for n in names}
    for process in _DETECTION_ORDER:
        if process.story_type.casefold() in present:
            return process
    return None


def enabled_type_names(value: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names in a ``workitemtypes`` answer's ``value``, disabled types left out (an inherited
    process can disable one)."""
    return [str(t.get("name", "")) for t in value if t.get("name") and not t.get("isDisabled")]


_detected: weakref.WeakKeyDictionary[WorkItemReader, Process] = weakref.WeakKeyDictionary()
_detect_lock = threading.Lock()


def detect(client: WorkItemReader) -> Process:
    """The process of ``client``'s project, from its work item types (one request per client)."""
    with _detect_lock:
        cached = _detected.get(client)
    if cached is not None:
        return cached
    types = client.work_item_types()
    names = enabled_type_names(types)
    process = from_type_names(names)
    if process is None:
        raise ProcessError(
            f"cannot tell the process of project {getattr(client, 'project', '?')!r}: its work "
            f"item types ({', '.join(sorted(names)) or 'none'}) include none of "
            + ", ".join(p.story_type for p in _DETECTION_ORDER)
            + "; set AZURE_DEVOPS_PROCESS (agile, scrum, cmmi or basic)"
        )
    process = _with_criteria_field_of(process, types)
    with _detect_lock:
        _detected[client] = process
    return process


def _with_criteria_field_of(process: Process, types: Sequence[Mapping[str, Any]]) -> Process:
    """``process`` without its acceptance-criteria field when the project's story type lists its
    fields and that one is not among them (the criteria then go into the description)."""
    story = next((t for t in types if str(t.get("name", "")) == process.story_type), None)
    fields = story.get("fields") if story else None
    if process.ac_field is None or not isinstance(fields, list) or not fields:
        return process
    if any(isinstance(f, Mapping) and f.get("referenceName") == process.ac_field for f in fields):
        return process
    return replace(process, ac_field=None)


def configured(settings: Any) -> Process | None:
    """The process AZURE_DEVOPS_PROCESS names, or None when it says ``auto`` (or is unset)."""
    value = str(getattr(settings, "azure_devops_process", None) or AUTO).strip().lower()
    return None if value == AUTO else by_name(value)


def normalize_types(items: Iterable[WorkItem], process: Process) -> list[WorkItem]:
    """The process's backlog types as the generated backlog names them (a Scrum ``Product Backlog
    Item``, a CMMI ``Requirement``, a Basic ``Issue`` → ``User Story``), the ADO name kept in
    ``ado_work_item_type``; so retrieval, generation and tagging see one vocabulary whatever the
    process, and indexes of Agile projects stay as they were. Other types are left as they are."""
    out = []
    for item in items:
        kind = process.kind_of(item.work_item_type)
        if kind is None or kind == item.work_item_type:
            out.append(item)
        else:
            out.append(
                item.model_copy(
                    update={"work_item_type": kind, "ado_work_item_type": item.work_item_type}
                )
            )
    return out
