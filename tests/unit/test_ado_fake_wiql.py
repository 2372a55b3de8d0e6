"""The fake ADO server's WIQL subset and generated backlogs (the fake must be right for the
loader's and writer's tests to mean anything). No I/O."""

from __future__ import annotations

import pytest

from devhost.standins.fake_ado import WiqlError, generate_items, parse_wiql
from devhost.standins.fake_ado.wiql import _matches
from shared.ado import ops


def _item(wid: int, **fields):
    return {"id": wid, "fields": {"System.TeamProject": "P", **fields}}


def test_the_clients_queries_parse_and_match():
    text = ops.work_items_query(["Epic", "User Story"], after_id=10, up_to_id=20, tag="Sig-1")
    query = parse_wiql(text)
    assert query.order_by == "System.Id" and not query.descending
    inside = _item(15, **{"System.WorkItemType": "user story", "System.Tags": "x; sig-1"})
    cases = {
        15: True,
        10: False,  # > 10
        21: False,  # <= 20
    }
    for wid, expected in cases.items():
        item = dict(inside, id=wid)
        assert all(_matches(item, c, "P") for c in query.conditions) is expected
    no_tag = _item(15, **{"System.WorkItemType": "Epic", "System.Tags": "sig-10"})
    assert not all(_matches(no_tag, c, "P") for c in query.conditions)  # whole tags only
    other_project = _item(15, **{"System.WorkItemType": "Epic", "System.Tags": "sig-1"})
    assert not all(_matches(other_project, c, "Q") for c in query.conditions)


def test_quotes_not_in_and_order():
    query = parse_wiql(
        "SELECT [System.Id] FROM WorkItems WHERE [System.Title] = 'O''Brien' AND "
        "[System.State] NOT IN ('Closed', 'Removed') ORDER BY [System.ChangedDate] DESC"
    )
    assert query.conditions == [
        ("System.Title", "=", "O'Brien"),
        ("System.State", "NOT IN", ["Closed", "Removed"]),
    ]
    assert query.order_by == "System.ChangedDate" and query.descending


@pytest.mark.parametrize(
    "text",
    [
        "SELECT [System.Id] FROM WorkItems WHERE [System.Id] > 1 OR [System.Id] < 0",
        "SELECT [System.Id] FROM WorkItemLinks",
        "DELETE FROM WorkItems",
        "SELECT [System.Id] FROM WorkItems WHERE [System.Id] ~ 3",
    ],
)
def test_unsupported_wiql_is_refused(text):
    with pytest.raises(WiqlError):
        parse_wiql(text)


def test_generated_backlog_is_a_consistent_tree():
    items = generate_items(300, start_id=5000, seed=3)
    assert [i["id"] for i in items] == list(range(5000, 5300))
    by_id = {i["id"]: i for i in items}
    kinds = {i["fields"]["System.WorkItemType"] for i in items}
    assert kinds == {"Epic", "Feature", "User Story"}
    for item in items:
        parent = ops.parent_id_of(item)
        kind = item["fields"]["System.WorkItemType"]
        if kind == "Epic":
            assert parent is None
        else:
            expected = "Epic" if kind == "Feature" else "Feature"
            assert by_id[parent]["fields"]["System.WorkItemType"] == expected
            assert item["id"] in ops.child_ids_of(by_id[parent])
    assert generate_items(50, seed=1) == generate_items(50, seed=1)
