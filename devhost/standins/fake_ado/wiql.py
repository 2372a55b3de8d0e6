"""WIQL, the flat subset the product uses (the package docstring says which): ``parse_wiql``, and
a work item matched against one condition (``_matches``); date fields compare by day unless the
request asks for ``timePrecision``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from devhost.standins.fake_ado.replies import _Reply

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
    """The subset of flat WIQL the product uses (see the package docstring)."""
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
