"""shared.ado.process: the four processes' type names, detection from work item types, the
AZURE_DEVOPS_PROCESS setting, the normalization the loader applies, and reading criteria that a
Basic project keeps in the description."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from shared.ado import process as processes
from shared.ado.process import AGILE, BASIC, CMMI, SCRUM, ProcessError
from shared.eval.dataset import load_split
from shared.indexing.html_text import split_criteria_section
from shared.indexing.workitems import from_rest
from shared.models import WorkItem
from shared.settings import Settings

# each process's work item types as ADO lists them for a new project (Agile and CMMI have an
# Issue type of their own: it must not make them Basic)
TYPES = {
    "agile": ["Bug", "Epic", "Feature", "Issue", "Task", "Test Case", "User Story"],
    "scrum": ["Bug", "Epic", "Feature", "Impediment", "Product Backlog Item", "Task"],
    "cmmi": ["Bug", "Change Request", "Epic", "Feature", "Issue", "Requirement", "Review", "Risk"],
    "basic": ["Epic", "Issue", "Task", "Test Case", "Test Plan"],
}


@pytest.mark.parametrize("name", sorted(TYPES))
def test_the_work_item_types_select_the_process(name: str) -> None:
    found = processes.from_type_names(TYPES[name])
    assert found is not None and found.name == name
    # names as ADO spells them, in any case and order
    assert processes.from_type_names(reversed([t.upper() for t in TYPES[name]])) is found


def test_types_without_a_story_type_select_nothing() -> None:
    assert processes.from_type_names(["Epic", "Feature", "Task", "Bug"]) is None


def test_disabled_types_do_not_count() -> None:
    value = [
        {"name": "Epic", "isDisabled": False},
        {"name": "User Story", "isDisabled": True},
        {"name": "Product Backlog Item"},
        {"referenceName": "no.name"},
    ]
    assert processes.enabled_type_names(value) == ["Epic", "Product Backlog Item"]


class _Client:
    """Answers ``work_item_types`` as AdoClient does and counts the requests."""

    project = "RemoteControl"

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.calls = 0

    def work_item_types(self) -> list[dict[str, object]]:
        self.calls += 1
        return [{"name": n, "isDisabled": False} for n in self.names]


def test_detection_is_cached_per_client() -> None:
    scrum, basic = _Client(TYPES["scrum"]), _Client(TYPES["basic"])
    assert processes.detect(scrum) is SCRUM
    assert processes.detect(scrum) is SCRUM
    assert processes.detect(basic) is BASIC
    assert (scrum.calls, basic.calls) == (1, 1)


class _TypesWithFields(_Client):
    """A project whose types list their fields; ``without_ac`` lacks the criteria field."""

    def __init__(self, names: list[str], without_ac: set[str]) -> None:
        super().__init__(names)
        self.without_ac = without_ac

    def work_item_types(self) -> list[dict[str, object]]:
        types = super().work_item_types()
        for t in types:
            refs = ["System.Title", "System.Description"]
            if t["name"] not in self.without_ac:
                refs.append(processes.AC_FIELD)
            t["fields"] = [{"referenceName": r} for r in refs]
        return types


def test_a_story_type_without_the_criteria_field_writes_them_into_the_description() -> None:
    lacking = processes.detect(_TypesWithFields(TYPES["cmmi"], {"Requirement"}))
    assert lacking.name == "cmmi" and lacking.story_type == "Requirement"
    assert lacking.ac_field is None
    having = processes.detect(_TypesWithFields(TYPES["cmmi"], set()))
    assert having == CMMI and having.ac_field == processes.AC_FIELD
    # an answer that lists no fields changes nothing (the table's field)
    assert processes.detect(_Client(TYPES["cmmi"])).ac_field == processes.AC_FIELD


def test_an_unknown_project_process_is_a_clear_error() -> None:
    client = _Client(["Epic", "Task", "Risk"])
    with pytest.raises(ProcessError, match="AZURE_DEVOPS_PROCESS") as err:
        processes.detect(client)
    assert "Epic, Risk, Task" in str(err.value) and "Product Backlog Item" in str(err.value)
    assert client.calls == 1  # a failure is not cached: asked again next time
    with pytest.raises(ProcessError):
        processes.detect(client)
    assert client.calls == 2


def test_the_setting_names_a_process_in_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_DEVOPS_PROCESS", "Scrum")
    settings = Settings()
    assert settings.azure_devops_process == "scrum"
    assert processes.configured(settings) is SCRUM
    for auto in ("auto", "AUTO", "", " "):
        monkeypatch.setenv("AZURE_DEVOPS_PROCESS", auto)
        assert Settings().azure_devops_process == "auto"
        assert processes.configured(Settings()) is None
    monkeypatch.delenv("AZURE_DEVOPS_PROCESS")
    assert processes.configured(Settings()) is None


def test_a_bad_setting_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_DEVOPS_PROCESS", "kanban")
    with pytest.raises(ValidationError) as err:
        Settings()
    message = str(err.value)
    assert "AZURE_DEVOPS_PROCESS must be one of agile, scrum, cmmi, basic or auto" in message
    assert "'kanban'" in message
    with pytest.raises(ProcessError, match="not 'waterfall'"):
        processes.by_name("waterfall")


def test_each_process_names_its_levels_and_criteria_field() -> None:
    expected = {
        AGILE: ("Epic", "Feature", "User Story"),
        SCRUM: ("Epic", "Feature", "Product Backlog Item"),
        CMMI: ("Epic", "Feature", "Requirement"),
        BASIC: ("Epic", "Issue"),
    }
    for process, levels in expected.items():
        assert process.backlog_types == levels
        assert process.ado_type("User Story") == levels[-1]
        assert process.kind_of(levels[-1]) == "User Story"
        assert process.kind_of(levels[-1].lower()) == "User Story"
        assert process.kind_of("Task") is None and process.kind_of("Bug") is None
    assert {p.ac_field for p in (AGILE, SCRUM, CMMI)} == {
        "Microsoft.VSTS.Common.AcceptanceCriteria"
    }
    assert BASIC.ac_field is None
    with pytest.raises(ProcessError, match="basic process has no Feature"):
        BASIC.ado_type("Feature")
    assert BASIC.kind_of("Feature") is None
    assert AGILE.kind_of("Issue") is None  # Agile's Issue is not a backlog level
    with pytest.raises(ProcessError):
        AGILE.ado_type("Task")


def test_configured_types_map_to_the_process() -> None:
    configured = ["Epic", "Feature", "User Story", "Bug"]
    assert SCRUM.ado_types(configured) == ["Epic", "Feature", "Product Backlog Item", "Bug"]
    assert CMMI.ado_types(configured) == ["Epic", "Feature", "Requirement", "Bug"]
    assert BASIC.ado_types(configured) == ["Epic", "Issue", "Bug"]
    assert AGILE.ado_types(configured) == configured
    # a process's own name is kept, and nothing is listed twice
    assert SCRUM.ado_types(["product backlog item", "User Story"]) == ["product backlog item"]


def test_normalization_names_the_story_type_as_the_generated_backlog_does() -> None:
    items = [
        WorkItem(work_item_id=1, work_item_type="Epic", title="e"),
        WorkItem(work_item_id=2, work_item_type="Issue", title="i"),
        WorkItem(work_item_id=3, work_item_type="Task", title="t"),
    ]
    basic = processes.normalize_types(items, BASIC)
    assert [(i.work_item_type, i.ado_work_item_type) for i in basic] == [
        ("Epic", None),
        ("User Story", "Issue"),
        ("Task", None),
    ]
    # in an Agile project an Issue is not a story
    assert processes.normalize_types(items, AGILE)[1].work_item_type == "Issue"
    assert items[1].work_item_type == "Issue"  # the input is left as it was


def test_criteria_kept_in_the_description_are_read_back() -> None:
    html = (
        "<div>As a viewer, I want it.</div><h3>Acceptance criteria</h3>"
        "<ul><li>One &amp; two</li><li>Three</li></ul><div><i>Source:</i> said</div>"
        "<div><b>Acceptance criteria:</b></div><ol><li>Four</li></ol>"
    )
    text, criteria = split_criteria_section(html)
    assert criteria == ["One & two", "Three", "Four"]
    assert text == "As a viewer, I want it.\nSource: said"
    assert split_criteria_section("<div>No acceptance criteria here</div>") == (
        "No acceptance criteria here",
        [],
    )
    issue = {"id": 7, "fields": {"System.WorkItemType": "Issue", "System.Description": html}}
    read = from_rest(issue)
    assert read.acceptance_criteria == ["One & two", "Three", "Four"]
    # the field wins when it has criteria: the description is then left whole
    issue["fields"]["Microsoft.VSTS.Common.AcceptanceCriteria"] = "<ul><li>Field</li></ul>"
    read = from_rest(issue)
    assert read.acceptance_criteria == ["Field"] and "One & two" in read.description


def test_a_dataset_taken_from_a_scrum_project_reads_like_an_agile_one(tmp_path) -> None:
    backlog = [
        {"work_item_id": 1, "work_item_type": "Epic", "title": "Remote"},
        {
            "work_item_id": 2,
            "work_item_type": "Product Backlog Item",
            "title": "Zap",
            "parent_id": 1,
        },
    ]
    case = {
        "story_id": "c1",
        "story_title": "Zap",
        "gold_tag": "duplicate",
        "gold_related_ids": [2],
    }
    (tmp_path / "existing_backlog.jsonl").write_text("\n".join(json.dumps(b) for b in backlog))
    (tmp_path / "tagging_test.jsonl").write_text(json.dumps(case))
    split = load_split(tmp_path)
    assert [w.work_item_type for w in split.backlog] == ["Epic", "User Story"]
    assert split.backlog[1].ado_work_item_type == "Product Backlog Item"
