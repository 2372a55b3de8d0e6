"""The deep health check: ``GET /api/health/deep`` (function key) probes storage, the index, the
model endpoint and Azure DevOps, each with its latency and error; ``GET /api/health`` stays
anonymous and shallow, refuses ``?deep=1`` without a key and sends it, with one, to the keyed
route. No answer ever holds a secret, even when an endpoint echoes the credentials it was sent."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import azure.functions as func
import pytest

import function_app
from devhost.standins.fake_ado import FakeAdo
from devhost.standins.openai_standin import OpenAIStandIn, hermetic_env
from shared import api
from shared.bus.memory import InProcessBus
from shared.services import Services, build_services
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from tests.support.pinecone_standin import PineconeStandIn

# Fake secrets in real formats (never credentials anywhere).
OPENAI_KEY = "sk-proj-Hz5vT8mW3xK9pL1nR7bY4cH6dF0gJ5sA8eU2iO7kM1tV3wX4"
PINECONE_KEY = "pcsk_3Hq8vT2_mW9xK4pL7nR3bY6cH1dF5gJ0sA2eU8iO4kM7tV9wX3yZ5aB"
ADO_PAT = "h6mq7zk3m5vx2c6l2dwr7pt5yh3sj6fgk4ql2mz7xv5nb3c6hd4w"
ACCOUNT_KEY = (
    "Hv3vQ8mX2nB7cV4xL9pW1rT6yU0iO5aS3dF8gH2jK7lE4qR9tY1uI6oP0aS5dF3gH8jK2lZ7xC4vB9nM1qW6eR0tY3u=="
)
CONNECTION = (
    "DefaultEndpointsProtocol=https;AccountName=synthhealth;"
    f"AccountKey={ACCOUNT_KEY};EndpointSuffix=core.windows.net"
)
SECRETS = [
    OPENAI_KEY,
    PINECONE_KEY,
    ADO_PAT,
    base64.b64encode(f":{ADO_PAT}".encode()).decode(),
    ACCOUNT_KEY,
]


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic_env(monkeypatch)


def settings(**values: Any) -> Settings:
    base: dict[str, Any] = {
        "storage_backend": "local",
        "engine": "llm",
        "embedder": "openai",
        "vector_store": "pinecone",
        "openai_api_key": OPENAI_KEY,
        "pinecone_api_key": PINECONE_KEY,
        "azure_devops_pat": ADO_PAT,
        "azure_devops_project": "RemoteControl",
    }
    base.update(values)
    return Settings(**base)


def test_every_configured_dependency_is_probed_with_its_latency(tmp_path):
    with (
        OpenAIStandIn() as llm,
        PineconeStandIn(dimension=1536) as pinecone,
        FakeAdo(pat=ADO_PAT) as ado,
    ):
        cfg = settings(
            openai_base_url=llm.base_url,
            pinecone_host=pinecone.url,
            azure_devops_org_url=ado.org_url,
            azure_devops_project=ado.project,
        )
        svc = build_services(cfg, store=LocalFolderStore(tmp_path), bus=InProcessBus())
        answer = api.deep_health(svc)
        asked = [r.route for r in llm.requests]
        ado_routes = [(e.route, e.authorized) for e in ado.log]
    assert answer.status == 200, answer.body
    body = answer.json()
    assert body["status"] == "ok" and body["failed"] == []
    probes = body["probes"]
    assert set(probes) == {"storage", "index", "model", "ado"}
    for name, probe in probes.items():
        assert probe["status"] == "ok", (name, probe)
        assert isinstance(probe["latency_ms"], float) and probe["latency_ms"] >= 0
    assert probes["index"]["backend"] == "pinecone" and probes["index"]["dimension"] == 1536
    assert probes["model"]["chat_model_listed"] is True and probes["model"]["models"] == 2
    assert probes["ado"] == {**probes["ado"], "project": ado.project, "state": "wellFormed"}
    assert asked == ["models"]  # a models list: no tokens spent
    assert ado_routes == [("project", True)]


def test_the_offline_engine_has_no_model_or_ado_to_probe(tmp_path):
    cfg = Settings(storage_backend="local", engine="offline", embedder="minilm")
    svc = build_services(cfg, store=LocalFolderStore(tmp_path), bus=InProcessBus())
    answer = api.deep_health(svc)
    assert answer.status == 200
    probes = answer.json()["probes"]
    assert probes["storage"]["status"] == probes["index"]["status"] == "ok"
    assert probes["index"]["backend"] == "embedded"
    assert probes["model"]["status"] == probes["ado"]["status"] == "skipped"
    assert "offline engine" in probes["model"]["reason"]


class Echo:
    """Answers every request with 500 and a body echoing the request's credentials, as a
    misbehaving proxy or a verbose error page might."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                auth = self.headers.get("Authorization", "")
                decoded = ""
                if auth.startswith("Basic "):
                    decoded = base64.b64decode(auth[6:]).decode(errors="replace")
                body = json.dumps(
                    {
                        "error": {
                            "message": "upstream failure while handling "
                            f"Authorization={auth} api-key={self.headers.get('Api-Key', '')} "
                            f"basic={decoded} url={self.path}",
                            "type": "server_error",
                        }
                    }
                ).encode()
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class LeakyStore(LocalFolderStore):
    """A store whose every write fails with an error quoting the account key."""

    def put(self, path: str, data: bytes, content_type: str | None = None) -> str:
        raise RuntimeError(f"AuthenticationFailed: the request signed with {CONNECTION} failed")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo()
    yield server
    server.close()


@pytest.mark.parametrize("outage", ["echoing 500s", "connection refused"])
def test_failures_are_reported_without_revealing_a_secret(tmp_path, echo, outage):
    url = echo.url if outage == "echoing 500s" else f"http://127.0.0.1:{closed_port()}"
    cfg = settings(
        azure_storage_connection=CONNECTION,
        openai_base_url=f"{url}/v1",
        pinecone_host=url,
        azure_devops_org_url=f"{url}/org",
    )
    svc = build_services(cfg, store=LeakyStore(tmp_path), bus=InProcessBus())
    answer = api.deep_health(svc)
    text = answer.body.decode()
    assert answer.status == 503
    body = answer.json()
    assert body["status"] == "degraded"
    assert body["failed"] == ["ado", "index", "model", "storage"]
    for probe in body["probes"].values():
        assert probe["status"] == "error" and probe["error"]
    if outage == "echoing 500s":  # the echo did reach the answer's errors, minus the secrets
        assert "upstream failure" in body["probes"]["model"]["error"]
        assert "500" in body["probes"]["ado"]["error"]
    assert "AuthenticationFailed" in body["probes"]["storage"]["error"]
    leaked = [s[:10] for s in SECRETS if s in text or s[:16] in text]
    assert not leaked, leaked


# ------------------------------------------------------------------------------------------------
# the functions: auth levels and the redirect


def http_levels() -> dict[str, tuple[str, str]]:
    function_app.app.functions_bindings = None  # get_functions() is one-shot otherwise
    out = {}
    for f in function_app.app.get_functions():
        trigger = f.get_trigger().get_dict_repr()
        if trigger["type"] == "httpTrigger":
            level = str(getattr(trigger["authLevel"], "value", trigger["authLevel"])).lower()
            out[f.get_function_name()] = (trigger["route"], level)
    function_app.app.functions_bindings = None
    return out


def test_the_shallow_check_is_anonymous_and_the_deep_one_needs_the_key():
    levels = http_levels()
    assert levels["health"] == ("health", "anonymous")
    assert levels["health_deep"] == ("health/deep", "function")


@pytest.fixture
def offline_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Services:
    cfg = Settings(storage_backend="local", engine="offline", embedder="minilm")
    svc = build_services(cfg, store=LocalFolderStore(tmp_path), bus=InProcessBus())
    monkeypatch.setattr(function_app, "app_services", lambda: svc)
    return svc


def get(function: Any, url: str, params: dict[str, str], headers: dict[str, str]) -> Any:
    return function(
        func.HttpRequest(method="GET", url=url, params=params, headers=headers, body=b"")
    )


def test_deep_without_a_key_is_refused_and_with_one_sent_to_the_keyed_route(offline_app):
    shallow = get(function_app.health, "/api/health", {}, {})
    assert shallow.status_code == 200 and "probes" not in json.loads(shallow.get_body())
    refused = get(function_app.health, "/api/health?deep=1", {"deep": "1"}, {})
    assert refused.status_code == 401
    assert "function key" in json.loads(refused.get_body())["error"]
    header = get(function_app.health, "/api/health?deep=1", {"deep": "1"}, {"x-functions-key": "k"})
    assert header.status_code == 307 and header.headers["Location"] == "health/deep?deep=1"
    code = get(function_app.health, "/api/health?deep=1&code=k", {"deep": "1", "code": "k"}, {})
    assert code.status_code == 307 and code.headers["Location"] == "health/deep?deep=1&code=k"
    deep = get(function_app.health_deep, "/api/health/deep", {}, {})
    assert deep.status_code == 200 and "probes" in json.loads(deep.get_body())


def test_over_http_the_host_checks_the_key_of_the_deep_check(azurite, offline_app, monkeypatch):
    from devhost.host import LocalHost
    from tests.chaos.harness import REPO, call

    monkeypatch.setenv("AzureWebJobsStorage", azurite.connection_string)
    key = "health-test-key"
    with LocalHost("function_app", port=0, function_key=key, root=REPO) as host:
        shallow = call("GET", f"{host.url}/api/health")
        no_key = call("GET", f"{host.url}/api/health?deep=1")
        wrong = call("GET", f"{host.url}/api/health?deep=1", key="wrong")
        right = call("GET", f"{host.url}/api/health?deep=1", key=key)
        as_code = call("GET", f"{host.url}/api/health?deep=1&code={key}")
        direct = call("GET", f"{host.url}/api/health/deep", key=key)
    assert shallow[0] == 200 and shallow[1]["status"] == "ok" and "probes" not in shallow[1]
    assert no_key[0] == 401 and wrong[0] == 401
    for status, body in (right, as_code, direct):
        assert status == 200 and set(body["probes"]) == {"storage", "index", "model", "ado"}
