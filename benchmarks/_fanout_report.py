"""The fan-out benchmark's report (``python -m benchmarks.bench_fanout``): medians of a series of
runs, the printed summary, and the result JSON that keeps each embedder variant's latest run."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from benchmarks._common import median
from benchmarks._fanout_run import CRITICAL_CALLS, DELAY_S

GOAL_RATIO = 1.5
GOAL_SPEEDUP = 8.0


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
