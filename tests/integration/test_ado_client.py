"""The ADO client through real HTTP against the fake ADO server: paging past the WIQL cap,
workitemsbatch in 200s, auth failures, backoff on 429/5xx honouring Retry-After, and the writes
the writer will use (create with a parent, JSON Patch, tags, rev checks, rule violations)."""

from __future__ import annotations

import pytest

from devhost.standins.fake_ado import FakeAdo
from shared.ado import ops
from shared.ado import process as processes
from shared.ado.client import AdoClient
from shared.ado.errors import (
    AdoAuthError,
    AdoConflict,
    AdoConnectionError,
    AdoError,
    AdoNotFound,
    AdoThrottled,
)

TYPES = ["Epic", "Feature", "User Story"]


@pytest.fixture
def fake():
    with FakeAdo() as server:
        server.seed_sample()
        yield server


@pytest.fixture
def slept():
    return []


@pytest.fixture
def client(fake, slept):
    with fake.client(sleep=slept.append) as c:
        yield c


@pytest.mark.parametrize("cap_counts_before_top", [True, False])
def test_paging_past_the_wiql_cap_returns_every_id_once(cap_counts_before_top):
    with FakeAdo(wiql_cap=50, cap_counts_before_top=cap_counts_before_top) as fake:
        fake.seed_generated(430, start_id=1)
        fake.add_items(
            [{"id": 900, "fields": {"System.WorkItemType": "Task", "System.Title": "t"}}]
        )
        with fake.client(sleep=lambda s: None, wiql_page_size=50) as client:
            ids = list(client.iter_ids(TYPES))
        assert ids == list(range(1, 431))  # ordered, complete, no Task, no duplicates
        wiql = fake.requests("wiql")
        assert len(wiql) > 430 // 50  # several pages or windows
        assert all(len(r.body["query"]) < 32_000 for r in wiql)
        ok = [r for r in wiql if r.status == 200]
        assert all(len(r.body["query"]) and r.query.get("api-version") == "7.1" for r in ok)
        if cap_counts_before_top:
            assert fake.count("wiql", status=400) >= 1  # the cap was hit, and paging went around


def test_batches_of_200_with_relations_and_no_fields():
    with FakeAdo() as fake:
        fake.seed_generated(450)
        with fake.client() as client:
            items = list(client.get_work_items(range(1, 451)))
    assert [i["id"] for i in items] == list(range(1, 451))
    batches = fake.requests("workitemsbatch")
    assert [len(r.body["ids"]) for r in batches] == [200, 200, 50]
    for request in batches:
        assert request.body["$expand"] == "relations" and "fields" not in request.body
        assert request.body["errorPolicy"] == "omit"
    stories = [i for i in items if i["fields"]["System.WorkItemType"] == "User Story"]
    assert all(ops.parent_id_of(s) for s in stories)


def test_deleted_items_are_left_out_of_batches(fake, client):
    fake.remove_item(1135)
    got = [i["id"] for i in client.get_work_items([1134, 1135, 1133])]
    assert got == [1134, 1133]


def test_every_request_sends_api_version_and_basic_auth(fake, client):
    list(client.get_work_items(client.iter_ids(TYPES)))
    client.get_work_item(1001)
    assert fake.log and all(r.query.get("api-version") == "7.1" for r in fake.log)
    assert all(r.authorized for r in fake.log)
    assert all(r.headers.get("X-TFS-FedAuthRedirect") == "Suppress" for r in fake.log)


@pytest.mark.parametrize("suppress", [True, False])
def test_a_bad_pat_is_a_clear_auth_error(fake, suppress):
    wrong = "wrong-pat-0123456789"
    client = AdoClient(fake.org_url, fake.project, wrong, suppress_sign_in_redirect=suppress)
    with pytest.raises(AdoAuthError) as info:
        list(client.iter_ids(TYPES))
    assert info.value.status == (401 if suppress else 203)
    assert "AZURE_DEVOPS_PAT" in str(info.value) and wrong not in str(info.value)
    assert fake.count() == 1  # an auth failure is not retried
    client.close()


def test_unknown_project_is_not_found(fake):
    with AdoClient(fake.org_url, "NoSuchProject", fake.pat) as client:
        with pytest.raises(AdoNotFound, match="VS800075"):
            client.get_work_item(1001)


def test_429_then_success_waits_what_retry_after_says(fake):
    """Real sleeping: the retry reaches the server at least Retry-After seconds after the 429."""
    fake.throttle_next(retry_after=1, route="workitemsbatch")
    with fake.client() as client:
        items = list(client.get_work_items([1001, 1002]))
    assert [i["id"] for i in items] == [1001, 1002]
    first, second = fake.requests("workitemsbatch")
    assert (first.status, second.status) == (429, 200)
    assert second.body == first.body
    assert second.time - first.time >= 1.0


def test_5xx_backs_off_1_2_4_and_retry_after_on_429(fake, client, slept):
    fake.fail_next(503, times=3, route="wiql")
    assert len(list(client.iter_ids(TYPES))) == 51
    assert slept == [1, 2, 4]
    assert [r.status for r in fake.requests("wiql")] == [503, 503, 503, 200]
    slept.clear()
    fake.throttle_next(2, retry_after=3)
    client.get_work_item(1001)
    assert slept == [3, 3]


def test_retries_give_up_after_five_with_a_typed_error(fake, client, slept):
    fake.throttle_next(10, retry_after=1)
    with pytest.raises(AdoThrottled, match="TF400733"):
        client.get_work_item(1001)
    assert fake.count() == 6 and slept == [1] * 5


def test_a_success_with_retry_after_slows_the_next_request(fake, client, slept):
    fake.slow_down_next(5)
    client.get_work_item(1001)
    assert slept == []
    client.get_work_item(1002)
    assert len(slept) == 1 and 4 < slept[0] <= 5


def test_an_answered_500_on_a_create_is_not_retried(fake, client):
    fake.fail_next(500, route="create")
    with pytest.raises(AdoError) as info:
        client.create_work_item("User Story", {"System.Title": "Once only"})
    assert info.value.status == 500
    assert fake.count("create") == 1
    fake.fail_next(503, route="create")
    created = client.create_work_item("User Story", {"System.Title": "Once only"})
    assert fake.count("create") == 3
    assert [i["fields"]["System.Title"] for i in fake.items.values()].count("Once only") == 1
    assert created["id"] == 1136


def test_no_server_is_a_connection_error(slept):
    fake = FakeAdo().start()
    url = fake.org_url
    fake.stop()
    with AdoClient(url, "P", "pat-0123456789", sleep=slept.append, max_retries=2) as client:
        with pytest.raises(AdoConnectionError, match="no response"):
            client.get_work_item(1)
    assert slept == [1, 2]


# -- writes ----------------------------------------------------------------------------------


def test_create_with_parent_then_find_by_tag(fake, client):
    created = client.create_work_item(
        "User Story",
        {
            "System.Title": "Sleep timer",
            "System.Description": "<div>15/30/60/90 minutes &amp; off</div>",
            "System.Tags": "synth-sig-abc; generated",
        },
        parent_id=1011,
    )
    request = fake.requests("create")[0]
    assert request.path.endswith("/_apis/wit/workitems/$User%20Story")
    assert request.headers["Content-Type"] == "application/json-patch+json"
    assert created["id"] == 1136 and created["rev"] == 1
    assert created["fields"]["System.State"] == "New"
    assert ops.parent_id_of(created) == 1011
    parent = client.get_work_item(1011)
    assert created["id"] in ops.child_ids_of(parent)
    assert parent["rev"] == fake.item(1011)["rev"]
    assert client.ids_with_tag("synth-sig-abc") == [1136]
    assert client.ids_with_tag("synth-sig-ab") == []  # whole tags only
    assert client.ids_with_tag("generated", ["Epic"]) == []


def test_patch_with_rev_check_merges_tags_and_rejects_stale_writes(fake, client):
    item = client.get_work_item(1113)
    rev = item["rev"]
    existing = ops.tags_of(item)
    assert existing
    updated = client.update_work_item(
        1113,
        [
            ops.add_tags_op(["synth-extend", existing[0].upper()]),  # tags compare case-blind
            ops.field_op(ops.ACCEPTANCE_CRITERIA, "<ul><li>new</li></ul>"),
        ],
        expected_rev=rev,
    )
    assert updated["rev"] == rev + 1
    assert ops.tags_of(updated) == existing + ["synth-extend"]
    assert fake.requests("update")[0].body[0] == {"op": "test", "path": "/rev", "value": rev}
    with pytest.raises(AdoConflict):
        client.update_work_item(1113, [ops.field_op("System.Title", "x")], expected_rev=rev)
    assert fake.item(1113)["fields"]["System.Title"] == item["fields"]["System.Title"]
    replaced = client.update_work_item(1113, [ops.field_op("System.Tags", "only", "replace")])
    assert ops.tags_of(replaced) == ["only"]


def test_a_second_parent_and_rule_violations_are_errors_that_change_nothing(fake, client):
    before = fake.item(1101)
    with pytest.raises(AdoError, match="TF201036"):
        client.update_work_item(1101, [ops.parent_op(client.work_item_url(1011))])
    with pytest.raises(AdoError) as info:
        client.update_work_item(
            1101, [ops.field_op("System.Title", "ok"), ops.field_op("System.State", "Doing")]
        )
    assert info.value.type_key == "RuleValidationException" and info.value.status == 400
    assert fake.item(1101) == before
    fake.reject_writes(title="Bad story")
    with pytest.raises(AdoError, match="TF401320"):
        client.create_work_item("User Story", {"System.Title": "Bad story"})
    assert client.create_work_item("User Story", {"System.Title": "Good story"})["id"] == 1136


def test_validate_only_saves_nothing(fake, client):
    count = len(fake.items)
    checked = client.create_work_item("Epic", {"System.Title": "Dry"}, validate_only=True)
    assert checked["fields"]["System.Title"] == "Dry" and len(fake.items) == count


def test_delete_moves_an_item_to_the_recycle_bin_and_a_second_delete_is_not_found(fake, client):
    parent_rev = fake.item(1011)["rev"]
    child = next(c for c in ops.child_ids_of(fake.item(1011)))
    answer = client.delete_item(child)
    request = fake.requests("delete")[0]
    assert request.method == "DELETE" and request.path.endswith(f"/_apis/wit/workitems/{child}")
    assert request.query == {"api-version": "7.1"}  # never destroy=true
    assert answer["id"] == child and answer["code"] == 200
    assert child in fake.recycle_bin and child not in fake.items
    # the link vanishes from the parent without a new revision there
    assert child not in ops.child_ids_of(fake.item(1011))
    assert fake.item(1011)["rev"] == parent_rev
    with pytest.raises(AdoNotFound, match="TF401232"):
        client.get_work_item(child)
    with pytest.raises(AdoNotFound):
        client.delete_item(child)
    assert list(client.get_work_items([child, 1011])) == [client.get_work_item(1011)]


def test_a_throttled_delete_is_retried_and_a_500_is_not(fake, client, slept):
    fake.throttle_next(retry_after=2, route="delete")
    client.delete_item(1113)
    assert slept == [2.0] and fake.count("delete") == 2
    fake.fail_next(500, route="delete")
    with pytest.raises(AdoError) as err:
        client.delete_item(1114)
    assert err.value.status == 500 and fake.count("delete") == 3 and 1114 in fake.items


# -- processes -------------------------------------------------------------------------------


@pytest.mark.parametrize("process", ["agile", "scrum", "cmmi", "basic"])
def test_the_projects_work_item_types_tell_its_process(process):
    with FakeAdo(process=process) as fake, fake.client() as client:
        types = client.work_item_types()
        assert fake.requests("workitemtypes")[0].path.endswith(
            "/RemoteControl/_apis/wit/workitemtypes"
        )
        names = [t["name"] for t in types]
        assert "Epic" in names and "Task" in names
        assert all(t["referenceName"].startswith("Microsoft.VSTS.WorkItemTypes.") for t in types)
        found = processes.detect(client)
        assert found.name == process and found.story_type in names
        # asked once by work_item_types() above, once by the detection, then cached
        assert processes.detect(client) is found and fake.count("workitemtypes") == 2
        with fake.client() as another:  # the cache is per client
            assert processes.detect(another) is found
        assert fake.count("workitemtypes") == 3


def test_a_type_or_field_the_process_lacks_is_refused_as_ado_does():
    with FakeAdo(process="scrum") as scrum, scrum.client() as client:
        with pytest.raises(AdoNotFound, match="VS402323: Work item type User Story does not"):
            client.create_work_item("User Story", {"System.Title": "Agile words"})
        assert scrum.count("create", status=404) == 1 and not scrum.items
        created = client.create_work_item(
            "Product Backlog Item",
            {"System.Title": "Scrum words", ops.ACCEPTANCE_CRITERIA: "<ul><li>ok</li></ul>"},
        )
        assert created["fields"]["System.WorkItemType"] == "Product Backlog Item"
        assert created["fields"]["System.State"] == "New"
    with FakeAdo(process="basic") as basic, basic.client() as client:
        with pytest.raises(AdoError, match="TF51535: Cannot find field") as info:
            client.create_work_item(
                "Issue", {"System.Title": "x", ops.ACCEPTANCE_CRITERIA: "<ul><li>no</li></ul>"}
            )
        assert info.value.status == 400 and not basic.items
        with pytest.raises(AdoNotFound, match="VS402323"):
            client.create_work_item("Feature", {"System.Title": "no features in Basic"})
        issue = client.create_work_item("Issue", {"System.Title": "Basic words"})
        assert issue["fields"]["System.State"] == "To Do"
        with pytest.raises(AdoError, match="TF51535"):
            client.update_work_item(issue["id"], [ops.field_op(ops.ACCEPTANCE_CRITERIA, "x")])
        with pytest.raises(AdoError, match="LimitedToValues"):  # Agile's states are not Basic's
            client.update_work_item(issue["id"], [ops.field_op("System.State", "Active")])
        done = client.update_work_item(issue["id"], [ops.field_op("System.State", "Done")])
        assert done["fields"]["System.State"] == "Done"
