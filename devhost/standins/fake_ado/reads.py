"""The read routes: a WIQL query, workitemsbatch, one item or a list of them by id, the project,
the process's work item types. Each takes the fake, the HTTP handler, the logged request and the
path after ``_apis/wit/``, and answers (status, body) or raises ``_Reply``; the server holds the
fake's lock around it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from devhost.standins.fake_ado.replies import _Reply
from devhost.standins.fake_ado.schema import AC_FIELD
from devhost.standins.fake_ado.wiql import WiqlError, _date_condition, _fold, _matches, parse_wiql

if TYPE_CHECKING:
    from devhost.standins.fake_ado.server import FakeAdo, LoggedRequest


def item_view(
    item: dict[str, Any], relations: bool, fields: Sequence[str] | None = None
) -> dict[str, Any]:
    out = copy.deepcopy(item)
    if fields is not None:
        wanted = {f.lower() for f in fields}
        out["fields"] = {k: v for k, v in out["fields"].items() if k.lower() in wanted}
    if not relations:
        out.pop("relations", None)
    return out


def do_wiql(fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
    text = (req.body or {}).get("query") if isinstance(req.body, dict) else None
    if not text:
        raise _Reply(400, "The query is empty.", "QueryException")
    if len(text) > 32_000:
        raise _Reply(400, "VS402335: The WIQL query is too long.", "QueryTooLongException")
    try:
        query = parse_wiql(text)
    except WiqlError as err:
        raise _Reply(
            400, f"TF51005: The query could not be parsed: {err}", "QueryException"
        ) from None
    precise = req.query.get("timePrecision", "").lower() == "true"
    try:
        conditions = [_date_condition(c, precise) for c in query.conditions]
    except WiqlError as err:
        raise _Reply(
            400, f"TF51005: The query could not be parsed: {err}", "QueryException"
        ) from None
    as_of = fake.now()
    matched = [
        item
        for item in fake.items.values()
        if all(_matches(item, c, fake.project, precise) for c in conditions)
    ]
    key = query.order_by
    matched.sort(
        key=lambda i: (
            _fold(i["id"] if key == "System.Id" else i["fields"].get(key)) or 0,
            i["id"],
        ),
        reverse=query.descending,
    )
    top = int(req.query["$top"]) if req.query.get("$top") else None
    counted = (
        len(matched) if (fake.cap_counts_before_top or top is None) else min(len(matched), top)
    )
    if counted > fake.wiql_cap:
        raise _Reply(
            400,
            f"VS402337: The number of work items returned exceeds the size limit of "
            f"{fake.wiql_cap}. Change the query to return fewer items.",
            "WorkItemTrackingQueryResultSizeLimitExceededException",
        )
    if top is not None:
        matched = matched[:top]
    return 200, {
        "queryType": "flat",
        "queryResultType": "workItem",
        "asOf": as_of,
        "columns": [
            {
                "referenceName": "System.Id",
                "name": "ID",
                "url": f"{fake.org_url}/_apis/wit/fields/System.Id",
            }
        ],
        "workItems": [{"id": i["id"], "url": i["url"]} for i in matched],
    }


def do_workitemsbatch(
    fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]
) -> tuple[int, Any]:
    body = req.body if isinstance(req.body, dict) else {}
    ids = body.get("ids") or []
    if not isinstance(ids, list) or not ids:
        raise _Reply(400, "The ids parameter is required.", "ArgumentException")
    if len(ids) > 200:
        raise _Reply(
            400,
            f"VS403474: You requested {len(ids)} work items which exceeds the limit of 200",
            "WorkItemsBatchLimitExceededException",
        )
    expand = str(body.get("$expand") or "none").lower()
    fields = body.get("fields")
    if fields and expand != "none":
        raise _Reply(
            400,
            "The expand parameter can not be used with the fields parameter.",
            "ArgumentException",
        )
    omit = str(body.get("errorPolicy") or "fail").lower() == "omit"
    value: list[dict[str, Any] | None] = []
    for wid in ids:
        item = fake.items.get(int(wid))
        if item is None:
            if not omit:
                raise _Reply(
                    404,
                    f"TF401232: Work item {wid} does not exist, or you do not "
                    "have permissions to read it.",
                    "WorkItemUnauthorizedAccessException",
                )
            value.append(None)
            continue
        value.append(item_view(item, expand in ("relations", "all"), fields))
    return 200, {"count": len(value), "value": value}


def do_get(fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
    item = fake.items.get(int(tail[1]))
    if item is None:
        raise _Reply(
            404,
            f"TF401232: Work item {tail[1]} does not exist, or you do not have "
            "permissions to read it.",
            "WorkItemUnauthorizedAccessException",
        )
    expand = str(req.query.get("$expand") or "none").lower()
    return 200, item_view(item, expand in ("relations", "all"))


def do_list(fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
    raw = req.query.get("ids") or ""
    ids = [int(x) for x in raw.split(",") if x.strip()]
    if len(ids) > 200:
        raise _Reply(
            400,
            f"VS403474: You requested {len(ids)} work items which exceeds the limit of 200",
            "WorkItemsBatchLimitExceededException",
        )
    expand = str(req.query.get("$expand") or "none").lower()
    value = []
    for wid in ids:
        if wid not in fake.items:
            raise _Reply(
                404,
                f"TF401232: Work item {wid} does not exist, or you do not have "
                "permissions to read it.",
                "WorkItemUnauthorizedAccessException",
            )
        value.append(item_view(fake.items[wid], expand in ("relations", "all")))
    return 200, {"count": len(value), "value": value}


def do_project(fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
    return 200, {
        "id": "6ce954b1-ce1f-45d1-b94d-e6bf2464ba2c",
        "name": fake.project,
        "url": f"{fake.org_url}/_apis/projects/6ce954b1-ce1f-45d1-b94d-e6bf2464ba2c",
        "state": "wellFormed",
        "revision": 7,
        "visibility": "private",
    }


def do_workitemtypes(fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
    value = [
        {
            "name": name,
            "referenceName": "Microsoft.VSTS.WorkItemTypes." + name.replace(" ", ""),
            "description": f"{name} ({fake.process} process)",
            "color": "009CCC",
            "isDisabled": name in fake.disabled_types,
            # as ADO lists them per type (only what the tests need: title, description, the
            # acceptance-criteria field where the type has one)
            "fields": [
                {"referenceName": ref, "name": ref.rsplit(".", 1)[-1]}
                for ref in ("System.Title", "System.Description")
                + ((AC_FIELD,) if name in fake.spec.ac_types else ())
            ],
            "url": f"{fake.org_url}/{quote(fake.project, safe='')}/_apis/wit/"
            f"workItemTypes/{quote(name, safe='')}",
        }
        for name in fake.spec.types
    ]
    return 200, {"count": len(value), "value": value}
