"""Fan-out (issue 6): ``python -m benchmarks.bench_fanout [--runs 5] [--sequential-runs 3]
[--embedder minilm|openai [--embedding-delay S]]``.

One transcript that gives 12 segments and 36 stories (``samples/transcripts/
remote_control_functional_design.txt``, the stand-in told to cut 12 segments and write 3 stories
each) goes through ``devhost.host.LocalHost`` running ``function_app.py`` with the LLM engine on a
private Azurite. Every chat call is answered by ``devhost/standins/openai_standin/`` after a fixed
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
  does. Per run that is 12 + 12 embedding calls (checked on every run): two per generation unit,
  its retrieval query (``shared.retrieval.search.generation_context``) and its stories in one batch
  (``shared/pipeline/generate.embed_stories``, whose vectors the tagging units and finalize use;
  12 + 36 before 2026-11-24, one per tagging unit), plus those the LLM segmenter makes when it
  merges a segment below
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
  checked: run.json ``completed`` with 12 segments, 36 tag parts (one per generated story;
  finalize may merge stories that state the same need, so run.json's story count can be lower),
  49 chat calls answered (and 24 embedding calls with ``openai``, none with ``minilm``), one
  finalize, no failed invocation. The HTTP entry is the headline: the API starts the run in the
  request. The blob entry adds the blob trigger's detection, which depends on the trigger source
  (Event Grid in Azure, container polling at most 1 s apart here).
- **critical path**: the model calls that must follow one another, each at the stand-in's
  delay for its route, + the finalize time, the duration of that finalize invocation as the host
  measured it (reading every part, writing the four outputs, two ETag-guarded run.json updates).
  The chat calls: 3 x 0.3 s (segmentation, one generation, one tagging). The embedding calls
  (``openai`` only; MiniLM makes none, its inference is worker CPU): the segment invocation's
  merge embeddings (counted per run, sequential: one ``embed`` at a time), then in one generation
  unit its retrieval embedding before its generation call and its stories' embedding after it
  (before the tag messages): ``(segmentation merges + 2) x --embedding-delay``. So with
  0.3 s embeddings and no merges: 5 x 0.3 s + finalize; with 0 s embeddings: 3 x 0.3 s +
  finalize. Everything else in ``e2e`` is overhead: the request and start_run, queue hops,
  retrieval and the embeddings' CPU (MiniLM inference; or the SDK call, the cache lookup and the
  cache write), storage round trips, fan-in checks, waiting for the CPU.
- **sequential baseline**: the seed's design (§7.2/§7.3: one segment, then one story, at a time)
  measured on the same host and app with one invocation at a time (``max_workers=1``,
  ``batchSize=1``, ``newBatchThreshold=0``): its e2e is the model calls (49 x 0.3 s of chat, plus
  24 x ``--embedding-delay`` of embeddings with ``openai``) plus the same non-model work done in
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
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks._common import REPO, STANDIN_PIDS, median, standin_subprocess, write_result
from benchmarks._fanout_report import (
    GOAL_RATIO,
    GOAL_SPEEDUP,
    merge_variants,
    print_summary,
    print_variants,
    summarize,
    variant_key,
)
from benchmarks._fanout_run import (
    CRITICAL_CALLS,
    CRITICAL_EMBEDDING_CALLS,
    DELAY_S,
    EMBEDDING_CALLS,
    MODEL_CALLS,
    PROJECT,
    SEGMENTS,
    STORIES,
    STORIES_PER_SEGMENT,
    cpu_now,
    forget_embeddings,
    measure,
)

EMBEDDERS = ("minilm", "openai")
TRANSCRIPT = REPO / "samples" / "transcripts" / "remote_control_functional_design.txt"
# the local host's worker threads for the fan-out runs: enough for 12 generations and 36 taggings
# at once (in Azure: PYTHON_THREADPOOL_THREAD_COUNT per worker process, and more instances)
FANOUT_WORKERS = 48
# one invocation at a time: the seed's sequential design on the same host
SEQUENTIAL_QUEUES = {"batchSize": 1, "newBatchThreshold": 0}
# bench_scale measures the same way
__all__ = ["cpu_now", "forget_embeddings", "main"]
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


def standin_process(log_path: Path, embedding_delay: float) -> Any:
    return standin_subprocess(
        "benchmarks.bench_fanout",
        ["--serve-standin", str(log_path), "--embedding-delay", str(embedding_delay)],
    )


# ------------------------------------------------------------------------------------------------
# one run


# ------------------------------------------------------------------------------------------------
# the benchmark


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
            STANDIN_PIDS["azurite"] = azurite.pid  # cpu_now reads it
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
