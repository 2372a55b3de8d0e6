"""Discovery: the app's functions and their bindings, as the host sees them.

Owns: importing the app (a module name, a ``.py`` file or a ``func.FunctionApp`` object), the
host id derived from it, and reading ``app.get_functions()`` into ``FunctionInfo`` records with
each trigger's specifics resolved (blob container and path pattern, queue name, HTTP route,
methods and auth level, timer schedule). host.json ``functions`` and
``AzureWebJobs.{name}.Disabled`` leave functions out; bindings the host cannot serve are named in a
warning.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import os
import re
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import azure.functions as func

from ..expressions import (
    Route,
    Schedule,
    compile_route,
    parse_schedule,
    path_pattern,
    resolve_settings,
)
from .config import STORAGE_SETTING, HostError

log = logging.getLogger("devhost")

SUPPORTED_BINDINGS = {"queue", "blob", "http"}


def _enum_value(value: Any) -> Any:
    return getattr(value, "value", value)


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


def load_app(
    app: str | Path | func.FunctionRegister, root: Path
) -> tuple[ModuleType | None, func.FunctionRegister]:
    """The app's module (None when given the app object) and its ``func.FunctionApp``."""
    if isinstance(app, func.FunctionRegister):
        return None, app
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    text = str(app)
    if text.endswith(".py") or os.sep in text:
        path = Path(text) if Path(text).is_absolute() else root / text
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
        mod_name = f"{path.stem}_devhost_{uuid.uuid4().hex[:8]}"
        spec = importlib.util.spec_from_file_location(mod_name, path)
        if spec is None or spec.loader is None:
            raise HostError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        vars(module)["__devhost_name__"] = path.stem  # default_host_id reads it
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


def default_host_id(module: ModuleType | None) -> str:
    """A host id from the app module's name (``app`` when there is no module)."""
    name = str(getattr(module, "__devhost_name__", None) or getattr(module, "__name__", "app"))
    return (re.sub(r"[^a-z0-9-]", "-", name.lower()).strip("-") or "app")[:32]


def discover(app: func.FunctionRegister, host_json: dict[str, Any]) -> dict[str, FunctionInfo]:
    """The enabled functions of ``app`` by name, their triggers configured."""
    app.functions_bindings = None  # get_functions() is one-shot otherwise
    allowed = host_json.get("functions")
    result: dict[str, FunctionInfo] = {}
    for f in app.get_functions():
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
        configure_trigger(info)
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


def configure_trigger(f: FunctionInfo) -> None:
    """Fill ``f``'s trigger specifics from its trigger binding."""
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
