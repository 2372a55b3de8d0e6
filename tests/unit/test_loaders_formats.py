"""Backlog exports in every format normalize to the same work items; ADO HTML becomes plain text."""

from __future__ import annotations

import pytest

from shared.indexing.html_text import criteria_list, html_to_text
from shared.indexing.workitems import (
    BacklogFormatError,
    from_csv,
    from_rest,
    read_backlog_file,
    work_item_hash,
)
from tests.support.pipeline import SAMPLES

BACKLOG = SAMPLES / "backlog"


def test_csv_rest_and_jsonl_samples_hold_the_same_items():
    jsonl = read_backlog_file(BACKLOG / "remote_control_backlog.jsonl")
    csv_items = read_backlog_file(BACKLOG / "remote_control_backlog.csv")
    rest = read_backlog_file(BACKLOG / "remote_control_backlog.rest.json")
    assert len(jsonl) == len(csv_items) == len(rest) > 30
    # the REST answer alone carries each item's revision (a sync compares it)
    strip = lambda items: [i.model_dump(exclude={"url", "rev"}) for i in items]  # noqa: E731
    assert strip(jsonl) == strip(csv_items) == strip(rest)
    assert all(i.rev is not None for i in rest) and {i.rev for i in jsonl} == {None}
    types = {i.work_item_type for i in jsonl}
    assert types == {"Epic", "Feature", "User Story"}
    stories = [i for i in jsonl if i.work_item_type == "User Story"]
    assert all(i.parent_id for i in stories)


def test_html_to_text_and_criteria():
    assert (
        html_to_text("<div>Cost &lt; 5&nbsp;EUR &amp; light</div><p>Second</p>")
        == "Cost < 5 EUR & light\nSecond"
    )
    assert html_to_text("<script>alert(1)</script>ok") == "ok"
    assert criteria_list("<ul><li>One</li><li> Two <b>bold</b></li></ul>") == ["One", "Two bold"]
    assert criteria_list("- a\n2) b\n\n") == ["a", "b"]
    assert html_to_text(None) == ""


def test_rest_relations_give_the_parent():
    item = from_rest(
        {
            "id": 7,
            "fields": {
                "System.WorkItemType": "User Story",
                "System.Title": "T",
                "System.ChangedDate": "2026-01-02T03:04:05.12Z",
            },
            "relations": [
                {
                    "rel": "System.LinkTypes.Hierarchy-Forward",
                    "url": "https://x/_apis/wit/workItems/9",
                },
                {
                    "rel": "System.LinkTypes.Hierarchy-Reverse",
                    "url": "https://x/_apis/wit/workItems/3",
                },
            ],
        }
    )
    assert item.parent_id == 3 and item.updated_at.year == 2026


def test_bad_csv_is_a_clear_error():
    with pytest.raises(BacklogFormatError, match="'ID' column"):
        from_csv("Title,State\nx,y\n")
    with pytest.raises(BacklogFormatError, match="line 2"):
        from_csv("ID,Work Item Type,Title\nabc,Epic,x\n")


def test_hash_changes_with_content():
    items = read_backlog_file(BACKLOG / "remote_control_backlog.jsonl")
    a = items[5]
    assert work_item_hash(a) == work_item_hash(a.model_copy())
    assert work_item_hash(a) != work_item_hash(a.model_copy(update={"title": a.title + "!"}))
    assert work_item_hash(a) != work_item_hash(
        a.model_copy(update={"acceptance_criteria": ["new"]})
    )
