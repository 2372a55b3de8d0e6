"""The fake's server: ``FakeAdo`` (started and stopped, the project's items, fault injection, the
request log) and its HTTP side: authentication, routing each request to its handler in ``reads``
or ``writes``, and ADO's answers to a request without a PAT, to an unknown path or project and to
one without an api-version.
"""

from __future__ import annotations

import base64
import copy
import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from devhost.standins.fake_ado import reads, writes
from devhost.standins.fake_ado.replies import SIGN_IN_PAGE, _Reply
from devhost.standins.fake_ado.samples import generate_items, sample_items
from devhost.standins.fake_ado.schema import _ID_AT_END, CHILD, PARENT, PROCESSES, _link_target


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


Handler = Callable[["FakeAdo", Any, LoggedRequest, list[str]], tuple[int, Any]]
# route name (``FakeAdo._route``) -> its handler
ROUTES: dict[str, Handler] = {
    "wiql": reads.do_wiql,
    "workitemsbatch": reads.do_workitemsbatch,
    "get": reads.do_get,
    "list": reads.do_list,
    "project": reads.do_project,
    "workitemtypes": reads.do_workitemtypes,
    "create": writes.do_create,
    "update": writes.do_update,
    "delete": writes.do_delete,
}


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
            handler = ROUTES[req.route]
            with self._lock:
                status, payload = handler(self, h, req, tail)
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
