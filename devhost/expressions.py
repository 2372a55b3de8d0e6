"""Small parsers the local host needs: host.json TimeSpans, binding expressions in blob paths,
HTTP route templates and NCRONTAB timer schedules.

Owns only pure functions (no I/O), so each is easy to unit test.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

# -- TimeSpan -------------------------------------------------------------------------------
_TIMESPAN = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2}(?:\.\d+)?)$")


def timespan_seconds(value: str | float | int | None, default: float = 0.0) -> float:
    """Seconds in a .NET TimeSpan string such as ``"00:00:30"`` or ``"1.02:00:00"``."""
    if value is None or value == "":
        return default
    if isinstance(value, int | float):
        return float(value)
    m = _TIMESPAN.match(value.strip())
    if not m:
        raise ValueError(f"not a TimeSpan (expected [d.]hh:mm:ss[.fff]): {value!r}")
    days, hours, minutes, seconds = m.groups()
    return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


# -- app settings and binding expressions ----------------------------------------------------
_SETTING = re.compile(r"%([^%]+)%")
_EXPR = re.compile(r"\{([^{}]+)\}")


def resolve_settings(text: str, env: Mapping[str, str] | None = None) -> str:
    """Replace ``%Name%`` with the app setting (environment variable) ``Name``."""
    env = os.environ if env is None else env

    def repl(m: re.Match[str]) -> str:
        if m.group(1) not in env:
            raise KeyError(f"app setting {m.group(1)!r} used in {text!r} is not set")
        return env[m.group(1)]

    return _SETTING.sub(repl, text)


def path_pattern(template: str) -> re.Pattern[str]:
    """A regex for a blob path template (without container): ``{x}`` captures greedily, like
    the WebJobs SDK's ``(?<x>.*)``; everything else is literal."""
    out, pos = ["^"], 0
    for m in _EXPR.finditer(template):
        out.append(re.escape(template[pos : m.start()]))
        name = m.group(1).strip()
        if not name.isidentifier():
            raise ValueError(f"unsupported binding expression {{{name}}} in {template!r}")
        out.append(f"(?P<{name}>.*)")
        pos = m.end()
    out.append(re.escape(template[pos:]) + "$")
    return re.compile("".join(out))


def literal_prefix(template: str) -> str:
    """The part of a path template before its first binding expression (a listing prefix)."""
    return template.split("{", 1)[0]


def fill_template(template: str, data: Mapping[str, Any]) -> str:
    """Resolve ``{name}``, ``{rand-guid}`` and ``{DateTime}`` in an output binding path."""

    def repl(m: re.Match[str]) -> str:
        key = m.group(1).strip()
        low = key.lower()
        if low in ("rand-guid", "sys.randguid"):
            return str(uuid.uuid4())
        if low in ("datetime", "sys.utcnow"):
            return datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%SZ")
        for k, v in data.items():
            if k.lower() == low:
                return str(v)
        raise KeyError(f"binding expression {{{key}}} in {template!r} has no value")

    return _EXPR.sub(repl, resolve_settings(template))


# -- HTTP route templates --------------------------------------------------------------------
_CONSTRAINTS = {
    "int": r"-?\d+",
    "long": r"-?\d+",
    "alpha": r"[A-Za-z]+",
    "bool": r"(?i:true|false)",
    "guid": r"[0-9A-Fa-f]{8}-?(?:[0-9A-Fa-f]{4}-?){3}[0-9A-Fa-f]{12}",
    "double": r"-?\d+(?:\.\d+)?",
    "float": r"-?\d+(?:\.\d+)?",
    "decimal": r"-?\d+(?:\.\d+)?",
}


@dataclass(frozen=True)
class Route:
    template: str
    regex: re.Pattern[str]
    n_params: int
    n_literal: int

    def match(self, path: str) -> dict[str, str] | None:
        m = self.regex.fullmatch(path)
        if m is None:
            return None
        return {k: v for k, v in m.groupdict().items() if v is not None}


def _segment_param(body: str) -> tuple[str, str, bool]:
    """Split ``name:constraint?`` into (name, regex, optional)."""
    catch_all = body.startswith("*")
    body = body.lstrip("*")
    optional = body.endswith("?")
    body = body.rstrip("?")
    name, _, constraint = body.partition(":")
    if catch_all:
        rx = ".*"
    elif not constraint:
        rx = "[^/]+"
    elif constraint.startswith("regex(") and constraint.endswith(")"):
        rx = constraint[len("regex(") : -1]
    else:
        rx = _CONSTRAINTS.get(constraint.split("(", 1)[0].lower(), "[^/]+")
    return name.strip(), rx, optional or catch_all


def compile_route(template: str) -> Route:
    """ASP.NET-style route template -> Route. Supports ``{p}``, ``{p?}``, ``{p:int}``,
    ``{p:regex(...)}`` and catch-all ``{*p}``; literals match case-insensitively."""
    template = template.strip("/")
    parts: list[str] = []
    n_params = n_literal = 0
    for i, segment in enumerate(template.split("/") if template else []):
        sep = "/" if i else ""
        full = re.fullmatch(r"\{([^{}]+)\}", segment)
        if full:  # a whole-segment parameter may be optional: the separator goes with it
            name, rx, optional = _segment_param(full.group(1))
            n_params += 1
            group = f"(?P<{name}>{rx})"
            parts.append(f"(?:{sep}{group})?" if optional else f"{sep}{group}")
            continue
        pieces, pos = [sep], 0
        for m in _EXPR.finditer(segment):
            pieces.append(re.escape(segment[pos : m.start()]))
            name, rx, _ = _segment_param(m.group(1))
            pieces.append(f"(?P<{name}>{rx})")
            n_params += 1
            pos = m.end()
        pieces.append(re.escape(segment[pos:]))
        n_literal += len(_EXPR.sub("", segment))
        parts.append("".join(pieces))
    return Route(template, re.compile("".join(parts), re.IGNORECASE), n_params, n_literal)


# -- NCRONTAB --------------------------------------------------------------------------------
_NAMES = {
    name: i
    for names in (
        ["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
        ["", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
    )
    for i, name in enumerate(names)
    if name
}
_FIELDS = [(0, 59), (0, 59), (0, 23), (1, 31), (1, 12), (0, 6)]  # sec min hour day month dow


def _cron_field(text: str, lo: int, hi: int) -> frozenset[int]:
    values: set[int] = set()
    for part in text.lower().split(","):
        base, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if base in ("*", "?"):
            start, end = lo, hi
        elif "-" in base:
            a, b = base.split("-", 1)
            start, end = int(_NAMES.get(a, a)), int(_NAMES.get(b, b))
        else:
            start = int(_NAMES.get(base, base))
            end = hi if step_text else start
        if step < 1 or start < lo or end > hi + (1 if hi == 6 else 0):  # dow may say 7 = Sunday
            raise ValueError(f"cron field {text!r} out of range {lo}-{hi}")
        values.update(v % 7 if hi == 6 else v for v in range(start, end + 1, step))
    return frozenset(values)


@dataclass(frozen=True)
class Schedule:
    """A parsed timer schedule: six-field NCRONTAB or a TimeSpan interval."""

    expression: str
    fields: tuple[frozenset[int], ...] | None
    interval: float | None

    def next_after(self, after: datetime) -> datetime:
        """The first occurrence strictly after ``after`` (aware UTC datetimes)."""
        if self.interval is not None:
            return after + timedelta(seconds=self.interval)
        assert self.fields is not None
        sec, minute, hour, day, month, dow = self.fields
        t = after.replace(microsecond=0) + timedelta(seconds=1)
        limit = t + timedelta(days=366 * 5)
        while t < limit:
            weekday = (t.weekday() + 1) % 7  # Python: Monday=0; cron: Sunday=0
            if t.month not in month or t.day not in day or weekday not in dow:
                t = (t + timedelta(days=1)).replace(hour=0, minute=0, second=0)
            elif t.hour not in hour:
                t = (t + timedelta(hours=1)).replace(minute=0, second=0)
            elif t.minute not in minute:
                t = (t + timedelta(minutes=1)).replace(second=0)
            elif t.second not in sec:
                t += timedelta(seconds=1)
            else:
                return t
        raise ValueError(f"schedule {self.expression!r} never fires")


def parse_schedule(expression: str) -> Schedule:
    """``"*/5 * * * * *"`` (sec min hour day month dow) or a TimeSpan like ``"00:00:10"``."""
    text = resolve_settings(expression).strip()
    if _TIMESPAN.match(text):
        seconds = timespan_seconds(text)
        if seconds <= 0:
            raise ValueError(f"timer interval must be positive: {expression!r}")
        return Schedule(expression, None, seconds)
    parts = text.split()
    if len(parts) != 6:
        raise ValueError(f"NCRONTAB needs 6 fields (sec min hour day month dow): {expression!r}")
    fields = tuple(_cron_field(p, lo, hi) for p, (lo, hi) in zip(parts, _FIELDS, strict=True))
    return Schedule(expression, fields, None)
