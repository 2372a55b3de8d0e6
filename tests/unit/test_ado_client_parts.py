"""The ADO client's pure parts: WIQL text, JSON Patch operations, error mapping, secret masking,
the backoff schedule and Retry-After, configuration errors. No I/O."""

from __future__ import annotations

import base64

import pytest
from urllib3.response import HTTPResponse

from shared.ado import ops
from shared.ado.client import AdoClient
from shared.ado.errors import (
    AdoAuthError,
    AdoConflict,
    AdoError,
    AdoNotFound,
    AdoQueryTooLarge,
    AdoThrottled,
    error_from_response,
    mask_secrets,
)
from shared.ado.retry import READ_RETRY_STATUSES, WRITE_RETRY_STATUSES, make_retry
from shared.errors import ConfigurationError
from shared.settings import Settings

PAT = "s3cretPAT-abcdefghijklmnop"


def test_wiql_literals_escape_quotes_and_queries_page_by_id():
    assert ops.wiql_literal("O'Brien's") == "'O''Brien''s'"
    query = ops.work_items_query(["Epic", "User Story"], after_id=100, up_to_id=300, tag="a'b")
    assert query == (
        "SELECT [System.Id] FROM WorkItems WHERE [System.TeamProject] = @project AND "
        "[System.WorkItemType] IN ('Epic', 'User Story') AND [System.Tags] CONTAINS 'a''b' AND "
        "[System.Id] > 100 AND [System.Id] <= 300 ORDER BY [System.Id]"
    )
    assert "<=" not in ops.work_items_query(["Epic"], after_id=5)
    with pytest.raises(ValueError):
        ops.wiql_field("System.Title] OR [x")


def test_patch_operations():
    assert ops.field_op("System.Title", "T") == {
        "op": "add",
        "path": "/fields/System.Title",
        "value": "T",
    }
    assert ops.field_op("System.Tags", None, "remove") == {
        "op": "remove",
        "path": "/fields/System.Tags",
    }
    assert ops.add_tags_op(["a", " b ", "A", ""]) == {
        "op": "add",
        "path": "/fields/System.Tags",
        "value": "a; b",
    }
    with pytest.raises(ValueError, match="';'"):
        ops.tags_value(["bad;tag"])
    assert ops.expect_rev_op(7) == {"op": "test", "path": "/rev", "value": 7}
    assert ops.parent_op("https://x/_apis/wit/workItems/3")["value"] == {
        "rel": ops.PARENT_REL,
        "url": "https://x/_apis/wit/workItems/3",
    }
    assert ops.parent_op("u")["path"] == "/relations/-"


def test_relations_and_tags_of_rest_items():
    item = {
        "fields": {"System.Tags": "a; b ;"},
        "relations": [
            {"rel": ops.CHILD_REL, "url": "https://x/_apis/wit/workItems/9"},
            {"rel": ops.PARENT_REL, "url": "https://x/p/_apis/wit/workItems/3"},
        ],
    }
    assert ops.parent_id_of(item) == 3
    assert ops.child_ids_of(item) == [9]
    assert ops.tags_of(item) == ["a", "b"]
    assert ops.parent_id_of({"fields": {"System.Parent": 4}}) == 4
    assert ops.parent_id_of({"fields": {}}) is None


@pytest.mark.parametrize(
    ("status", "body", "ctype", "cls"),
    [
        (203, "<html>Sign in</html>", "text/html", AdoAuthError),
        (200, "<html>Sign in</html>", "text/html; charset=utf-8", AdoAuthError),
        (401, '{"message": "TF400813: not authorized"}', "application/json", AdoAuthError),
        (
            400,
            '{"message": "VS402337: The number of work items returned exceeds the size limit"}',
            "application/json",
            AdoQueryTooLarge,
        ),
        (
            404,
            '{"message": "TF401232: Work item 5 does not exist"}',
            "application/json",
            AdoNotFound,
        ),
        (412, '{"message": "TF26071: changed"}', "application/json", AdoConflict),
        (429, '{"message": "TF400733: blocked"}', "application/json", AdoThrottled),
    ],
)
def test_error_mapping(status, body, ctype, cls):
    err = error_from_response(
        status, body, method="POST", url="/o/p/_apis/wit/wiql", content_type=ctype
    )
    assert type(err) is cls
    assert err.status == status


def test_rule_violation_keeps_type_key_and_message():
    body = (
        '{"$id": "1", "message": "TF401320: Rule Error for field Title.", '
        '"typeKey": "RuleValidationException", "errorCode": 600171}'
    )
    err = error_from_response(400, body, method="PATCH", url="/o/p/_apis/wit/workitems/5")
    assert type(err) is AdoError
    assert err.type_key == "RuleValidationException"
    assert err.error_code == 600171
    assert "TF401320" in str(err) and "PATCH /o/p/_apis/wit/workitems/5" in str(err)


def test_no_secret_survives_in_an_error():
    token = base64.b64encode(f":{PAT}".encode()).decode()
    body = f'{{"message": "bad header Basic {token} for {PAT}"}}'
    err = error_from_response(400, body, method="GET", url="/x", secrets=[PAT, token])
    assert PAT not in str(err) and token not in str(err)
    assert "***" in str(err)
    assert PAT not in mask_secrets(f"Authorization: Bearer {PAT}", [])


def _response(status: int, headers: dict[str, str] | None = None) -> HTTPResponse:
    return HTTPResponse(body=b"", status=status, headers=headers or {}, preload_content=False)


def test_backoff_is_1_2_4_8_16_and_retry_after_replaces_it():
    slept: list[float] = []
    retry = make_retry(statuses=READ_RETRY_STATUSES, sleeper=slept.append)
    for _ in range(5):
        response = _response(503)
        retry = retry.increment(method="GET", url="/x", response=response)
        retry.sleep(response)
    assert slept == [1, 2, 4, 8, 16]
    with pytest.raises(Exception, match="Max retries"):
        retry.increment(method="GET", url="/x", response=_response(503))

    slept.clear()
    retry = make_retry(statuses=READ_RETRY_STATUSES, sleeper=slept.append)
    response = _response(429, {"Retry-After": "7"})
    retry = retry.increment(method="POST", url="/x", response=response)
    retry.sleep(response)
    assert slept == [7]


def test_reads_retry_every_5xx_but_writes_only_429_and_503():
    reads = make_retry(statuses=READ_RETRY_STATUSES)
    writes = make_retry(statuses=WRITE_RETRY_STATUSES, read_errors=False)
    for status in (429, 500, 502, 503, 504):
        assert reads.is_retry("POST", status)
    assert writes.is_retry("POST", 429) and writes.is_retry("PATCH", 503)
    for status in (500, 502, 504, 400, 412):
        assert not writes.is_retry("POST", status)


def test_configuration_errors_name_settings_never_values():
    with pytest.raises(ConfigurationError, match="full URL"):
        AdoClient("dev.azure.com/org", "p", PAT)
    settings = Settings(azure_devops_pat=PAT, azure_devops_project="P")
    with pytest.raises(ConfigurationError, match="AZURE_DEVOPS_ORG_URL") as info:
        AdoClient.from_settings(settings)
    assert PAT not in str(info.value)
    client = AdoClient("https://dev.azure.com/org/", "My Project", PAT)
    assert PAT not in repr(client)
    assert client.work_item_url(5) == "https://dev.azure.com/org/_apis/wit/workItems/5"
    assert client.web_url(5) == "https://dev.azure.com/org/My%20Project/_workitems/edit/5"
    client.close()
