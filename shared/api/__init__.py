"""The HTTP API as plain functions (function_app.py only adapts requests and responses): the
handlers the Functions app and the CLI call, as ``api.<handler>``.

Every identifier that reaches a storage path is validated first: a malformed run id or artifact name
is a 400, an unknown run a 404, always with a JSON body that says what was wrong; errors are
answered from one table (``responses``).

- ``responses``: ``ApiResponse`` and the table from exception types to answers
- ``service``: the health checks
- ``runs``: runs, artifacts, the backlog tree, the review bundle, a project
- ``writes``: the ADO write, its rollback, the retag
- ``review``: the saved review, the export, who a request comes from
- ``bundle``: the review page's document for one run (``GET /api/runs/{run_id}/review``)
- ``export``: the reviewed backlog as a CSV for Azure DevOps' import, or as Markdown
"""

from __future__ import annotations

from shared.api.responses import (
    ApiResponse,
    UnknownArtifact,
    answers_errors,
    api_errors,
    error_for,
    error_response,
    json_response,
)
from shared.api.review import (
    REVIEW_BODY_LIMIT,
    get_export,
    get_review_state,
    put_review_state,
    requester,
)
from shared.api.runs import (
    create_run,
    get_artifact,
    get_backlog,
    get_project,
    get_review,
    get_run,
    list_artifacts,
    list_runs,
    retry_run,
    run_view,
)
from shared.api.service import DEEP_HEALTH_ROUTE, deep_health, health, health_request
from shared.api.writes import get_write, retag_run, rollback_run, write_run

__all__ = [
    "DEEP_HEALTH_ROUTE",
    "REVIEW_BODY_LIMIT",
    "ApiResponse",
    "UnknownArtifact",
    "answers_errors",
    "api_errors",
    "create_run",
    "deep_health",
    "error_for",
    "error_response",
    "get_artifact",
    "get_backlog",
    "get_export",
    "get_project",
    "get_review",
    "get_review_state",
    "get_run",
    "get_write",
    "health",
    "health_request",
    "json_response",
    "list_artifacts",
    "list_runs",
    "put_review_state",
    "requester",
    "retag_run",
    "retry_run",
    "rollback_run",
    "run_view",
    "write_run",
]
