"""Cold start of the Functions app: ``python -m benchmarks.bench_cold_start [--runs 15]``.

Each run is a fresh interpreter (``python -X importtime -c "import function_app"``), so nothing is
cached in the process (the OS file cache is warm after the first run, as it is on a warm host).
Reported, as medians over the runs:
- ``import function_app``: its cumulative import time from ``-X importtime``;
- process wall time: interpreter start, the import, exit (measured around the subprocess);
- the top imports by cumulative time (from the median run), to see what a regression pulled in.
Goal: the import at most 1.0 s. The JSON goes to ``benchmarks/results/cold_start.json``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from typing import Any

from benchmarks._common import REPO, median, write_result

GOAL_S = 1.0
_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)\s*$")


def one_run() -> tuple[float, float, list[tuple[str, float, int]]]:
    """(import seconds, process wall seconds, [(module, cumulative s, depth)])."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import function_app"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    modules = []
    total = None
    for line in proc.stderr.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        cumulative = int(m.group(2)) / 1e6
        depth = (len(m.group(3)) - 1) // 2
        modules.append((m.group(4), cumulative, depth))
        if m.group(4) == "function_app":
            total = cumulative
    if total is None:
        raise RuntimeError("function_app does not appear in the -X importtime output")
    return total, wall, modules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_cold_start")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)

    one_run()  # warm the OS file cache, as on any host that has started once
    runs = [one_run() for _ in range(args.runs)]
    imports = [r[0] for r in runs]
    walls = [r[1] for r in runs]
    mid = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
    top = sorted((m for m in mid[2] if m[0] != "function_app"), key=lambda m: m[1], reverse=True)[
        : args.top
    ]
    report: dict[str, Any] = {
        "runs": args.runs,
        "command": f"{sys.executable} -X importtime -c 'import function_app'",
        "import_function_app_s": {
            "median": round(median(imports), 4),
            "min": round(min(imports), 4),
            "max": round(max(imports), 4),
        },
        "process_wall_s": {"median": round(median(walls), 4)},
        "goal_s": GOAL_S,
        "goal_met": median(imports) <= GOAL_S,
        "ratio_to_goal": round(median(imports) / GOAL_S, 3),
        "top_imports_of_median_run": [
            {"module": name, "cumulative_s": round(cum, 4), "depth": depth}
            for name, cum, depth in top
        ],
    }
    path = write_result("cold_start", report)

    print(f"cold start: import function_app, {args.runs} fresh processes")
    print(
        f"  import (median)        {median(imports):.3f} s  (min {min(imports):.3f}, max "
        f"{max(imports):.3f}); goal <= {GOAL_S:.1f} s: "
        f"{'met' if report['goal_met'] else 'MISSED'} ({report['ratio_to_goal']}x the goal)"
    )
    print(f"  process wall (median)  {median(walls):.3f} s")
    print("  top imports (cumulative, median run):")
    for name, cum, depth in top:
        print(f"    {cum * 1000:8.1f} ms  {'  ' * depth}{name}")
    print(f"written to {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
