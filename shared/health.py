"""The deep health check (``GET /api/health/deep``, function key required): each dependency the
app is configured with is asked one cheap question, at the same time, each with its latency and
its error.

- ``storage``: a small blob written and read back (``ingestion/health/probe.json``);
- ``index``: Pinecone's ``describe_index_stats`` (dimension, vectors); the embedded index lives in
  storage, so its namespaces are listed (``index/``);
- ``model``: the model endpoint's models list (``GET /models``, no tokens spent), with no retry;
  skipped for the offline engine with the MiniLM embedder;
- ``ado``: ``GET {org}/_apis/projects/{project}`` with the PAT, no retry; skipped without
  ``AZURE_DEVOPS_ORG_URL``, ``AZURE_DEVOPS_PROJECT`` and ``AZURE_DEVOPS_PAT``.

Every error message is scrubbed before it is answered: each configured secret value (and the Basic
auth form of the PAT) is masked and anything secret-like redacted (``shared.hygiene.scrub``), since
an endpoint may echo a request's credentials in its error. A probe that has not answered within
``PROBE_TIMEOUT_SECONDS`` (plus a grace for the SDKs' own deadlines) is reported as an error and
left behind. The answer is 200 when nothing failed, else 503.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from shared.errors import ConfigurationError
from shared.services import Services

PROBE_TIMEOUT_SECONDS = 5.0
GRACE_SECONDS = 5.0
PROBE_BLOB = "ingestion/health/probe.json"


@dataclass
class Probe:
    name: str
    status: str = "ok"  # ok | error | skipped
    latency_ms: float | None = None
    error: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "latency_ms": self.latency_ms}
        if self.error is not None:
            out["error"] = self.error
        out.update(self.detail)
        return out


class Skip(Exception):
    """The dependency is not configured: nothing to ask."""


def _storage(svc: Services) -> dict[str, Any]:
    stamp = json.dumps({"checked_at": svc.clock().isoformat()}).encode()
    svc.store.put(PROBE_BLOB, stamp)
    if svc.store.get(PROBE_BLOB) != stamp:
        raise RuntimeError("the probe blob read back differs from what was written")
    return {"backend": svc.settings.resolved_storage_backend()}


def _index(svc: Services) -> dict[str, Any]:
    settings = svc.settings
    if settings.resolved_vector_store() == "embedded":
        namespaces = svc.store.children("index/")
        return {"backend": "embedded", "namespaces": len(namespaces)}
    key = settings.pinecone_api_key.get_secret_value() if settings.pinecone_api_key else ""
    if not key:
        raise ConfigurationError("SYNTH_VECTOR_STORE=pinecone needs PINECONE_API_KEY")
    from pinecone import Pinecone

    client = Pinecone(api_key=key, timeout=PROBE_TIMEOUT_SECONDS)
    if settings.pinecone_host:
        index = client.Index(host=settings.pinecone_host)
    else:
        index = client.Index(name=settings.pinecone_index)
    stats = index.describe_index_stats(timeout=PROBE_TIMEOUT_SECONDS)
    return {
        "backend": "pinecone",
        "index": settings.pinecone_index if not settings.pinecone_host else "(by host)",
        "dimension": stats.dimension,
        "vectors": stats.total_vector_count,
    }


def _model(svc: Services) -> dict[str, Any]:
    settings = svc.settings
    if settings.resolved_engine() != "llm" and settings.resolved_embedder() != "openai":
        raise Skip("offline engine and MiniLM embedder: no model endpoint is used")
    from shared.llm.client import build_openai_client
    from shared.llm.config import chat_model, provider

    client = build_openai_client(settings).with_options(
        timeout=PROBE_TIMEOUT_SECONDS, max_retries=0
    )
    names = [m.id for m in client.models.list()]
    detail: dict[str, Any] = {"provider": provider(settings), "models": len(names)}
    if provider(settings) == "openai" and settings.resolved_engine() == "llm":
        detail["chat_model_listed"] = chat_model(settings, "generation") in names
    return detail


def _ado(svc: Services) -> dict[str, Any]:
    settings = svc.settings
    pat = settings.azure_devops_pat.get_secret_value() if settings.azure_devops_pat else ""
    if not (settings.azure_devops_org_url and settings.azure_devops_project and pat):
        raise Skip(
            "AZURE_DEVOPS_ORG_URL, AZURE_DEVOPS_PROJECT and AZURE_DEVOPS_PAT are not all set"
        )
    from shared.ado.client import AdoClient

    with AdoClient(
        settings.azure_devops_org_url,
        settings.azure_devops_project,
        pat,
        timeout=PROBE_TIMEOUT_SECONDS,
        max_retries=0,
    ) as client:
        project = client.project_info()
    return {"project": project.get("name"), "state": project.get("state")}


PROBES: dict[str, Callable[[Services], dict[str, Any]]] = {
    "storage": _storage,
    "index": _index,
    "model": _model,
    "ado": _ado,
}


def _run(svc: Services, name: str, probe: Callable[[Services], dict[str, Any]]) -> Probe:
    from shared.hygiene import scrub

    started = time.perf_counter()
    try:
        detail = probe(svc)
    except Skip as why:
        return Probe(name, "skipped", None, None, {"reason": str(why)})
    except Exception as err:  # noqa: BLE001 - every failure is the answer, scrubbed
        text = " ".join(f"{type(err).__name__}: {err}".split())[:500]
        return Probe(
            name,
            "error",
            round((time.perf_counter() - started) * 1000, 1),
            scrub(text, svc.settings.secret_values()),
        )
    return Probe(name, "ok", round((time.perf_counter() - started) * 1000, 1), None, detail)


def deep_health(svc: Services) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) of the deep health check (module docstring)."""
    from shared import __version__

    settings = svc.settings
    pool = ThreadPoolExecutor(max_workers=len(PROBES), thread_name_prefix="health")
    futures = {name: pool.submit(_run, svc, name, probe) for name, probe in PROBES.items()}
    deadline = time.monotonic() + PROBE_TIMEOUT_SECONDS + GRACE_SECONDS
    results: dict[str, Probe] = {}
    for name, future in futures.items():
        try:
            results[name] = future.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            results[name] = Probe(
                name,
                "error",
                None,
                f"no answer within {PROBE_TIMEOUT_SECONDS + GRACE_SECONDS:g} s",
            )
    pool.shutdown(wait=False, cancel_futures=True)
    failed = sorted(n for n, p in results.items() if p.status == "error")
    body = {
        "status": "degraded" if failed else "ok",
        "version": __version__,
        "engine": settings.resolved_engine(),
        "embedder": settings.resolved_embedder(),
        "vector_store": settings.resolved_vector_store(),
        "storage": settings.resolved_storage_backend(),
        "failed": failed,
        "probes": {name: results[name].view() for name in PROBES},
    }
    return (503 if failed else 200), body
