"""``make bench``: every ``benchmarks/bench_*.py`` in turn, each in its own process.

Each benchmark prints its table and writes ``benchmarks/results/<name>.json``; this runner only
starts them one after another (never in parallel: they time the same cores) and reports which
failed. A module that sets ``PENDING`` (a reason) measures nothing yet and is listed as pending. ``python -m benchmarks.run_all [name ...]`` runs the named ones only (``cold_start``,
``retrieval``, ...). Not part of ``make test``.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import time

from benchmarks._common import REPO


def available() -> list[str]:
    return sorted(p.stem for p in (REPO / "benchmarks").glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    names = available()
    wanted = [a if a.startswith("bench_") else f"bench_{a}" for a in (argv or sys.argv[1:])]
    unknown = [w for w in wanted if w not in names]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; have: {', '.join(names)}")
        return 2
    failed = []
    for name in wanted or names:
        print(f"\n=== {name} ===", flush=True)
        pending = getattr(importlib.import_module(f"benchmarks.{name}"), "PENDING", None)
        if pending:
            print(f"--- {name}: pending, not measured: {pending}", flush=True)
            continue
        start = time.perf_counter()
        code = subprocess.run([sys.executable, "-m", f"benchmarks.{name}"], cwd=REPO).returncode
        print(f"--- {name}: exit {code} after {time.perf_counter() - start:.0f} s", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
