"""The fan-out benchmark's measurement (``python -m benchmarks.bench_fanout``, whose docstring
has the definitions): the workload's constants, the CPU and storage-request probes, one checked
run through the local host, and a series of runs on one host."""

from __future__ import annotations

import json
import os
import resource
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks._common import REPO, STANDIN_PIDS, median, post_transcript

DELAY_S = 0.3
SEGMENTS = 12
STORIES_PER_SEGMENT = 3
STORIES = SEGMENTS * STORIES_PER_SEGMENT
MODEL_CALLS = 1 + SEGMENTS + STORIES  # chat calls
# the chat calls that must follow one another: segmentation, one generation, one tagging
CRITICAL_CALLS = 3
# with the OpenAI embedder, when not cached: two per generation unit (its retrieval query, then
# its stories in one batch, which the tagging units and finalize use); the segmenter's merge
# embeddings come on top
EMBEDDING_CALLS = 2 * SEGMENTS
# those that must follow one another (besides the segmenter's): one generation unit's retrieval
# embedding, before its generation call, and its stories' embedding, before its tag messages
CRITICAL_EMBEDDING_CALLS = 2
PROJECT = "remote-control"


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
    # the 36 generated stories are each tagged; finalize may then merge stories that state the
    # same need (shared/pipeline/consolidate.py), so run.json's story_count can be lower
    from shared import layout

    tagged = len(svc.store.list(layout.tag_parts_prefix(run_id)))
    if (run.segment_count, tagged) != (SEGMENTS, STORIES):
        raise RuntimeError(
            f"run {run_id}: {run.segment_count} segments and {tagged} tagged stories, "
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
                f"({SEGMENTS} retrieval queries + {SEGMENTS} story batches + {len(merge_embeddings)} "
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
