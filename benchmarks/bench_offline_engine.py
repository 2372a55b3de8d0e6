"""The offline engine on the longest AMI meeting: ``python -m benchmarks.bench_offline_engine``.

TS3009c (1,093 turns, the longest meeting in datasets/ami-qmsum-val) becomes ``Speaker: text``
lines, one turn a line (as the samples are made), and goes through
``python -m shared.cli run FILE --project bench`` (the same handlers as the Functions app,
in-process queue, local folder store, packaged MiniLM, 4 workers by default). Each repetition uses
a fresh store with the sample backlog and architecture notes loaded (not timed), because the same
upload into the same store is the same run and would return at once. The wall time of the ``run``
command (a fresh process: imports, model load, every phase) is reported as the median of the
repetitions. Goal: at most 60 s. The JSON goes to benchmarks/results/offline_engine.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import REPO, median, write_result

GOAL_S = 60.0
MEETING = "TS3009c"


def transcript_file(folder: Path, meeting: str) -> Path:
    from shared.eval.segmentation import DEFAULT_GOLD, load_gold

    found = load_gold(REPO / DEFAULT_GOLD, [meeting])[0]
    path = folder / f"{meeting}.txt"
    path.write_text(found.transcript(), encoding="utf-8")
    return path


def one_run(transcript: Path, workers: int | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-offline-") as tmp:
        env = {**os.environ, "SYNTH_LOCAL_STORE_DIR": str(Path(tmp) / "store")}
        for k in ("AzureWebJobsStorage", "OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"):
            env.pop(k, None)  # the offline engine on the local folder store, whatever the shell
        cli = [sys.executable, "-m", "shared.cli"]
        samples = REPO / "samples"
        for args in (
            ["load-backlog", str(samples / "backlog" / "remote_control_backlog.jsonl")],
            ["load-docs", str(samples / "architecture")],
        ):
            subprocess.run(
                [*cli, *args, "--project", "bench"],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
            )
        run = [
            *cli,
            "run",
            str(transcript),
            "--project",
            "bench",
            "--out",
            str(Path(tmp) / "out"),
            "--json",
        ]
        if workers:
            run += ["--workers", str(workers)]
        start = time.perf_counter()
        proc = subprocess.run(run, cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise RuntimeError(f"run failed ({proc.returncode}): {proc.stderr[-2000:]}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        summary = json.loads((Path(result["path"]) / "summary.json").read_text())
        return {
            "wall_s": round(wall, 2),
            "status": result["status"],
            "segments": summary["segment_count"],
            "stories": summary["story_count"],
            "coverage": summary["coverage"]["share"],
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_offline_engine")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=None, help="run --workers (default 4)")
    parser.add_argument("--meeting", default=MEETING)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-transcript-") as tmp:
        transcript = transcript_file(Path(tmp), args.meeting)
        size = transcript.stat().st_size
        turns = len(transcript.read_text(encoding="utf-8").splitlines())
        runs = [one_run(transcript, args.workers) for _ in range(args.runs)]
    walls = [r["wall_s"] for r in runs]
    report = {
        "meeting": args.meeting,
        "turns": turns,
        "bytes": size,
        "command": "python -m shared.cli run MEETING.txt --project bench (fresh store each run)",
        "workers": args.workers or 4,
        "runs": runs,
        "median_wall_s": round(median(walls), 2),
        "goal_s": GOAL_S,
        "goal_met": median(walls) <= GOAL_S,
        "ratio_to_goal": round(median(walls) / GOAL_S, 3),
    }
    path = write_result("offline_engine", report)
    print(
        f"offline engine: {args.meeting} ({turns} turns, {size:,} bytes) through 'shared.cli run'"
    )
    for i, r in enumerate(runs, 1):
        print(
            f"  run {i}: {r['wall_s']:6.1f} s  {r['status']}, {r['segments']} segments, "
            f"{r['stories']} stories, coverage {r['coverage']}"
        )
    print(
        f"  median {report['median_wall_s']:.1f} s; goal <= {GOAL_S:.0f} s: "
        f"{'met' if report['goal_met'] else 'MISSED'} ({report['ratio_to_goal']}x the goal)"
    )
    print(f"written to {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
