"""The fault-injection suite: runs through the real function_app.py on the local host (a separate
process) and Azurite, with the offline engine, while faults are injected:

- every queue message delivered twice (and every upload started two or three times);
- the host process SIGKILLed at random points and started again;
- Azurite restarted mid-run (its data persisted on disk);
- the model failing 30% of its calls (malformed output, 429, 500, timeouts), through the OpenAI
  stand-in, once the LLM engine is wired in.

Each run must end completed or completed_with_errors, with no record lost or duplicated in any
artifact and every failure in errors.jsonl (tests/chaos/harness.py ``check_run``); each scenario
reports its figures at the end of the session. Kill points and delays are random: the seed is
printed with the figures (``CHAOS_SEED`` replays it).
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Callable

import pytest

from tests.chaos.conftest import ChaosEnv, trials
from tests.chaos.harness import (
    REPORT,
    RunCheck,
    Tally,
    aborted_at_segmentation,
    call,
    check_run,
    read_run,
    wait_queues_empty,
    wait_terminal,
)

pytestmark = pytest.mark.integration  # needs Azurite; "chaos" comes from the directory

SEED = int(os.environ.get("CHAOS_SEED") or time.time_ns() % 1_000_000)
RUN_TIMEOUT = 360  # seconds for a run to end under faults (a loaded 2-core machine is slow)


def budget(default_trials: int) -> pytest.MarkDecorator:
    """pytest-timeout for a scenario, scaled by its trials."""
    return pytest.mark.timeout(300 + 240 * trials(default_trials))


def wait_for_point(chaos: ChaosEnv, run_id: str, rng: random.Random) -> str | None:
    """Wait for a random point of the run's work: a moment after the upload (start, segmentation),
    the j-th generation part or the j-th tag part being written (j random), or finalize. Returns
    the point reached, or None when the run ended first."""
    point = rng.choice(["start", "generate", "tag", "tag", "finalize"])
    j = rng.randint(0, 7) if point == "generate" else rng.randint(0, len(chaos.baseline) - 1)
    until = time.monotonic() + (rng.uniform(0.0, 1.0) if point == "start" else 300)
    prefix = f"runs/{run_id}/parts/"
    while time.monotonic() < until:
        run = read_run(chaos.store, run_id)
        if run is not None and run["status"] in ("completed", "completed_with_errors", "failed"):
            return None
        phase = (run or {}).get("phase")
        if point == "generate" and len(chaos.store.list(prefix + "generated/")) >= j:
            return f"generate:{j}"
        if point == "tag" and len(chaos.store.list(prefix + "tags/")) >= j:
            return f"tag:{j}"
        if point == "finalize" and phase == "finalizing":
            return "finalize"
        time.sleep(0.02)
    return "start" if point == "start" else None


def run_with_faults(
    chaos: ChaosEnv,
    name: str,
    rng: random.Random,
    inject: Callable[[], bool],
    most: int,
    points: Counter[str],
) -> tuple[list[str], int]:
    """Drop a run and inject 1..``most`` faults at random points of it. A run that ends before its
    first fault proves nothing: another one is dropped (three tries). Returns the runs, faults."""
    run_ids: list[str] = []
    for attempt in range(3):
        run_ids.append(chaos.drop(f"{name}-{attempt}.md"))
        faults = 0
        for _ in range(rng.randint(1, most)):
            point = wait_for_point(chaos, run_ids[-1], rng)
            if point is None:
                break  # the run is over: a fault now would prove nothing about it
            if inject():
                faults += 1
                points[point.split(":")[0]] += 1
        if faults:
            return run_ids, faults
    return run_ids, 0


def finish(chaos: ChaosEnv, tally: Tally, run_ids: list[str], timeout: float) -> list[RunCheck]:
    """Wait until the runs end and the queues are empty, then check every run."""
    wait_terminal(chaos.store, run_ids, timeout=timeout)
    wait_queues_empty(chaos.conn, timeout=120)
    checks = [check_run(chaos.store, r, chaos.baseline) for r in run_ids]
    for check in checks:
        tally.add(check)
    return checks


def assert_clean(tally: Tally, checks: list[RunCheck]) -> None:
    REPORT.append(tally)
    bad = [c.describe() for c in checks if not c.ok]
    assert not bad, "\n".join(bad)
    assert tally.other == 0, [
        c.describe() for c in checks if c.status not in ("completed", "completed_with_errors")
    ]
    assert tally.lost == 0 and tally.duplicates == 0


@budget(1)
def test_every_message_delivered_twice(chaos: ChaosEnv) -> None:
    n = trials(1)
    tally = Tally("duplicate delivery", trials=n)
    log = chaos.tmp / "duplicate-sends.tsv"
    host = chaos.host("duplicates", duplicate_log=log, duplicate_max_delay=3).start()
    t0 = time.monotonic()
    try:
        checks: list[RunCheck] = []
        for batch in range(0, n, 2):  # two runs at a time
            run_ids = []
            for k in range(batch, min(n, batch + 2)):
                name = f"dup-{SEED}-{k}.md"
                run_ids.append(chaos.drop(name))
                chaos.drop(name)  # the same bytes again: a new blob version, the same run
                status, body = call(  # and once more over HTTP, under the same name: the same run
                    "POST", f"{host.url}/api/runs?project=chaos&name={name}", body=chaos.data
                )
                assert status == 202 and body["run_id"] == run_ids[-1], (status, body)
                tally.faults += 2
            checks += finish(chaos, tally, run_ids, timeout=RUN_TIMEOUT)
    finally:
        host.stop()
    tally.seconds = time.monotonic() - t0
    tally.faults += sum(1 for _ in log.open()) if log.exists() else 0
    tally.notes.append(f"seed {SEED}; {tally.faults} duplicate deliveries (0-3 s late) and uploads")
    assert_clean(tally, checks)
    # nothing failed, so nothing may be recorded as failed either
    assert tally.completed == n, [c.describe() for c in checks]


@budget(1)
def test_host_killed_at_random_points_and_restarted(chaos: ChaosEnv) -> None:
    n = trials(1)
    rng = random.Random(SEED)
    tally = Tally("host killed (SIGKILL)", trials=n)
    host = chaos.host("kills", lease=3.0)
    checks: list[RunCheck] = []
    points: Counter[str] = Counter()
    t0 = time.monotonic()
    try:
        host.start()

        def kill_and_restart() -> bool:
            killed = host.kill()
            host.start()
            return killed

        for trial in range(n):
            run_ids, faults = run_with_faults(
                chaos, f"kill-{SEED}-{trial}", rng, kill_and_restart, 3, points
            )
            tally.faults += faults
            checks += finish(chaos, tally, run_ids, timeout=RUN_TIMEOUT)
    finally:
        host.stop()
    tally.seconds = time.monotonic() - t0
    tally.notes.append(
        f"seed {SEED}; message lease 3 s; {host.starts} host starts; kills at {dict(points)}"
    )
    assert tally.faults >= n  # every trial killed the host at least once mid-run
    assert_clean(tally, checks)


@budget(1)
def test_azurite_restarted_mid_run(chaos: ChaosEnv) -> None:
    n = trials(1)
    rng = random.Random(SEED + 1)
    tally = Tally("Azurite restarted", trials=n)
    host = chaos.host("azurite", lease=3.0)
    checks: list[RunCheck] = []
    points: Counter[str] = Counter()
    t0 = time.monotonic()
    try:
        host.start()

        def restart_azurite() -> bool:
            chaos.azurite.restart()
            return True

        for trial in range(n):
            run_ids, faults = run_with_faults(
                chaos, f"azurite-{SEED}-{trial}", rng, restart_azurite, 2, points
            )
            tally.faults += faults
            checks += finish(chaos, tally, run_ids, timeout=RUN_TIMEOUT)
    finally:
        host.stop()
    tally.seconds = time.monotonic() - t0
    tally.notes.append(
        f"seed {SEED + 1}; Azurite persisted to disk, same ports; restarts at {dict(points)}"
    )
    assert tally.faults >= n  # every trial restarted Azurite at least once mid-run
    assert_clean(tally, checks)


@budget(1)
def test_model_failing_30_percent_of_calls(chaos: ChaosEnv) -> None:
    """The LLM engine against the OpenAI stand-in failing 30% of chat calls."""
    from devhost.standins import openai_standin as standin_mod

    n = trials(1)
    tally = Tally("model fails 30%", trials=n)
    failures = standin_mod.Failures(rate=0.3, seed=SEED, hang_seconds=4.0)
    checks: list[RunCheck] = []
    t0 = time.monotonic()
    with standin_mod.OpenAIStandIn(failures=failures) as llm:
        env = {
            "SYNTH_ENGINE": "llm",
            "SYNTH_EMBEDDER": "minilm",  # the index was loaded with MiniLM
            "OPENAI_API_KEY": "sk-chaos-not-a-real-key-000000000000",
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_TIMEOUT_SECONDS": "2",
        }
        host = chaos.host("model", lease=10.0)
        host.env.update(env)
        try:
            host.start()
            run_ids = [chaos.drop(f"model-{SEED}-{k}.md") for k in range(n)]
            wait_terminal(chaos.store, run_ids, timeout=RUN_TIMEOUT + 60 * n)
            wait_queues_empty(chaos.conn, timeout=120)
            # model output varies with the failures, so there is no fault-free baseline to match
            checks = [check_run(chaos.store, r) for r in run_ids]
            assert {(read_run(chaos.store, r) or {}).get("engine") for r in run_ids} == {"llm"}
            for check in checks:
                if aborted_at_segmentation(chaos.store, check.run_id):
                    check.status = "aborted"  # both segmentation answers failed: the seed's abort
                tally.add(check)
        finally:
            host.stop()
        tally.faults = sum(1 for r in llm.requests if r.answered_with.startswith("failure:"))
        calls = len(llm.chat_requests)
    tally.seconds = time.monotonic() - t0
    tally.notes.append(f"seed {SEED}; {tally.faults} failed of {calls} chat calls")
    assert tally.faults > 0
    assert_clean(tally, checks)
