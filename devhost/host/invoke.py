"""Invoking one function: its arguments, its output bindings, its log line and record.

Owns: building the keyword arguments of a user function (the trigger value, ``func.Out`` for
output bindings, blob input bindings read from storage, ``context``, binding data by name),
awaiting a coroutine function, writing queue and blob output bindings (and waking whatever
watches what was written), logging ``Executed 'Functions.X'`` as the real host does, and
recording each invocation in ``LocalHost.invocations``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import azure.functions as func
from azure.core.exceptions import ResourceNotFoundError
from azure.functions.blob import InputStream

from ..expressions import fill_template, resolve_settings
from .config import STORAGE_SETTING
from .discovery import FunctionInfo
from .storage import StorageClients, encode_message

log = logging.getLogger("devhost")


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


async def _await(awaitable: Any) -> Any:
    return await awaitable


class Invoker:
    """Calls user functions with their bindings. ``wake_queues`` and ``kick`` are told what an
    output binding wrote: a queue's name, or that blobs changed."""

    def __init__(
        self,
        storage: StorageClients,
        *,
        root: Path,
        message_encoding: str,
        invocations: deque[Invocation],
        wake_queues: Callable[..., None],
        kick: Callable[[], None],
    ) -> None:
        self.storage = storage
        self.root = root
        self.message_encoding = message_encoding
        self.invocations = invocations
        self._wake_queues = wake_queues
        self._kick = kick

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
        client = self.storage.blob_service(b.get("connection") or STORAGE_SETTING).get_blob_client(
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
            queue = resolve_settings(str(b["queueName"])).lower()
            client = self.storage.queue_client(queue, setting)
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, str | bytes):
                    item = json.dumps(item)
                client.send_message(encode_message(item, self.message_encoding))
            self._wake_queues(client.queue_name)  # the real host's shared queue watcher
        elif b["type"] == "blob":
            container, _, name = fill_template(str(b["path"]), data).partition("/")
            if isinstance(value, InputStream | func.InputStream):
                value = value.read()
            self.storage.blob_service(setting).get_blob_client(container, name).upload_blob(
                value, overwrite=True
            )
            self._kick()  # a blob trigger may watch it: scan now
