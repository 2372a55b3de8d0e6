"""Typed errors of the Azure DevOps client.

Every error carries what a caller needs to decide (HTTP status, ADO's ``typeKey`` and message, the
method and URL path) and never a secret: the PAT travels only in the Authorization header, which no
error or log line includes, and any echo of it in a server message is masked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from shared.errors import SynthesizerError

QUERY_TOO_LARGE_CODE = "VS402337"
# ADO's typeKey for VS402337 (the message code is what is certain; both are checked)
QUERY_TOO_LARGE_TYPE_KEYS = ("WorkItemTrackingQueryResultSizeLimitExceededException",)


class AdoError(SynthesizerError):
    """A request to Azure DevOps failed. ``status`` is None when no response came back."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        type_key: str | None = None,
        error_code: int | None = None,
        method: str | None = None,
        url: str | None = None,
        body: Any = None,
    ) -> None:
        self.message = message
        self.status = status
        self.type_key = type_key
        self.error_code = error_code
        self.method = method
        self.url = url
        self.body = body
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.method} {self.url}" if self.method and self.url else ""
        status = f"HTTP {self.status}" if self.status is not None else ""
        kind = f" [{self.type_key}]" if self.type_key else ""
        head = " -> ".join(p for p in (where, status) if p)
        return f"Azure DevOps {head}{kind}: {self.message}" if head else self.message


class AdoAuthError(AdoError):
    """The PAT was refused: 401, or 203 / an HTML sign-in page instead of JSON."""


class AdoNotFound(AdoError):
    """404: the project, work item or route does not exist, or the PAT cannot see it."""


class AdoConflict(AdoError):
    """412: a ``test /rev`` operation failed because someone changed the work item since."""


class AdoQueryTooLarge(AdoError):
    """VS402337: a WIQL query matched more work items than the result cap (20,000 in ADO)."""


class AdoThrottled(AdoError):
    """429 after every retry: Azure DevOps is still blocking this user's requests."""


class AdoConnectionError(AdoError):
    """No response: the server could not be reached or the connection broke."""


# ------------------------------------------------------------------------------------------------
# masking


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    # an Authorization header value echoed back in any form
    return re.sub(r"(?i)(basic|bearer)\s+[A-Za-z0-9+/=._-]{8,}", r"\1 ***", text)


# ------------------------------------------------------------------------------------------------
# responses to errors


def _json_body(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def error_from_response(
    status: int,
    text: str,
    *,
    method: str,
    url: str,
    content_type: str = "",
    secrets: Iterable[str] = (),
) -> AdoError:
    """The typed error for a non-success response (ADO's body: message, typeKey, errorCode)."""
    secrets = list(secrets)
    body = _json_body(text)
    fields = body if isinstance(body, dict) else {}
    message = str(fields.get("message") or "").strip()
    type_key = fields.get("typeKey") or None
    error_code = fields.get("errorCode") if isinstance(fields.get("errorCode"), int) else None
    if not message:  # masked before it is clipped: a clip must not cut a secret in two
        snippet = mask_secrets(re.sub(r"\s+", " ", text), secrets).strip()[:200]
        message = snippet or "(empty body)"
    message = mask_secrets(message, secrets)
    kwargs: dict[str, Any] = {
        "status": status,
        "type_key": type_key,
        "error_code": error_code,
        "method": method,
        "url": url,
        "body": body,
    }
    if status in (401, 203) or "text/html" in content_type.lower():
        return AdoAuthError(
            "the personal access token was refused (invalid, expired, or without access to this "
            "organization / project); check AZURE_DEVOPS_PAT"
            + (f" ({message})" if status == 401 and "html" not in content_type.lower() else ""),
            **kwargs,
        )
    if QUERY_TOO_LARGE_CODE in message or type_key in QUERY_TOO_LARGE_TYPE_KEYS:
        return AdoQueryTooLarge(message, **kwargs)
    if status == 404:
        return AdoNotFound(message, **kwargs)
    if status == 412:
        return AdoConflict(message, **kwargs)
    if status == 429:
        return AdoThrottled(message, **kwargs)
    return AdoError(message, **kwargs)
