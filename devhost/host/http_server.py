"""HTTP triggers: the local HTTP server and the routing of its requests to functions.

Owns: ``HttpRouter``, which maps a request onto an HTTP-triggered function as the real host does
(the ``routePrefix``, literal routes before parameterized ones, methods, 404 and 405 with
``Allow``), checks the function key on FUNCTION and ADMIN routes (``?code=`` or the
``x-functions-key`` header), answers ``/admin/host/status``, invokes the function and turns its
result into a response; and ``HttpServer``, the threaded server on 127.0.0.1 that feeds it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import azure.functions as func

from ..expressions import Route
from .discovery import FunctionInfo
from .invoke import Invoker
from .runtime import Runtime

log = logging.getLogger("devhost")

Response = tuple[int, dict[str, str], bytes]


class HttpRouter:
    """Routes requests to the HTTP-triggered ``functions``. ``base_url`` gives the server's
    address (for the request URL the function sees)."""

    def __init__(
        self,
        functions: dict[str, FunctionInfo],
        *,
        route_prefix: str,
        function_key: str | None,
        host_id: str,
        base_url: Callable[[], str],
        runtime: Runtime,
        invoker: Invoker,
    ) -> None:
        self.functions = functions
        self.route_prefix = route_prefix
        self.function_key = function_key
        self.host_id = host_id
        self.base_url = base_url
        self.runtime = runtime
        self.invoker = invoker

    def _routes(self) -> list[tuple[FunctionInfo, Route]]:
        http = [(f, f.route) for f in self.functions.values() if f.route is not None]
        # literal routes win over parameterized ones, longer literals over shorter
        return sorted(http, key=lambda fr: (fr[1].n_params, -fr[1].n_literal))

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Response:
        """Route one request: returns (status, headers, body)."""
        parts = urlsplit(target)
        # like ASP.NET Core routing in the real host: segments are decoded, but an encoded slash
        # stays "%2F" inside its segment (a route value), it never splits the path
        path = "/".join(unquote(s).replace("/", "%2F") for s in parts.path.split("/")).strip("/")
        if path.lower() == "admin/host/status":  # what tools poll to see the host is up
            return _json_response(200, {"id": self.host_id, "state": "Running"})
        prefix = self.route_prefix
        if prefix:
            if path.lower() != prefix.lower() and not path.lower().startswith(prefix.lower() + "/"):
                return _json_response(404, {"error": "not found", "path": parts.path})
            path = path[len(prefix) :].strip("/")
        matches = [(f, m) for f, route in self._routes() if (m := route.match(path)) is not None]
        if not matches:
            return _json_response(404, {"error": "not found", "path": parts.path})
        allowed = [(f, m) for f, m in matches if f.methods is None or method in f.methods]
        if not allowed:
            methods = sorted({m for f, _ in matches for m in (f.methods or ())})
            status, hdrs, payload = _json_response(405, {"error": "method not allowed"})
            return status, {**hdrs, "Allow": ", ".join(methods)}, payload
        f, route_params = allowed[0]
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        if f.auth_level != "anonymous" and self.function_key is not None:
            lower = {k.lower(): v for k, v in headers.items()}
            supplied = params.get("code") or lower.get("x-functions-key")
            if supplied != self.function_key:
                return 401, {"Content-Length": "0"}, b""
        url = f"{self.base_url()}{parts.path}" + (f"?{parts.query}" if parts.query else "")
        request = func.HttpRequest(
            method, url, headers=headers, params=params, route_params=route_params, body=body
        )
        with self.runtime.working():
            try:
                result = self.invoker.invoke(f, request, {**route_params, **params})
            except Exception as exc:  # noqa: BLE001 - any failure is a 500, as the Functions host
                return _json_response(
                    500, {"error": "function failed", "function": f.name, "detail": repr(exc)}
                )
        return _http_result(result)


def _json_response(status: int, payload: Any) -> Response:
    return status, {"Content-Type": "application/json; charset=utf-8"}, json.dumps(payload).encode()


def _http_result(result: Any) -> Response:
    if isinstance(result, func.HttpResponse):
        headers = dict(result.headers.items())
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = f"{result.mimetype}; charset={result.charset}"
        return int(result.status_code), headers, result.get_body() or b""
    if result is None:
        return 204, {}, b""
    if isinstance(result, bytes):
        return 200, {"Content-Type": "application/octet-stream"}, result
    if isinstance(result, str):
        return 200, {"Content-Type": "text/plain; charset=utf-8"}, result.encode()
    return _json_response(200, result)


class _HttpHandler(BaseHTTPRequestHandler):
    respond: Callable[[str, str, dict[str, str], bytes], Response]
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections end after this

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items()}
        status, out_headers, payload = self.respond(self.command, self.path, headers, body)
        self.send_response(status)
        for k, v in out_headers.items():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _handle

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http %s - %s", self.address_string(), format % args)


class HttpServer:
    """A threaded HTTP server on 127.0.0.1 answering every request with ``respond``."""

    def __init__(self, respond: Callable[[str, str, dict[str, str], bytes], Response]) -> None:
        self.respond = respond
        self._server: ThreadingHTTPServer | None = None

    def start(self, port: int) -> int:
        """Serve on ``port`` (0: any free port) in a thread; returns the port bound."""
        answer = self.respond

        class Handler(_HttpHandler):
            respond = staticmethod(answer)

        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        server.block_on_close = False  # keep-alive clients must not block stop()
        self._server = server
        t = threading.Thread(target=server.serve_forever, args=(0.2,), name="devhost-http")
        t.daemon = True
        t.start()
        return int(server.server_address[1])

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
