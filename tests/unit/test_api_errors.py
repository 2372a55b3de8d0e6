"""The API's one table from exceptions to answers (shared/api.py ``api_errors``): each mapped
exception gives its status, code, message and extra fields; anything unmapped propagates."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from shared import api
from shared.ado.errors import AdoError
from shared.ado.process import ProcessError
from shared.errors import ConfigurationError, SynthesizerError
from shared.ids import InvalidIdentifier
from shared.models import RunStatus
from shared.pipeline.runs import RunNotRetryable, UnknownRun, UploadMissing
from shared.review_state import ReviewState, StaleReview
from shared.storage import NotFound
from shared.writer.plan import InvalidDecisions
from shared.writer.rollback import NothingToRollBack, UnknownWrite
from shared.writer.runs import EmptyBacklogRefused, RunNotWritable, WriteInProgress

NOW = datetime(2026, 1, 1, tzinfo=UTC)
RUN_ID = "run-0123456789abcdef0123"


def run_status(status: str) -> RunStatus:
    return RunStatus(
        run_id=RUN_ID,
        project="demo",
        source_path="transcripts/demo/m.txt",
        source_name="m.txt",
        content_sha256="0" * 64,
        size_bytes=1,
        status=status,  # type: ignore[arg-type]
        phase="done" if status != "running" else "tagging",  # type: ignore[arg-type]
        engine="offline",
        embedding_model="all-MiniLM-L6-v2-int8",
        created_at=NOW,
        updated_at=NOW,
    )


STALE = StaleReview(
    ReviewState(run_id=RUN_ID, version=2, saved_at=NOW, saved_by="bo"), '"0x8D1"', sent=True
)

# (exception, status, code, the message or a part of it, extra fields of the body)
CASES: list[tuple[BaseException, int, str, str, dict[str, Any]]] = [
    (InvalidIdentifier("invalid run_id 'x'"), 400, "invalid_identifier", "invalid run_id", {}),
    (
        InvalidDecisions(["seg-0001-st01: unknown decision 'nuke'"]),
        400,
        "invalid_decisions",
        "invalid decisions: seg-0001-st01",
        {"problems": ["seg-0001-st01: unknown decision 'nuke'"]},
    ),
    (UnknownRun(RUN_ID), 404, "unknown_run", f"run {RUN_ID} not found", {}),
    (api.UnknownArtifact("no artifact a.json"), 404, "unknown_artifact", "no artifact", {}),
    (UnknownWrite("no write w-0009"), 404, "unknown_write", "no write w-0009", {}),
    (
        RunNotWritable("run is running", status="running"),
        409,
        "not_completed",
        "run is running",
        {"status": "running"},
    ),
    (
        RunNotRetryable(run_status("completed")),
        409,
        "not_retryable",
        "completed without errors",
        {"status": "completed"},
    ),
    (
        UploadMissing("upload the file again", status="failed"),
        409,
        "upload_missing",
        "upload the file again",
        {"status": "failed"},
    ),
    (EmptyBacklogRefused("no backlog"), 409, "empty_index", "no backlog", {}),
    (WriteInProgress("a write is in progress"), 409, "write_in_progress", "in progress", {}),
    (NothingToRollBack("the run has no write"), 409, "nothing_to_roll_back", "no write", {}),
    (
        AdoError("Injected failure 500", status=500),
        502,
        "ado_error",
        "HTTP 500: Injected failure 500",
        {},
    ),
    (
        ProcessError("cannot tell the process"),
        503,
        "ado_process",
        "Azure DevOps: cannot tell the process",
        {},
    ),
    (
        ConfigurationError("needs AZURE_DEVOPS_ORG_URL"),
        503,
        "not_configured",
        "needs AZURE_DEVOPS_ORG_URL",
        {},
    ),
]


@pytest.mark.parametrize("err, status, code, message, extra", CASES, ids=lambda v: None)
def test_each_mapped_exception_has_its_answer(
    err: BaseException, status: int, code: str, message: str, extra: dict[str, Any]
) -> None:
    response = api.error_for(err)
    assert response is not None and response.status == status
    assert response.content_type == "application/json"
    body = response.json()
    assert body["code"] == code and message in body["error"]
    assert {k: v for k, v in body.items() if k not in ("error", "code")} == extra


def test_every_table_entry_is_exercised() -> None:
    mapped = {kind for kind, _ in api.api_errors()}
    raised = [case[0] for case in CASES] + [STALE]
    covered = {kind for kind in mapped if any(isinstance(err, kind) for err in raised)}
    assert covered == mapped
    assert all(issubclass(kind, SynthesizerError) for kind in mapped)


def test_a_stale_review_carries_the_saved_one_and_its_etag() -> None:
    response = api.error_for(STALE)
    assert response is not None and response.status == 409
    assert response.headers["ETag"] == '"0x8D1"'
    body = response.json()
    assert body["code"] == "stale_review" and body["etag"] == '"0x8D1"'
    assert body["error"].startswith("someone else saved this review since you loaded it")
    assert "version 2, saved by bo" in body["error"]
    assert body["current"]["version"] == 2


def test_unmapped_errors_propagate_through_a_handler() -> None:
    @api.answers_errors
    def handler(err: BaseException) -> api.ApiResponse:
        raise err

    assert api.error_for(SynthesizerError("no entry")) is None
    assert api.error_for(ValueError("a bug")) is None
    with pytest.raises(SynthesizerError, match="no entry"):
        handler(SynthesizerError("no entry"))
    with pytest.raises(ValueError, match="a bug"):
        handler(ValueError("a bug"))
    with pytest.raises(NotFound):  # a missing artifact inside a handler is no 404 of its own
        handler(NotFound("runs/x/segments.jsonl"))
    assert handler(UnknownRun(RUN_ID)).status == 404


class NoRuns:
    """A store without any run (nothing else is asked of it by these calls)."""

    def get(self, path: str) -> bytes:
        raise NotFound(path)


@pytest.mark.parametrize(
    "call",
    [
        api.get_run,
        api.list_artifacts,
        api.get_backlog,
        api.get_review,
        api.get_write,
        api.retag_run,
        api.retry_run,
        api.get_review_state,
    ],
)
def test_handlers_answer_malformed_and_unknown_runs_through_the_table(call: Any) -> None:
    svc: Any = SimpleNamespace(store=NoRuns())
    malformed = call(svc, "run-..")
    assert malformed.status == 400 and malformed.json()["code"] == "invalid_identifier"
    unknown = call(svc, RUN_ID)
    assert unknown.status == 404 and unknown.json() == {
        "error": f"run {RUN_ID} not found",
        "code": "unknown_run",
    }


def test_list_runs_refuses_a_limit_that_is_no_integer() -> None:
    svc: Any = SimpleNamespace(store=NoRuns())
    refused = api.list_runs(svc, None, "ten")
    assert refused.status == 400 and refused.json()["error"] == "limit must be an integer"
    bad = api.list_runs(svc, "../x")
    assert bad.status == 400 and bad.json()["code"] == "invalid_identifier"
