"""What the stand-in records of each request (``standin.requests``): its route, path, headers and
parsed body, how it was answered, its timing and the usage reported; ``Matcher`` selects the
requests a scripted reply is for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recorded:
    route: str  # "chat" | "embeddings" | "models"
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    deployment: str | None
    answered_with: str = ""  # "limited" | "scripted:<kind>" | "failure:<kind>" | "auto"
    status: int = 200
    counted: int = 0  # tokens counted against the quota (with ``limits``; 0 when refused)
    arrived: float = 0.0  # time.time() when the request arrived
    answered: float = 0.0  # time.time() when the answer was ready to send
    usage: dict[str, int] = field(default_factory=dict)  # the usage the answer reported

    @property
    def schema_name(self) -> str | None:
        fmt = self.body.get("response_format") or {}
        return (fmt.get("json_schema") or {}).get("name")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def prompt(self) -> str:
        """All message contents, joined."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)

    @property
    def user_prompt(self) -> str:
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[0].get("content") or "") if users else ""

    @property
    def temperature(self) -> float | None:
        return self.body.get("temperature")

    @property
    def retry_count(self) -> int:
        return int(self.headers.get("x-stainless-retry-count", "0") or 0)

    @property
    def model(self) -> str | None:
        return self.deployment or self.body.get("model")


Matcher = str | Callable[[Recorded], bool] | None
