"""A local stand-in for the Azure Functions host (``func start``) for Python v2 apps.

Owns: loading ``local.settings.json`` and a ``func.FunctionApp``, and driving its functions
against Azure Storage (Azurite) the way the real host does: polling blob triggers with
ETag-keyed receipts in ``azure-webjobs-hosts`` and ``webjobs-blobtrigger-poison``, queue pumps
with host.json ``extensions.queues`` semantics and ``{queue}-poison``, an HTTP server for
``/api/{route}``, and timer triggers. Queue and blob output bindings and blob input bindings
are supported; other bindings receive ``None`` (a warning names them at load).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import importlib
import importlib.util
import inspect
import json
import logging
import os
import re
import sys
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import azure.functions as func
from azure.core import MatchConditions
from azure.core.exceptions import (
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.functions.blob import InputStream
from azure.functions.queue import QueueMessage
from azure.functions.timer import TimerRequest
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient, QueueServiceClient
from azure.storage.queue import QueueMessage as StorageMessage

from .expressions import (
    Route,
    Schedule,
    compile_route,
    fill_template,
    literal_prefix,
    parse_schedule,
    path_pattern,
    resolve_settings,
    timespan_seconds,
)

log = logging.getLogger("devhost")

REPO_ROOT = Path(__file__).resolve().parents[1]
RECEIPTS_CONTAINER = "azure-webjobs-hosts"
BLOB_POISON_QUEUE = "webjobs-blobtrigger-poison"
STORAGE_SETTING = "AzureWebJobsStorage"
SUPPORTED_BINDINGS = {"queue", "blob", "http"}


class HostError(RuntimeError):
    """The app or its configuration cannot be run by the local host."""


# -- configuration ---------------------------------------------------------------------------
@dataclass(frozen=True)
class QueueSettings:
    """host.json ``extensions.queues`` with the real host's defaults."""

    batch_size: int = 16
    new_batch_threshold: int = 8
    max_dequeue_count: int = 5
    visibility_timeout: float = 0.0  # delay before a failed message is visible again
    max_polling_interval: float = 60.0
    message_encoding: str = "base64"

    @classmethod
    def from_host_json(cls, host_json: dict[str, Any]) -> QueueSettings:
        q = host_json.get("extensions", {}).get("queues", {})
        batch = int(q.get("batchSize", 16))
        encoding = str(q.get("messageEncoding", "base64")).lower()
        if encoding not in ("base64", "none"):
            raise HostError(f"host.json messageEncoding must be base64 or none, not {encoding!r}")
        return cls(
            batch_size=max(1, min(batch, 32)),  # the queue service hands out 32 at most
            new_batch_threshold=int(q.get("newBatchThreshold", batch // 2)),
            max_dequeue_count=int(q.get("maxDequeueCount", 5)),
            visibility_timeout=timespan_seconds(q.get("visibilityTimeout"), 0.0),
            max_polling_interval=timespan_seconds(q.get("maxPollingInterval"), 60.0),
            message_encoding=encoding,
        )


def load_local_settings(path: str | Path) -> list[str]:
    """Copy ``Values`` of local.settings.json into os.environ where not already set (as Core
    Tools does). Returns the names it set."""
    path = Path(path)
    if not path.is_file():
        return []
    values = json.loads(path.read_text(encoding="utf-8-sig")).get("Values", {})
    added = [k for k, v in values.items() if k not in os.environ and v is not None]
    for k in added:
        os.environ[k] = str(values[k])
    return added


# -- messages sent from this process ---------------------------------------------------------
# The real host's shared queue watcher starts a queue's pump at once when a function of the app
# writes to that queue through an output binding. This app sends through the SDK (its outbox),
# which the real host only sees at its next poll. The local host runs the app in its own process,
# so it hooks ``QueueClient.send_message`` and wakes the pump of the queue written to: a message
# sent here, by a binding or the SDK, is picked up without a polling delay, and no pump polls
# just in case. Messages from other processes are found by polling.
_send_listeners: list[Callable[[str], None]] = []
_send_lock = threading.Lock()
_send_hook_installed = False


def _queue_key(url: str) -> str:
    """A queue's identity from its URL: host, port and path (no scheme, no SAS)."""
    parts = urlsplit(url)
    return f"{parts.netloc}{parts.path}".rstrip("/").lower()


def _install_send_hook() -> None:
    global _send_hook_installed
    with _send_lock:
        if _send_hook_installed:
            return
        original = QueueClient.send_message

        @functools.wraps(original)
        def send_message(self: QueueClient, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            with _send_lock:
                listeners = list(_send_listeners)
            if listeners:
                key = _queue_key(self.url)
                for listener in listeners:
                    listener(key)
            return result

        QueueClient.send_message = send_message  # type: ignore[method-assign]
        _send_hook_installed = True


def _strip_etag(etag: str) -> str:
    return etag.strip('"')


def _enum_value(value: Any) -> Any:
    return getattr(value, "value", value)


# -- discovered functions --------------------------------------------------------------------
@dataclass
class FunctionInfo:
    """One function of the app as the host sees it."""

    name: str
    trigger: dict[str, Any]
    bindings: list[dict[str, Any]]
    user_function: Callable[..., Any]
    params: dict[str, inspect.Parameter]
    # trigger specifics filled at load
    container: str = ""
    path_template: str = ""
    path_regex: re.Pattern[str] | None = None
    queue_name: str = ""
    route: Route | None = None
    methods: frozenset[str] | None = None
    auth_level: str = "function"
    schedule: Schedule | None = None

    @property
    def trigger_type(self) -> str:
        return str(self.trigger["type"])

    @property
    def trigger_param(self) -> str:
        return str(self.trigger["name"])

    @property
    def connection(self) -> str:
        return str(self.trigger.get("connection") or STORAGE_SETTING)

    def describe(self, base_url: str = "") -> str:
        """One line, in the style of ``func start``'s function list."""
        t = self.trigger_type
        if t == "httpTrigger" and self.route is not None:
            methods = ",".join(sorted(self.methods)) if self.methods else "all methods"
            return f"{self.name}: [{methods}] {base_url}/{self.route.template}"
        detail = {
            "blobTrigger": f"{self.container}/{self.path_template}",
            "queueTrigger": self.queue_name,
            "timerTrigger": self.schedule.expression if self.schedule else "",
        }.get(t, "")
        return f"{self.name}: {t} ({detail})" if detail else f"{self.name}: {t}"


@dataclass
class Invocation:
    """A finished invocation (kept in ``LocalHost.invocations`` for tests and the demo)."""

    function: str
    trigger: str
    invocation_id: str
    started: float
    duration: float
    succeeded: bool
    error: str | None = None


class _Out(func.Out[Any]):
    def __init__(self) -> None:
        self.value: Any = None

    def set(self, val: Any) -> None:
        self.value = val

    def get(self) -> Any:
        return self.value


class _Context(func.Context):
    def __init__(self, invocation_id: str, function_name: str, directory: str) -> None:
        self._id, self._name, self._dir = invocation_id, function_name, directory
        self._tls = threading.local()
        self._tls.invocation_id = invocation_id

    invocation_id = property(lambda self: self._id)
    function_name = property(lambda self: self._name)
    function_directory = property(lambda self: self._dir)
    thread_local_storage = property(lambda self: self._tls)
    trace_context = property(lambda self: None)
    retry_context = property(lambda self: None)


@dataclass
class _InFlight:
    """A received queue message being processed; its lease is renewed by the pump."""

    message: StorageMessage
    pop_receipt: str
    renewed: float = field(default_factory=time.monotonic)
    done: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


# -- the host ----------------------------------------------------------------------------------
class LocalHost:
    """Runs a Python v2 ``func.FunctionApp`` against Azure Storage, like ``func start``.

    ``app``: a module name importable from ``root`` (default ``function_app``), a path to a
    ``.py`` file, or a FunctionApp object. ``host_json``: a path, a dict, or None for
    ``root/host.json`` when present. ``connection_string`` overrides the AzureWebJobsStorage
    setting for the host's own use (triggers, receipts); bindings naming another
    ``connection`` read that app setting. ``port``: HTTP port (0 = any free port, None = no
    HTTP server). ``function_key``: when set, FUNCTION/ADMIN routes need ``?code=`` or the
    ``x-functions-key`` header. ``timer_intervals``: function name -> seconds, overriding a
    timer's schedule (a test hook).

    Polling: an idle queue is polled after ``poll_interval``, doubling up to host.json
    ``maxPollingInterval`` (1 s when host.json does not set it; ``max_poll_interval`` lowers it),
    as the real host backs off; blob containers are scanned at most 1 s apart. A message sent from this process
    (an output binding, or the app's own ``QueueClient.send_message``) wakes its queue's pump at
    once; the real host does that only for output bindings and otherwise waits out its backoff
    (``wake_on_send=False`` makes every hop wait for a poll, as there). Wake-ups closer than
    ``wake_coalesce`` seconds after a pump's last receive share one receive.
    """

    def __init__(
        self,
        app: str | Path | func.FunctionRegister = "function_app",
        host_json: str | Path | dict[str, Any] | None = None,
        *,
        root: str | Path | None = None,
        connection_string: str | None = None,
        port: int | None = 7071,
        function_key: str | None = None,
        max_workers: int = 8,
        poll_interval: float = 0.1,
        max_poll_interval: float | None = None,
        message_lease: float = 60.0,
        wake_coalesce: float = 0.02,
        wake_on_send: bool = True,
        host_id: str | None = None,
        settings_file: str | Path | None = "local.settings.json",
        timer_intervals: dict[str, float] | None = None,
        run_timers: bool = True,
    ) -> None:
        self.root = Path(root).resolve() if root else REPO_ROOT
        if settings_file is not None:
            settings_path = Path(settings_file)
            if not settings_path.is_absolute():
                settings_path = self.root / settings_path
            load_local_settings(settings_path)
        self.host_json = self._load_host_json(host_json)
        self.queue_settings = QueueSettings.from_host_json(self.host_json)
        http_cfg = self.host_json.get("extensions", {}).get("http", {})
        self.route_prefix = str(http_cfg.get("routePrefix", "api")).strip("/")
        self._connection_override = connection_string
        self.function_key = function_key
        self.max_workers = max_workers
        self.poll_interval = poll_interval
        queues_json = self.host_json.get("extensions", {}).get("queues", {})
        if max_poll_interval is None:  # host.json's maxPollingInterval, else 1 s (not 1 minute)
            max_poll_interval = 1.0 if "maxPollingInterval" not in queues_json else float("inf")
        self.max_poll_interval = min(max_poll_interval, self.queue_settings.max_polling_interval)
        # blob scans: the real host's own schedule, not maxPollingInterval; 1 s at most here
        self.max_blob_poll_interval = min(1.0, self.max_poll_interval)
        self.message_lease = message_lease
        self.wake_coalesce = wake_coalesce
        self.wake_on_send = wake_on_send
        self.timer_intervals = dict(timer_intervals or {})
        self.run_timers = run_timers
        self.module, self.app = self._load_app(app)
        self.host_id = host_id or self._default_host_id()
        self.functions = self._discover()
        self.invocations: deque[Invocation] = deque(maxlen=10_000)
        self.port = port
        # runtime state
        self._lock = threading.Lock()
        self._busy = 0  # invocations queued or running (for wait_idle)
        self._activity = 0  # bumped whenever work starts or ends
        self._stop = threading.Event()
        self._wakers: list[threading.Event] = []
        self._queue_wakers: dict[str, list[threading.Event]] = {}  # queue -> its pumps' wakers
        self._queue_keys: dict[str, str] = {}  # _queue_key(url) -> watched queue name
        self._threads: list[threading.Thread] = []
        self._pool: ThreadPoolExecutor | None = None
        self._server: ThreadingHTTPServer | None = None
        self._blob_clients: dict[str, BlobServiceClient] = {}
        self._queue_clients: dict[tuple[str, str], QueueClient] = {}
        # blob versions handed to a worker and not yet seen with a receipt: a scan that listed
        # receipts just before a worker wrote one must not run the blob again
        self._blobs_claimed: set[tuple[str, str, str, str]] = set()
        self._blob_failures: dict[tuple[str, str, str, str], tuple[int, float]] = {}
        self._timers_running: set[str] = set()
        self._started = False

    # -- loading ----------------------------------------------------------------------------
    def _load_host_json(self, host_json: str | Path | dict[str, Any] | None) -> dict[str, Any]:
        if isinstance(host_json, dict):
            return host_json
        path = Path(host_json) if host_json else self.root / "host.json"
        if not path.is_absolute():
            path = self.root / path
        if not path.is_file():
            if host_json:
                raise HostError(f"host.json not found: {path}")
            return {}
        return dict(json.loads(path.read_text(encoding="utf-8-sig")))

    def _load_app(
        self, app: str | Path | func.FunctionRegister
    ) -> tuple[ModuleType | None, func.FunctionRegister]:
        if isinstance(app, func.FunctionRegister):
            return None, app
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))
        text = str(app)
        if text.endswith(".py") or os.sep in text:
            path = Path(text) if Path(text).is_absolute() else self.root / text
            if str(path.parent) not in sys.path:
                sys.path.insert(0, str(path.parent))
            mod_name = f"{path.stem}_devhost_{uuid.uuid4().hex[:8]}"
            spec = importlib.util.spec_from_file_location(mod_name, path)
            if spec is None or spec.loader is None:
                raise HostError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            module.__devhost_name__ = path.stem  # type: ignore[attr-defined]
            sys.modules[mod_name] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(text)
        found = getattr(module, "app", None)
        if not isinstance(found, func.FunctionRegister):
            found = next(
                (v for v in vars(module).values() if isinstance(v, func.FunctionRegister)), None
            )
        if found is None:
            raise HostError(f"{module.__name__} defines no func.FunctionApp")
        return module, found

    def _default_host_id(self) -> str:
        module = self.module
        name = str(getattr(module, "__devhost_name__", None) or getattr(module, "__name__", "app"))
        return (re.sub(r"[^a-z0-9-]", "-", name.lower()).strip("-") or "app")[:32]

    def _discover(self) -> dict[str, FunctionInfo]:
        self.app.functions_bindings = None  # get_functions() is one-shot otherwise
        allowed = self.host_json.get("functions")
        result: dict[str, FunctionInfo] = {}
        for f in self.app.get_functions():
            name, trig = str(f.get_function_name()), f.get_trigger()
            disabled = os.environ.get(f"AzureWebJobs.{name}.Disabled", "").lower()
            if trig is None:
                continue
            if (allowed is not None and name not in allowed) or disabled in ("1", "true"):
                log.info("function %s is disabled", name)
                continue
            user_fn = f.get_user_function()
            trigger = {k: _enum_value(v) for k, v in trig.get_dict_repr().items()}
            bindings = [
                {k: _enum_value(v) for k, v in b.get_dict_repr().items()} for b in f.get_bindings()
            ]
            info = FunctionInfo(
                name, trigger, bindings, user_fn, dict(inspect.signature(user_fn).parameters)
            )
            self._configure_trigger(info)
            for b in bindings:
                if b["type"] != trigger["type"] and b["type"] not in SUPPORTED_BINDINGS:
                    log.warning(
                        "%s: binding %r (%s) not supported by devhost; passes None",
                        name,
                        b["name"],
                        b["type"],
                    )
            result[name] = info
        return result

    def _configure_trigger(self, f: FunctionInfo) -> None:
        t = f.trigger
        if f.trigger_type == "blobTrigger":
            container, _, rest = resolve_settings(str(t["path"])).partition("/")
            if "{" in container or not rest:
                raise HostError(f"{f.name}: blob path needs a literal container: {t['path']!r}")
            f.container, f.path_template = container, rest
            f.path_regex = path_pattern(rest)
        elif f.trigger_type == "queueTrigger":
            f.queue_name = resolve_settings(str(t["queueName"])).lower()
        elif f.trigger_type == "httpTrigger":
            f.route = compile_route(str(t.get("route") or f.name))
            methods = t.get("methods")
            f.methods = frozenset(str(_enum_value(m)).upper() for m in methods) if methods else None
            f.auth_level = str(t.get("authLevel") or "function").lower()
        elif f.trigger_type == "timerTrigger":
            f.schedule = parse_schedule(str(t["schedule"]))
        else:
            log.warning("%s: trigger %s is not supported by devhost; skipped", f.name, t["type"])

    # -- storage -----------------------------------------------------------------------------
    def connection_string(self, setting: str = STORAGE_SETTING) -> str:
        """The connection string an app setting names (``AzureWebJobs<Name>`` also tried)."""
        if setting == STORAGE_SETTING and self._connection_override:
            return self._connection_override
        for key in (setting, f"AzureWebJobs{setting}"):
            if os.environ.get(key):
                return os.environ[key]
        raise HostError(f"connection setting {setting!r} is not set (env or local.settings.json)")

    def blob_service(self, setting: str = STORAGE_SETTING) -> BlobServiceClient:
        conn = self.connection_string(setting)
        if conn not in self._blob_clients:
            self._blob_clients[conn] = BlobServiceClient.from_connection_string(conn)
        return self._blob_clients[conn]

    def queue_client(self, queue: str, setting: str = STORAGE_SETTING) -> QueueClient:
        conn = self.connection_string(setting)
        key = (conn, queue)
        if key not in self._queue_clients:
            client = QueueServiceClient.from_connection_string(conn).get_queue_client(queue)
            with suppress(ResourceExistsError):
                client.create_queue()
            self._queue_clients[key] = client
        return self._queue_clients[key]

    def _encode(self, body: str | bytes) -> str:
        raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        if self.queue_settings.message_encoding == "base64":
            return base64.b64encode(raw).decode("ascii")
        return raw.decode("utf-8")

    def _decode(self, content: str) -> bytes:
        if self.queue_settings.message_encoding == "base64":
            # strict like .NET's Convert.FromBase64String, which only skips whitespace
            return base64.b64decode("".join(content.split()), validate=True)
        return content.encode("utf-8")

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> LocalHost:
        if self._started:
            return self
        self._stop.clear()
        self._pool = ThreadPoolExecutor(self.max_workers, thread_name_prefix="devhost-fn")
        by_type: dict[str, list[FunctionInfo]] = {}
        for f in self.functions.values():
            by_type.setdefault(f.trigger_type, []).append(f)
        blob_fns = by_type.get("blobTrigger", [])
        if blob_fns:
            with suppress(ResourceExistsError):
                self.blob_service().create_container(RECEIPTS_CONTAINER)
            for f in blob_fns:
                with suppress(ResourceExistsError):
                    self.blob_service(f.connection).create_container(f.container)
            self._spawn("devhost-blobs", self._blob_loop, blob_fns)
        if self.wake_on_send:
            _install_send_hook()
            with _send_lock:
                _send_listeners.append(self._on_send)
        for f in by_type.get("queueTrigger", []):
            client = self.queue_client(f.queue_name, f.connection)  # creates the queue
            self._queue_keys[_queue_key(client.url)] = f.queue_name
            self._spawn(f"devhost-queue-{f.queue_name}", self._queue_loop, f)
        if self.run_timers and by_type.get("timerTrigger"):
            self._spawn("devhost-timers", self._timer_loop, by_type["timerTrigger"])
        if self.port is not None:
            self._start_http()
        self._started = True
        log.info("devhost started: %d functions, host id %s", len(self.functions), self.host_id)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop polling and serving; invocations already running finish first."""
        if not self._started:
            return
        self._stop.set()
        self._kick()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for t in self._threads:
            t.join(timeout)
        self._threads.clear()
        self._wakers.clear()
        self._queue_wakers.clear()
        self._queue_keys.clear()
        with _send_lock:
            if self._on_send in _send_listeners:
                _send_listeners.remove(self._on_send)
        if self._pool is not None:
            self._pool.shutdown(wait=True)  # queued message tasks release their messages
            self._pool = None
        self._started = False
        log.info("devhost stopped")

    def __enter__(self) -> LocalHost:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL of the HTTP server, e.g. ``http://127.0.0.1:7071``."""
        return f"http://127.0.0.1:{self.port}"

    def _spawn(self, name: str, target: Callable[..., None], *args: Any) -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads.append(t)
        t.start()

    def _waker(self) -> threading.Event:
        ev = threading.Event()
        with self._lock:
            self._wakers.append(ev)
        return ev

    def _kick(self) -> None:
        """Wake all pollers now (when a test waits for idle, or the host stops)."""
        with self._lock:
            wakers = list(self._wakers)
        for ev in wakers:
            ev.set()

    def _wake_queues(self, *queues: str) -> None:
        """Wake the pumps of ``queues`` now."""
        with self._lock:
            wakers = [ev for q in queues for ev in self._queue_wakers.get(q, ())]
        for ev in wakers:
            ev.set()

    def _on_send(self, key: str) -> None:
        """A message was sent from this process (see ``_install_send_hook``)."""
        queue = self._queue_keys.get(key)
        if queue is not None:
            self._wake_queues(queue)

    @contextmanager
    def _working(self) -> Iterator[None]:
        self._begin()
        try:
            yield
        finally:
            self._end()

    def _begin(self) -> None:
        with self._lock:
            self._busy += 1
            self._activity += 1

    def _end(self) -> None:
        with self._lock:
            self._busy -= 1
            self._activity += 1

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Block until no work is left: no message (visible or not) in any watched queue, no
        matching blob without a receipt, no invocation queued or running. Received messages
        stay counted in their queue and unreceipted blobs stay pending, so a poll in progress
        cannot slip through. Raises TimeoutError naming what is still pending."""
        if not self._started:
            raise HostError("wait_idle() needs a started host")
        deadline = time.monotonic() + timeout
        self._kick()
        while True:
            with self._lock:
                busy, activity = self._busy, self._activity
            if busy:
                pending = [f"{busy} invocation(s) queued or running"]
            else:
                pending = self.pending_work()
                with self._lock:  # nothing may have started or ended while we looked
                    if not pending and (self._busy, self._activity) == (0, activity):
                        return
            if time.monotonic() > deadline:
                raise TimeoutError(f"devhost not idle after {timeout}s: {'; '.join(pending)}")
            time.sleep(0.05)

    def pending_work(self) -> list[str]:
        """What is left to do in storage for the watched queues and blob paths."""
        pending: list[str] = []
        for f in self.functions.values():
            if f.trigger_type == "queueTrigger":
                props = self.queue_client(f.queue_name, f.connection).get_queue_properties()
                if props.approximate_message_count:
                    pending.append(
                        f"{props.approximate_message_count} message(s) in {f.queue_name}"
                    )
            elif f.trigger_type == "blobTrigger":
                pending += [
                    f"blob {f.container}/{b[0]} for {f.name}" for b in self._pending_blobs(f)
                ]
        return pending

    def _submit(self, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn`` on the pool, counted as busy from now until it returns."""
        assert self._pool is not None
        self._begin()

        def run() -> None:
            try:
                fn(*args)
            except Exception:
                log.exception("devhost: unexpected error in %s", getattr(fn, "__name__", fn))
            finally:
                self._end()

        try:
            self._pool.submit(run)
        except RuntimeError:  # pool shut down
            self._end()
            raise

    # -- invocation --------------------------------------------------------------------------
    def invoke(
        self, f: FunctionInfo, trigger_value: Any, binding_data: dict[str, Any] | None = None
    ) -> Any:
        """Call the user function with its trigger value, bindings and binding data; write its
        output bindings; log and record the invocation. Exceptions propagate."""
        data = dict(binding_data or {})
        inv_id = str(uuid.uuid4())
        kwargs: dict[str, Any] = {f.trigger_param: trigger_value}
        outs: dict[str, tuple[dict[str, Any], _Out]] = {}
        for b in f.bindings:
            name = b["name"]
            if b["type"] == f.trigger_type or name == "$return":
                continue
            if b.get("direction") == 1:  # BindingDirection.OUT
                outs[name] = (b, _Out())
                kwargs[name] = outs[name][1]
            elif b["type"] == "blob":
                kwargs[name] = self._read_input_blob(f, b, data)
            else:
                kwargs[name] = None
        for pname, param in f.params.items():
            if pname in kwargs:
                continue
            if pname == "context":
                kwargs[pname] = _Context(inv_id, f.name, str(self.root))
            elif pname in data:
                kwargs[pname] = data[pname]
            elif param.default is inspect.Parameter.empty and param.kind not in (
                param.VAR_KEYWORD,
                param.VAR_POSITIONAL,
            ):
                kwargs[pname] = None
        started, t0 = time.time(), time.perf_counter()
        try:
            result = f.user_function(**kwargs)
            if inspect.isawaitable(result):
                result = asyncio.run(_await(result))
            returns = [b for b in f.bindings if b["name"] == "$return" and b["type"] != "http"]
            if returns:
                ret = _Out()
                ret.set(result)
                outs["$return"] = (returns[0], ret)
            for binding, out in outs.values():
                self._write_output(binding, out.get(), data)
        except BaseException as exc:
            duration = time.perf_counter() - t0
            self.invocations.append(
                Invocation(f.name, f.trigger_type, inv_id, started, duration, False, repr(exc))
            )
            log.error(
                "Executed 'Functions.%s' (Failed, trigger=%s, Id=%s, Duration=%dms)\n%s",
                f.name,
                f.trigger_type,
                inv_id,
                duration * 1000,
                traceback.format_exc(),
            )
            raise
        duration = time.perf_counter() - t0
        self.invocations.append(Invocation(f.name, f.trigger_type, inv_id, started, duration, True))
        log.info(
            "Executed 'Functions.%s' (Succeeded, trigger=%s, Id=%s, Duration=%dms)",
            f.name,
            f.trigger_type,
            inv_id,
            duration * 1000,
        )
        return result

    def _read_input_blob(self, f: FunctionInfo, b: dict[str, Any], data: dict[str, Any]) -> Any:
        container, _, name = fill_template(str(b["path"]), data).partition("/")
        client = self.blob_service(b.get("connection") or STORAGE_SETTING).get_blob_client(
            container, name
        )
        try:
            content = client.download_blob().readall()
        except ResourceNotFoundError:
            return None
        annotation = f.params[b["name"]].annotation if b["name"] in f.params else None
        if annotation in (bytes, "bytes"):
            return content
        if annotation in (str, "str"):
            return content.decode("utf-8")
        return InputStream(
            name=f"{container}/{name}", uri=client.url, length=len(content), data=content
        )

    def _write_output(self, b: dict[str, Any], value: Any, data: dict[str, Any]) -> None:
        if value is None:
            return
        setting = b.get("connection") or STORAGE_SETTING
        if b["type"] == "queue":
            client = self.queue_client(resolve_settings(str(b["queueName"])).lower(), setting)
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, str | bytes):
                    item = json.dumps(item)
                client.send_message(self._encode(item))
            self._wake_queues(client.queue_name)  # the real host's shared queue watcher
        elif b["type"] == "blob":
            container, _, name = fill_template(str(b["path"]), data).partition("/")
            if isinstance(value, InputStream | func.InputStream):
                value = value.read()
            self.blob_service(setting).get_blob_client(container, name).upload_blob(
                value, overwrite=True
            )
            self._kick()  # a blob trigger may watch it: scan now

    # -- blob triggers -----------------------------------------------------------------------
    def _receipt_prefix(self, f: FunctionInfo) -> str:
        return f"blobreceipts/{self.host_id}/{f.name}/{f.container}/"

    def _pending_blobs(self, f: FunctionInfo) -> list[tuple[str, str, int, dict[str, str]]]:
        """Blobs matching ``f``'s path that have no receipt: (name, etag, size, binding data)."""
        service = self.blob_service(f.connection)
        prefix = self._receipt_prefix(f)
        receipts = {
            b.name[len(prefix) :]
            for b in self.blob_service()
            .get_container_client(RECEIPTS_CONTAINER)
            .list_blobs(name_starts_with=prefix)
        }
        pending = []
        container = service.get_container_client(f.container)
        try:
            for b in container.list_blobs(name_starts_with=literal_prefix(f.path_template)):
                assert f.path_regex is not None
                m = f.path_regex.match(b.name)
                etag = _strip_etag(b.etag)
                if m and f"{b.name}/{etag}" not in receipts:
                    pending.append((b.name, etag, b.size, m.groupdict()))
        except ResourceNotFoundError:
            pass
        return pending

    def _blob_loop(self, fns: list[FunctionInfo]) -> None:
        waker, interval = self._waker(), self.poll_interval
        while not self._stop.is_set():
            submitted = 0
            for f in fns:
                try:
                    submitted += self._scan(f)
                except Exception as exc:  # storage down: keep polling
                    log.warning("blob scan for %s failed: %s", f.name, exc)
            interval = (
                self.poll_interval if submitted else min(interval * 2, self.max_blob_poll_interval)
            )
            if waker.wait(interval):
                waker.clear()
                interval = self.poll_interval

    def _scan(self, f: FunctionInfo) -> int:
        submitted = 0
        now = time.monotonic()
        pending = self._pending_blobs(f)
        keys = {(f.name, f.container, name, etag) for name, etag, _, _ in pending}
        with self._lock:  # claims whose receipt is now listed (or whose blob is gone) can go
            self._blobs_claimed = {k for k in self._blobs_claimed if k[0] != f.name or k in keys}
            for k in [k for k in self._blob_failures if k[0] == f.name and k not in keys]:
                del self._blob_failures[k]
        for name, etag, size, data in pending:
            key = (f.name, f.container, name, etag)
            with self._lock:
                if key in self._blobs_claimed or self._blob_failures.get(key, (0, 0))[1] > now:
                    continue
                self._blobs_claimed.add(key)
            try:
                self._submit(self._process_blob, f, name, etag, size, data)
                submitted += 1
            except RuntimeError:
                with self._lock:
                    self._blobs_claimed.discard(key)
        return submitted

    def _process_blob(
        self, f: FunctionInfo, name: str, etag: str, size: int, data: dict[str, str]
    ) -> None:
        key = (f.name, f.container, name, etag)
        release = True  # give the claim back unless a receipt was written (or is moot)
        try:
            if self._stop.is_set():
                return
            client = self.blob_service(f.connection).get_blob_client(f.container, name)
            try:
                downloader = client.download_blob(
                    etag=f'"{etag}"', match_condition=MatchConditions.IfNotModified
                )
                content = downloader.readall()
            except (ResourceNotFoundError, ResourceModifiedError):
                release = False  # deleted or overwritten since the scan: this version is moot
                return
            stream = InputStream(
                name=f"{f.container}/{name}",
                uri=client.url,
                length=len(content),
                data=content,
                blob_properties={
                    "ETag": etag,
                    "Length": size,
                    "ContentType": downloader.properties.content_settings.content_type,
                },
                metadata=dict(downloader.properties.metadata or {}),
            )
            binding_data = {**data, "blobTrigger": f"{f.container}/{name}", "uri": client.url}
            try:
                self.invoke(f, stream, binding_data)
            except Exception:
                with self._lock:
                    count = self._blob_failures.get(key, (0, 0.0))[0] + 1
                    retry_at = time.monotonic() + self.queue_settings.visibility_timeout
                    self._blob_failures[key] = (count, retry_at)
                if count < self.queue_settings.max_dequeue_count:
                    return
                self._blob_poison(f, name, etag, count)
            self._write_receipt(f, name, etag)
            release = False
            with self._lock:
                self._blob_failures.pop(key, None)
        finally:
            if release:
                with self._lock:
                    self._blobs_claimed.discard(key)

    def _write_receipt(self, f: FunctionInfo, name: str, etag: str) -> None:
        receipt = self.blob_service().get_blob_client(
            RECEIPTS_CONTAINER, f"{self._receipt_prefix(f)}{name}/{etag}"
        )
        with suppress(ResourceExistsError):
            receipt.upload_blob(b"", overwrite=False)  # create-once

    def _blob_poison(self, f: FunctionInfo, name: str, etag: str, tries: int) -> None:
        message = {
            "Type": "BlobTrigger",
            "FunctionId": f"Host.Functions.{f.name}",
            "BlobType": "BlockBlob",
            "ContainerName": f.container,
            "BlobName": name,
            "ETag": f'"{etag}"',
        }
        body = base64.b64encode(json.dumps(message).encode()).decode("ascii")
        self.queue_client(BLOB_POISON_QUEUE).send_message(body)
        log.error(
            "%s: blob %s/%s failed %d times; moved to %s",
            f.name,
            f.container,
            name,
            tries,
            BLOB_POISON_QUEUE,
        )

    # -- queue triggers ----------------------------------------------------------------------
    def _queue_loop(self, f: FunctionInfo) -> None:
        qs = self.queue_settings
        client = self.queue_client(f.queue_name, f.connection)
        in_flight: dict[str, _InFlight] = {}
        waker, interval = self._waker(), self.poll_interval
        with self._lock:
            self._queue_wakers.setdefault(f.queue_name, []).append(waker)
        last_receive = 0.0
        while not self._stop.is_set():
            self._renew_leases(client, in_flight)
            received = 0
            if len(in_flight) <= qs.new_batch_threshold:
                last_receive = time.monotonic()
                try:
                    pages = client.receive_messages(
                        messages_per_page=qs.batch_size,
                        visibility_timeout=int(self.message_lease),
                    ).by_page()
                    for msg in next(pages, []):  # one request: a single batch
                        received += 1
                        rec = _InFlight(msg, msg.pop_receipt or "")
                        with self._lock:
                            in_flight[msg.id] = rec
                        self._submit(self._process_message, f, client, rec, in_flight)
                except RuntimeError:  # pool shut down while stopping
                    break
                except Exception as exc:
                    log.warning("receive from %s failed: %s", f.queue_name, exc)
            if received:
                interval = self.poll_interval
                continue
            interval = min(interval * 2, self.max_poll_interval)
            if waker.wait(interval):
                waker.clear()
                interval = self.poll_interval
                # invocations end in bursts, each waking this pump: one receive serves a burst
                self._stop.wait(last_receive + self.wake_coalesce - time.monotonic())

    def _renew_leases(self, client: QueueClient, in_flight: dict[str, _InFlight]) -> None:
        now = time.monotonic()
        with self._lock:
            records = list(in_flight.values())
        for rec in records:
            if now - rec.renewed < self.message_lease / 2:
                continue
            with rec.lock:
                if rec.done:
                    continue
                try:
                    r = client.update_message(
                        rec.message.id, rec.pop_receipt, visibility_timeout=int(self.message_lease)
                    )
                    rec.pop_receipt, rec.renewed = r.pop_receipt or rec.pop_receipt, now
                except Exception as exc:
                    log.warning("could not renew message %s: %s", rec.message.id, exc)

    def _process_message(
        self, f: FunctionInfo, client: QueueClient, rec: _InFlight, in_flight: dict[str, _InFlight]
    ) -> None:
        msg, qs = rec.message, self.queue_settings
        dequeue_count = msg.dequeue_count or 0
        try:
            if self._stop.is_set():  # never started: make it visible again for the next run
                self._finish(client, rec, visibility=0)
                return
            if dequeue_count > qs.max_dequeue_count:  # e.g. the host died mid-invocation
                self._poison_message(f, client, rec)
                return
            try:
                body = self._decode(msg.content)
                binding_data = self._message_binding_data(msg, body)
                trigger = QueueMessage(
                    id=msg.id,
                    body=body,
                    dequeue_count=msg.dequeue_count,
                    expiration_time=msg.expires_on,
                    insertion_time=msg.inserted_on,
                    time_next_visible=msg.next_visible_on,
                    pop_receipt=rec.pop_receipt,
                )
            except (binascii.Error, ValueError) as exc:
                log.error(
                    "%s: message %s is not valid %s: %s", f.name, msg.id, qs.message_encoding, exc
                )
                ok = False
            else:
                try:
                    self.invoke(f, trigger, binding_data)
                    ok = True
                except Exception:
                    ok = False
            if ok:
                self._finish(client, rec, delete=True)
            elif dequeue_count >= qs.max_dequeue_count:
                self._poison_message(f, client, rec)
            else:
                self._finish(client, rec, visibility=qs.visibility_timeout)
        finally:
            with self._lock:
                in_flight.pop(msg.id, None)
                freed = len(in_flight) == qs.new_batch_threshold  # the pump may fetch again
            if freed:
                self._wake_queues(f.queue_name)

    @staticmethod
    def _message_binding_data(msg: StorageMessage, body: bytes) -> dict[str, Any]:
        data: dict[str, Any] = {
            "Id": msg.id,
            "DequeueCount": msg.dequeue_count,
            "InsertionTime": msg.inserted_on,
            "ExpirationTime": msg.expires_on,
            "NextVisibleTime": msg.next_visible_on,
            "PopReceipt": msg.pop_receipt,
        }
        with suppress(ValueError):
            payload = json.loads(body)
            if isinstance(payload, dict):
                data.update(payload)
        return data

    def _finish(
        self, client: QueueClient, rec: _InFlight, *, delete: bool = False, visibility: float = 0
    ) -> None:
        with rec.lock:
            rec.done = True
            try:
                if delete:
                    client.delete_message(rec.message.id, rec.pop_receipt)
                else:
                    client.update_message(
                        rec.message.id, rec.pop_receipt, visibility_timeout=int(visibility)
                    )
            except ResourceNotFoundError:
                log.warning("message %s vanished (lease lost?)", rec.message.id)

    def _poison_message(self, f: FunctionInfo, client: QueueClient, rec: _InFlight) -> None:
        poison = f"{f.queue_name}-poison"
        self.queue_client(poison, f.connection).send_message(rec.message.content)  # as received
        self._finish(client, rec, delete=True)
        log.error(
            "%s: message %s failed %d times; moved to %s",
            f.name,
            rec.message.id,
            rec.message.dequeue_count,
            poison,
        )

    # -- timers ------------------------------------------------------------------------------
    def _timer_loop(self, fns: list[FunctionInfo]) -> None:
        now = datetime.now(UTC)
        due = {
            f.name: now if f.trigger.get("runOnStartup") else self._next_due(f, now) for f in fns
        }
        while not self._stop.is_set():
            now = datetime.now(UTC)
            for f in fns:
                if due[f.name] <= now:
                    due[f.name] = self._next_due(f, now)
                    with self._lock:
                        if f.name in self._timers_running:
                            continue  # the real host never overlaps runs of one timer
                        self._timers_running.add(f.name)
                    try:
                        self._submit(self._run_timer, f, False)
                    except RuntimeError:
                        return
            wait = min((d - datetime.now(UTC)).total_seconds() for d in due.values())
            self._stop.wait(max(0.01, min(wait, 1.0)))

    def _next_due(self, f: FunctionInfo, now: datetime) -> datetime:
        interval = self.timer_intervals.get(f.name)
        if interval is not None:
            return datetime.fromtimestamp(now.timestamp() + interval, UTC)
        assert f.schedule is not None
        return f.schedule.next_after(now)

    def _run_timer(self, f: FunctionInfo, past_due: bool) -> None:
        try:
            self.invoke(f, TimerRequest(past_due=past_due))
        except Exception:
            pass  # logged by invoke; timers are not retried
        finally:
            with self._lock:
                self._timers_running.discard(f.name)

    def run_timer(self, name: str) -> Any:
        """Invoke a timer function now, synchronously (like the admin endpoint)."""
        return self.invoke(self.functions[name], TimerRequest(past_due=False))

    # -- HTTP --------------------------------------------------------------------------------
    def _start_http(self) -> None:
        host = self

        class Handler(_HttpHandler):
            local_host = host

        server = ThreadingHTTPServer(("127.0.0.1", self.port or 0), Handler)
        server.daemon_threads = True
        server.block_on_close = False  # keep-alive clients must not block stop()
        self._server = server
        self.port = server.server_address[1]
        t = threading.Thread(target=server.serve_forever, args=(0.2,), name="devhost-http")
        t.daemon = True
        t.start()

    def _routes(self) -> list[FunctionInfo]:
        http = [f for f in self.functions.values() if f.route is not None]
        # literal routes win over parameterized ones, longer literals over shorter
        return sorted(http, key=lambda f: (f.route.n_params, -f.route.n_literal))  # type: ignore[union-attr]

    def handle_http(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """Route one request: returns (status, headers, body). Used by the HTTP server."""
        parts = urlsplit(target)
        # like ASP.NET Core routing in the real host: segments are decoded, but an encoded slash
        # stays "%2F" inside its segment (a route value), it never splits the path
        path = "/".join(unquote(s).replace("/", "%2F") for s in parts.path.split("/")).strip("/")
        if path.lower() == "admin/host/status":  # what tools poll to see the host is up
            return _json_response(200, {"id": self.host_id, "state": "Running"})
        prefix = self.route_prefix
        if prefix:
            if path.lower() != prefix.lower() and not path.lower().startswith(prefix.lower() + "/"):
                return _json_response(404, {"error": "not found", "path": parts.path})
            path = path[len(prefix) :].strip("/")
        matches = [(f, m) for f in self._routes() if (m := f.route.match(path)) is not None]  # type: ignore[union-attr]
        if not matches:
            return _json_response(404, {"error": "not found", "path": parts.path})
        allowed = [(f, m) for f, m in matches if f.methods is None or method in f.methods]
        if not allowed:
            methods = sorted({m for f, _ in matches for m in (f.methods or ())})
            status, hdrs, payload = _json_response(405, {"error": "method not allowed"})
            return status, {**hdrs, "Allow": ", ".join(methods)}, payload
        f, route_params = allowed[0]
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        if f.auth_level != "anonymous" and self.function_key is not None:
            lower = {k.lower(): v for k, v in headers.items()}
            supplied = params.get("code") or lower.get("x-functions-key")
            if supplied != self.function_key:
                return 401, {"Content-Length": "0"}, b""
        url = f"{self.url}{parts.path}" + (f"?{parts.query}" if parts.query else "")
        request = func.HttpRequest(
            method, url, headers=headers, params=params, route_params=route_params, body=body
        )
        with self._working():
            try:
                result = self.invoke(f, request, {**route_params, **params})
            except Exception as exc:
                return _json_response(
                    500, {"error": "function failed", "function": f.name, "detail": repr(exc)}
                )
        return _http_result(result)


def _json_response(status: int, payload: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json; charset=utf-8"}, json.dumps(payload).encode()


def _http_result(result: Any) -> tuple[int, dict[str, str], bytes]:
    if isinstance(result, func.HttpResponse):
        headers = dict(result.headers.items())
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = f"{result.mimetype}; charset={result.charset}"
        return int(result.status_code), headers, result.get_body() or b""
    if result is None:
        return 204, {}, b""
    if isinstance(result, bytes):
        return 200, {"Content-Type": "application/octet-stream"}, result
    if isinstance(result, str):
        return 200, {"Content-Type": "text/plain; charset=utf-8"}, result.encode()
    return _json_response(200, result)


async def _await(awaitable: Any) -> Any:
    return await awaitable


class _HttpHandler(BaseHTTPRequestHandler):
    local_host: LocalHost
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections end after this

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items()}
        status, out_headers, payload = self.local_host.handle_http(
            self.command, self.path, headers, body
        )
        self.send_response(status)
        for k, v in out_headers.items():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _handle

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.debug("http %s - %s", self.address_string(), format % args)
