"""A Pinecone data-plane HTTP server on localhost that the real ``pinecone`` SDK talks to.

Data plane (``Pinecone(api_key=...).Index(host=standin.url)``):
  POST /vectors/upsert       {"vectors": [{"id", "values", "metadata"}], "namespace"}
  POST /query                {"topK", "vector", "namespace", "filter", "includeMetadata", ...}
  GET  /vectors/fetch        ?ids=a&ids=b&namespace=ns
  POST /vectors/delete       {"ids", "namespace"} or {"deleteAll": true, "namespace"}
  POST /describe_index_stats
  GET  /vectors/list         ?namespace=&prefix=&limit=&paginationToken=
Control plane (for ``Index(name=...)``, with ``PINECONE_CONTROLLER_HOST=standin.url``):
  GET  /indexes/{name}       the index description, whose ``host`` is this server

Exact cosine scores; filters in Pinecone's syntax, evaluated by the same function the embedded
index uses. Vectors whose size differs from ``dimension`` are refused with 400, as Pinecone does.
Requests without an ``Api-Key`` header get 401. ``fail_next(status, n)`` makes the next n
data-plane requests answer ``status`` (the SDK retries 429/5xx itself). Every request is recorded.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from shared.vectorstore import matches_filter


@dataclass
class PineconeRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    body: dict[str, Any]
    headers: dict[str, str]


class PineconeStandIn:
    def __init__(
        self, *, dimension: int = 1536, name: str = "brd-upload", list_page_size: int = 100
    ) -> None:
        self.dimension = dimension
        self.name = name
        self.list_page_size = list_page_size
        self.namespaces: dict[str, dict[str, tuple[list[float], dict[str, Any]]]] = {}
        self.requests: list[PineconeRequest] = []
        self._failures: list[int] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> PineconeStandIn:
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> PineconeStandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fail_next(self, status: int, n: int = 1) -> None:
        with self._lock:
            self._failures.extend([status] * n)

    def count(self, namespace: str) -> int:
        with self._lock:
            return len(self.namespaces.get(namespace, {}))

    def paths(self) -> list[str]:
        with self._lock:
            return [r.path for r in self.requests]

    # ------------------------------------------------------------------------------------------
    def handle(
        self, method: str, path: str, query: dict[str, list[str]], body: dict, headers: dict
    ) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(PineconeRequest(method, path, query, body, headers))
            if not headers.get("api-key"):
                return 401, {"error": {"code": "UNAUTHENTICATED", "message": "no Api-Key"}}
            if self._failures and not path.startswith("/indexes/"):
                status = self._failures.pop(0)
                return status, {"error": {"code": "UNAVAILABLE", "message": f"stand-in {status}"}}
            route = (method, path)
            if route == ("POST", "/vectors/upsert"):
                return self._upsert(body)
            if route == ("POST", "/query"):
                return self._query(body)
            if route == ("GET", "/vectors/fetch"):
                return self._fetch(query)
            if route == ("POST", "/vectors/delete"):
                return self._delete(body)
            if route == ("POST", "/describe_index_stats"):
                return self._stats()
            if route == ("GET", "/vectors/list"):
                return self._list(query)
            if method == "GET" and path.startswith("/indexes/"):
                return self._describe_index(path.rsplit("/", 1)[-1])
        return 404, {"error": {"code": "NOT_FOUND", "message": f"no route {method} {path}"}}

    def _upsert(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        ns = self.namespaces.setdefault(body.get("namespace", ""), {})
        vectors = body.get("vectors", [])
        for v in vectors:
            if len(v["values"]) != self.dimension:
                return 400, {
                    "error": {
                        "code": "INVALID_ARGUMENT",
                        "message": f"Vector dimension {len(v['values'])} does not match the "
                        f"dimension of the index {self.dimension}",
                    }
                }
        for v in vectors:
            ns[v["id"]] = (list(v["values"]), dict(v.get("metadata") or {}))
        return 200, {"upsertedCount": len(vectors)}

    def _query(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        namespace = body.get("namespace", "")
        vector = body["vector"]
        if len(vector) != self.dimension:
            return 400, {
                "error": {
                    "code": "INVALID_ARGUMENT",
                    "message": f"Vector dimension {len(vector)} does not match the dimension "
                    f"of the index {self.dimension}",
                }
            }
        qn = math.sqrt(sum(x * x for x in vector)) or 1.0
        scored = []
        for vid, (values, meta) in self.namespaces.get(namespace, {}).items():
            if not matches_filter(meta, body.get("filter")):
                continue
            vn = math.sqrt(sum(x * x for x in values)) or 1.0
            score = sum(a * b for a, b in zip(vector, values, strict=True)) / (qn * vn)
            scored.append((score, vid, values, meta))
        scored.sort(key=lambda t: (-t[0], t[1]))
        matches = []
        for score, vid, values, meta in scored[: int(body.get("topK", 10))]:
            match: dict[str, Any] = {"id": vid, "score": score}
            if body.get("includeMetadata"):
                match["metadata"] = meta
            if body.get("includeValues"):
                match["values"] = values
            matches.append(match)
        return 200, {"matches": matches, "namespace": namespace, "usage": {"readUnits": 1}}

    def _fetch(self, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        namespace = (query.get("namespace") or [""])[0]
        ns = self.namespaces.get(namespace, {})
        vectors = {
            vid: {"id": vid, "values": ns[vid][0], "metadata": ns[vid][1]}
            for vid in query.get("ids", [])
            if vid in ns
        }
        return 200, {"vectors": vectors, "namespace": namespace, "usage": {"readUnits": 1}}

    def _delete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        ns = self.namespaces.get(body.get("namespace", ""), {})
        if body.get("deleteAll"):
            ns.clear()
        for vid in body.get("ids") or []:
            ns.pop(vid, None)
        return 200, {}

    def _stats(self) -> tuple[int, dict[str, Any]]:
        namespaces = {
            name or "__default__": {"vectorCount": len(ns)}
            for name, ns in self.namespaces.items()
            if ns
        }
        total = sum(len(ns) for ns in self.namespaces.values())
        return 200, {
            "namespaces": namespaces,
            "dimension": self.dimension,
            "indexFullness": 0.0,
            "totalVectorCount": total,
            "metric": "cosine",
            "vectorType": "dense",
        }

    def _list(self, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        namespace = (query.get("namespace") or [""])[0]
        prefix = (query.get("prefix") or [""])[0]
        limit = int((query.get("limit") or [self.list_page_size])[0])
        offset = int((query.get("paginationToken") or ["0"])[0])
        ids = sorted(i for i in self.namespaces.get(namespace, {}) if i.startswith(prefix))
        page = ids[offset : offset + limit]
        out: dict[str, Any] = {
            "vectors": [{"id": i} for i in page],
            "namespace": namespace,
            "usage": {"readUnits": 1},
        }
        if offset + limit < len(ids):
            out["pagination"] = {"next": str(offset + limit)}
        return 200, out

    def _describe_index(self, name: str) -> tuple[int, dict[str, Any]]:
        if name != self.name:
            return 404, {"error": {"code": "NOT_FOUND", "message": f"index {name!r} not found"}}
        return 200, {  # the 2026 control-plane shape pinecone 10.x decodes
            "name": self.name,
            "host": self.url,
            "status": {"ready": True, "state": "Ready"},
            "schema": {
                "fields": {
                    "values": {
                        "type": "dense_vector",
                        "dimension": self.dimension,
                        "metric": "cosine",
                    }
                }
            },
            "deployment": {"deployment_type": "managed", "cloud": "aws", "region": "us-east-1"},
            "deletion_protection": "disabled",
        }


def _handler_for(standin: PineconeStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload = standin.handle(
                method, parts.path, parse_qs(parts.query), body, headers
            )
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return Handler
