"""The Langfuse adapter of the tracing port (``shared.tracing``): one trace per run.

A run is processed by many separate function invocations (start, segment, one per segment, one per
story, finalize), possibly on different machines, so nothing can hold a trace open. Instead every
id is derived from the run id:

- trace id = ``Langfuse.create_trace_id(seed=run_id)``;
- the root observation ``synthesis_run`` has the span id ``sha256("synthesis_run:" + run_id)[:16]``
  and is written exactly once, when the run has ended (``run_root``, called by
  ``shared.pipeline.runs.trace_run_end`` from finalize or from an aborted run): it starts at the
  run's creation, ends at its completion, and carries run_id, project, source, engine, model,
  embedding model, status and the seed §12 metrics (segment count, average segment tokens, story
  count, tag distribution, tagging failure rate). Langfuse v4 ingestion (what this SDK sends,
  ``x-langfuse-ingestion-version: 4``) treats observations as immutable and does not deduplicate
  records that share an id, so a root written at the start and again at the end would be two
  records (https://langfuse.com/faq/all/tracing-data-updates);
- every other span (seed §7.4 names: ``segmentation``, ``segment_{id}_retrieval``,
  ``segment_{id}_generation_agent``, ``story_{id}_tagging_retrieval``,
  ``story_{id}_tagging_agent``) is a child of that root, whatever invocation writes it (before the
  root is exported: a parent may arrive after its children), and carries the trace name
  ``synthesis_run`` and the run id as propagated trace attributes, as v4 wants on every span.

Agent spans are Langfuse "generation" observations, so token usage (``token_usage_prompt`` /
``token_usage_completion`` in ``span.update``) shows as usage; everything else is metadata.

No secret is ever sent: metadata keys that name a secret (key, secret, token, password, connection
string, credential) are dropped and string values that look like one (``sk-...``, ``AccountKey=``,
``Bearer ...``) are redacted, both here and in the ``mask`` Langfuse applies to everything it sends.
A tracing failure never fails the pipeline: the span degrades to a no-op with a log line.
``flush()`` exports what this invocation recorded; the pipeline calls it at the end of every
invocation. It is bounded by ``LANGFUSE_TIMEOUT`` (seconds, default 2): that is the OTLP exporter's
deadline for one export, retries included, and ``flush()`` returns after it whatever the exporter
does, so an unreachable or hanging Langfuse costs an invocation at most that long (the SDK's own
default, 5 s, made a refused connection cost about 3 s of backoff per invocation). The SDK is
imported when the tracer is built (about 0.5 s), never by ``function_app``
(``shared.services.build_tracer`` imports this module only when Langfuse keys are set).
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from opentelemetry.sdk.trace.id_generator import RandomIdGenerator

from shared.tracing import Span

if TYPE_CHECKING:
    from langfuse import LangfuseGeneration
    from langfuse import LangfuseSpan as LangfuseObservation
    from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger(__name__)

ROOT_NAME = "synthesis_run"
# "token" names a secret (access_token, sas_token), but token counts are metrics: avg_tokens,
# total_tokens, token_usage_prompt are kept
_SECRET_KEY = re.compile(
    r"(api[_-]?key|secret|token(?!s|_usage|_count)|password|passwd|connection|conn_str|credential"
    r"|authorization|sas)",
    re.I,
)
_SECRET_VALUE = re.compile(
    r"(sk-[A-Za-z0-9_-]{8,}|pk-lf-[A-Za-z0-9-]{8,}|AccountKey=[^;\s]+|SharedAccessSignature=[^;\s]+"
    r"|sig=[A-Za-z0-9%/+=]{16,}|Bearer\s+[A-Za-z0-9._~+/=-]{8,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"
    r"\.[A-Za-z0-9_-]+)"
)
_GENERATION_SUFFIXES = ("_generation_agent", "_tagging_agent")
# segment_{id}_retrieval, segment_{id}_generation_agent: left out with per_segment_spans off
SEGMENT_SPAN_PREFIX = "segment_"
MAX_VALUE_CHARS = 2000
DEFAULT_TIMEOUT = 2.0


def root_span_id(run_id: str) -> str:
    return hashlib.sha256(f"{ROOT_NAME}:{run_id}".encode()).hexdigest()[:16]


def redact(value: Any) -> Any:
    """Secrets out of any value Langfuse would send (its ``mask`` hook and our metadata)."""
    if isinstance(value, str):
        return _SECRET_VALUE.sub("[REDACTED]", value)[:MAX_VALUE_CHARS]
    if isinstance(value, dict):
        return {
            k: ("[REDACTED]" if _SECRET_KEY.search(str(k)) else redact(v)) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def clean_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata without secret-named keys, with secret-looking values redacted."""
    return {k: redact(v) for k, v in metadata.items() if not _SECRET_KEY.search(k)}


def _mask(*, data: Any, **_: Any) -> Any:
    return redact(data)


class _RunIds(RandomIdGenerator):
    """OpenTelemetry id generator that hands out a chosen (trace id, span id) while forced on
    this thread (the root observation), random ids otherwise."""

    def __init__(self) -> None:
        self._local = threading.local()

    @contextmanager
    def forced(self, trace_id: int, span_id: int) -> Iterator[None]:
        self._local.ids = (trace_id, span_id)
        try:
            yield
        finally:
            self._local.ids = None

    def generate_trace_id(self) -> int:
        ids = getattr(self._local, "ids", None)
        return ids[0] if ids else super().generate_trace_id()

    def generate_span_id(self) -> int:
        ids = getattr(self._local, "ids", None)
        return ids[1] if ids else super().generate_span_id()

    def is_trace_id_random(self) -> bool:
        return getattr(self._local, "ids", None) is None


_ID_GENERATOR: _RunIds | None = None
_ID_LOCK = threading.Lock()


def _id_generator() -> _RunIds:
    """One generator for every provider this module builds (Langfuse keeps one set of resources
    per public key, so the provider in use may be one built earlier in the process)."""
    global _ID_GENERATOR
    with _ID_LOCK:
        if _ID_GENERATOR is None:
            _ID_GENERATOR = _RunIds()
        return _ID_GENERATOR


class LangfuseSpan:
    """``Span`` on a Langfuse observation (a span, or a generation for the agents)."""

    def __init__(
        self,
        observation: LangfuseObservation | LangfuseGeneration,
        trace_id: str,
        generation: bool,
    ) -> None:
        self._obs = observation
        self.trace_id: str | None = trace_id
        self._generation = generation

    def update(self, **metrics: Any) -> None:
        try:
            extra: dict[str, Any] = {}
            if self._generation and (
                "token_usage_prompt" in metrics or "token_usage_completion" in metrics
            ):
                extra["usage_details"] = {
                    "input": int(metrics.get("token_usage_prompt") or 0),
                    "output": int(metrics.get("token_usage_completion") or 0),
                }
            if metrics.get("error"):
                extra.update(level="ERROR", status_message=redact(str(metrics["error"]))[:500])
            self._obs.update(metadata=clean_metadata(metrics), **extra)
        except Exception:  # noqa: BLE001 - tracing must never fail the pipeline
            log.warning("could not update a Langfuse span", exc_info=True)


class _NoSpan:
    def __init__(self, trace_id: str | None) -> None:
        self.trace_id = trace_id

    def update(self, **metrics: Any) -> None:
        pass


def _ns(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000_000)


class LangfuseTracer:
    """``Tracer`` on the Langfuse SDK. ``span_exporter`` replaces the OTLP exporter (tests pass an
    in-memory one); the tracer provider is private to this tracer, never the global one.
    ``timeout``: seconds one export may take (the exporter's deadline) and ``flush()`` may wait.
    ``per_segment_spans``: False leaves out the per-segment spans (``observability.
    per_segment_spans``); the root, ``segmentation`` and the per-story spans are recorded."""

    enabled = True

    def __init__(
        self,
        public_key: str,
        secret_key: str,
        host: str | None = None,
        *,
        span_exporter: SpanExporter | None = None,
        release: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        per_segment_spans: bool = True,
    ) -> None:
        from langfuse import Langfuse
        from opentelemetry.sdk.trace import TracerProvider

        self.timeout = timeout
        self.per_segment_spans = per_segment_spans
        self.provider = TracerProvider(id_generator=_id_generator())
        self.client = Langfuse(
            public_key=public_key,
            secret_key=secret_key,
            base_url=host or None,
            tracer_provider=self.provider,
            span_exporter=span_exporter,
            mask=_mask,
            release=release,
            timeout=timeout,  # type: ignore[arg-type]  # langfuse says int; seconds, floats work
        )
        self._flushing: threading.Thread | None = None

    @staticmethod
    def trace_id(run_id: str) -> str:
        from langfuse import Langfuse

        return str(Langfuse.create_trace_id(seed=run_id))

    @contextmanager
    def span(self, run_id: str, name: str, **metadata: Any) -> Iterator[Span]:
        trace_id = self.trace_id(run_id)
        if not self.per_segment_spans and name.startswith(SEGMENT_SPAN_PREFIX):
            yield _NoSpan(trace_id)  # not recorded; the records still name the run's trace
            return
        try:
            opened = self._open(run_id, trace_id, name, metadata)
        except Exception:  # noqa: BLE001 - tracing must never fail the pipeline
            log.warning("could not open Langfuse span %s of %s", name, run_id, exc_info=True)
            opened = None
        if opened is None:
            yield _NoSpan(trace_id)
            return
        observation, span = opened
        try:
            yield span
        except BaseException as err:
            try:
                observation.update(level="ERROR", status_message=redact(str(err))[:500])
            except Exception:  # noqa: BLE001
                pass
            raise
        finally:
            try:
                observation.end()
            except Exception:  # noqa: BLE001
                log.warning("could not end Langfuse span %s", name, exc_info=True)

    def _open(
        self, run_id: str, trace_id: str, name: str, metadata: dict[str, Any]
    ) -> tuple[LangfuseObservation | LangfuseGeneration, LangfuseSpan]:
        from langfuse import propagate_attributes
        from opentelemetry import context as otel_context
        from opentelemetry import trace as otel_trace

        root = root_span_id(run_id)
        if name == ROOT_NAME:
            parent = otel_context.Context()  # no parent: this is the trace's root
        else:
            remote = otel_trace.SpanContext(
                trace_id=int(trace_id, 16),
                span_id=int(root, 16),
                is_remote=True,
                trace_flags=otel_trace.TraceFlags(otel_trace.TraceFlags.SAMPLED),
            )
            parent = otel_trace.set_span_in_context(otel_trace.NonRecordingSpan(remote))
        generation = name == "segmentation" or name.endswith(_GENERATION_SUFFIXES)
        token = otel_context.attach(parent)
        try:
            with propagate_attributes(trace_name=ROOT_NAME, metadata={"run_id": run_id}):
                meta = clean_metadata({"run_id": run_id, **metadata})
                if name == ROOT_NAME:
                    with _id_generator().forced(int(trace_id, 16), int(root, 16)):
                        obs = self._start(name, generation, meta)
                else:
                    obs = self._start(name, generation, meta)
        finally:
            otel_context.detach(token)
        return obs, LangfuseSpan(obs, trace_id, generation)

    def _start(
        self, name: str, generation: bool, meta: dict[str, Any]
    ) -> LangfuseObservation | LangfuseGeneration:
        if generation:
            return self.client.start_observation(name=name, as_type="generation", metadata=meta)
        return self.client.start_observation(name=name, as_type="span", metadata=meta)

    def run_root(
        self, run_id: str, *, started_at: datetime, ended_at: datetime, **metadata: Any
    ) -> None:
        """The run's root observation ``synthesis_run``, from ``started_at`` to ``ended_at``;
        call it once per run (see the module docstring). Never raises."""
        from langfuse import propagate_attributes
        from opentelemetry import context as otel_context

        trace_id = self.trace_id(run_id)
        try:
            meta = clean_metadata({"run_id": run_id, **metadata})
            start = _ns(started_at)
            end = max(_ns(ended_at), start)
            token = otel_context.attach(otel_context.Context())  # no parent: the trace's root
            try:
                with (
                    propagate_attributes(trace_name=ROOT_NAME, metadata={"run_id": run_id}),
                    _id_generator().forced(int(trace_id, 16), int(root_span_id(run_id), 16)),
                ):
                    obs = self._start_root(meta, start)
            finally:
                otel_context.detach(token)
            if metadata.get("error"):
                obs.update(level="ERROR", status_message=redact(str(metadata["error"]))[:500])
            obs.end(end_time=end)
        except Exception:  # noqa: BLE001 - tracing must never fail the pipeline
            log.warning("could not write the Langfuse root of %s", run_id, exc_info=True)

    def _start_root(self, meta: dict[str, Any], start_ns: int) -> LangfuseObservation:
        """The root observation, started at ``start_ns``. ``start_observation`` takes no start
        time, so the SDK's own tracer and observation wrapper are used when present (the root
        then spans the whole run); otherwise the root starts now."""
        tracer = getattr(self.client, "_otel_tracer", None)
        wrap = getattr(self.client, "_create_observation_from_otel_span", None)
        if tracer is not None and wrap is not None:
            otel_span = tracer.start_span(name=ROOT_NAME, start_time=start_ns)
            return wrap(otel_span=otel_span, as_type="span", metadata=meta)
        return self.client.start_observation(name=ROOT_NAME, as_type="span", metadata=meta)

    def flush(self) -> None:
        """Export what this invocation recorded, waiting at most ``timeout`` seconds; what is not
        sent by then goes on in the background (or is dropped by the exporter). Never raises."""
        if self._flushing is not None and self._flushing.is_alive():
            log.warning("the previous Langfuse flush is still running; not waiting again")
            return

        def work() -> None:
            try:
                self.client.flush()
            except Exception:  # noqa: BLE001 - an unreachable Langfuse must not fail anything
                log.warning("could not flush Langfuse spans", exc_info=True)

        thread = threading.Thread(target=work, name="langfuse-flush", daemon=True)
        self._flushing = thread
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            log.warning(
                "Langfuse did not take this invocation's spans within %.1f s (LANGFUSE_TIMEOUT); "
                "not waiting longer",
                self.timeout,
            )
