"""Fan-out (issue 6): ``python -m benchmarks.bench_fanout [--runs 5] [--sequential-runs 3]
[--embedder minilm|openai [--embedding-delay S]]``.

One transcript that gives 12 segments and 36 stories (``samples/transcripts/
remote_control_functional_design.txt``, the stand-in told to cut 12 segments and write 3 stories
each) goes through ``devhost.host.LocalHost`` running ``function_app.py`` with the LLM engine on a
private Azurite. Every chat call is answered by ``devhost/standins/openai_standin.py`` after a fixed
300 ms; the stand-in runs in its own process (the model is not in the worker's process, and its
CPU must not take the worker's GIL). The sample backlog and architecture notes are in the embedded
index, stored in Azurite and loaded with the embedder the run uses (``devhost.demo.load_index``, the
loaders). The host uses the repo's host.json and 48 worker threads (the local stand-in for the
Python worker's thread pool).

Embedders (``--embedder``; each variant is its own invocation, and its results are kept side by
side in the JSON under ``variants``):
- ``minilm`` (the default and the headline): the packaged MiniLM (``SYNTH_EMBEDDER=minilm``) in the
  worker, so the only 300 ms calls are the 1 + 12 + 36 chat calls and every embedding is CPU in
  the worker.
- ``openai``: the production configuration with a model, ``SYNTH_EMBEDDER=openai``
  (``text-embedding-3-small``, 1536-d, ``shared/embeddings/openai_embedder.py`` with its
  content-hash cache), the embeddings served by the same stand-in process (its hashed 1536-d
  vectors; the index is loaded through it too). The stand-in answers an embedding call after
  ``--embedding-delay`` seconds: 0.3 (the default: "every call after a fixed 300 ms", taken
  literally) or 0 (embeddings answered at once: only the chat calls are slow, as in the
  critical path's "3 sequential model calls"). The embedder never embeds a text twice (in memory,
  then the store), and this benchmark runs the same transcript again and again, so before every
  run, warm-up included, the worker's in-memory cache is cleared and the store's cache blobs
  (``index/_embedding-cache/``) are deleted: each run embeds its texts as a new transcript
  does. Per run that is 12 + 36 embedding calls (checked on every run): one per generation unit
  (its retrieval query, ``shared/retrieval.generation_context``) and one per tagging unit (its
  story, ``tagging_candidates``), plus those the LLM segmenter makes when it merges a segment below
  ``min_merge_threshold`` tokens (``shared/engine/llm/segmentation._Limits._vector``, one at a
  time, in the segment invocation before it sends the generate messages; counted per run from
  the stand-in's log as the embedding calls that start before the first generate invocation: none
  for this transcript). A re-run of the same transcript would find every vector cached and make
  none.

Definitions (every figure is a median over ``--runs`` repetitions, after one unmeasured warm-up
run per host that loads the embedder and opens the connections, as on any instance that has run
once):
- **end to end** (``e2e``): from just before ``POST /api/runs`` is sent (entry ``http``) or just
  before the blob upload to ``transcripts/{project}/{name}`` starts (entry ``blob``) to the end
  of the finalize invocation that wrote ``status: completed`` into run.json, as the LocalHost
  recorded it (the invocation's start and duration, like the real host's ``Executed
  'Functions.finalize'`` log line; the status write is its last storage call). Each run is then
  checked: run.json ``completed`` with 12 segments and 36 stories, 49 chat calls answered (and
  48 embedding calls with ``openai``, none with ``minilm``), one finalize, no failed invocation. The HTTP entry is the headline: the API starts the run in the
  request. The blob entry adds the blob trigger's detection, which depends on the trigger source
  (Event Grid in Azure, container polling at most 1 s apart here).
- **critical path**: the model calls that must follow one another, each at the stand-in's
  delay for its route, + the finalize time, the duration of that finalize invocation as the host
  measured it (reading every part, writing the four outputs, two ETag-guarded run.json updates).
  The chat calls: 3 x 0.3 s (segmentation, one generation, one tagging). The embedding calls
  (``openai`` only; MiniLM makes none, its inference is worker CPU): the segment invocation's
  merge embeddings (counted per run, sequential: one ``embed`` at a time), then in one generation
  unit its retrieval embedding before its generation call, then in one tagging unit its story's
  embedding before its tagging call: ``(segmentation merges + 2) x --embedding-delay``. So with
  0.3 s embeddings and no merges: 5 x 0.3 s + finalize; with 0 s embeddings: 3 x 0.3 s +
  finalize. Everything else in ``e2e`` is overhead: the request and start_run, queue hops,
  retrieval and the embeddings' CPU (MiniLM inference; or the SDK call, the cache lookup and the
  cache write), storage round trips, fan-in checks, waiting for the CPU.
- **sequential baseline**: the seed's design (§7.2/§7.3: one segment, then one story, at a time)
  measured on the same host and app with one invocation at a time (``max_workers=1``,
  ``batchSize=1``, ``newBatchThreshold=0``): its e2e is the model calls (49 x 0.3 s of chat, plus
  48 x ``--embedding-delay`` of embeddings with ``openai``) plus the same non-model work done in
  sequence; both parts are reported. The speedup is the sequential median over the fan-out median;
  the speedup over the model calls alone (a lower bound for any sequential design) is reported
  too. ``--sequential-runs 0`` skips it.
- **queue hops**: the LocalHost wakes a queue's pump when a message is sent to it from its own
  process, so hops wait for no poll. The real host does that only for output bindings; this app
  sends through the SDK, which the real host finds by polling (backoff up to host.json
  ``maxPollingInterval``, 2 s). ``http_poll_only`` (``--poll-only-runs``) measures the same runs
  with that polling (from 0.1 s, doubling up to 2 s) and no wake-ups.
- **phases** (medians, seconds from the start): the segmentation call's start and end as the
  stand-in saw them, the segment invocation's end (segments.jsonl written, generate messages
  sent), the last generation call's end, the last generate invocation's end, the last tagging
  call's end, the last tag invocation's end, the finalize start and end; plus the peak
  concurrency of model calls and invocations, and the CPU seconds each process used per run
  (worker: the host and the app in this process, without the benchmark's own thread; Azurite;
  the stand-in), which is what bounds ``e2e`` on a 2-core machine; and the storage requests per
  run: every request the Azure SDK sent from the worker process (the app's blob and queue calls
  and the host's queue receives, deletes and blob scans; not the benchmark's own polling) from
  the start until idle.
- **CPU floor** (``cpu_floor_s``): that CPU (all three processes) divided by the machine's cores,
  the least wall time it could take had every core been busy from the request to the end. When
  the floor alone is above 1.5 x the critical path, no scheduling can meet the ratio goal on this
  machine: only less CPU per run (or more cores) can.

Goals: e2e at most 1.5 x the critical path and at least 8 x faster than sequential. The table goes
to stdout and the JSON to ``benchmarks/results/fanout.json``: ``variants`` holds the latest result
of each embedder variant (``minilm``, ``openai_embed_0ms``, ``openai_embed_300ms``), each with its
own time, machine and load average; the top level repeats the ``minilm`` headline. The summary
table at the end lists every variant in the file.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._common import (
    REPO,
    STANDIN_PIDS,
    median,
    post_transcript,
    standin_subprocess,
    write_result,
)

DELAY_S = 0.3
SEGMENTS = 12
STORIES_PER_SEGMENT = 3
STORIES = SEGMENTS * STORIES_PER_SEGMENT
MODEL_CALLS = 1 + SEGMENTS + STORIES  # chat calls
# the chat calls that must follow one another: segmentation, one generation, one tagging
CRITICAL_CALLS = 3
# with the OpenAI embedder: one embedding per generation unit (its retrieval query) and one per
# tagging unit (its story), when not cached; the segmenter's merge embeddings come on top
EMBEDDING_CALLS = SEGMENTS + STORIES
# those that must follow one another (besides the segmenter's): one generation unit's retrieval
# embedding, before its generation call, then one tagging unit's, before its tagging call
CRITICAL_EMBEDDING_CALLS = 2
EMBEDDERS = ("minilm", "openai")
GOAL_RATIO = 1.5
GOAL_SPEEDUP = 8.0
PROJECT = "remote-control"
TRANSCRIPT = REPO / "samples" / "transcripts" / "remote_control_functional_design.txt"
# the local host's worker threads for the fan-out runs: enough for 12 generations and 36 taggings
# at once (in Azure: PYTHON_THREADPOOL_THREAD_COUNT per worker process, and more instances)
FANOUT_WORKERS = 48
# one invocation at a time: the seed's sequential design on the same host
SEQUENTIAL_QUEUES = {"batchSize": 1, "newBatchThreshold": 0}
SERVICE_ENV_PREFIXES = (
    "SYNTH_",
    "OPENAI_",
    "AZURE_OPENAI_",
    "AZURE_CLIENT_ID",
    "PINECONE_",
    "LANGFUSE_",
    "AZUREWEBJOBSSTORAGE",
)


# ------------------------------------------------------------------------------------------------
# the stand-in, in its own process


def serve_standin(log_path: str, embedding_delay: float) -> int:
    """``--serve-standin LOG``: the OpenAI stand-in with the fixed delay for chat calls and
    ``embedding_delay`` for embeddings; prints its base URL, appends one JSON line per request to
    LOG (route, schema, arrival and answer times), and serves until stdin closes."""
    from devhost.standins.openai_standin import OpenAIStandIn

    lock = threading.Lock()
    log = open(log_path, "a", encoding="utf-8")  # open for the server's lifetime

    class Timed(OpenAIStandIn):
        def handle(self, route: str, path: str, headers: dict[str, str], raw: bytes) -> tuple:
            arrived = time.time()
            result = super().handle(route, path, headers, raw)
            answered = time.time()
            try:
                fmt = json.loads(raw or b"{}").get("response_format") or {}
                schema = (fmt.get("json_schema") or {}).get("name")
            except ValueError:
                schema = None
            line = json.dumps({"route": route, "schema": schema, "start": arrived, "end": answered})
            with lock:
                log.write(line + "\n")
                log.flush()
            return result

    standin = Timed(
        delay=DELAY_S,
        embedding_delay=embedding_delay,
        segments_per_call=SEGMENTS,
        stories_per_segment=STORIES_PER_SEGMENT,
    )
    with standin:
        print(standin.base_url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin
    log.close()
    return 0


# CPU seconds used, per process, to show where a 2-core machine's time goes: the worker (this
# process but its main thread: the host, the app, MiniLM), Azurite (its process group) and the
# model stand-in
_PIDS = STANDIN_PIDS


def _cpu_of_group(pgid: int) -> float:
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pgid or int(fields[2]) == pgid:
            ticks += int(fields[11]) + int(fields[12])  # utime + stime
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_now() -> dict[str, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    found = {"worker": usage.ru_utime + usage.ru_stime}
    if Path("/proc").is_dir():
        for name, pid in _PIDS.items():
            found[name] = _cpu_of_group(pid)
    return found


# storage requests (blob and queue) sent by the worker process: the app's and the host's (queue
# receives and deletes, the blob trigger's scans), not the benchmark's own polling thread
_REQUESTS = [0]
_requests_lock = threading.Lock()


def count_storage_requests() -> None:
    """Count every request the Azure SDK's transport sends from a thread other than this one."""
    from azure.core.pipeline.transport import RequestsTransport

    if getattr(RequestsTransport.send, "_counted", False):
        return
    original = RequestsTransport.send
    me = threading.get_ident()

    def send(self: Any, request: Any, **kwargs: Any) -> Any:
        if threading.get_ident() != me:
            with _requests_lock:
                _REQUESTS[0] += 1
        return original(self, request, **kwargs)

    send.__dict__["_counted"] = True  # the mark that it is installed (once per process)
    RequestsTransport.send = send


def standin_process(log_path: Path, embedding_delay: float) -> Any:
    return standin_subprocess(
        "benchmarks.bench_fanout",
        ["--serve-standin", str(log_path), "--embedding-delay", str(embedding_delay)],
    )


def read_calls(log_path: Path, since: float) -> list[dict[str, Any]]:
    """Every request the stand-in answered since ``since`` (chat and embeddings)."""
    if not log_path.exists():
        return []
    calls = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    return [c for c in calls if c["start"] >= since]


def forget_embeddings(svc: Any) -> int:
    """Empty the OpenAI embedder's cache, in this process and in the store, so that the next run
    embeds its texts as a transcript never seen before does. Returns the cache blobs deleted."""
    from concurrent.futures import ThreadPoolExecutor

    from shared.embeddings.openai_embedder import CACHE_PREFIX, OpenAIEmbedder

    embedder = svc.embedder
    if not isinstance(embedder, OpenAIEmbedder):
        raise RuntimeError(f"expected the OpenAI embedder, the app has {type(embedder).__name__}")
    embedder.clear_memory_cache()
    paths = svc.store.list(f"{CACHE_PREFIX}/")
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(svc.store.delete, paths))
    if svc.store.list(f"{CACHE_PREFIX}/"):
        raise RuntimeError("the embedding cache is not empty after deleting it")
    return len(paths)


# ------------------------------------------------------------------------------------------------
# one run


def _peak(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    peak = now = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def one_run(
    host: Any,
    svc: Any,
    entry: str,
    name: str,
    data: bytes,
    calls_log: Path,
    timeout: float,
    embedding_delay: float | None = None,
) -> dict[str, Any]:
    """One run, checked. ``embedding_delay``: None with MiniLM (no embedding reaches the
    stand-in), else the stand-in's delay for embedding calls (the OpenAI embedder)."""
    from azure.storage.blob import BlobServiceClient

    from shared.ids import content_sha256, make_run_id
    from shared.models import TERMINAL_STATES
    from shared.pipeline.runs import load_run

    host.invocations.clear()  # idle: the previous run ended with wait_idle
    blob_path = f"transcripts/{PROJECT}/{name}"
    run_id = make_run_id(blob_path, f"{content_sha256(data)}:{len(data)}")
    cpu0, main0, requests0 = cpu_now(), time.thread_time(), _REQUESTS[0]
    t0 = time.time()
    if entry == "http":
        accepted = post_transcript(f"{host.url}/api/runs?project={PROJECT}&name={name}", data)
        if accepted["run_id"] != run_id:
            raise RuntimeError(f"unexpected run id {accepted['run_id']} (expected {run_id})")
    else:
        conn = os.environ["AzureWebJobsStorage"]
        container = BlobServiceClient.from_connection_string(conn).get_container_client(
            "transcripts"
        )
        container.upload_blob(f"{PROJECT}/{name}", data, overwrite=True)
    deadline = time.monotonic() + timeout
    while True:
        try:
            run = load_run(svc, run_id)
        except Exception:  # noqa: BLE001 - not created yet (blob entry)
            run = None
        if run is not None and run.status in TERMINAL_STATES:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"run {run_id} not finished after {timeout:.0f} s")
        time.sleep(0.25)  # only to notice the end: e2e comes from the host's invocation record
    host.wait_idle(timeout=120)  # stragglers (e.g. a second start_run from the blob trigger)
    cpu1, main1, requests1 = cpu_now(), time.thread_time(), _REQUESTS[0]
    cpu1["worker"] -= main1 - main0  # this thread (the benchmark's polling) is not the host's
    if run.status != "completed":
        raise RuntimeError(f"run {run_id} ended {run.status}: {run.failure_reason}")
    if (run.segment_count, run.story_count) != (SEGMENTS, STORIES):
        raise RuntimeError(
            f"run {run_id}: {run.segment_count} segments and {run.story_count} stories, "
            f"expected {SEGMENTS} and {STORIES}"
        )
    invocations = [i for i in host.invocations if i.started >= t0 - 0.001]
    failed = [i for i in invocations if not i.succeeded]
    if failed:
        raise RuntimeError(f"failed invocations: {[(i.function, i.error) for i in failed]}")
    by_fn: dict[str, list[Any]] = {}
    for inv in invocations:
        by_fn.setdefault(inv.function, []).append(inv)
    finalize = [i for i in by_fn.get("finalize", []) if i.succeeded]
    if len(finalize) != 1:
        raise RuntimeError(f"expected one finalize invocation, saw {len(finalize)}")
    fin = finalize[0]
    end = fin.started + fin.duration
    answered = read_calls(calls_log, t0 - 0.001)
    calls = [c for c in answered if c["route"] == "chat"]
    embeddings = [c for c in answered if c["route"] == "embeddings"]
    by_schema: dict[str, list[dict[str, Any]]] = {}
    for c in calls:
        by_schema.setdefault(c["schema"] or "other", []).append(c)
    counts = {k: len(v) for k, v in sorted(by_schema.items())}
    if len(calls) != MODEL_CALLS:
        raise RuntimeError(f"the stand-in answered {len(calls)} chat calls: {counts}")
    # the segmenter's merge embeddings: made one at a time in the segment invocation, before it
    # sends the generate messages, so before the first generate invocation starts
    first_generate = min(i.started for i in by_fn["generate"])
    merge_embeddings = [c for c in embeddings if c["start"] < first_generate]
    if embedding_delay is None:
        if embeddings:
            raise RuntimeError(
                f"MiniLM run, but the stand-in answered {len(embeddings)} embeddings"
            )
        critical_embeddings = 0
    else:
        expected = EMBEDDING_CALLS + len(merge_embeddings)
        if len(embeddings) != expected:
            raise RuntimeError(
                f"the stand-in answered {len(embeddings)} embedding calls, expected {expected} "
                f"({SEGMENTS} retrieval queries + {STORIES} stories + {len(merge_embeddings)} "
                "segmentation merges): is the embedding cache cleared?"
            )
        critical_embeddings = len(merge_embeddings) + CRITICAL_EMBEDDING_CALLS

    def rel(t: float) -> float:
        return round(t - t0, 4)

    def last_end(fn: str) -> float:
        return rel(max(i.started + i.duration for i in by_fn[fn]))

    seg_call = by_schema["SegmentationAnswer"][0]
    gen_calls, tag_calls = by_schema["GenerationAnswer"], by_schema["TaggingAnswer"]
    e2e = end - t0
    critical = (
        CRITICAL_CALLS * DELAY_S + critical_embeddings * (embedding_delay or 0.0) + fin.duration
    )
    phases = {
        "segmentation_call_start": rel(seg_call["start"]),
        "segmentation_call_end": rel(seg_call["end"]),
        "segment_invocation_end": last_end("segment"),
        "last_generation_call_end": rel(max(c["end"] for c in gen_calls)),
        "last_generate_invocation_end": last_end("generate"),
        "last_tagging_call_end": rel(max(c["end"] for c in tag_calls)),
        "last_tag_invocation_end": last_end("tag"),
        "finalize_start": rel(fin.started),
        "finalize_end": rel(end),
    }
    first = "runs_create" if entry == "http" else "start_run"  # the request, or the blob trigger
    phases = {f"{first}_end": rel(min(i.started + i.duration for i in by_fn[first])), **phases}
    return {
        "run_id": run_id,
        "e2e_s": round(e2e, 4),
        "finalize_s": round(fin.duration, 4),
        "critical_path_s": round(critical, 4),
        "ratio": round(e2e / critical, 4),
        "model_calls": counts,
        "model_call_s": {
            "median": round(median([c["end"] - c["start"] for c in calls]), 4),
            "max": round(max(c["end"] - c["start"] for c in calls), 4),
        },
        "embedding_calls": len(embeddings),
        "segmentation_merge_embedding_calls": len(merge_embeddings),
        "critical_embedding_calls": critical_embeddings,
        "embedding_call_s": {
            "median": round(median([c["end"] - c["start"] for c in embeddings]), 4),
            "max": round(max(c["end"] - c["start"] for c in embeddings), 4),
        }
        if embeddings
        else None,
        "peak_concurrent_model_calls": _peak([(c["start"], c["end"]) for c in calls]),
        "peak_concurrent_embedding_calls": _peak([(c["start"], c["end"]) for c in embeddings]),
        "peak_concurrent_invocations": _peak(
            [(i.started, i.started + i.duration) for i in invocations]
        ),
        "invocations": {k: len(v) for k, v in sorted(by_fn.items())},
        "cpu_s": {k: round(cpu1[k] - cpu0[k], 3) for k in cpu1},
        "storage_requests": requests1 - requests0,
        "phases_s": phases,
        "timeline": sorted(
            [(i.function, rel(i.started), rel(i.started + i.duration)) for i in invocations]
            + [(f"call:{c['schema']}", rel(c["start"]), rel(c["end"])) for c in calls]
            + [("call:embedding", rel(c["start"]), rel(c["end"])) for c in embeddings],
            key=lambda t: t[1],
        ),
    }


# ------------------------------------------------------------------------------------------------
# the benchmark


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = list(runs[0]["phases_s"])
    return {
        "e2e_s": round(median([r["e2e_s"] for r in runs]), 3),
        "e2e_min_s": round(min(r["e2e_s"] for r in runs), 3),
        "e2e_max_s": round(max(r["e2e_s"] for r in runs), 3),
        "finalize_s": round(median([r["finalize_s"] for r in runs]), 3),
        "critical_path_s": round(median([r["critical_path_s"] for r in runs]), 3),
        "ratio": round(median([r["ratio"] for r in runs]), 3),
        "peak_concurrent_model_calls": int(
            median([r["peak_concurrent_model_calls"] for r in runs])
        ),
        "peak_concurrent_invocations": int(
            median([r["peak_concurrent_invocations"] for r in runs])
        ),
        "phases_s": {k: round(median([r["phases_s"][k] for r in runs]), 3) for k in keys},
        "cpu_s": {k: round(median([r["cpu_s"][k] for r in runs]), 3) for k in runs[0]["cpu_s"]},
        "storage_requests": int(median([r["storage_requests"] for r in runs])),
        "cpu_floor_s": round(median([cpu_floor(r) for r in runs]), 3),
        "embedding_calls": int(median([r["embedding_calls"] for r in runs])),
        "critical_embedding_calls": int(median([r["critical_embedding_calls"] for r in runs])),
        "peak_concurrent_embedding_calls": int(
            median([r["peak_concurrent_embedding_calls"] for r in runs])
        ),
    }


def cpu_floor(run: dict[str, Any]) -> float:
    """The least wall time the CPU this run used (worker, Azurite, stand-in, from the start until
    idle) could fit in on this machine's cores, had every core been busy all along."""
    return sum(run["cpu_s"].values()) / (os.cpu_count() or 1)


def _hermetic_env(conn: str, base_url: str, embedder: str) -> None:
    for name in list(os.environ):
        if name.upper().startswith(SERVICE_ENV_PREFIXES):
            del os.environ[name]
    os.environ.update(
        {
            "AzureWebJobsStorage": conn,
            "SYNTH_STORAGE_BACKEND": "azure",
            "SYNTH_ENGINE": "llm",
            "SYNTH_EMBEDDER": embedder,
            "SYNTH_VECTOR_STORE": "embedded",
            "OPENAI_API_KEY": "bench",
            "OPENAI_BASE_URL": base_url,
        }
    )


def measure(
    label: str,
    host_kwargs: dict[str, Any],
    host_json: dict[str, Any],
    entry: str,
    runs: int,
    data: bytes,
    calls_log: Path,
    timeout: float,
    counter: list[int],
    embedding_delay: float | None,
) -> list[dict[str, Any]]:
    from devhost.host import LocalHost
    from shared.services import app_services

    count_storage_requests()
    svc = app_services()
    results: list[dict[str, Any]] = []
    with LocalHost(
        "function_app", host_json, root=REPO, port=0, settings_file=None, **host_kwargs
    ) as host:
        for k in range(runs + 1):  # the first is the warm-up
            counter[0] += 1
            name = f"fanout-{counter[0]:03d}.txt"
            if embedding_delay is not None:  # the OpenAI embedder: a transcript never seen
                forget_embeddings(svc)
            r = one_run(host, svc, entry, name, data, calls_log, timeout, embedding_delay)
            tag = "warm-up" if k == 0 else f"run {k}"
            print(
                f"  {label:<16} {tag:<7} e2e {r['e2e_s']:6.3f} s  critical "
                f"{r['critical_path_s']:.3f} s  ratio {r['ratio']:.2f}  peak calls "
                f"{r['peak_concurrent_model_calls']}, embedding calls {r['embedding_calls']}",
                flush=True,
            )
            if k:
                results.append(r)
    return results


def print_summary(key: str, s: dict[str, Any], embedding_delay: float | None) -> None:
    print(f"{key} (median of {len(s['runs'])}):")
    embeds = (
        f" + {s['critical_embedding_calls']} embeddings x {embedding_delay} s"
        if embedding_delay is not None
        else ""
    )
    print(
        f"  e2e {s['e2e_s']:.3f} s (min {s['e2e_min_s']:.3f}, max {s['e2e_max_s']:.3f});  "
        f"critical path {s['critical_path_s']:.3f} s = {CRITICAL_CALLS} chat calls x {DELAY_S} s"
        f"{embeds} + finalize {s['finalize_s']:.3f} s"
    )
    print(
        f"  e2e / critical path {s['ratio']:.2f} (goal <= {GOAL_RATIO}: "
        f"{'met' if s['ratio'] <= GOAL_RATIO else 'MISSED'})"
    )
    if "speedup" in s:
        print(
            f"  speedup over sequential {s['speedup']:.1f}x (goal >= {GOAL_SPEEDUP:.0f}: "
            f"{'met' if s['speedup'] >= GOAL_SPEEDUP else 'MISSED'}); over the "
            f"model calls alone ({s['model_calls_alone_s']:.1f} s) "
            f"{s['speedup_over_model_calls_alone']:.1f}x"
        )
    print(
        f"  peak concurrent model calls {s['peak_concurrent_model_calls']}, invocations "
        f"{s['peak_concurrent_invocations']}; embedding calls per run {s['embedding_calls']} "
        f"(peak concurrent {s['peak_concurrent_embedding_calls']})"
    )
    cpu = s["cpu_s"]
    print(
        "  CPU seconds per run (from the start until idle): "
        + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
        + f"; total {sum(cpu.values()):.2f} on {os.cpu_count()} cores"
    )
    print(
        f"  that CPU alone needs at least {s['cpu_floor_s']:.2f} s on {os.cpu_count()} cores "
        f"({s['cpu_floor_s'] / s['critical_path_s']:.2f}x the critical path; e2e is "
        f"{s['e2e_s'] / s['cpu_floor_s']:.2f}x that floor)"
    )
    print(
        f"  storage requests per run (request to idle, host polling included): {s['storage_requests']}"
    )
    print("  phases (s from the start, medians):")
    for k, v in s["phases_s"].items():
        print(f"    {k:<30} {v:7.3f}")


def variant_key(embedder: str, embedding_delay: float | None) -> str:
    if embedder == "minilm":
        return "minilm"
    return f"openai_embed_{round(1000 * (embedding_delay or 0.0))}ms"


def merge_variants(report: dict[str, Any], key: str) -> dict[str, Any]:
    """The JSON to write: this variant under ``variants[key]`` next to the others' latest results
    (read back from the file), and at the top level the ``minilm`` headline."""
    from benchmarks._common import RESULTS, machine

    path = RESULTS / "fanout.json"
    try:
        previous = json.loads(path.read_text())
    except (OSError, ValueError):
        previous = {}
    variants = dict(previous.get("variants") or {})
    variants[key] = {
        "measured_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "machine": machine(),
        **report,
    }
    ordered = {k: variants[k] for k in sorted(variants, key=_variant_order)}
    if key == "minilm":
        return {**report, "variants": ordered}
    headline = {
        k: v
        for k, v in previous.items()
        if k not in ("variants", "benchmark", "measured_at", "machine")
    }
    if headline:  # the minilm headline stays as it was measured: its time and machine too
        headline = {
            "measured_at": previous.get("measured_at"),
            "machine": previous.get("machine"),
            **headline,
        }
    return {**headline, "variants": ordered}


def _variant_order(key: str) -> tuple[int, str]:
    return (0 if key == "minilm" else 1, key)


def print_variants(result: dict[str, Any]) -> None:
    """One line per embedder variant in the file: the ``POST /api/runs`` medians."""
    variants = result.get("variants") or {}
    if not variants:
        return
    print("\nembedder variants (POST /api/runs, medians; each its latest run):")
    print(
        f"  {'variant':<20} {'e2e s':>7} {'critical s':>10} {'ratio':>6} {'speedup':>8} "
        f"{'worker CPU s':>12} {'emb. calls':>10}  load avg (1, 5, 15)   measured at"
    )
    for key, v in variants.items():
        http = v.get("http")
        if not http:
            continue
        speedup = f"{http['speedup']:.1f}x" if "speedup" in http else "-"
        load = v["machine"]["load_average_1_5_15"]
        print(
            f"  {key:<20} {http['e2e_s']:7.3f} {http['critical_path_s']:10.3f} "
            f"{http['ratio']:6.2f} {speedup:>8} {http['cpu_s']['worker']:12.2f} "
            f"{http.get('embedding_calls', 0):10d}  {str(load):<21} {v['measured_at']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_fanout")
    parser.add_argument("--runs", type=int, default=5, help="measured fan-out runs per entry")
    parser.add_argument(
        "--sequential-runs", type=int, default=3, help="measured sequential runs (0: skip)"
    )
    parser.add_argument(
        "--poll-only-runs",
        type=int,
        default=3,
        help="measured fan-out runs whose queue hops wait for a poll, as in Azure (0: skip)",
    )
    parser.add_argument("--entry", choices=["http", "blob", "both"], default="both")
    parser.add_argument("--workers", type=int, default=FANOUT_WORKERS)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument(
        "--embedder",
        choices=EMBEDDERS,
        default="minilm",
        help="minilm: MiniLM in the worker (the headline); openai: text-embedding-3-small served "
        "by the stand-in, as in production with a model",
    )
    parser.add_argument(
        "--embedding-delay",
        type=float,
        default=DELAY_S,
        help=f"with --embedder openai: the stand-in's delay for embedding calls (default {DELAY_S}"
        ", like every call; 0: answered at once)",
    )
    parser.add_argument("--serve-standin", metavar="LOG", help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true", help="do not write the JSON result")
    parser.add_argument(
        "--timeline", action="store_true", help="print every invocation and call of the last run"
    )
    args = parser.parse_args(argv)
    if args.serve_standin:
        return serve_standin(args.serve_standin, args.embedding_delay)
    if args.embedding_delay < 0:
        parser.error("--embedding-delay must be at least 0")
    # None: no embedding reaches the stand-in (MiniLM)
    embedding_delay = args.embedding_delay if args.embedder == "openai" else None
    key = variant_key(args.embedder, embedding_delay)
    logging.basicConfig(level=logging.WARNING)
    for noisy in ("devhost", "function_app", "shared", "urllib3.connectionpool"):
        logging.getLogger(noisy).setLevel(logging.ERROR)

    from devhost.azurite import Azurite
    from devhost.demo import load_index

    data = TRANSCRIPT.read_bytes()
    host_json = json.loads((REPO / "host.json").read_text())
    queues = host_json.get("extensions", {}).get("queues", {})
    sequential_json = json.loads(json.dumps(host_json))
    sequential_json["extensions"]["queues"].update(SEQUENTIAL_QUEUES)
    fanout_host = {"max_workers": args.workers}
    # (result key, host settings, host.json, entry, runs)
    variants: list[tuple[str, dict[str, Any], dict[str, Any], str, int]] = [
        (entry, fanout_host, host_json, entry, args.runs)
        for entry in (["http", "blob"] if args.entry == "both" else [args.entry])
        if args.runs > 0
    ]
    if args.poll_only_runs > 0:
        variants.append(
            (
                "http_poll_only",
                {**fanout_host, "wake_on_send": False},
                host_json,
                "http",
                args.poll_only_runs,
            )
        )
    if args.sequential_runs > 0:
        variants.append(
            ("sequential", {"max_workers": 1}, sequential_json, "http", args.sequential_runs)
        )
    counter = [0]
    measured: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-fanout-") as tmp:
        calls_log = Path(tmp) / "calls.jsonl"
        with (
            standin_process(calls_log, args.embedding_delay) as base_url,
            Azurite() as azurite,
        ):
            assert azurite.pid is not None
            _PIDS["azurite"] = azurite.pid
            _hermetic_env(azurite.connection_string, base_url, args.embedder)
            print(
                f"embedder {args.embedder}"
                + (
                    f" (served by the stand-in, embeddings after {embedding_delay} s)"
                    if embedding_delay is not None
                    else " (in the worker)"
                )
            )
            print("loading the sample backlog and architecture notes into the index ...")
            load_index(PROJECT)
            print(
                f"host.json queues: batchSize {queues.get('batchSize')}, newBatchThreshold "
                f"{queues.get('newBatchThreshold')}, maxPollingInterval "
                f"{queues.get('maxPollingInterval')}; fan-out with {args.workers} workers",
                flush=True,
            )
            for name, host_kwargs, hj, entry, repetitions in variants:
                measured[name] = measure(
                    name,
                    host_kwargs,
                    hj,
                    entry,
                    repetitions,
                    data,
                    calls_log,
                    args.timeout,
                    counter,
                    embedding_delay,
                )

    report: dict[str, Any] = {
        "command": " ".join(["python -m benchmarks.bench_fanout", *(argv or sys.argv[1:])]),
        "transcript": str(TRANSCRIPT.relative_to(REPO)),
        "embedder": args.embedder,
        "model_delay_s": DELAY_S,
        "embedding_delay_s": embedding_delay,
        "model_calls_per_run": MODEL_CALLS,
        "embedding_calls_per_run": EMBEDDING_CALLS if embedding_delay is not None else 0,
        "critical_path": (
            f"{CRITICAL_CALLS} chat calls x {DELAY_S} s"
            + (
                f" + ({CRITICAL_EMBEDDING_CALLS} + segmentation merge) embedding calls x "
                f"{embedding_delay} s"
                if embedding_delay is not None
                else ""
            )
            + " + finalize"
        ),
        "segments": SEGMENTS,
        "stories": STORIES,
        "host": {
            "queues": queues,
            "fanout": {**fanout_host, "poll_interval_s": 0.1, "wake_on_send": True},
            "http_poll_only": {**fanout_host, "poll_interval_s": 0.1, "wake_on_send": False},
            "sequential": {"max_workers": 1, **SEQUENTIAL_QUEUES},
        },
        "goals": {"ratio_at_most": GOAL_RATIO, "speedup_at_least": GOAL_SPEEDUP},
    }

    def model_only(runs: list[dict[str, Any]]) -> float:
        """The model calls' delays, one after another: a lower bound for any sequential design."""
        embeds = median([r["embedding_calls"] for r in runs])
        return MODEL_CALLS * DELAY_S + embeds * (embedding_delay or 0.0)

    timelines = {name: [r.pop("timeline") for r in runs] for name, runs in measured.items()}
    if args.timeline:
        for name, lines in timelines.items():
            print(f"\ntimeline of the last {name} run (s from the start):")
            for what, start, end in lines[-1]:
                print(f"  {start:7.3f} {end:7.3f}  {end - start:6.3f}  {what}")
    print()
    sequential = measured.pop("sequential", [])
    seq_e2e = median([r["e2e_s"] for r in sequential]) if sequential else None
    for name, runs in measured.items():
        s = summarize(runs)
        s["model_calls_alone_s"] = round(model_only(runs), 3)
        s["speedup_over_model_calls_alone"] = round(model_only(runs) / s["e2e_s"], 2)
        if seq_e2e is not None:
            s["speedup"] = round(seq_e2e / s["e2e_s"], 2)
        report[name] = {**s, "runs": runs}
        print_summary(name, report[name], embedding_delay)
    if sequential:
        assert seq_e2e is not None
        seq_model = model_only(sequential)
        report["sequential"] = {
            "e2e_s": round(seq_e2e, 3),
            "model_calls_s": round(seq_model, 3),
            "non_model_work_s": round(seq_e2e - seq_model, 3),
            "embedding_calls": int(median([r["embedding_calls"] for r in sequential])),
            "cpu_s": summarize(sequential)["cpu_s"],
            "runs": sequential,
        }
        cpu = report["sequential"]["cpu_s"]
        embeds = report["sequential"]["embedding_calls"]
        print(
            f"sequential (median of {len(sequential)}): e2e {seq_e2e:.3f} s = {MODEL_CALLS} "
            f"chat calls x {DELAY_S} s"
            + (f" + {embeds} embedding calls x {embedding_delay} s" if embeds else "")
            + f" ({seq_model:.1f} s) + non-model work {seq_e2e - seq_model:.3f} s; CPU seconds "
            "per run: " + ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
        )
    if not args.no_write:
        result = merge_variants(report, key)
        path = write_result("fanout", result)
        print(f"written to {path.relative_to(REPO)} (variant {key})")
        print_variants(json.loads(path.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
