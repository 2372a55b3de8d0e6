"""The write routes: create and update (a JSON Patch document applied all or nothing: fields,
tags merged, hierarchy links kept on both ends, the process's rules, injected rejections) and
delete (to the recycle bin, or for good). Called as the read routes are (``reads``).
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from devhost.standins.fake_ado.reads import item_view
from devhost.standins.fake_ado.replies import _Reply, _rule_error
from devhost.standins.fake_ado.schema import AC_FIELD, CHILD, PARENT, _link_target
from devhost.standins.fake_ado.wiql import _tags

if TYPE_CHECKING:
    from devhost.standins.fake_ado.server import FakeAdo, LoggedRequest


def _patch_body(h: Any, req: LoggedRequest) -> list[dict[str, Any]]:
    ctype = h.headers.get("Content-Type", "")
    if not ctype.lower().startswith("application/json-patch+json"):
        raise _Reply(
            415,
            f'The request indicated a Content-Type of "{ctype}" for method type '
            f'"{req.method}" which is not supported. Valid content types for this method '
            "are: application/json-patch+json.",
            "VssRequestContentTypeNotSupportedException",
        )
    if not isinstance(req.body, list) or not all(isinstance(o, dict) for o in req.body):
        raise _Reply(
            400,
            "You must pass a valid patch document in the body of the request.",
            "VssPropertyValidationException",
        )
    return req.body


def _rejected(fake: FakeAdo, work_item_id: int | None, title: str | None) -> _Reply | None:
    for rule in fake._rejections:
        hit = (rule.work_item_id is not None and rule.work_item_id == work_item_id) or (
            rule.title is not None and title is not None and rule.title == title
        )
        if hit and (rule.times is None or rule.times > 0):
            if rule.times is not None:
                rule.times -= 1
            reply = _rule_error(rule.field_name, "InvalidEmpty, HasValues, LimitedToValues")
            if rule.message:
                reply.message = rule.message
            return reply
    return None


def do_create(fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
    ops = _patch_body(h, req)
    wtype = tail[1][1:]
    known = [t for t in fake.spec.types if t not in fake.disabled_types]
    if wtype.lower() not in (t.lower() for t in known):
        raise _Reply(
            404,
            f"VS402323: Work item type {wtype} does not exist in project {fake.project} or "
            "you do not have permission to access it.",
            "WorkItemTypeNotFoundException",
        )
    wtype = next(t for t in known if t.lower() == wtype.lower())
    title = next(
        (o.get("value") for o in ops if o.get("path", "").lower() == "/fields/system.title"),
        None,
    )
    rejected = _rejected(fake, None, title)
    if rejected:
        raise rejected
    new_id = max(fake.items, default=0) + 1
    item: dict[str, Any] = {
        "id": new_id,
        "rev": 0,
        "fields": {
            "System.Id": new_id,
            "System.WorkItemType": wtype,
            "System.TeamProject": fake.project,
            "System.AreaPath": fake.project,
            "System.IterationPath": fake.project,
            "System.State": fake.spec.states[0],
            "System.Reason": "New",
            "System.CreatedDate": fake.now(),
        },
        "url": fake.item_url(new_id),
    }
    return _transaction(fake, req, item, ops, new=True)


def do_update(fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
    ops = _patch_body(h, req)
    wid = int(tail[1])
    if wid not in fake.items:
        raise _Reply(
            404,
            f"TF401232: Work item {wid} does not exist, or you do not have permissions to read it.",
            "WorkItemUnauthorizedAccessException",
        )
    rejected = _rejected(fake, wid, None)
    if rejected:
        raise rejected
    return _transaction(fake, req, fake.items[wid], ops, new=False)


def do_delete(fake: FakeAdo, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
    wid = int(tail[1])
    item = fake.items.get(wid)
    if item is None:
        raise _Reply(
            404,
            f"TF401232: Work item {wid} does not exist, or you do not have permissions to read it.",
            "WorkItemUnauthorizedAccessException",
        )
    rejected = _rejected(fake, wid, None)
    if rejected:
        raise rejected
    destroy = req.query.get("destroy", "").lower() == "true"
    del fake.items[wid]
    fake._unlink(wid)
    when = fake.now()
    if not destroy:
        fake.recycle_bin[wid] = copy.deepcopy(item)
    body: dict[str, Any] = {
        "id": wid,
        "code": 200,
        "deletedBy": "Fake User <fake@example.com>",
        "deletedDate": when,
        "name": item["fields"].get("System.Title"),
        "project": fake.project,
        "type": item["fields"].get("System.WorkItemType"),
        "url": f"{fake.org_url}/{quote(fake.project, safe='')}/_apis/wit/recyclebin/{wid}",
    }
    if not destroy:
        body["resource"] = item_view(item, False)
    return 200, body


def _transaction(
    fake: FakeAdo, req: LoggedRequest, item: dict[str, Any], ops: list[dict[str, Any]], new: bool
) -> tuple[int, Any]:
    """All or nothing: ops run on a copy of every item, committed only when each op and
    rule passed (and not for validateOnly)."""
    validate_only = req.query.get("validateOnly", "").lower() == "true"
    live = fake.items
    fake.items = copy.deepcopy(live)
    try:
        work = copy.deepcopy(item) if new else fake.items[item["id"]]
        if new:
            fake.items[work["id"]] = work
        before = copy.deepcopy(work)
        touched = _apply(fake, work, ops)
        _validate(fake, work)
    except BaseException:
        fake.items = live
        raise
    if validate_only:
        fake.items = live
        view = item_view(work, True)
        if new:
            view["id"] = 0
        return 200, view
    if new or work != before:
        fake._bump(work)
    bumped = {work["id"]}
    for other in touched:
        if other["id"] not in bumped:
            bumped.add(other["id"])
            fake._bump(other)
    return 200, item_view(work, True)


def _apply(fake: FakeAdo, item: dict[str, Any], ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Apply JSON Patch ops to ``item`` (and link partners); returns the partners touched."""
    touched: list[dict[str, Any]] = []
    for op in ops:
        kind = str(op.get("op", "")).lower()
        path = str(op.get("path", ""))
        value = op.get("value")
        if path == "/rev" and kind == "test":
            if value is None or int(value) != int(item.get("rev", 0)):
                raise _Reply(
                    412,
                    "TF26071: This work item has been changed by someone else since you "
                    "opened it. You will need to refresh it and discard your changes.",
                    "WorkItemRevisionMismatchException",
                )
            continue
        if path.lower().startswith("/fields/"):
            name = path[len("/fields/") :]
            if kind == "remove":
                item["fields"].pop(name, None)
            elif kind in ("add", "replace"):
                if name in ("System.Id", "System.Rev", "System.WorkItemType"):
                    raise _rule_error(name, "ReadOnly")
                if name.lower() == AC_FIELD.lower() and (
                    item["fields"].get("System.WorkItemType") not in fake.spec.ac_types
                ):
                    raise _Reply(
                        400,
                        f"TF51535: Cannot find field {AC_FIELD}.",
                        "WorkItemFieldInvalidException",
                    )
                if name == "System.Tags" and kind == "add":
                    merged = _tags(item["fields"].get(name))
                    for tag in _tags(value):
                        if tag.lower() not in (t.lower() for t in merged):
                            merged.append(tag)
                    value = "; ".join(merged)
                if value in (None, ""):
                    item["fields"].pop(name, None)
                else:
                    item["fields"][name] = value
            elif kind == "test":
                if item["fields"].get(name) != value:
                    raise _Reply(
                        400,
                        f"Test operation failed for {path}.",
                        "TestOperationFailedException",
                    )
            else:
                raise _Reply(
                    400,
                    f"Operation {kind} is not supported on {path}.",
                    "VssPropertyValidationException",
                )
            continue
        if path == "/relations/-" and kind == "add":
            touched.extend(_link(fake, item, value))
            continue
        match = re.fullmatch(r"/relations/(\d+)", path)
        if match and kind == "remove":
            rels = item.get("relations") or []
            index = int(match.group(1))
            if index >= len(rels):
                raise _Reply(
                    400,
                    f"Relation index {index} is out of range.",
                    "VssPropertyValidationException",
                )
            rel = rels.pop(index)
            if not rels:
                item.pop("relations", None)
            partner = fake.items.get(_link_target(rel) or -1)
            if partner is not None and rel.get("rel") in (PARENT, CHILD):
                back = CHILD if rel["rel"] == PARENT else PARENT
                partner["relations"] = [
                    r
                    for r in partner.get("relations", [])
                    if not (r.get("rel") == back and _link_target(r) == item["id"])
                ]
                if not partner["relations"]:
                    partner.pop("relations")
                touched.append(partner)
            continue
        raise _Reply(
            400,
            f"The path {path} (op {kind}) is not supported.",
            "VssPropertyValidationException",
        )
    return touched


def _link(fake: FakeAdo, item: dict[str, Any], value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, dict) or not value.get("rel") or not value.get("url"):
        raise _Reply(400, "A relation needs 'rel' and 'url'.", "VssPropertyValidationException")
    rel = str(value["rel"])
    target_id = _link_target(value)
    rels = item.setdefault("relations", [])
    if rel not in (PARENT, CHILD):
        rels.append(copy.deepcopy(value))
        return []
    if target_id is None or target_id not in fake.items or target_id == item["id"]:
        raise _Reply(
            400,
            f"TF201035: The work item link target {value['url']} is not valid.",
            "WorkItemLinkInvalidException",
        )
    target = fake.items[target_id]
    child, parent = (item, target) if rel == PARENT else (target, item)
    existing_parent = next((r for r in child.get("relations", []) if r.get("rel") == PARENT), None)
    if existing_parent is not None:
        if _link_target(existing_parent) == parent["id"]:
            raise _Reply(
                400,
                f"TF201040: The link between {child['id']} and {parent['id']} already exists.",
                "WorkItemLinkAlreadyExistsException",
            )
        raise _Reply(
            400,
            f"TF201036: You cannot add a Child link between work items {parent['id']} and "
            f"{child['id']} because a work item can have only one Parent link.",
            "WorkItemLinkInvalidException",
        )
    child.setdefault("relations", []).append(
        {
            "rel": PARENT,
            "url": fake.link_url(parent["id"]),
            "attributes": {"isLocked": False, "name": "Parent"},
        }
    )
    parent.setdefault("relations", []).append(
        {
            "rel": CHILD,
            "url": fake.link_url(child["id"]),
            "attributes": {"isLocked": False, "name": "Child"},
        }
    )
    return [target]


def _validate(fake: FakeAdo, item: dict[str, Any]) -> None:
    title = str(item["fields"].get("System.Title") or "").strip()
    if not title:
        raise _rule_error("System.Title", "Required, InvalidEmpty")
    if len(title) > 255:
        raise _rule_error("System.Title", "InvalidTooLong")
    if item["fields"].get("System.State") not in fake.spec.states:
        raise _rule_error("System.State", "LimitedToValues")
