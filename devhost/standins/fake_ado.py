"""A fake Azure DevOps REST 7.1 server (work item tracking), over real HTTP, for tests and
benchmarks.

The loader's and the writer's tests drive the real client (requests) against it. It behaves like
ADO where the client depends on it (as Microsoft's REST 7.1 specification describes it:
MicrosoftDocs/vsts-rest-api-specs, ``specification/wit/7.1/workItemTracking.json``):

- **Auth**: ``Authorization: Basic base64(user:PAT)`` (user ignored). A wrong or missing PAT gets
  **203 with an HTML sign-in page**, or **401** when ``X-TFS-FedAuthRedirect: Suppress`` is sent.
  ``api-version`` must be given (400 otherwise); the project must exist (404 VS800075).
- **WIQL** ``POST {org}/{project}/_apis/wit/wiql[?$top=N]``: ``SELECT ... FROM WorkItems WHERE
  c1 AND c2 ... ORDER BY [field] [ASC|DESC]`` with conditions ``[Field] op value``, op one of
  ``= <> > >= < <= IN NOT IN CONTAINS NOT CONTAINS``, values ``'text'``, numbers, ``@project``,
  ``(list)``. Date fields (``System.ChangedDate``, ``System.CreatedDate``) compare as dates: by day,
  unless the request says ``timePrecision=true``; a literal with a time of day without it is a 400
  (ADO does not compare times without that parameter; this message is the fake's own). The answer
  carries ``asOf``, the fake's clock when the query ran (the clock every write's ChangedDate comes
  from). ``[System.Tags] CONTAINS 'x'`` matches a whole tag, case-insensitively. OR and
  parentheses are refused (400), so a client relying on them fails loudly here. Result cap
  ``wiql_cap`` (ADO: 20,000) → 400 **VS402337**; by default every match counts against the cap
  even with ``$top`` (the pessimistic reading of ADO); ``cap_counts_before_top=False`` applies
  ``$top`` first.
- **workitemsbatch** ``POST .../wit/workitemsbatch``: ≤ 200 ids (400 VS403474 above), ``fields``
  and ``$expand`` together → 400, ``errorPolicy: omit`` → null for missing ids (else 404 TF401232).
- **GET** ``.../wit/workitems/{id}[?$expand=relations]``, ``GET .../wit/workitems?ids=1,2``;
  ``GET {org}/_apis/projects/{project}`` (id, name, state; 404 VS800075 for another name).
- **Process** (``process``: agile, the default, scrum, cmmi or basic): ``GET .../wit/workitemtypes``
  lists that process's work item types (name, referenceName, isDisabled; ``disabled_types`` are
  marked disabled), a create of a type the process lacks answers **404 VS402323** as ADO does (a
  "User Story" in a Scrum project), states are the process's (Basic: To Do, Doing, Done; new
  items start in its first state), and ``Microsoft.VSTS.Common.AcceptanceCriteria`` on a type
  without that field (every Basic type, Task) is **400 TF51535** "Cannot find field".
  ``sample_items(process)`` is the sample backlog as such a project holds it.
- **Create** ``POST .../wit/workitems/${type}`` and **update** ``PATCH .../wit/workitems/{id}``:
  ``Content-Type: application/json-patch+json`` (415 otherwise); ops ``add``/``replace``/
  ``remove`` on ``/fields/{ref}`` (``add`` on System.Tags merges, ``replace`` overwrites), ``add``
  on ``/relations/-``, ``remove`` on ``/relations/{i}``, ``test`` on ``/rev`` (412 when stale).
  Hierarchy links are kept on both ends (a parent gets the Hierarchy-Forward link, its rev
  increments); a second parent → 400 TF201036. Rules: a non-empty Title, a known State
  (TF401320 RuleValidationException). New ids count up from the highest id, each write bumps
  ``rev``/``System.Rev`` and ``System.ChangedDate``; a patch that changes nothing makes no revision.
  ``validateOnly=true`` checks without saving. All-or-nothing: a failing op changes nothing.
- **Delete** ``DELETE .../wit/workitems/{id}``: the item moves to the recycle bin (``recycle_bin``;
  ``destroy=true`` deletes it for good) and answers ADO's WorkItemDelete (``id, code, deletedBy,
  deletedDate, name, project, type, url, resource``); links to it vanish from the other items
  (no new revision there), and a later GET, PATCH or DELETE of it is a 404 TF401232, as in ADO.

Knobs: ``fail_next`` (any status, e.g. 5xx; ``applied=True``: done, then answered with the
error, as when a 500 or a lost answer follows a write that happened), ``throttle_next`` (429 + Retry-After, TF400733),
``slow_down_next`` (200 + Retry-After: ADO's delay), ``reject_writes`` (400 rule violation for one
item or title), ``wiql_cap`` / ``cap_counts_before_top``, ``pat``. Direct edits that a person would
make in ADO: ``edit_item``, ``remove_item``. Every request is in ``log`` (time, method, route,
path, query, headers without Authorization, body, status); ``count()`` filters it.

Error bodies have ADO's shape (``$id, innerException, message, typeName, typeKey, errorCode,
eventId``). Codes and messages named in ADO_REST.md are ADO's; the typeKeys of 412, VS402337 and
the link errors are representative.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

REPO = Path(__file__).resolve().parents[2]
SAMPLE_REST = REPO / "samples" / "backlog" / "remote_control_backlog.rest.json"

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

SIGN_IN_PAGE = (
    "<!DOCTYPE html><html><head><title>Azure DevOps Services | Sign In</title></head>"
    "<body><form action='https://login.microsoftonline.com/'>Sign in to your account"
    "</form></body></html>"
)


class _Reply(Exception):
    """Raised inside a handler to answer with an ADO error body."""

    def __init__(
        self,
        status: int,
        message: str,
        type_key: str = "",
        headers: dict[str, str] | None = None,
        error_code: int = 0,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type_key = type_key
        self.headers = headers or {}
        self.error_code = error_code

    def body(self) -> dict[str, Any]:
        return {
            "$id": "1",
            "innerException": None,
            "message": self.message,
            "typeName": f"Microsoft.TeamFoundation.WorkItemTracking.Server.{self.type_key}, "
            "Microsoft.TeamFoundation.WorkItemTracking.Server",
            "typeKey": self.type_key,
            "errorCode": self.error_code,
            "eventId": 3200,
        }


def _rule_error(field_name: str, code: str) -> _Reply:
    short = field_name.rsplit(".", 1)[-1]
    return _Reply(
        400,
        f"TF401320: Rule Error for field {short}. Error code: {code}.",
        "RuleValidationException",
        error_code=600171,
    )


@dataclass
class LoggedRequest:
    time: float  # time.monotonic() on arrival
    method: str
    route: str  # wiql, workitemsbatch, get, list, create, update, delete, unknown
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # Authorization left out
    body: Any
    authorized: bool
    status: int = 0


@dataclass
class _Fault:
    status: int
    times: int
    route: str | None
    retry_after: float | None
    message: str
    type_key: str
    applied: bool = False  # carried out, then answered with the error (a lost answer)


@dataclass
class _Rejection:
    work_item_id: int | None
    title: str | None
    field_name: str
    message: str | None
    times: int | None


# ------------------------------------------------------------------------------------------------
# WIQL


_TOKEN = re.compile(
    r"\s*(\[[^\]]+\]|'(?:[^']|'')*'|@\w+|-?\d+(?:\.\d+)?|<>|>=|<=|=|<|>|\(|\)|,|[A-Za-z_][\w.]*)"
)


class WiqlError(ValueError):
    pass


@dataclass
class Wiql:
    conditions: list[tuple[str, str, Any]]
    order_by: str = "System.Id"
    descending: bool = False


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise WiqlError(f"unexpected text at {pos}: {text[pos : pos + 20]!r}")
        out.append(match.group(1))
        pos = match.end()
    return out


def _value(token: str) -> Any:
    if token.startswith("'"):
        return token[1:-1].replace("''", "'")
    if token.startswith("@"):
        return token.lower()
    try:
        return int(token)
    except ValueError:
        try:
            return float(token)
        except ValueError:
            raise WiqlError(f"expected a value, got {token!r}") from None


def parse_wiql(text: str) -> Wiql:
    """The subset of flat WIQL the product uses (see the module docstring)."""
    toks = _tokens(text)
    upper = [t.upper() for t in toks]
    if not upper or upper[0] != "SELECT" or "FROM" not in upper:
        raise WiqlError("expected SELECT ... FROM WorkItems")
    i = upper.index("FROM") + 1
    if i >= len(toks) or upper[i] != "WORKITEMS":
        raise WiqlError("only FROM WorkItems is supported")
    i += 1
    query = Wiql([])
    if i < len(toks) and upper[i] == "WHERE":
        i += 1
        while True:
            if i >= len(toks) or not toks[i].startswith("["):
                raise WiqlError(f"expected [Field] at token {i}")
            fld = toks[i][1:-1]
            i += 1
            op = upper[i] if i < len(toks) else ""
            if op == "NOT" and i + 1 < len(toks) and upper[i + 1] in ("IN", "CONTAINS"):
                op = "NOT " + upper[i + 1]
                i += 1
            if op not in (
                "=",
                "<>",
                ">",
                ">=",
                "<",
                "<=",
                "IN",
                "NOT IN",
                "CONTAINS",
                "NOT CONTAINS",
            ):
                raise WiqlError(f"unsupported operator {op!r}")
            i += 1
            if op in ("IN", "NOT IN"):
                if i >= len(toks) or toks[i] != "(":
                    raise WiqlError("expected ( after IN")
                i += 1
                values = []
                while i < len(toks) and toks[i] != ")":
                    if toks[i] != ",":
                        values.append(_value(toks[i]))
                    i += 1
                i += 1
                value: Any = values
            else:
                if i >= len(toks):
                    raise WiqlError("expected a value")
                value = _value(toks[i])
                i += 1
            query.conditions.append((fld, op, value))
            if i < len(toks) and upper[i] == "AND":
                i += 1
                continue
            if i < len(toks) and upper[i] in ("OR", "("):
                raise WiqlError("OR and parentheses are not supported by the fake")
            break
    if i < len(toks):
        if upper[i : i + 2] != ["ORDER", "BY"] or i + 2 >= len(toks):
            raise WiqlError(f"unexpected {toks[i]!r}")
        query.order_by = toks[i + 2].strip("[]")
        i += 3
        if i < len(toks) and upper[i] in ("ASC", "DESC"):
            query.descending = upper[i] == "DESC"
            i += 1
        if i < len(toks):
            raise WiqlError(f"unexpected {toks[i]!r} after ORDER BY")
    return query


def _fold(v: Any) -> Any:
    return v.lower() if isinstance(v, str) else v


def _tags(value: Any) -> list[str]:
    return [t.strip() for t in str(value or "").split(";") if t.strip()]


DATE_FIELDS = frozenset({"System.ChangedDate", "System.CreatedDate"})


def _date(value: Any) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _date_condition(cond: tuple[str, str, Any], time_precision: bool) -> tuple[str, str, Any]:
    """A date field's literal as a datetime (a date alone: midnight UTC); a time of day without
    ``timePrecision`` is refused."""
    fld, op, value = cond
    if fld not in DATE_FIELDS or op not in ("=", "<>", ">", ">=", "<", "<="):
        return cond
    when = _date(value)
    if when is None:
        raise WiqlError(f"{value!r} is not a date")
    if not time_precision and (when.hour, when.minute, when.second, when.microsecond) != (
        0,
        0,
        0,
        0,
    ):
        raise _Reply(
            400,
            f"The query compares [{fld}] with a time of day ({value!r}): ask with "
            "timePrecision=true, or give a date.",
            "QueryException",
        )
    return fld, op, when


def _matches(
    item: dict[str, Any], cond: tuple[str, str, Any], project: str, time_precision: bool = False
) -> bool:
    fld, op, value = cond
    actual = item["id"] if fld == "System.Id" else item["fields"].get(fld)
    if value == "@project":
        value = project
    if isinstance(value, datetime):
        when = _date(actual)
        if when is None:
            return op == "<>"
        if not time_precision:
            when, value = when.date(), value.date()  # type: ignore[assignment]
        actual, value = when, value
    if op in ("CONTAINS", "NOT CONTAINS"):
        if fld == "System.Tags":
            found = str(value).lower() in (t.lower() for t in _tags(actual))
        else:
            found = str(value).lower() in str(actual or "").lower()
        return found if op == "CONTAINS" else not found
    if op in ("IN", "NOT IN"):
        found = _fold(actual) in {_fold(v) for v in value}
        return found if op == "IN" else not found
    a, b = _fold(actual), _fold(value)
    if a is None:
        return op == "<>"
    try:
        return {
            "=": a == b,
            "<>": a != b,
            ">": a > b,
            ">=": a >= b,
            "<": a < b,
            "<=": a <= b,
        }[op]
    except TypeError:
        return False


# ------------------------------------------------------------------------------------------------
# generated backlogs

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


# ------------------------------------------------------------------------------------------------
# the server


class FakeAdo:
    """``with FakeAdo() as ado: AdoClient(ado.org_url, ado.project, ado.pat)``."""

    def __init__(
        self,
        *,
        org: str = "fake-org",
        project: str = "RemoteControl",
        pat: str = "fake-pat-0123456789",
        wiql_cap: int = 20_000,
        cap_counts_before_top: bool = True,
        clock: Callable[[], datetime] | None = None,
        process: str = "agile",
        disabled_types: Sequence[str] = (),
    ) -> None:
        if process not in PROCESSES:
            raise ValueError(f"process must be one of {', '.join(PROCESSES)}, not {process!r}")
        self.org = org
        self.project = project
        self.pat = pat
        self.process = process
        self.spec = PROCESSES[process]
        self.disabled_types = tuple(disabled_types)
        self.wiql_cap = wiql_cap
        self.cap_counts_before_top = cap_counts_before_top
        self._clock = clock
        self._last_time: datetime | None = None
        self.items: dict[int, dict[str, Any]] = {}
        self.recycle_bin: dict[int, dict[str, Any]] = {}  # deleted items (DELETE without destroy)
        self.log: list[LoggedRequest] = []
        self._faults: list[_Fault] = []
        self._rejections: list[_Rejection] = []
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FakeAdo:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else each small answer waits ~40 ms (delayed ACK)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                fake._serve(self)

            def do_POST(self) -> None:
                fake._serve(self)

            def do_PATCH(self) -> None:
                fake._serve(self)

            def do_DELETE(self) -> None:
                fake._serve(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAdo:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        if isinstance(host, bytes):  # typeshed allows bytes (a Unix socket path); TCP gives str
            host = host.decode()
        return f"http://{host}:{port}"

    @property
    def org_url(self) -> str:
        """What AZURE_DEVOPS_ORG_URL is set to."""
        return f"{self.url}/{self.org}"

    def env(self) -> dict[str, str]:
        return {
            "AZURE_DEVOPS_ORG_URL": self.org_url,
            "AZURE_DEVOPS_PROJECT": self.project,
            "AZURE_DEVOPS_PAT": self.pat,
        }

    def client(self, **kwargs: Any) -> Any:
        from shared.ado.client import AdoClient

        return AdoClient(self.org_url, self.project, self.pat, **kwargs)

    # -- state ---------------------------------------------------------------------------------
    def item_url(self, work_item_id: int) -> str:
        return f"{self.org_url}/{quote(self.project, safe='')}/_apis/wit/workItems/{work_item_id}"

    def link_url(self, work_item_id: int) -> str:
        return f"{self.org_url}/_apis/wit/workItems/{work_item_id}"

    def now(self) -> str:
        """ADO's ChangedDate format; strictly increasing, so every write changes the item's hash."""
        with self._lock:
            current = self._clock() if self._clock else datetime.now(UTC)
            if self._last_time is not None and current <= self._last_time:
                current = self._last_time + timedelta(milliseconds=1)
            self._last_time = current
        return current.strftime("%Y-%m-%dT%H:%M:%S.") + f"{current.microsecond // 1000:03d}Z"

    def add_items(self, raw_items: Iterable[dict[str, Any]]) -> list[int]:
        """Seed REST items (urls are rewritten to this server)."""
        ids = []
        with self._lock:
            for raw in raw_items:
                item = copy.deepcopy(raw)
                wid = int(item["id"])
                item["fields"]["System.Id"] = wid
                item["fields"].setdefault("System.TeamProject", self.project)
                item["fields"].setdefault("System.Rev", int(item.get("rev", 1)))
                item["rev"] = int(item["fields"]["System.Rev"])
                item["url"] = self.item_url(wid)
                for rel in item.get("relations", []):
                    target = _ID_AT_END.search(str(rel.get("url", "")))
                    if target and rel.get("rel") in (PARENT, CHILD):
                        rel["url"] = self.link_url(int(target.group(1)))
                if not item.get("relations"):
                    item.pop("relations", None)
                self.items[wid] = item
                ids.append(wid)
        return ids

    def reset(self) -> None:
        """Back to an empty project (items, request log and faults), so a test can start from a
        known state whatever ran before it."""
        with self._lock:
            self.items.clear()
            self.recycle_bin.clear()
            self.log.clear()
            self._faults.clear()
            self._rejections.clear()

    def seed_sample(self) -> list[int]:
        return self.add_items(sample_items(self.process))

    def seed_generated(self, n: int, **kwargs: Any) -> list[int]:
        return self.add_items(generate_items(n, **kwargs))

    def item(self, work_item_id: int) -> dict[str, Any]:
        with self._lock:
            return copy.deepcopy(self.items[work_item_id])

    def edit_item(self, work_item_id: int, fields: dict[str, Any]) -> dict[str, Any]:
        """A change made by a person in ADO: fields set, a new revision, a new ChangedDate."""
        with self._lock:
            item = self.items[work_item_id]
            item["fields"].update(fields)
            self._bump(item)
            return copy.deepcopy(item)

    def remove_item(self, work_item_id: int) -> None:
        """The item is deleted in ADO (links to it go with it)."""
        with self._lock:
            self.items.pop(work_item_id)
            self._unlink(work_item_id)

    def _unlink(self, work_item_id: int) -> None:
        """Links to a removed item vanish from the others (no new revision for them)."""
        for other in self.items.values():
            rels = other.get("relations") or []
            kept = [r for r in rels if _link_target(r) != work_item_id]
            if len(kept) != len(rels):
                other["relations"] = kept
                if not kept:
                    other.pop("relations")

    def _bump(self, item: dict[str, Any]) -> None:
        item["rev"] = int(item.get("rev", 0)) + 1
        item["fields"]["System.Rev"] = item["rev"]
        item["fields"]["System.ChangedDate"] = self.now()
        item["fields"]["System.ChangedBy"] = "Fake User <fake@example.com>"

    # -- fault injection -----------------------------------------------------------------------
    def fail_next(
        self,
        status: int = 503,
        *,
        times: int = 1,
        route: str | None = None,
        retry_after: float | None = None,
        message: str = "",
        applied: bool = False,
    ) -> None:
        """The next ``times`` requests (to ``route``, or any) answer ``status``; with ``applied``
        the request is carried out first (the server did the work, the answer says it failed)."""
        with self._lock:
            self._faults.append(
                _Fault(
                    status,
                    times,
                    route,
                    retry_after,
                    message or f"Injected failure {status}",
                    "InjectedFault",
                    applied,
                )
            )

    def throttle_next(
        self, times: int = 1, *, retry_after: float = 1, route: str | None = None
    ) -> None:
        """429 with Retry-After, as ADO blocks a user over the rate limit."""
        with self._lock:
            self._faults.append(
                _Fault(
                    429,
                    times,
                    route,
                    retry_after,
                    "TF400733: The request has been canceled: Request was blocked due to "
                    "exceeding usage of resource 'WorkItemTracking' in namespace 'User'.",
                    "RequestBlockedException",
                )
            )

    def slow_down_next(
        self, retry_after: float, *, times: int = 1, route: str | None = None
    ) -> None:
        """The request succeeds but carries Retry-After (ADO's delay before it blocks)."""
        with self._lock:
            self._faults.append(_Fault(200, times, route, retry_after, "", ""))

    def reject_writes(
        self,
        *,
        work_item_id: int | None = None,
        title: str | None = None,
        field_name: str = "System.Title",
        message: str | None = None,
        times: int | None = None,
    ) -> None:
        """Creates with this title / updates of this item get a 400 rule violation."""
        with self._lock:
            self._rejections.append(_Rejection(work_item_id, title, field_name, message, times))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._rejections.clear()

    # -- the request log -----------------------------------------------------------------------
    def requests(
        self, route: str | None = None, method: str | None = None, status: int | None = None
    ) -> list[LoggedRequest]:
        with self._lock:
            return [
                r
                for r in self.log
                if (route is None or r.route == route)
                and (method is None or r.method == method)
                and (status is None or r.status == status)
            ]

    def count(
        self, route: str | None = None, method: str | None = None, status: int | None = None
    ) -> int:
        return len(self.requests(route, method, status))

    def clear_log(self) -> None:
        with self._lock:
            self.log.clear()

    # -- HTTP ----------------------------------------------------------------------------------
    def _authorized(self, header: str) -> bool:
        if not header.startswith("Basic "):
            return False
        try:
            decoded = base64.b64decode(header[6:], validate=True).decode()
        except ValueError:
            return False
        return decoded.split(":", 1)[-1] == self.pat and ":" in decoded

    def _route(self, method: str, path: str) -> tuple[str, list[str], bool]:
        """(route name, the parts after _apis/wit/, whether the project segment was known)."""
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if len(parts) < 3 or parts[0] != self.org:
            return "unknown", [], True
        rest = parts[1:]
        project_ok = True
        if rest[0] != "_apis":
            project_ok = rest[0].lower() == self.project.lower()
            rest = rest[1:]
        if (
            method == "GET"
            and len(rest) == 3
            and [r.lower() for r in rest[:2]]
            == [
                "_apis",
                "projects",
            ]
        ):
            return "project", rest[2:], rest[2].lower() == self.project.lower()
        if rest[:2] != ["_apis", "wit"]:
            return "unknown", [], project_ok
        tail = rest[2:]
        low = [t.lower() for t in tail]
        if method == "POST" and low == ["wiql"]:
            return "wiql", tail, project_ok
        if method == "POST" and low == ["workitemsbatch"]:
            return "workitemsbatch", tail, project_ok
        if method == "GET" and low == ["workitems"]:
            return "list", tail, project_ok
        if method == "GET" and low == ["workitemtypes"]:
            return "workitemtypes", tail, project_ok
        if len(low) == 2 and low[0] == "workitems":
            if method == "POST" and tail[1].startswith("$"):
                return "create", tail, project_ok
            if method == "GET" and tail[1].isdigit():
                return "get", tail, project_ok
            if method == "PATCH" and tail[1].isdigit():
                return "update", tail, project_ok
            if method == "DELETE" and tail[1].isdigit():
                return "delete", tail, project_ok
        return "unknown", tail, project_ok

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        split = urlsplit(h.path)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        route, tail, project_ok = self._route(h.command, split.path)
        entry = LoggedRequest(
            time=time.monotonic(),
            method=h.command,
            route=route,
            path=split.path,
            query=query,
            headers={k: v for k, v in h.headers.items() if k.lower() != "authorization"},
            body=body,
            authorized=self._authorized(h.headers.get("Authorization", "")),
        )
        with self._lock:
            self.log.append(entry)
        status, payload, headers = self._answer(h, entry, tail, project_ok)
        entry.status = status
        if isinstance(payload, str):
            data, ctype = payload.encode(), "text/html; charset=utf-8"
        else:
            data, ctype = json.dumps(payload).encode(), "application/json; charset=utf-8"
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(data)

    def _answer(
        self, h: BaseHTTPRequestHandler, req: LoggedRequest, tail: list[str], project_ok: bool
    ) -> tuple[int, Any, dict[str, str]]:
        if not req.authorized:
            if h.headers.get("X-TFS-FedAuthRedirect", "").lower() == "suppress":
                return (
                    401,
                    _Reply(
                        401,
                        "TF400813: The user '' is not authorized to access this resource.",
                        "UnauthorizedRequestException",
                    ).body(),
                    {"WWW-Authenticate": 'Basic realm="https://fake-ado/"'},
                )
            return 203, SIGN_IN_PAGE, {}
        try:
            if req.route == "unknown":
                raise _Reply(404, f"The resource {req.path} cannot be found.", "NotFoundException")
            if not project_ok:
                raise _Reply(
                    404,
                    "VS800075: The project with id 'vstfs:///Classification/TeamProject/' does "
                    "not exist, or you do not have permission to access it.",
                    "ProjectDoesNotExistException",
                )
            if "api-version" not in req.query:
                raise _Reply(
                    400,
                    f'No api-version was supplied for the "{req.method}" request. The version '
                    'must be supplied either as part of the Accept header (e.g. "application/'
                    'json; api-version=1.0") or as a query parameter (e.g. "?api-version=1.0").',
                    "VssVersionNotSpecifiedException",
                )
            extra_headers: dict[str, str] = {}
            fault = self._take_fault(req.route)
            if fault is not None:
                if fault.retry_after is not None:
                    extra_headers["Retry-After"] = f"{fault.retry_after:g}"
                if fault.status == 429:
                    extra_headers.update(
                        {
                            "X-RateLimit-Resource": "WorkItemTracking",
                            "X-RateLimit-Delay": "0",
                            "X-RateLimit-Limit": "200",
                            "X-RateLimit-Remaining": "0",
                            "X-RateLimit-Reset": str(int(time.time()) + 60),
                        }
                    )
                if fault.status >= 400 and not fault.applied:
                    reply = _Reply(fault.status, fault.message, fault.type_key)
                    return fault.status, reply.body(), extra_headers
            handler = getattr(self, f"_do_{req.route}")
            with self._lock:
                status, payload = handler(h, req, tail)
            if fault is not None and fault.applied and fault.status >= 400:
                reply = _Reply(fault.status, fault.message, fault.type_key)
                return fault.status, reply.body(), extra_headers
            return status, payload, extra_headers
        except _Reply as reply:
            return reply.status, reply.body(), reply.headers

    def _take_fault(self, route: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.route in (None, route) and fault.times > 0:
                    fault.times -= 1
                    if fault.times == 0:
                        self._faults.remove(fault)
                    return fault
        return None

    # -- reads ---------------------------------------------------------------------------------
    def _view(
        self, item: dict[str, Any], relations: bool, fields: Sequence[str] | None = None
    ) -> dict[str, Any]:
        out = copy.deepcopy(item)
        if fields is not None:
            wanted = {f.lower() for f in fields}
            out["fields"] = {k: v for k, v in out["fields"].items() if k.lower() in wanted}
        if not relations:
            out.pop("relations", None)
        return out

    def _do_wiql(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
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
        as_of = self.now()
        matched = [
            item
            for item in self.items.values()
            if all(_matches(item, c, self.project, precise) for c in conditions)
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
            len(matched) if (self.cap_counts_before_top or top is None) else min(len(matched), top)
        )
        if counted > self.wiql_cap:
            raise _Reply(
                400,
                f"VS402337: The number of work items returned exceeds the size limit of "
                f"{self.wiql_cap}. Change the query to return fewer items.",
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
                    "url": f"{self.org_url}/_apis/wit/fields/System.Id",
                }
            ],
            "workItems": [{"id": i["id"], "url": i["url"]} for i in matched],
        }

    def _do_workitemsbatch(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
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
            item = self.items.get(int(wid))
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
            value.append(self._view(item, expand in ("relations", "all"), fields))
        return 200, {"count": len(value), "value": value}

    def _do_get(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
        item = self.items.get(int(tail[1]))
        if item is None:
            raise _Reply(
                404,
                f"TF401232: Work item {tail[1]} does not exist, or you do not have "
                "permissions to read it.",
                "WorkItemUnauthorizedAccessException",
            )
        expand = str(req.query.get("$expand") or "none").lower()
        return 200, self._view(item, expand in ("relations", "all"))

    def _do_list(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
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
            if wid not in self.items:
                raise _Reply(
                    404,
                    f"TF401232: Work item {wid} does not exist, or you do not have "
                    "permissions to read it.",
                    "WorkItemUnauthorizedAccessException",
                )
            value.append(self._view(self.items[wid], expand in ("relations", "all")))
        return 200, {"count": len(value), "value": value}

    def _do_project(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
        return 200, {
            "id": "6ce954b1-ce1f-45d1-b94d-e6bf2464ba2c",
            "name": self.project,
            "url": f"{self.org_url}/_apis/projects/6ce954b1-ce1f-45d1-b94d-e6bf2464ba2c",
            "state": "wellFormed",
            "revision": 7,
            "visibility": "private",
        }

    def _do_workitemtypes(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
        value = [
            {
                "name": name,
                "referenceName": "Microsoft.VSTS.WorkItemTypes." + name.replace(" ", ""),
                "description": f"{name} ({self.process} process)",
                "color": "009CCC",
                "isDisabled": name in self.disabled_types,
                # as ADO lists them per type (only what the tests need: title, description, the
                # acceptance-criteria field where the type has one)
                "fields": [
                    {"referenceName": ref, "name": ref.rsplit(".", 1)[-1]}
                    for ref in ("System.Title", "System.Description")
                    + ((AC_FIELD,) if name in self.spec.ac_types else ())
                ],
                "url": f"{self.org_url}/{quote(self.project, safe='')}/_apis/wit/"
                f"workItemTypes/{quote(name, safe='')}",
            }
            for name in self.spec.types
        ]
        return 200, {"count": len(value), "value": value}

    # -- writes --------------------------------------------------------------------------------
    def _patch_body(self, h: Any, req: LoggedRequest) -> list[dict[str, Any]]:
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

    def _rejected(self, work_item_id: int | None, title: str | None) -> _Reply | None:
        for rule in self._rejections:
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

    def _do_create(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
        ops = self._patch_body(h, req)
        wtype = tail[1][1:]
        known = [t for t in self.spec.types if t not in self.disabled_types]
        if wtype.lower() not in (t.lower() for t in known):
            raise _Reply(
                404,
                f"VS402323: Work item type {wtype} does not exist in project {self.project} or "
                "you do not have permission to access it.",
                "WorkItemTypeNotFoundException",
            )
        wtype = next(t for t in known if t.lower() == wtype.lower())
        title = next(
            (o.get("value") for o in ops if o.get("path", "").lower() == "/fields/system.title"),
            None,
        )
        rejected = self._rejected(None, title)
        if rejected:
            raise rejected
        new_id = max(self.items, default=0) + 1
        item: dict[str, Any] = {
            "id": new_id,
            "rev": 0,
            "fields": {
                "System.Id": new_id,
                "System.WorkItemType": wtype,
                "System.TeamProject": self.project,
                "System.AreaPath": self.project,
                "System.IterationPath": self.project,
                "System.State": self.spec.states[0],
                "System.Reason": "New",
                "System.CreatedDate": self.now(),
            },
            "url": self.item_url(new_id),
        }
        return self._transaction(req, item, ops, new=True)

    def _do_update(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
        ops = self._patch_body(h, req)
        wid = int(tail[1])
        if wid not in self.items:
            raise _Reply(
                404,
                f"TF401232: Work item {wid} does not exist, or you do not have "
                "permissions to read it.",
                "WorkItemUnauthorizedAccessException",
            )
        rejected = self._rejected(wid, None)
        if rejected:
            raise rejected
        return self._transaction(req, self.items[wid], ops, new=False)

    def _do_delete(self, h: Any, req: LoggedRequest, tail: list[str]) -> tuple[int, Any]:
        wid = int(tail[1])
        item = self.items.get(wid)
        if item is None:
            raise _Reply(
                404,
                f"TF401232: Work item {wid} does not exist, or you do not have "
                "permissions to read it.",
                "WorkItemUnauthorizedAccessException",
            )
        rejected = self._rejected(wid, None)
        if rejected:
            raise rejected
        destroy = req.query.get("destroy", "").lower() == "true"
        del self.items[wid]
        self._unlink(wid)
        when = self.now()
        if not destroy:
            self.recycle_bin[wid] = copy.deepcopy(item)
        body: dict[str, Any] = {
            "id": wid,
            "code": 200,
            "deletedBy": "Fake User <fake@example.com>",
            "deletedDate": when,
            "name": item["fields"].get("System.Title"),
            "project": self.project,
            "type": item["fields"].get("System.WorkItemType"),
            "url": f"{self.org_url}/{quote(self.project, safe='')}/_apis/wit/recyclebin/{wid}",
        }
        if not destroy:
            body["resource"] = self._view(item, False)
        return 200, body

    def _transaction(
        self, req: LoggedRequest, item: dict[str, Any], ops: list[dict[str, Any]], new: bool
    ) -> tuple[int, Any]:
        """All or nothing: ops run on a copy of every item, committed only when each op and
        rule passed (and not for validateOnly)."""
        validate_only = req.query.get("validateOnly", "").lower() == "true"
        live = self.items
        self.items = copy.deepcopy(live)
        try:
            work = copy.deepcopy(item) if new else self.items[item["id"]]
            if new:
                self.items[work["id"]] = work
            before = copy.deepcopy(work)
            touched = self._apply(work, ops)
            self._validate(work)
        except BaseException:
            self.items = live
            raise
        if validate_only:
            self.items = live
            view = self._view(work, True)
            if new:
                view["id"] = 0
            return 200, view
        if new or work != before:
            self._bump(work)
        bumped = {work["id"]}
        for other in touched:
            if other["id"] not in bumped:
                bumped.add(other["id"])
                self._bump(other)
        return 200, self._view(work, True)

    def _apply(self, item: dict[str, Any], ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
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
                        item["fields"].get("System.WorkItemType") not in self.spec.ac_types
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
                touched.extend(self._link(item, value))
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
                partner = self.items.get(_link_target(rel) or -1)
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

    def _link(self, item: dict[str, Any], value: Any) -> list[dict[str, Any]]:
        if not isinstance(value, dict) or not value.get("rel") or not value.get("url"):
            raise _Reply(400, "A relation needs 'rel' and 'url'.", "VssPropertyValidationException")
        rel = str(value["rel"])
        target_id = _link_target(value)
        rels = item.setdefault("relations", [])
        if rel not in (PARENT, CHILD):
            rels.append(copy.deepcopy(value))
            return []
        if target_id is None or target_id not in self.items or target_id == item["id"]:
            raise _Reply(
                400,
                f"TF201035: The work item link target {value['url']} is not valid.",
                "WorkItemLinkInvalidException",
            )
        target = self.items[target_id]
        child, parent = (item, target) if rel == PARENT else (target, item)
        existing_parent = next(
            (r for r in child.get("relations", []) if r.get("rel") == PARENT), None
        )
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
                "url": self.link_url(parent["id"]),
                "attributes": {"isLocked": False, "name": "Parent"},
            }
        )
        parent.setdefault("relations", []).append(
            {
                "rel": CHILD,
                "url": self.link_url(child["id"]),
                "attributes": {"isLocked": False, "name": "Child"},
            }
        )
        return [target]

    def _validate(self, item: dict[str, Any]) -> None:
        title = str(item["fields"].get("System.Title") or "").strip()
        if not title:
            raise _rule_error("System.Title", "Required, InvalidEmpty")
        if len(title) > 255:
            raise _rule_error("System.Title", "InvalidTooLong")
        if item["fields"].get("System.State") not in self.spec.states:
            raise _rule_error("System.State", "LimitedToValues")


def _link_target(rel: dict[str, Any]) -> int | None:
    match = _ID_AT_END.search(str(rel.get("url", "")))
    return int(match.group(1)) if match else None
