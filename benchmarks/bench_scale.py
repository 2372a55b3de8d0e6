"""Scale against a model quota (issue 16): ``python -m benchmarks.bench_scale [--transcripts 10]
[--time-scale 10] [--tpm 150000] [--rpm 900] [--quick]``.

N transcripts (default the 10 longest AMI meetings of ``datasets/ami-qmsum-val``, 7,300-11,300
words each: meetings of about an hour's worth of speech) are POSTed at once to ``function_app.py``
on ``devhost.host.LocalHost`` (the repo's host.json, ``--workers`` threads) on a private Azurite,
with the LLM engine and the OpenAI embedder, both served by the OpenAI stand-in
(``devhost/standins/openai_standin/``) in its own process. The stand-in enforces a deployment's
quota on the chat model and on the embedding model, each on its own (``RateLimits``: tokens per
sliding minute counted as Azure OpenAI counts them when a request arrives, prompt characters / 4 +
``max_completion_tokens``; requests per sixth of the minute at RPM/6; 429 with ``retry-after`` and
``retry-after-ms`` past either), and answers after a time proportional to the tokens
(``TokenLatency``: chat 0.5 s + 0.2 ms per prompt token + 20 ms per completion token, embeddings
0.1 s + 0.01 ms per token, before scaling). The stand-in cuts a segment every
``--units-per-segment`` transcript lines and writes ``--stories-per-segment`` stories per segment.
The same transcripts run twice in the one invocation: with the shared limiter off (the app as it
was: the SDK's retries, then the host's) and on (``SYNTH_MODEL_TPM`` / ``SYNTH_MODEL_RPM`` equal
to the quota, ``shared/llm/limiter.py``), each on a fresh host after the stand-in's windows have
emptied, the embedding cache cleared in between.

**Time is scaled down** by ``--time-scale k`` (default 10): a real 150k TPM over ten such meetings
is about 25 minutes of model time. Every clock of the quota runs k times faster and nothing else
changes: the quota's minute is 60/k seconds (the stand-in's windows, and the limiter's
``SYNTH_MODEL_LIMIT_WINDOW_SECONDS``), its Retry-After values are in those seconds, and the
stand-in's latencies are divided by k; the limits per window stay 150k tokens and 900 requests.
So the model side is exactly a real deployment seen k times faster, and one bench second is k
modelled seconds. What is *not* scaled: the worker's and Azurite's CPU, storage round trips, the
host's polling (host.json ``maxPollingInterval``) and ``visibilityTimeout``: they weigh k times
more here than in a real run, so the figures are conservative for the limiter (and kinder to the
limiter-off variant's retries, whose waits are real seconds).

Figures (for each variant; the last line of output is the limiter-on one):
- ``tpm_utilization``: the tokens the stand-in counted for admitted chat requests, over what the
  quota could have admitted between the first and the last chat request's arrival
  (TPM x (span / window + 1): a sliding window admits at most one window's worth in any window, so
  this is at most 1);
- ``lost``: segments without a generation part plus stories of a part without a tag part, once
  every run has ended or the timeout passed (a unit neither done nor recorded as failed), plus the
  segments of runs that did not end;
- ``failed_units``: the units recorded as failed in the runs (``error_count``: skipped segments,
  stories tagged new after failing, an aborted run counts at least one);
- ``http_429``: the stand-in's 429 answers (chat and embeddings);
- ``p95_run_s``: the 95th percentile, over the runs, of the time from the first POST to the run's
  ``completed_at`` (bench seconds; x k for modelled time).
Also: tokens per transcript (what the quota counted, and the billed prompt and completion tokens
from each run's summary.json), the limiter's waits and re-queues, failed and poison invocations,
CPU per process. The JSON goes to ``benchmarks/results/scale.json``.
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._common import REPO, percentile, post_transcript, standin_subprocess, write_result

PROJECT = "remote-control"
CHAT_MODEL = "gpt-4o"
EMBEDDING_MODEL = "text-embedding-3-small"
GOAL_UTILIZATION = 0.85
# the model's speed before scaling: time to first token + prompt processing + output speed
CHAT_LATENCY = (0.5, 0.0002, 0.02)
EMBEDDING_LATENCY = (0.1, 0.00001, 0.0)
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
# transcripts


def meetings(count: int) -> list[tuple[str, str]]:
    """The ``count`` longest AMI meetings (by words) as ``Speaker: text`` lines, longest first."""
    from shared.eval.segmentation import DEFAULT_GOLD, load_gold

    found = [(m.meeting_id, m.transcript()) for m in load_gold(REPO / DEFAULT_GOLD)]
    found.sort(key=lambda m: -len(m[1].split()))
    if count > len(found):
        raise SystemExit(f"--transcripts {count}: only {len(found)} meetings in {DEFAULT_GOLD}")
    return found[:count]


# ------------------------------------------------------------------------------------------------
# the stand-in, in its own process


def serve_standin(log_path: str, config: dict[str, Any]) -> int:
    """``--serve-standin LOG --standin-config JSON``: the stand-in with the quota and latencies of
    ``config``; prints its base URL, appends one JSON line per answered request to LOG, and
    serves until stdin closes."""
    from devhost.standins.openai_standin import OpenAIStandIn, RateLimits, Recorded, TokenLatency

    lock = threading.Lock()
    log = open(log_path, "a", encoding="utf-8")  # open for the server's lifetime

    def record(rec: Recorded) -> None:
        line = {
            "route": rec.route,
            "model": rec.model,
            "schema": rec.schema_name,
            "status": rec.status,
            "counted": rec.counted,
            "arrived": rec.arrived,
            "answered": rec.answered,
            "prompt_tokens": int(rec.usage.get("prompt_tokens") or 0),
            "completion_tokens": int(rec.usage.get("completion_tokens") or 0),
            "retry": rec.retry_count,
        }
        with lock:
            log.write(json.dumps(line) + "\n")
            log.flush()

    window = config["window_s"]
    scale = config["time_scale"]
    limits = {
        CHAT_MODEL: RateLimits(config["tpm"], config["rpm"], window),
        EMBEDDING_MODEL: RateLimits(config["embedding_tpm"], config["embedding_rpm"], window),
    }
    latency = {
        "chat": TokenLatency(*(x / scale for x in CHAT_LATENCY)),
        "embeddings": TokenLatency(*(x / scale for x in EMBEDDING_LATENCY)),
    }
    standin = OpenAIStandIn(
        units_per_segment=config["units_per_segment"],
        stories_per_segment=config["stories_per_segment"],
        limits=limits,
        token_latency=latency,
        listener=record,
    )
    with standin:
        print(standin.base_url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin
    log.close()
    return 0


def standin_process(log_path: Path, config: dict[str, Any]) -> Any:
    return standin_subprocess(
        "benchmarks.bench_scale",
        ["--serve-standin", str(log_path), "--standin-config", json.dumps(config)],
    )


def read_calls(log_path: Path, since: float, until: float) -> list[dict[str, Any]]:
    if not log_path.exists():
        return []
    calls = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    return [c for c in calls if since <= c["arrived"] <= until]


# ------------------------------------------------------------------------------------------------
# one variant


def _env(conn: str, base_url: str, limits: dict[str, str] | None, tagging: str) -> None:
    for name in list(os.environ):
        if name.upper().startswith(SERVICE_ENV_PREFIXES):
            del os.environ[name]
    os.environ.update(
        {
            "AzureWebJobsStorage": conn,
            "SYNTH_STORAGE_BACKEND": "azure",
            "SYNTH_ENGINE": "llm",
            "SYNTH_EMBEDDER": "openai",
            "SYNTH_VECTOR_STORE": "embedded",
            "OPENAI_API_KEY": "bench",
            "OPENAI_BASE_URL": base_url,
            "SYNTH_TAGGING_MODEL": tagging,
            **(limits or {}),
        }
    )


def _fresh_services() -> Any:
    from shared.services import app_services
    from shared.settings import get_settings

    get_settings.cache_clear()
    app_services.cache_clear()
    return app_services()


def count_lost(svc: Any, run: Any) -> int:
    """Units neither done nor recorded: segments without a generation part, stories of a part
    without a tag part (a skipped segment and a tagging_failed story have their parts)."""
    from shared import layout
    from shared.models import GeneratedPart
    from shared.storage import read_model

    generated = svc.store.list(layout.generated_parts_prefix(run.run_id))
    tagged = {layout.unit_of(p) for p in svc.store.list(layout.tag_parts_prefix(run.run_id))}
    lost = max(0, (run.segment_count or 0) - len(generated))
    for path in generated:
        part = read_model(svc.store, path, GeneratedPart)
        lost += sum(1 for sid in part.story_ids if sid not in tagged)
    return lost


def run_variant(
    name: str,
    limits: dict[str, str] | None,
    transcripts: list[tuple[str, str]],
    args: argparse.Namespace,
    conn: str,
    base_url: str,
    calls_log: Path,
    window: float,
) -> dict[str, Any]:
    from benchmarks.bench_fanout import cpu_now, forget_embeddings
    from devhost.host import LocalHost
    from shared.models import TERMINAL_STATES, Summary
    from shared.pipeline.runs import load_run
    from shared.storage import read_model_or_none

    _env(conn, base_url, limits, args.tagging_model)
    svc = _fresh_services()
    forget_embeddings(svc)  # every variant embeds its texts as new ones
    for path in svc.store.list("ingestion/limits/"):
        svc.store.delete(path)
    time.sleep(window + 0.5)  # the stand-in's windows are empty: each variant starts alike
    host_json = json.loads((REPO / "host.json").read_text())
    print(f"\n{name}: {len(transcripts)} transcripts, limits {limits or 'off'}", flush=True)
    with LocalHost(
        "function_app",
        host_json,
        root=REPO,
        port=0,
        settings_file=None,
        max_workers=args.workers,
    ) as host:
        cpu0 = cpu_now()
        t0 = time.time()
        run_ids: dict[str, str] = {}
        for meeting, text in transcripts:
            accepted = post_transcript(
                f"{host.url}/api/runs?project={PROJECT}&name={name}-{meeting}.txt",
                text.encode(),
                timeout=120,
            )
            run_ids[meeting] = accepted["run_id"]
        submitted = time.time() - t0
        deadline = time.monotonic() + args.timeout
        runs: dict[str, Any] = {}
        last_print = 0.0
        while time.monotonic() < deadline:
            runs = {m: load_run(svc, rid) for m, rid in run_ids.items()}
            done = [r for r in runs.values() if r.status in TERMINAL_STATES]
            if time.monotonic() - last_print > 15:
                last_print = time.monotonic()
                stories = sum(r.story_count or 0 for r in runs.values())
                print(
                    f"  {time.time() - t0:6.1f} s: {len(done)}/{len(runs)} runs ended, "
                    f"{stories} stories so far",
                    flush=True,
                )
            if len(done) == len(runs):
                break
            time.sleep(1.0)
        ended = time.time()
        host.wait_idle(timeout=120)
        cpu1 = cpu_now()
        invocations = list(host.invocations)
    calls = read_calls(calls_log, t0 - 1.0, time.time())
    limiters = svc.limits.all() if svc.limits is not None else []

    # -- the quota's view ----------------------------------------------------------------------
    chat = [c for c in calls if c["route"] == "chat"]
    admitted = [c for c in chat if c["status"] == 200 and c["counted"]]
    http_429 = sum(1 for c in calls if c["status"] == 429)
    if admitted:
        first = min(c["arrived"] for c in admitted)
        last = max(c["arrived"] for c in admitted)
        capacity = args.tpm * ((last - first) / window + 1)
        utilization = sum(c["counted"] for c in admitted) / capacity
        request_capacity = args.rpm * ((last - first) / window + 1)
        request_utilization = len(admitted) / request_capacity
    else:
        first = last = t0
        utilization = request_utilization = 0.0
    embeddings = [c for c in calls if c["route"] == "embeddings" and c["status"] == 200]

    # -- the runs ----------------------------------------------------------------------------------
    durations, failed_units, lost = [], 0, 0
    billed: dict[str, float] = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
    cost_usd = 0.0
    statuses: dict[str, int] = {}
    for run in runs.values():
        statuses[run.status] = statuses.get(run.status, 0) + 1
        if run.status not in TERMINAL_STATES:
            lost += max(1, run.segment_count or 1)
            continue
        lost += count_lost(svc, run)
        failed_units += max(run.error_count, 1 if run.status == "failed" else 0)
        if run.completed_at is not None:
            durations.append(run.completed_at.timestamp() - t0)
        summary = read_model_or_none(svc.store, f"runs/{run.run_id}/summary.json", Summary)
        if summary is not None:
            billed["prompt_tokens"] += summary.usage.prompt_tokens
            billed["completion_tokens"] += summary.usage.completion_tokens
            billed["calls"] += summary.usage.calls
            cost_usd += summary.cost_estimate_usd
    n = len(transcripts)
    by_fn: dict[str, int] = {}
    for inv in invocations:
        by_fn[inv.function] = by_fn.get(inv.function, 0) + 1
    result = {
        "limits": limits or {},
        "transcripts": n,
        "statuses": statuses,
        "tpm_utilization": round(utilization, 4),
        "rpm_utilization": round(request_utilization, 4),
        "lost": lost,
        "failed_units": failed_units,
        "http_429": http_429,
        "http_429_chat": sum(1 for c in chat if c["status"] == 429),
        "p95_run_s": round(percentile(durations, 95), 2) if durations else None,
        "median_run_s": round(percentile(durations, 50), 2) if durations else None,
        "wall_s": round(ended - t0, 2),
        "submit_s": round(submitted, 2),
        "chat_span_s": round(last - first, 2),
        "chat_requests_admitted": len(admitted),
        "chat_tokens_counted": sum(c["counted"] for c in admitted),
        "chat_tokens_counted_per_transcript": round(sum(c["counted"] for c in admitted) / n),
        "billed_per_transcript": {k: round(v / n) for k, v in billed.items()},
        "cost_estimate_usd_per_transcript": round(cost_usd / n, 4),
        "chat_calls_by_schema": _by_schema(admitted),
        "embedding_requests": len(embeddings),
        "embedding_tokens_per_transcript": round(sum(c["counted"] for c in embeddings) / n),
        "failed_invocations": sum(1 for i in invocations if not i.succeeded),
        "poison_invocations": sum(v for k, v in by_fn.items() if k.endswith("_poison")),
        "invocations": dict(sorted(by_fn.items())),
        "limiter": _limiter_stats(limiters),
        "cpu_s": {k: round(cpu1[k] - cpu0[k], 2) for k in cpu1},
    }
    return result


def _by_schema(calls: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for c in calls:
        entry = out.setdefault(c["schema"] or "other", {"calls": 0, "counted": 0})
        entry["calls"] += 1
        entry["counted"] += c["counted"]
    for entry in out.values():
        entry["counted_per_call"] = round(entry["counted"] / entry["calls"])
    return out


def _limiter_stats(limiters: list[Any]) -> dict[str, dict[str, float]]:
    return {
        lim.name: {
            "grants": lim.stats.grants,
            "batches": lim.stats.batches,
            "waited_s": round(lim.stats.waited_s, 1),
            "sleeps": lim.stats.sleeps,
            "slept_s": round(lim.stats.slept_s, 1),
            "requeued": lim.stats.deferred,
            "moved": lim.stats.moved,
            "throttled_429": lim.stats.throttled,
            "cas_conflicts": lim.stats.conflicts,
            "storage_calls": lim.stats.storage_calls,
        }
        for lim in limiters
    }


def line(label: str, r: dict[str, Any]) -> str:
    return (
        f"{label}: tpm_utilization={r['tpm_utilization']:.2f} lost={r['lost']} "
        f"failed_units={r['failed_units']} http_429={r['http_429']} p95_run_s={r['p95_run_s']}"
    )


def print_variant(name: str, r: dict[str, Any], scale: float) -> None:
    print(f"\n{name} ({r['transcripts']} transcripts; run statuses {r['statuses']}):")
    p95 = r["p95_run_s"]
    modelled = f" = {p95 * scale / 60:.1f} modelled minutes" if p95 is not None else ""
    print(
        f"  tpm utilization {r['tpm_utilization']:.3f} (rpm {r['rpm_utilization']:.3f}); "
        f"p95 run {p95} s{modelled}; median {r['median_run_s']} s; wall {r['wall_s']} s"
    )
    print(
        f"  lost {r['lost']}, failed units {r['failed_units']}, 429s {r['http_429']} "
        f"(chat {r['http_429_chat']}); failed invocations {r['failed_invocations']}, poison "
        f"{r['poison_invocations']}"
    )
    print(
        f"  chat: {r['chat_requests_admitted']} requests admitted, "
        f"{r['chat_tokens_counted_per_transcript']:,} tokens counted per transcript "
        f"({json.dumps(r['chat_calls_by_schema'])})"
    )
    b = r["billed_per_transcript"]
    print(
        f"  billed per transcript: {b['prompt_tokens']:,} prompt + {b['completion_tokens']:,} "
        f"completion tokens in {b['calls']} calls; embeddings {r['embedding_requests']} requests, "
        f"{r['embedding_tokens_per_transcript']:,} tokens per transcript"
    )
    if r["limiter"]:
        print(f"  limiter: {json.dumps(r['limiter'])}")
    print(f"  CPU seconds: {json.dumps(r['cpu_s'])}")


# ------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_scale")
    parser.add_argument("--transcripts", type=int, default=10)
    parser.add_argument("--time-scale", type=float, default=10.0)
    parser.add_argument("--tpm", type=int, default=150_000)
    parser.add_argument("--rpm", type=int, default=900)
    parser.add_argument("--embedding-tpm", type=int, default=None, help="default: --tpm")
    parser.add_argument("--embedding-rpm", type=int, default=None, help="default: --rpm")
    parser.add_argument("--units-per-segment", type=int, default=40)
    parser.add_argument("--stories-per-segment", type=int, default=2)
    parser.add_argument("--workers", type=int, default=48)
    parser.add_argument(
        "--tagging-model",
        choices=["thresholds", "pairs"],
        default="thresholds",
        help="SYNTH_TAGGING_MODEL: thresholds (default here: the LLM's tags checked against the "
        "similarity thresholds) or pairs (the product's default: also scored by the learned pair "
        "model, about a second of MiniLM CPU per story on 2 cores)",
    )
    parser.add_argument("--variants", default="off,on", help="off, on or off,on (the default)")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument(
        "--quick", action="store_true", help="3 transcripts (about a third of the time)"
    )
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--calls-log", help="keep the stand-in's log of requests (JSON lines) here")
    parser.add_argument("--serve-standin", metavar="LOG", help=argparse.SUPPRESS)
    parser.add_argument("--standin-config", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_standin:
        return serve_standin(args.serve_standin, json.loads(args.standin_config))
    if args.quick:
        args.transcripts = min(args.transcripts, 3)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if not variants or set(variants) - {"off", "on"}:
        parser.error("--variants takes off, on or off,on")
    logging.basicConfig(level=logging.WARNING)
    # the limiter-off variant fails hundreds of invocations on purpose: their tracebacks would bury
    # the figures (the counts are reported)
    for noisy in ("devhost", "function_app", "shared", "urllib3", "openai", "httpx", "azure"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)

    from benchmarks._common import STANDIN_PIDS as _PIDS
    from devhost.azurite import Azurite
    from devhost.demo import load_index

    scale = args.time_scale
    window = 60.0 / scale
    config = {
        "tpm": args.tpm,
        "rpm": args.rpm,
        "embedding_tpm": args.embedding_tpm if args.embedding_tpm is not None else args.tpm,
        "embedding_rpm": args.embedding_rpm if args.embedding_rpm is not None else args.rpm,
        "window_s": window,
        "time_scale": scale,
        "units_per_segment": args.units_per_segment,
        "stories_per_segment": args.stories_per_segment,
    }
    limits_on = {
        "SYNTH_MODEL_TPM": str(args.tpm),
        "SYNTH_MODEL_RPM": str(args.rpm),
        "SYNTH_EMBEDDING_TPM": str(config["embedding_tpm"]),
        "SYNTH_EMBEDDING_RPM": str(config["embedding_rpm"]),
        "SYNTH_MODEL_LIMIT_WINDOW_SECONDS": f"{window:g}",
    }
    transcripts = meetings(args.transcripts)
    words = [len(t.split()) for _, t in transcripts]
    print(
        f"{len(transcripts)} transcripts ({', '.join(m for m, _ in transcripts)}; "
        f"{min(words):,}-{max(words):,} words)"
    )
    print(
        f"quota per deployment ({CHAT_MODEL}, {EMBEDDING_MODEL}): {args.tpm:,} tokens and "
        f"{args.rpm} requests per 'minute'; TIME SCALED DOWN {scale:g}x: the quota's minute is "
        f"{window:g} s, the stand-in's latencies are 1/{scale:g} of a model's (chat "
        f"{CHAT_LATENCY[0]} s + {CHAT_LATENCY[1] * 1000:g} ms/prompt token + "
        f"{CHAT_LATENCY[2] * 1000:g} ms/completion token), so one bench second is {scale:g} "
        "modelled seconds; CPU, storage and the host's polling are not scaled",
        flush=True,
    )
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        calls_log = Path(args.calls_log) if args.calls_log else Path(tmp) / "calls.jsonl"
        with standin_process(calls_log, config) as base_url, Azurite() as azurite:
            assert azurite.pid is not None
            _PIDS["azurite"] = azurite.pid
            _env(azurite.connection_string, base_url, None, args.tagging_model)
            print("loading the sample backlog and architecture notes into the index ...")
            load_index(PROJECT)
            for name in variants:
                results[name] = run_variant(
                    f"limiter_{name}",
                    limits_on if name == "on" else None,
                    transcripts,
                    args,
                    azurite.connection_string,
                    base_url,
                    calls_log,
                    window,
                )
                print_variant(f"limiter {name}", results[name], scale)

    report = {
        "command": " ".join(["python -m benchmarks.bench_scale", *(argv or sys.argv[1:])]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "transcripts": [m for m, _ in transcripts],
        "words": words,
        "time_scale": scale,
        "quota": config,
        "latency_before_scaling": {"chat": CHAT_LATENCY, "embeddings": EMBEDDING_LATENCY},
        "host_json_queues": json.loads((REPO / "host.json").read_text())["extensions"]["queues"],
        "workers": args.workers,
        "tagging_model": args.tagging_model,
        "goal": {"tpm_utilization_at_least": GOAL_UTILIZATION, "lost": 0, "failed_units": 0},
        "variants": results,
    }
    if not args.no_write:
        path = write_result("scale", report)
        print(f"\nwritten to {path.relative_to(REPO)}")
    print()
    if "off" in results:
        print(line("scale[limiter off]", results["off"]))
    if "on" in results:
        print(line("scale", results["on"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
