"""ADO's error answers: the error body a handler raises (``_Reply``), the rule errors (TF401320)
and the sign-in page a request without a valid PAT gets.
"""

from __future__ import annotations

from typing import Any

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
