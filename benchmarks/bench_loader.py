"""Backlog loader throughput: ``python -m benchmarks.bench_loader [--items 2000] [--runs 3]``.

Each run starts from an empty local folder store and a fake ADO server (devhost/standins/fake_ado/)
seeded with the same generated backlog (epics, features, user stories with HTML descriptions and
acceptance criteria), and loads it through the real REST client and the packaged MiniLM embedder
into the embedded index, exactly as ``python -m loaders.ado_loader`` does:

- fetch: WIQL + workitemsbatch only (the REST part of a load);
- first load: fetch, normalize, embed every item, upsert, write ado_vectors.jsonl;
- unchanged reload: the same load again (every item skipped by its hash).

Wall time depends on what else runs on the machine, so the CPU time of the first load (all
threads) and the 1-minute load average before and after are recorded too.

The embedder is loaded once per process before timing (its load time is reported on its own).
Figures are medians over the runs; the table goes to stdout and the JSON to
``benchmarks/results/loader.json``. Not part of ``make test``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._common import REPO, machine

RESULTS = REPO / "benchmarks" / "results" / "loader.json"
PROJECT = "bench"


def one_run(items: int, embedder: Any) -> dict[str, float]:
    from devhost.standins.fake_ado import FakeAdo
    from shared.bus.memory import InProcessBus
    from shared.indexing.backlog import fetch_rest, load_backlog
    from shared.services import Services
    from shared.settings import Settings
    from shared.storage.local import LocalFolderStore
    from shared.vectorstore.embedded import EmbeddedVectorIndex

    with tempfile.TemporaryDirectory(prefix="bench-loader-") as tmp, FakeAdo() as fake:
        fake.seed_generated(items, seed=7)
        settings = Settings(storage_backend="local", local_store_dir=tmp, embedder="minilm")
        svc = Services(
            settings=settings,
            store=LocalFolderStore(tmp),
            bus=InProcessBus(workers=1),
            embedder_factory=lambda s: embedder,
            index_factory=lambda s, st, e: EmbeddedVectorIndex(st, e.dimension),
        )
        types = list(settings.pipeline.external_loaders.ado.work_item_types)
        with fake.client() as client:
            start = time.perf_counter()
            fetched = fetch_rest(client, types)
            fetch_s = time.perf_counter() - start
            assert len(fetched.items) == items, len(fetched.items)

            start, cpu = time.perf_counter(), time.process_time()
            first = load_backlog(svc, PROJECT, client=client, show_progress=False)
            first_s = time.perf_counter() - start
            first_cpu_s = time.process_time() - cpu  # all threads of this process
            assert first.embedded == items and not first.errors, first.as_dict()

            start = time.perf_counter()
            again = load_backlog(svc, PROJECT, client=client, show_progress=False)
            reload_s = time.perf_counter() - start
            assert again.embedded == 0 and again.skipped == items, again.as_dict()
    return {
        "fetch_s": fetch_s,
        "first_load_s": first_s,
        "first_load_cpu_s": first_cpu_s,
        "reload_s": reload_s,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_loader")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)

    from shared.embeddings.minilm import MiniLMEmbedder

    load_before = os.getloadavg()[0]
    embedder = MiniLMEmbedder()
    start = time.perf_counter()
    embedder.embed(["warm up"])
    model_load_s = time.perf_counter() - start

    runs = []
    for n in range(args.runs):
        result = one_run(args.items, embedder)
        runs.append(result)
        print(
            f"run {n + 1}/{args.runs}: fetch {result['fetch_s']:.2f} s, first load "
            f"{result['first_load_s']:.2f} s, unchanged reload {result['reload_s']:.2f} s",
            file=sys.stderr,
        )
    median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    report = {
        "benchmark": "backlog loader, REST source (fake ADO over HTTP), MiniLM, embedded index",
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "items": args.items,
        "runs": args.runs,
        "statistic": "median",
        "model_load_s": round(model_load_s, 3),
        "fetch_s": round(median["fetch_s"], 3),
        "first_load_s": round(median["first_load_s"], 3),
        "first_load_items_per_s": round(args.items / median["first_load_s"], 1),
        # CPU seconds (both cores together): less sensitive to other load than wall time
        "first_load_cpu_s": round(median["first_load_cpu_s"], 3),
        "unchanged_reload_s": round(median["reload_s"], 3),
        "unchanged_reload_items_per_s": round(args.items / median["reload_s"], 1),
        "all_runs": [{k: round(v, 3) for k, v in r.items()} for r in runs],
        # other processes on the machine skew the figures: the 1-minute load average around it
        "load_average_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")

    m = report["machine"]
    print(f"Backlog loader, {args.items} generated items, median of {args.runs} runs")
    print(f"machine: {m['cores']} cores, {m['cpu']}, Python {m['python']}")
    load = report["load_average_1m"]
    print(f"1-minute load average: {load['before']} before, {load['after']} after")
    print()
    print("| step | time (s) | items/s |")
    print("|---|---:|---:|")
    print(f"| MiniLM load (once per process) | {report['model_load_s']:.2f} | |")
    print(
        f"| fetch (WIQL + workitemsbatch) | {report['fetch_s']:.2f} | "
        f"{args.items / report['fetch_s']:.0f} |"
    )
    print(f"| first load | {report['first_load_s']:.2f} | {report['first_load_items_per_s']:.0f} |")
    print(f"| first load, CPU time of all threads | {report['first_load_cpu_s']:.2f} | |")
    print(
        f"| unchanged reload | {report['unchanged_reload_s']:.2f} | "
        f"{report['unchanged_reload_items_per_s']:.0f} |"
    )
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
