"""Integration tests of devhost (the local Functions host and the Azurite wrapper) against a real
Azurite. Each test writes a small v2 FunctionApp into tmp_path and runs it through LocalHost."""

from __future__ import annotations

import base64
import json
import os
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from azure.core.exceptions import ResourceExistsError
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient, TextBase64EncodePolicy

from devhost.azurite import Azurite, AzuriteError
from devhost.expressions import compile_route, parse_schedule, path_pattern
from devhost.host import LocalHost

MakeHost = Callable[..., LocalHost]


@pytest.fixture
def make_host(azurite_clean: Azurite, tmp_path: Path) -> Iterator[MakeHost]:
    """Write an app module + host.json into tmp_path and run it (stopped at teardown)."""
    hosts: list[LocalHost] = []

    def make(
        source: str, host_json: dict[str, Any] | None = None, start: bool = True, **kw: Any
    ) -> LocalHost:
        app_file = tmp_path / f"app_{len(hosts)}.py"
        app_file.write_text(textwrap.dedent(source))
        (tmp_path / "host.json").write_text(json.dumps(host_json or {"version": "2.0"}))
        kw.setdefault("connection_string", azurite_clean.connection_string)
        kw.setdefault("port", 0)
        host = LocalHost(str(app_file), tmp_path / "host.json", root=tmp_path, **kw)
        hosts.append(host)
        return host.start() if start else host

    yield make
    for host in hosts:
        host.stop()


def app_of(host: LocalHost) -> Any:
    """The imported app module (its module-level lists record what the functions saw)."""
    assert host.module is not None
    return host.module


def queue(azurite: Azurite, name: str, base64_encode: bool = True) -> QueueClient:
    policy = TextBase64EncodePolicy() if base64_encode else None
    client = QueueClient.from_connection_string(
        azurite.connection_string, name, message_encode_policy=policy
    )
    try:
        client.create_queue()
    except ResourceExistsError:
        pass
    return client


def blobs(azurite: Azurite) -> BlobServiceClient:
    return BlobServiceClient.from_connection_string(azurite.connection_string)


def http(
    method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


# -- blob triggers ---------------------------------------------------------------------------
BLOB_APP = """
import azure.functions as func

app = func.FunctionApp()
CALLS = []
DATA = []

@app.blob_trigger(arg_name="blob", path="transcripts/{project}/{name}",
                  connection="AzureWebJobsStorage")
def start_run(blob: func.InputStream):
    CALLS.append((blob.name, blob.read(), blob.length))

@app.blob_trigger(arg_name="blob", path="transcripts/{project}/{name}",
                  connection="AzureWebJobsStorage")
def with_binding_data(blob: func.InputStream, project: str, name: str):
    DATA.append((project, name))
"""


def test_blob_trigger_fires_once_per_content_version(
    make_host: MakeHost, azurite_clean: Azurite
) -> None:
    host = make_host(BLOB_APP)
    container = blobs(azurite_clean).get_container_client("transcripts")
    container.upload_blob("p/x.txt", b"v1")
    container.upload_blob("no-project.txt", b"ignored: does not match {project}/{name}")
    host.wait_idle(10)
    time.sleep(0.5)  # several more scans: no second invocation
    host.wait_idle(10)
    assert app_of(host).CALLS == [("transcripts/p/x.txt", b"v1", 2)]
    assert app_of(host).DATA == [("p", "x.txt")]

    container.upload_blob("p/x.txt", b"v2 new content", overwrite=True)  # new ETag
    host.wait_idle(10)
    assert app_of(host).CALLS[1:] == [("transcripts/p/x.txt", b"v2 new content", 14)]

    receipts = blobs(azurite_clean).get_container_client("azure-webjobs-hosts")
    prefix = f"blobreceipts/{host.host_id}/start_run/transcripts/p/x.txt/"
    assert len(list(receipts.list_blobs(name_starts_with=prefix))) == 2

    # A restarted host (same host id) finds the receipts and does not run the blob again.
    host.stop()
    again = make_host(BLOB_APP, host_id=host.host_id)
    again.wait_idle(10)
    assert app_of(again).CALLS == []


def test_blob_trigger_failure_goes_to_blob_poison_after_five_tries(
    make_host: MakeHost, azurite_clean: Azurite
) -> None:
    host = make_host(
        """
        import azure.functions as func
        app = func.FunctionApp()
        TRIES = []

        @app.blob_trigger(arg_name="blob", path="uploads/{name}", connection="AzureWebJobsStorage")
        def broken(blob: func.InputStream):
            TRIES.append(blob.name)
            raise RuntimeError("cannot parse")
        """
    )
    blob = blobs(azurite_clean).get_container_client("uploads").upload_blob("bad.txt", b"?")
    host.wait_idle(15)
    assert app_of(host).TRIES == ["uploads/bad.txt"] * 5

    poison = queue(azurite_clean, "webjobs-blobtrigger-poison").peek_messages(max_messages=32)
    assert len(poison) == 1
    payload = json.loads(base64.b64decode(poison[0].content))
    assert payload == {
        "Type": "BlobTrigger",
        "FunctionId": "Host.Functions.broken",
        "BlobType": "BlockBlob",
        "ContainerName": "uploads",
        "BlobName": "bad.txt",
        "ETag": blob.get_blob_properties().etag,
    }
    time.sleep(0.5)  # the receipt stops further retries
    assert len(app_of(host).TRIES) == 5
    assert [i.succeeded for i in host.invocations] == [False] * 5


# -- queue triggers --------------------------------------------------------------------------
QUEUE_APP = """
import azure.functions as func
app = func.FunctionApp()
RAW = []
SEEN = []
NEXT = []

@app.queue_trigger(arg_name="msg", queue_name="work-items", connection="AzureWebJobsStorage")
@app.queue_output(arg_name="out", queue_name="next-items", connection="AzureWebJobsStorage")
def work(msg: func.QueueMessage, out: func.Out[str]):
    RAW.append(msg.get_body())
    SEEN.append((msg.get_body(), msg.get_json(), msg.dequeue_count, msg.id is not None))
    out.set("done:" + msg.get_json()["run_id"])

@app.queue_trigger(arg_name="msg", queue_name="next-items", connection="AzureWebJobsStorage")
def after(msg: func.QueueMessage):
    NEXT.append(msg.get_body().decode())
"""


def test_queue_message_is_decoded_delivered_and_deleted(
    make_host: MakeHost, azurite_clean: Azurite
) -> None:
    host = make_host(QUEUE_APP)
    client = queue(azurite_clean, "work-items")
    client.send_message('{"run_id": "r1"}')  # base64 on the wire, as the real host expects
    host.wait_idle(10)
    assert app_of(host).SEEN == [(b'{"run_id": "r1"}', {"run_id": "r1"}, 1, True)]
    assert app_of(host).NEXT == ["done:r1"]  # output binding, base64-encoded, picked up again
    assert client.get_queue_properties().approximate_message_count == 0


def test_invalid_base64_fails_like_the_real_host(
    make_host: MakeHost, azurite_clean: Azurite
) -> None:
    host = make_host(QUEUE_APP, {"extensions": {"queues": {"maxDequeueCount": 2}}})
    # plain text sent without TextBase64EncodePolicy; a lenient decoder would accept it
    queue(azurite_clean, "work-items", base64_encode=False).send_message("task:0001")
    host.wait_idle(10)
    assert app_of(host).RAW == []  # never invoked
    poison = queue(azurite_clean, "work-items-poison").peek_messages(max_messages=32)
    assert [m.content for m in poison] == ["task:0001"]  # moved as received


def test_message_encoding_none(make_host: MakeHost, azurite_clean: Azurite) -> None:
    host = make_host(QUEUE_APP, {"extensions": {"queues": {"messageEncoding": "none"}}})
    queue(azurite_clean, "work-items", base64_encode=False).send_message('{"run_id": "plain"}')
    host.wait_idle(10)
    assert [s[1] for s in app_of(host).SEEN] == [{"run_id": "plain"}]
    assert app_of(host).NEXT == ["done:plain"]


def test_failing_message_ends_in_poison_queue_and_poison_trigger_runs(
    make_host: MakeHost, azurite_clean: Azurite
) -> None:
    host = make_host(
        """
        import azure.functions as func
        app = func.FunctionApp()
        TRIES = []
        POISONED = []

        @app.queue_trigger(arg_name="msg", queue_name="flaky", connection="AzureWebJobsStorage")
        def always_fails(msg: func.QueueMessage):
            TRIES.append(msg.dequeue_count)
            raise ValueError("nope")

        @app.queue_trigger(arg_name="msg", queue_name="flaky-poison",
                           connection="AzureWebJobsStorage")
        def on_poison(msg: func.QueueMessage):
            POISONED.append(msg.get_body())
        """,
        {"extensions": {"queues": {"maxDequeueCount": 3, "visibilityTimeout": "00:00:00"}}},
    )
    queue(azurite_clean, "flaky").send_message("boom-1")
    host.wait_idle(15)
    assert app_of(host).TRIES == [1, 2, 3]
    assert app_of(host).POISONED == [b"boom-1"]
    for name in ("flaky", "flaky-poison"):
        assert queue(azurite_clean, name).get_queue_properties().approximate_message_count == 0


def test_visibility_timeout_delays_the_retry(make_host: MakeHost, azurite_clean: Azurite) -> None:
    host = make_host(
        """
        import time
        import azure.functions as func
        app = func.FunctionApp()
        TRIES = []

        @app.queue_trigger(arg_name="msg", queue_name="retry-later",
                           connection="AzureWebJobsStorage")
        def once_fails(msg: func.QueueMessage):
            TRIES.append(time.monotonic())
            if msg.dequeue_count == 1:
                raise ValueError("first try fails")
        """,
        {"extensions": {"queues": {"visibilityTimeout": "00:00:02"}}},
    )
    queue(azurite_clean, "retry-later").send_message("m")
    host.wait_idle(15)
    first, second = app_of(host).TRIES
    assert second - first >= 1.5


def test_messages_are_processed_concurrently(make_host: MakeHost, azurite_clean: Azurite) -> None:
    host = make_host(
        """
        import time
        import azure.functions as func
        app = func.FunctionApp()
        SPANS = []

        @app.queue_trigger(arg_name="msg", queue_name="fanout", connection="AzureWebJobsStorage")
        def slow(msg: func.QueueMessage):
            start = time.monotonic()
            time.sleep(0.4)
            SPANS.append((start, time.monotonic(), msg.get_body()))
        """,
        start=False,
        max_workers=8,
    )
    client = queue(azurite_clean, "fanout")
    for i in range(6):
        client.send_message(f"m{i}")
    host.start()
    host.wait_idle(15)
    spans = app_of(host).SPANS
    assert sorted(body for _, _, body in spans) == [f"m{i}".encode() for i in range(6)]
    overlap = max(sum(s <= start < e for s, e, _ in spans) for start, _, _ in spans)
    assert overlap >= 4, spans


def test_stop_lets_running_invocation_finish(make_host: MakeHost, azurite_clean: Azurite) -> None:
    host = make_host(
        """
        import threading, time
        import azure.functions as func
        app = func.FunctionApp()
        STARTED = threading.Event()
        DONE = []

        @app.queue_trigger(arg_name="msg", queue_name="long-job", connection="AzureWebJobsStorage")
        def long_job(msg: func.QueueMessage):
            STARTED.set()
            time.sleep(0.5)
            DONE.append(msg.get_body())
        """
    )
    client = queue(azurite_clean, "long-job")
    client.send_message("job")
    assert app_of(host).STARTED.wait(10)
    t0 = time.monotonic()
    host.stop()
    assert time.monotonic() - t0 < 5
    assert app_of(host).DONE == [b"job"]
    assert client.get_queue_properties().approximate_message_count == 0  # deleted after success


def test_local_settings_and_named_connection(
    make_host: MakeHost, azurite_clean: Azurite, tmp_path: Path
) -> None:
    settings = {
        "IsEncrypted": False,
        "Values": {
            "DEVHOST_TEST_STORAGE": azurite_clean.connection_string,
            "DEVHOST_TEST_QUEUE": "from-settings",
        },
    }
    (tmp_path / "local.settings.json").write_text(json.dumps(settings))
    try:
        host = make_host(
            """
            import os
            import azure.functions as func
            app = func.FunctionApp()
            GOT = []
            SETTING_AT_IMPORT = os.environ.get("DEVHOST_TEST_QUEUE")

            @app.queue_trigger(arg_name="msg", queue_name="%DEVHOST_TEST_QUEUE%",
                               connection="DEVHOST_TEST_STORAGE")
            def named(msg: func.QueueMessage):
                GOT.append(msg.get_body())
            """,
            connection_string=None,
        )
        assert app_of(host).SETTING_AT_IMPORT == "from-settings"
        queue(azurite_clean, "from-settings").send_message("via named connection")
        host.wait_idle(10)
        assert app_of(host).GOT == [b"via named connection"]
    finally:
        os.environ.pop("DEVHOST_TEST_STORAGE", None)
        os.environ.pop("DEVHOST_TEST_QUEUE", None)


# -- HTTP ------------------------------------------------------------------------------------
HTTP_APP = """
import json
import azure.functions as func
app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION)

@app.route(route="runs/{run_id}", methods=["GET"])
def get_run(req: func.HttpRequest) -> func.HttpResponse:
    payload = {"run_id": req.route_params["run_id"], "view": req.params.get("view")}
    return func.HttpResponse(json.dumps(payload), mimetype="application/json")

@app.route(route="runs/latest", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def latest(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse("literal wins")

@app.route(route="items/{id:int}/{part?}", auth_level=func.AuthLevel.ANONYMOUS)
def item(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(json.dumps(dict(req.route_params)), mimetype="application/json")

@app.route(route="echo", methods=["POST"], auth_level=func.AuthLevel.ANONYMOUS)
def echo(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse(req.get_body(), status_code=201,
                             headers={"X-Echo": req.headers.get("x-test", "")})

@app.route(route="open", auth_level=func.AuthLevel.ANONYMOUS)
def open_route(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse("hello")

@app.route(route="boom", auth_level=func.AuthLevel.ANONYMOUS)
def boom(req: func.HttpRequest) -> func.HttpResponse:
    raise RuntimeError("kaput")
"""


def test_http_routes_methods_and_errors(make_host: MakeHost) -> None:
    host = make_host(HTTP_APP, function_key="sekret")
    api = f"{host.url}/api"

    status, headers, body = http("GET", f"{api}/runs/r-1?view=full&code=sekret")
    assert (status, json.loads(body)) == (200, {"run_id": "r-1", "view": "full"})
    assert headers["Content-Type"].startswith("application/json")
    assert http("GET", f"{api}/runs/latest")[::2] == (200, b"literal wins")
    assert json.loads(http("GET", f"{api}/items/42")[2]) == {"id": "42"}
    assert json.loads(http("GET", f"{api}/items/42/notes")[2]) == {"id": "42", "part": "notes"}
    assert http("GET", f"{api}/items/abc")[0] == 404  # {id:int} constraint

    status, headers, body = http("POST", f"{api}/echo", b"payload", {"x-test": "t"})
    assert (status, headers["X-Echo"], body) == (201, "t", b"payload")

    status, _, body = http("GET", f"{api}/nope")
    assert status == 404 and json.loads(body)["error"] == "not found"
    status, headers, _ = http("POST", f"{api}/runs/r-1?code=sekret")
    assert status == 405 and headers["Allow"] == "GET"
    status, _, body = http("GET", f"{api}/boom")
    assert status == 500 and json.loads(body)["function"] == "boom"


def test_http_function_key(make_host: MakeHost) -> None:
    host = make_host(HTTP_APP, function_key="sekret")
    api = f"{host.url}/api"
    assert http("GET", f"{api}/runs/r1")[0] == 401
    assert http("GET", f"{api}/runs/r1?code=wrong")[0] == 401
    assert http("GET", f"{api}/runs/r1?code=sekret")[0] == 200
    assert http("GET", f"{api}/runs/r1", headers={"x-functions-key": "sekret"})[0] == 200
    assert http("GET", f"{api}/open")[::2] == (200, b"hello")  # anonymous: no key needed

    keyless = make_host(HTTP_APP)  # like `func start`: no key configured, no check
    assert http("GET", f"{keyless.url}/api/runs/r1")[0] == 200


# -- timers ----------------------------------------------------------------------------------
def test_timers_run_on_startup_and_on_interval(make_host: MakeHost) -> None:
    host = make_host(
        """
        import azure.functions as func
        app = func.FunctionApp()
        STARTUP = []
        TICKS = []

        @app.timer_trigger(schedule="0 0 0 1 1 *", arg_name="t", run_on_startup=True)
        def yearly(t: func.TimerRequest):
            STARTUP.append(t.past_due)

        @app.timer_trigger(schedule="0 0 0 1 1 *", arg_name="t")
        def ticking(t: func.TimerRequest):
            TICKS.append(t.past_due)
        """,
        timer_intervals={"ticking": 0.2},
    )
    time.sleep(1.1)
    assert app_of(host).STARTUP == [False]
    assert 3 <= len(app_of(host).TICKS) <= 7


# -- pure helpers ----------------------------------------------------------------------------
def test_schedule_route_and_path_parsers() -> None:
    t = datetime(2026, 11, 22, 10, 0, 7, tzinfo=UTC)  # a Sunday
    assert parse_schedule("*/5 * * * * *").next_after(t) == t.replace(second=10)
    assert parse_schedule("0 30 9 * * 1-5").next_after(t) == datetime(
        2026, 11, 23, 9, 30, tzinfo=UTC
    )
    assert parse_schedule("00:00:10").next_after(t) == t.replace(second=17)
    with pytest.raises(ValueError):
        parse_schedule("* * * * *")
    route = compile_route("runs/{run_id}/artifacts/{*path}")
    assert route.match("runs/r1/artifacts/a/b.json") == {"run_id": "r1", "path": "a/b.json"}
    assert route.match("runs/r1") is None
    m = path_pattern("{project}/{name}").match("p/sub/x.txt")
    assert m is not None and m.groupdict() == {"project": "p/sub", "name": "x.txt"}


# -- Azurite wrapper -------------------------------------------------------------------------
def test_azurite_restart_keeps_data_with_location(tmp_path: Path) -> None:
    with Azurite(location=tmp_path / "azurite") as az:
        ports = (az.blob_port, az.queue_port)
        blobs(az).create_container("keep").upload_blob("a.txt", b"kept")
        az.restart()
        assert (az.blob_port, az.queue_port) == ports
        assert blobs(az).get_blob_client("keep", "a.txt").download_blob().readall() == b"kept"
    assert not az.running


def test_azurite_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(AzuriteError, match="npm ci"):
        Azurite(root=tmp_path).start()
