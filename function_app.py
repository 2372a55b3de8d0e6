"""Backlog Synthesizer on Azure Functions (Python v2 programming model): bindings only.

Each function decodes its trigger and calls one handler in ``shared/``; all logic, and every client,
lives there. Messages are at-least-once: every handler is idempotent, and a failure is re-raised so
the host retries and finally moves the message to ``{queue}-poison``, whose handler ends the unit.

Blob trigger: locally (Azurite, the dev host) the polling source is used; in Azure (Flex
Consumption supports only Event Grid blob triggers) the app setting ``SYNTH_BLOB_TRIGGER_SOURCE=EventGrid``
switches it to the Event Grid source (docs/DEPLOY.md).
"""

from __future__ import annotations

import logging
import os

import azure.functions as func

from shared import api
from shared.bus import FINALIZE_QUEUE, GENERATE_QUEUE, SEGMENT_QUEUE, TAG_QUEUE, poison_queue
from shared.pipeline import process, process_poison
from shared.pipeline.runs import start_run
from shared.services import app_services

app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)
log = logging.getLogger("function_app")
# The Python worker lets every level through to the host (host.json filters there), so the Azure
# SDK's HTTP logging policy would format the URL and every header of each storage request and
# response at INFO: a dozen log records per request, 700+ requests per run. Its warnings stay.
logging.getLogger("azure.core.pipeline.policies.http_logging_policy").setLevel(logging.WARNING)
STORAGE = "AzureWebJobsStorage"
TRANSCRIPT_SOURCE = (
    func.BlobSource.EVENT_GRID
    if os.environ.get("SYNTH_BLOB_TRIGGER_SOURCE", "").lower() == "eventgrid"
    else func.BlobSource.LOGS_AND_CONTAINER_SCAN
)
# NCRONTAB (seconds first), read when the host indexes the functions: a %SETTING% expression would
# make the function fail to load wherever the setting is missing. Retention itself is off until
# SYNTH_RETENTION_DAYS is set (shared/retention.py).
RETENTION_SCHEDULE = os.environ.get("SYNTH_RETENTION_SCHEDULE") or "0 30 3 * * *"
# The sync timer (shared/indexing/sync.py) exists only when SYNTH_SYNC_SCHEDULE (NCRONTAB) is set:
# unset, there is no function to run, so no deployment syncs unless it asks to.
SYNC_SCHEDULE = os.environ.get("SYNTH_SYNC_SCHEDULE", "").strip()


def _http(response: api.ApiResponse) -> func.HttpResponse:
    return func.HttpResponse(
        body=response.body,
        status_code=response.status,
        headers={"Cache-Control": "no-store", **response.headers},
        mimetype=response.content_type.split(";")[0],
        charset="utf-8",
    )


# ------------------------------------------------------------------------------------------------
# blob drop → run


@app.function_name("start_run")
@app.blob_trigger(
    arg_name="blob",
    path="transcripts/{project}/{name}",
    connection=STORAGE,
    source=TRANSCRIPT_SOURCE,
)
def start_run_from_blob(blob: func.InputStream) -> None:
    svc = app_services()
    limit = svc.settings.pipeline.limits.max_upload_bytes
    size = blob.length
    data = blob.read(limit + 1)
    # the version's ETag: a duplicate event for it starts nothing, the same bytes uploaded again
    # after a failed run (a new version) start a new attempt (shared/pipeline/runs.py start_run);
    # the runtime's azure.functions.blob.InputStream has blob_properties, the abstract type not
    etag = (getattr(blob, "blob_properties", None) or {}).get("ETag")
    start_run(
        svc,
        blob.name or "",
        data,
        size=size if size is not None else len(data),
        etag=str(etag) if etag else None,
    )


# ------------------------------------------------------------------------------------------------
# queues: fan-out, fan-in, poison


@app.function_name("segment")
@app.queue_trigger(arg_name="msg", queue_name=SEGMENT_QUEUE, connection=STORAGE)
def segment(msg: func.QueueMessage) -> None:
    process(app_services(), SEGMENT_QUEUE, msg.get_body(), msg.dequeue_count or 1)


@app.function_name("generate")
@app.queue_trigger(arg_name="msg", queue_name=GENERATE_QUEUE, connection=STORAGE)
def generate(msg: func.QueueMessage) -> None:
    process(app_services(), GENERATE_QUEUE, msg.get_body(), msg.dequeue_count or 1)


@app.function_name("tag")
@app.queue_trigger(arg_name="msg", queue_name=TAG_QUEUE, connection=STORAGE)
def tag(msg: func.QueueMessage) -> None:
    process(app_services(), TAG_QUEUE, msg.get_body(), msg.dequeue_count or 1)


@app.function_name("finalize")
@app.queue_trigger(arg_name="msg", queue_name=FINALIZE_QUEUE, connection=STORAGE)
def finalize(msg: func.QueueMessage) -> None:
    process(app_services(), FINALIZE_QUEUE, msg.get_body(), msg.dequeue_count or 1)


@app.function_name("segment_poison")
@app.queue_trigger(arg_name="msg", queue_name=poison_queue(SEGMENT_QUEUE), connection=STORAGE)
def segment_poison(msg: func.QueueMessage) -> None:
    process_poison(app_services(), SEGMENT_QUEUE, msg.get_body(), msg.dequeue_count)


@app.function_name("generate_poison")
@app.queue_trigger(arg_name="msg", queue_name=poison_queue(GENERATE_QUEUE), connection=STORAGE)
def generate_poison(msg: func.QueueMessage) -> None:
    process_poison(app_services(), GENERATE_QUEUE, msg.get_body(), msg.dequeue_count)


@app.function_name("tag_poison")
@app.queue_trigger(arg_name="msg", queue_name=poison_queue(TAG_QUEUE), connection=STORAGE)
def tag_poison(msg: func.QueueMessage) -> None:
    process_poison(app_services(), TAG_QUEUE, msg.get_body(), msg.dequeue_count)


@app.function_name("finalize_poison")
@app.queue_trigger(arg_name="msg", queue_name=poison_queue(FINALIZE_QUEUE), connection=STORAGE)
def finalize_poison(msg: func.QueueMessage) -> None:
    process_poison(app_services(), FINALIZE_QUEUE, msg.get_body(), msg.dequeue_count)


# ------------------------------------------------------------------------------------------------
# HTTP


@app.function_name("health")
@app.route(route="health", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def health(req: func.HttpRequest) -> func.HttpResponse:
    # ?deep=1 is refused without a key and redirected to health/deep with one: an anonymous
    # function cannot check a key (shared/api.py health_request)
    deep = api.health_request(dict(req.params), dict(req.headers))
    return _http(deep if deep is not None else api.health(app_services()))


@app.function_name("health_deep")
@app.route(route=api.DEEP_HEALTH_ROUTE, methods=["GET"])
def health_deep(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.deep_health(app_services()))


@app.function_name("runs_create")
@app.route(route="runs", methods=["POST"])
def runs_create(req: func.HttpRequest) -> func.HttpResponse:
    project = req.params.get("project")
    name = req.params.get("name")
    content_type = req.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        upload = req.files.get("file")
        if upload is None:
            return _http(api.error_response(400, "multipart upload needs a 'file' field"))
        project = req.form.get("project") or project
        name = upload.filename or name
        data = upload.read()
    else:
        data = req.get_body()
        name = name or "transcript.txt"
    return _http(api.create_run(app_services(), project, name, data))


@app.function_name("runs_list")
@app.route(route="runs", methods=["GET"])
def runs_list(req: func.HttpRequest) -> func.HttpResponse:
    params = req.params
    return _http(api.list_runs(app_services(), params.get("project"), params.get("limit", "50")))


@app.function_name("runs_get")
@app.route(route="runs/{run_id}", methods=["GET"])
def runs_get(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.get_run(app_services(), req.route_params.get("run_id", "")))


@app.function_name("artifacts_list")
@app.route(route="runs/{run_id}/artifacts", methods=["GET"])
def artifacts_list(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.list_artifacts(app_services(), req.route_params.get("run_id", "")))


@app.function_name("artifacts_get")
@app.route(route="runs/{run_id}/artifacts/{name}", methods=["GET"])
def artifacts_get(req: func.HttpRequest) -> func.HttpResponse:
    params = req.route_params
    return _http(api.get_artifact(app_services(), params.get("run_id", ""), params.get("name", "")))


@app.function_name("backlog_get")
@app.route(route="runs/{run_id}/backlog", methods=["GET"])
def backlog_get(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.get_backlog(app_services(), req.route_params.get("run_id", "")))


# ADO write and retag: synchronous. Azure's load balancer cuts an HTTP request at 230 s whatever
# functionTimeout says; a longer write still runs to its end (GET .../write shows it) and running
# it again finishes anything left without duplicates (shared/writer/__init__.py).
@app.function_name("write_post")
@app.route(route="runs/{run_id}/write", methods=["POST"])
def write_post(req: func.HttpRequest) -> func.HttpResponse:
    run_id = req.route_params.get("run_id", "")
    who = api.requester(req.headers, req.params)
    return _http(api.write_run(app_services(), run_id, req.get_body(), requester=who))


@app.function_name("write_get")
@app.route(route="runs/{run_id}/write", methods=["GET"])
def write_get(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.get_write(app_services(), req.route_params.get("run_id", "")))


# undoing a write: synchronous too; running it again finishes it (shared/writer/rollback.py)
@app.function_name("rollback_post")
@app.route(route="runs/{run_id}/rollback", methods=["POST"])
def rollback_post(req: func.HttpRequest) -> func.HttpResponse:
    run_id = req.route_params.get("run_id", "")
    return _http(api.rollback_run(app_services(), run_id, req.get_body()))


@app.function_name("retag_post")
@app.route(route="runs/{run_id}/retag", methods=["POST"])
def retag_post(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.retag_run(app_services(), req.route_params.get("run_id", "")))


# a failed (or completed_with_errors) run again, from its stored upload with the current settings
@app.function_name("retry_post")
@app.route(route="runs/{run_id}/retry", methods=["POST"])
def retry_post(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.retry_run(app_services(), req.route_params.get("run_id", "")))


# a project at a glance: its runs and what each wrote, its index, the last sync, pending stories
@app.function_name("project_get")
@app.route(route="projects/{project}", methods=["GET"])
def project_get(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.get_project(app_services(), req.route_params.get("project", "")))


@app.function_name("review_get")
@app.route(route="runs/{run_id}/review", methods=["GET"])
def review_get(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.get_review(app_services(), req.route_params.get("run_id", "")))


# the saved review (shared/review_state.py): GET it with its ETag, PUT it with If-Match
@app.function_name("review_state_get")
@app.route(route="runs/{run_id}/review-state", methods=["GET"])
def review_state_get(req: func.HttpRequest) -> func.HttpResponse:
    return _http(api.get_review_state(app_services(), req.route_params.get("run_id", "")))


@app.function_name("review_state_put")
@app.route(route="runs/{run_id}/review-state", methods=["PUT"])
def review_state_put(req: func.HttpRequest) -> func.HttpResponse:
    return _http(
        api.put_review_state(
            app_services(),
            req.route_params.get("run_id", ""),
            req.get_body(),
            req.headers.get("if-match"),
            api.requester(req.headers, req.params),
        )
    )


# the reviewed backlog as a file: ?format=csv (ADO's CSV import) or ?format=md (shared/export.py)
@app.function_name("export_get")
@app.route(route="runs/{run_id}/export", methods=["GET"])
def export_get(req: func.HttpRequest) -> func.HttpResponse:
    run_id = req.route_params.get("run_id", "")
    return _http(api.get_export(app_services(), run_id, req.params.get("format")))


# the review page (shared/ui): open it as /api/ui?code=<key>
@app.function_name("ui_page")
@app.route(route="ui", methods=["GET"])
def ui_page(req: func.HttpRequest) -> func.HttpResponse:
    from shared import ui

    return _http(ui.page(req.params.get("code")))


@app.function_name("ui_asset")
@app.route(route="ui/{asset}", methods=["GET"])
def ui_asset(req: func.HttpRequest) -> func.HttpResponse:
    from shared import ui

    return _http(ui.asset(req.route_params.get("asset", "")))


# ------------------------------------------------------------------------------------------------
# retention (off unless SYNTH_RETENTION_DAYS > 0)


@app.function_name("retention")
@app.timer_trigger(arg_name="timer", schedule=RETENTION_SCHEDULE, run_on_startup=False)
def retention(timer: func.TimerRequest) -> None:
    from shared.retention import purge_expired

    purge_expired(app_services())


# ------------------------------------------------------------------------------------------------
# sync (only with SYNTH_SYNC_SCHEDULE): the index follows what changed in Azure DevOps

if SYNC_SCHEDULE:

    @app.function_name("sync")
    @app.timer_trigger(arg_name="timer", schedule=SYNC_SCHEDULE, run_on_startup=False)
    def sync(timer: func.TimerRequest) -> None:
        from shared.indexing.sync import scheduled_sync

        scheduled_sync(app_services())
