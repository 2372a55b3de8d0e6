"""The API's answers: ``ApiResponse``, and the one table from exception types to answers.

A handler raises, and ``api_errors()`` says which exception type becomes which status, with a
stable ``code`` and the message, as ``{"error": message, "code": code, ...}``; every public handler
answers through it (``answers_errors``). An exception the table does not name is a bug and
propagates (the host answers 500). Only a malformed request body is answered where it is read.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ParamSpec

from shared.errors import ConfigurationError, SynthesizerError
from shared.ids import InvalidIdentifier
from shared.pipeline.runs import UnknownRun

if TYPE_CHECKING:
    from shared.review.state import ReviewState

P = ParamSpec("P")


@dataclass
class ApiResponse:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body)


def json_response(status: int, payload: Any) -> ApiResponse:
    return ApiResponse(status, json.dumps(payload, indent=2, default=str).encode())


def error_response(code: int, message: str, **extra: Any) -> ApiResponse:
    return json_response(code, {"error": message, **extra})


# ------------------------------------------------------------------------------------------------
# errors: the one table from exception types to answers


class UnknownArtifact(SynthesizerError, LookupError):
    """The run has no artifact of that name."""


@dataclass(frozen=True)
class ApiError:
    """How an exception type is answered: ``status``, a stable ``code``, the message (``str(err)``
    unless ``message`` says otherwise), ``extra`` fields of the JSON body and ``headers``."""

    status: int
    code: str
    message: Callable[[Any], str] = str
    extra: Callable[[Any], dict[str, Any]] = lambda err: {}
    headers: Callable[[Any], dict[str, str]] = lambda err: {}


def _run_status(err: Any) -> dict[str, Any]:
    return {"status": err.status} if getattr(err, "status", None) else {}


@functools.cache
def api_errors() -> tuple[tuple[type[BaseException], ApiError], ...]:
    """Every exception a handler answers, with its answer; the first type that matches wins.
    Imported on first use: the writer and the ADO client are not loaded by a status call."""
    from shared.ado.errors import AdoError
    from shared.ado.process import ProcessError
    from shared.pipeline.runs import RunNotRetryable, UploadMissing
    from shared.review.plan import InvalidDecisions
    from shared.review.state import StaleReview
    from shared.writer.rollback import NothingToRollBack, UnknownWrite
    from shared.writer.runs import EmptyBacklogRefused, RunNotWritable, WriteInProgress

    return (
        (InvalidIdentifier, ApiError(400, "invalid_identifier")),
        (
            InvalidDecisions,
            ApiError(400, "invalid_decisions", extra=lambda err: {"problems": err.problems}),
        ),
        (UnknownRun, ApiError(404, "unknown_run", lambda err: f"run {err} not found")),
        (UnknownArtifact, ApiError(404, "unknown_artifact")),
        (UnknownWrite, ApiError(404, "unknown_write")),
        (RunNotWritable, ApiError(409, "not_completed", extra=_run_status)),
        (
            RunNotRetryable,
            ApiError(409, "not_retryable", extra=lambda err: {"status": err.run.status}),
        ),
        (UploadMissing, ApiError(409, "upload_missing", extra=_run_status)),
        (EmptyBacklogRefused, ApiError(409, "empty_index")),
        (WriteInProgress, ApiError(409, "write_in_progress")),
        (NothingToRollBack, ApiError(409, "nothing_to_roll_back")),
        (
            StaleReview,
            ApiError(
                409,
                "stale_review",
                lambda err: stale_message(err.current, sent=err.sent),
                extra=lambda err: {"current": err.current.view(err.etag), "etag": err.etag},
                headers=lambda err: {"ETag": err.etag} if err.etag else {},
            ),
        ),
        (AdoError, ApiError(502, "ado_error", lambda err: f"Azure DevOps: {err}")),
        (ProcessError, ApiError(503, "ado_process", lambda err: f"Azure DevOps: {err}")),
        (ConfigurationError, ApiError(503, "not_configured")),
    )


def error_for(err: BaseException) -> ApiResponse | None:
    """The answer to ``err`` from ``api_errors()``; None when the table does not name it."""
    for kind, answer in api_errors():
        if isinstance(err, kind):
            body = {"error": answer.message(err), "code": answer.code, **answer.extra(err)}
            response = json_response(answer.status, body)
            response.headers.update(answer.headers(err))
            return response
    return None


def answers_errors(handler: Callable[P, ApiResponse]) -> Callable[P, ApiResponse]:
    """``handler`` with every exception of ``api_errors()`` answered as the table says."""

    @functools.wraps(handler)
    def answer(*args: P.args, **kwargs: P.kwargs) -> ApiResponse:
        try:
            return handler(*args, **kwargs)
        except SynthesizerError as err:
            response = error_for(err)
            if response is None:
                raise
            return response

    return answer


def stale_message(current: ReviewState, *, sent: bool) -> str:
    head = "someone else saved this review since you loaded it"
    if current.version == 0:
        return head + " or removed it: there is no saved review now; save without an ETag"
    who = f"version {current.version}, saved by {current.saved_by}"
    if current.saved_at is not None:
        who += f" at {current.saved_at:%Y-%m-%d %H:%M:%S} UTC"
    if not sent:
        return f"{head} ({who}): load it and save your changes on it, with its ETag"
    return f"{head} ({who}): load it again, redo your changes on it and save"
