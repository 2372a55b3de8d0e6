"""``LocalHost``: the local stand-in for ``func start``, composed of the host's parts.

Owns: the constructor's settings (root, local.settings.json, host.json, polling, keys), putting
the parts together (discovery, storage clients, the runtime, the invoker, the blob trigger, one
queue pump per queue, timers, the HTTP router and server), starting and stopping them in order,
and ``wait_idle``: no work left in storage and none running.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import Any

import azure.functions as func
from azure.functions.timer import TimerRequest
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient

from .blobs import BlobTrigger
from .config import (
    REPO_ROOT,
    STORAGE_SETTING,
    HostError,
    QueueSettings,
    load_host_json,
    load_local_settings,
)
from .discovery import FunctionInfo, default_host_id, discover, load_app
from .http_server import HttpRouter, HttpServer
from .invoke import Invocation, Invoker
from .queues import PumpTiming, QueuePump
from .runtime import Runtime
from .send_hook import SendWatcher
from .storage import StorageClients
from .timers import Timers

log = logging.getLogger("devhost")


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

    The polling and timing settings are read when the host is built: set them through the
    constructor.
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
        self.host_json = load_host_json(host_json, self.root)
        self.queue_settings = QueueSettings.from_host_json(self.host_json)
        http_cfg = self.host_json.get("extensions", {}).get("http", {})
        self.route_prefix = str(http_cfg.get("routePrefix", "api")).strip("/")
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
        self.module, self.app = load_app(app, self.root)
        self.host_id = host_id or default_host_id(self.module)
        self.functions = discover(self.app, self.host_json)
        self.invocations: deque[Invocation] = deque(maxlen=10_000)
        self.port = port
        self._started = False
        self._compose(connection_string)

    def _compose(self, connection_string: str | None) -> None:
        """Build the parts that outlive a start: storage, runtime, invoker, triggers, HTTP."""
        by_type: dict[str, list[FunctionInfo]] = {}
        for f in self.functions.values():
            by_type.setdefault(f.trigger_type, []).append(f)
        self._queue_functions = by_type.get("queueTrigger", [])
        self._storage = StorageClients(connection_string)
        self._runtime = Runtime()
        self._sends = SendWatcher(self._runtime.wake_queues)
        self._invoker = Invoker(
            self._storage,
            root=self.root,
            message_encoding=self.queue_settings.message_encoding,
            invocations=self.invocations,
            wake_queues=self._runtime.wake_queues,
            kick=self._runtime.kick,
        )
        self._blobs = BlobTrigger(
            by_type.get("blobTrigger", []),
            host_id=self.host_id,
            storage=self._storage,
            runtime=self._runtime,
            invoker=self._invoker,
            queue_settings=self.queue_settings,
            poll_interval=self.poll_interval,
            max_poll_interval=self.max_blob_poll_interval,
        )
        self._pump_timing = PumpTiming(
            poll_interval=self.poll_interval,
            max_poll_interval=self.max_poll_interval,
            message_lease=self.message_lease,
            wake_coalesce=self.wake_coalesce,
        )
        self._timers = Timers(
            by_type.get("timerTrigger", []),
            runtime=self._runtime,
            invoker=self._invoker,
            intervals=self.timer_intervals,
        )
        self._router = HttpRouter(
            self.functions,
            route_prefix=self.route_prefix,
            function_key=self.function_key,
            host_id=self.host_id,
            base_url=lambda: self.url,
            runtime=self._runtime,
            invoker=self._invoker,
        )
        self._http = HttpServer(self.handle_http)

    # -- storage -----------------------------------------------------------------------------
    def connection_string(self, setting: str = STORAGE_SETTING) -> str:
        """The connection string an app setting names (``AzureWebJobs<Name>`` also tried)."""
        return self._storage.connection_string(setting)

    def blob_service(self, setting: str = STORAGE_SETTING) -> BlobServiceClient:
        return self._storage.blob_service(setting)

    def queue_client(self, queue: str, setting: str = STORAGE_SETTING) -> QueueClient:
        return self._storage.queue_client(queue, setting)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> LocalHost:
        if self._started:
            return self
        self._runtime.open(self.max_workers)
        self._blobs.start()
        if self.wake_on_send:
            self._sends.listen()
        for f in self._queue_functions:
            pump = QueuePump(
                f,
                storage=self._storage,
                runtime=self._runtime,
                invoker=self._invoker,
                queue_settings=self.queue_settings,
                timing=self._pump_timing,
            )
            self._sends.watch(f.queue_name, pump.client)
            pump.start()
        if self.run_timers:
            self._timers.start()
        if self.port is not None:
            self.port = self._http.start(self.port or 0)
        self._started = True
        log.info("devhost started: %d functions, host id %s", len(self.functions), self.host_id)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop polling and serving; invocations already running finish first."""
        if not self._started:
            return
        self._runtime.halt()
        self._http.stop()
        self._runtime.join(timeout)
        self._sends.close()
        self._runtime.close()
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

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Block until no work is left: no message (visible or not) in any watched queue, no
        matching blob without a receipt, no invocation queued or running. Received messages
        stay counted in their queue and unreceipted blobs stay pending, so a poll in progress
        cannot slip through. Raises TimeoutError naming what is still pending."""
        if not self._started:
            raise HostError("wait_idle() needs a started host")
        deadline = time.monotonic() + timeout
        self._runtime.kick()
        while True:
            busy, activity = self._runtime.counts()
            if busy:
                pending = [f"{busy} invocation(s) queued or running"]
            else:
                pending = self.pending_work()
                # nothing may have started or ended while we looked
                if not pending and self._runtime.counts() == (0, activity):
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
                    f"blob {f.container}/{b[0]} for {f.name}" for b in self._blobs.pending_blobs(f)
                ]
        return pending

    # -- invocation --------------------------------------------------------------------------
    def invoke(
        self, f: FunctionInfo, trigger_value: Any, binding_data: dict[str, Any] | None = None
    ) -> Any:
        """Call the user function with its trigger value, bindings and binding data; write its
        output bindings; log and record the invocation. Exceptions propagate."""
        return self._invoker.invoke(f, trigger_value, binding_data)

    def run_timer(self, name: str) -> Any:
        """Invoke a timer function now, synchronously (like the admin endpoint)."""
        return self.invoke(self.functions[name], TimerRequest(past_due=False))

    def handle_http(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """Route one request: returns (status, headers, body). Used by the HTTP server."""
        return self._router.handle(method, target, headers, body)
