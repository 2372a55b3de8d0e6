"""What the fault-injection suite (and the bad-input and security tests) share: the local host as a
subprocess that can be killed, HTTP calls, waiting for runs, and the invariant check of a run's
artifacts (nothing lost, nothing duplicated, every failure recorded).

The checks read the artifacts as plain JSON, not through the pipeline's own models, so a bug in a
model cannot hide a bug in the data.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shared.ids import content_sha256, make_run_id

REPO = Path(__file__).resolve().parents[2]
TERMINAL = ("completed", "completed_with_errors", "failed")
PIPELINE_QUEUES = ("synth-segment", "synth-generate", "synth-tag", "synth-finalize")
# the id field of each record in the run's .jsonl artifacts
JSONL_KEYS = {
    "segments.jsonl": ("segment_id",),
    "generated_backlog.jsonl": ("item_id",),
    "tagging_analysis.jsonl": ("story_id",),
    "errors.jsonl": ("phase", "unit_id"),
}


# ------------------------------------------------------------------------------------------------
# HTTP


def call(
    method: str,
    url: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    key: str | None = None,
    timeout: float = 60,
) -> tuple[int, Any]:
    """(status, parsed JSON or raw bytes); HTTP errors are returned, not raised."""
    hdrs = dict(headers or {})
    if key is not None:
        hdrs.setdefault("x-functions-key", key)
    request = urllib.request.Request(url, data=body, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw, status = response.read(), response.status
    except urllib.error.HTTPError as err:
        raw, status = err.read(), err.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def blob_run_id(project: str, name: str, data: bytes) -> str:
    """The run id a blob drop of ``data`` at transcripts/{project}/{name} gets."""
    return make_run_id(f"transcripts/{project}/{name}", f"{content_sha256(data)}:{len(data)}")


# ------------------------------------------------------------------------------------------------
# waiting


def read_run(store: Any, run_id: str) -> dict[str, Any] | None:
    from shared.storage import NotFound

    try:
        return json.loads(store.get(f"runs/{run_id}/run.json"))
    except NotFound:
        return None


def wait_terminal(store: Any, run_ids: list[str], timeout: float) -> dict[str, dict[str, Any]]:
    """run.json of each run once all are terminal; TimeoutError naming the ones still open."""
    deadline = time.monotonic() + timeout
    done: dict[str, dict[str, Any]] = {}
    while True:
        for run_id in run_ids:
            if run_id in done:
                continue
            try:
                run = read_run(store, run_id)
            except Exception:  # noqa: BLE001 - storage may be restarting under a chaos test
                run = None
            if run is not None and run["status"] in TERMINAL:
                done[run_id] = run
        if len(done) == len(run_ids):
            return done
        if time.monotonic() > deadline:
            open_runs = {
                r: (read_run(store, r) or {}).get("phase") for r in run_ids if r not in done
            }
            raise TimeoutError(f"runs not terminal after {timeout}s: {open_runs}")
        time.sleep(0.2)


def wait_queues_empty(conn: str, timeout: float, queues: tuple[str, ...] = PIPELINE_QUEUES) -> None:
    """Until no message, visible or not, is left in the pipeline's queues."""
    from azure.core.exceptions import ResourceNotFoundError
    from azure.storage.queue import QueueServiceClient

    service = QueueServiceClient.from_connection_string(conn)
    deadline = time.monotonic() + timeout
    while True:
        left = {}
        for q in queues:
            try:
                n = service.get_queue_client(q).get_queue_properties().approximate_message_count
            except ResourceNotFoundError:
                n = 0
            if n:
                left[q] = n
        if not left:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"messages left after {timeout}s: {left}")
        time.sleep(0.3)


# ------------------------------------------------------------------------------------------------
# the invariant check


@dataclass
class RunCheck:
    """What is wrong with one finished run (empty lists: nothing)."""

    run_id: str
    status: str
    segments: int = 0
    stories: int = 0
    errors: int = 0
    lost: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)
    inconsistent: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicates or self.unrecorded or self.inconsistent)

    def describe(self) -> str:
        return (
            f"{self.run_id} {self.status}: lost={self.lost} duplicates={self.duplicates} "
            f"unrecorded={self.unrecorded} inconsistent={self.inconsistent}"
        )


def _jsonl(store: Any, path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in store.get(path).decode().splitlines() if line.strip()]


def _dups(values: list[Any]) -> list[Any]:
    return sorted((v for v, n in Counter(values).items() if n > 1), key=str)


def check_run(store: Any, run_id: str, baseline: dict[str, str] | None = None) -> RunCheck:
    """Check a terminal run's artifacts against its parts.

    - lost: a segment without a generation part, a story of a part missing from the backlog or
      without a tag record / tag part, a baseline story (``story_id -> title`` of a fault-free run
      of the same transcript) missing although its segment recorded no error;
    - duplicates: an id twice in any .jsonl artifact (every .jsonl the run has);
    - unrecorded: a skipped segment, a ``tagging_failed`` story or an error part that is not in
      errors.jsonl; errors.jsonl entries with no error part;
    - inconsistent: status against errors, run.json counts against the artifacts, segments that do
      not tile the transcript.
    """
    from shared.storage import NotFound

    run = json.loads(store.get(f"runs/{run_id}/run.json"))
    check = RunCheck(run_id, run["status"])
    prefix = f"runs/{run_id}/"
    names = store.list(prefix)
    # every .jsonl artifact: ids unique
    for path in names:
        if not path.endswith(".jsonl") or "/parts/" in path:
            continue
        name = path.rsplit("/", 1)[-1]
        keys = JSONL_KEYS.get(name)
        records = _jsonl(store, path)
        ids = [
            tuple(r.get(k) for k in keys) if keys else json.dumps(r, sort_keys=True)
            for r in records
        ]
        check.duplicates += [f"{name}:{d}" for d in _dups(ids)]
    if run["status"] == "failed":
        if not run.get("failure_reason"):
            check.inconsistent.append("failed without a failure_reason")
        return check

    transcript = store.get(prefix + "transcript.txt").decode()
    segments = _jsonl(store, prefix + "segments.jsonl")
    check.segments = len(segments)
    if "".join(s["raw_text"] for s in segments) != transcript:
        check.inconsistent.append("segments do not tile transcript.txt")
    parts: dict[str, dict[str, Any]] = {}
    for seg in segments:
        try:
            parts[seg["segment_id"]] = json.loads(
                store.get(f"{prefix}parts/generated/{seg['segment_id']}.json")
            )
        except NotFound:
            check.lost.append(f"segment {seg['segment_id']} has no generation part")
    part_stories = [
        (sid, i)
        for sid, p in parts.items()
        for i in p.get("items", [])
        if i["type"] == "User Story"
    ]
    check.duplicates += [f"part story {d}" for d in _dups([i["item_id"] for _, i in part_stories])]
    backlog = _jsonl(store, prefix + "generated_backlog.jsonl")
    stories = {i["item_id"]: i for i in backlog if i["type"] == "User Story"}
    check.stories = len(stories)
    tags = {r["story_id"]: r for r in _jsonl(store, prefix + "tagging_analysis.jsonl")}
    tag_parts = {p.rsplit("/", 1)[-1][: -len(".json")] for p in store.list(prefix + "parts/tags/")}
    # one need, one story: a part story merged into another (finalize) is accounted for by it
    merged = {m: i["item_id"] for i in stories.values() for m in i.get("merged_story_ids", [])}
    check.duplicates += [f"story {m} merged and kept" for m in sorted(set(merged) & set(stories))]
    for _, item in part_stories:
        sid = item["item_id"]
        if sid not in stories and sid not in merged:
            check.lost.append(f"story {sid} missing from generated_backlog.jsonl")
        if sid not in tags and sid not in merged:
            check.lost.append(f"story {sid} has no record in tagging_analysis.jsonl")
        if sid not in tag_parts:
            check.lost.append(f"story {sid} has no tag part")
        elif stories.get(sid, {}).get("assigned_tag") != tags.get(sid, {}).get("decision_tag"):
            check.inconsistent.append(f"story {sid}: assigned_tag differs from its tag record")
    extra = set(stories) - {i["item_id"] for _, i in part_stories}
    check.inconsistent += [f"story {s} in the backlog but in no part" for s in sorted(extra)]

    errors = _jsonl(store, prefix + "errors.jsonl")
    check.errors = len(errors)
    recorded = {(e["phase"], e["unit_id"]) for e in errors}
    error_parts = set()
    for path in store.list(prefix + "parts/errors/"):
        e = json.loads(store.get(path))
        error_parts.add((e["phase"], e["unit_id"]))
    check.unrecorded += [
        f"error part {p} not in errors.jsonl" for p in sorted(error_parts - recorded)
    ]
    check.unrecorded += [
        f"errors.jsonl {p} has no error part" for p in sorted(recorded - error_parts)
    ]
    for sid, part in parts.items():
        if part["status"] == "skipped" and ("generate", sid) not in recorded:
            check.unrecorded.append(f"segment {sid} skipped without an error record")
    for sid, record in tags.items():
        if record.get("tagging_failed") and ("tag", sid) not in recorded:
            check.unrecorded.append(f"story {sid} tagging_failed without an error record")
    expected_status = "completed_with_errors" if errors else "completed"
    if run["status"] != expected_status:
        check.inconsistent.append(f"status {run['status']} with {len(errors)} errors")
    if run.get("segment_count") != len(segments) or run.get("story_count") != len(stories):
        check.inconsistent.append(
            f"run.json counts {run.get('segment_count')}/{run.get('story_count')} vs "
            f"{len(segments)}/{len(stories)}"
        )
    if baseline is not None:
        failed_segments = {u for ph, u in recorded if ph == "generate"}
        for sid, title in baseline.items():
            if sid.rsplit("-st", 1)[0] in failed_segments:
                continue
            if sid not in stories:
                check.lost.append(f"baseline story {sid} missing")
            elif stories[sid]["title"] != title:
                check.inconsistent.append(f"story {sid} differs from the fault-free run")
    return check


def story_titles(store: Any, run_id: str) -> dict[str, str]:
    """``story_id -> title`` of a finished run (the baseline of a chaos scenario)."""
    return {
        i["item_id"]: i["title"]
        for i in _jsonl(store, f"runs/{run_id}/generated_backlog.jsonl")
        if i["type"] == "User Story"
    }


# ------------------------------------------------------------------------------------------------
# the host as a process that can be killed


class HostProcess:
    """``python -m tests.chaos.host_main``: devhost.LocalHost running function_app.py, in its own
    process (and process group) so a test can SIGKILL it at any point and start it again."""

    def __init__(
        self,
        env: dict[str, str],
        *,
        port: int,
        lease: float = 4.0,
        workers: int = 4,
        duplicate_log: Path | None = None,
        duplicate_max_delay: int = 3,
        log_path: Path | None = None,
    ) -> None:
        self.env = {**os.environ, **env}
        self.port = port
        self.args = ["--port", str(port), "--lease", str(lease), "--workers", str(workers)]
        if duplicate_log is not None:
            self.args += [
                "--duplicate-log",
                str(duplicate_log),
                "--duplicate-max-delay",
                str(duplicate_max_delay),
            ]
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.kills = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> HostProcess:
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.chaos.host_main", *self.args],
            cwd=str(REPO),
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.starts += 1
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"host exited with {self.proc.returncode}; log: {self.log_path}")
            try:
                status, _ = call("GET", f"{self.url}/api/health", timeout=2)
                if status == 200:
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"host not up after {timeout}s; log: {self.log_path}")
            time.sleep(0.1)

    def kill(self) -> bool:
        """SIGKILL the host (no cleanup of any kind). True when it was still running."""
        proc, self.proc = self.proc, None
        if proc is None:
            return False
        alive = proc.poll() is None
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(10)
        if alive:
            self.kills += 1
        return alive

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


# ------------------------------------------------------------------------------------------------
# the figures a scenario reports


@dataclass
class Tally:
    scenario: str
    trials: int = 0
    faults: int = 0
    runs: int = 0
    completed: int = 0
    completed_with_errors: int = 0
    aborted: int = 0  # failed as the seed says a run must (§11: segmentation fails twice)
    other: int = 0
    lost: int = 0
    duplicates: int = 0
    unrecorded: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def add(self, check: RunCheck) -> None:
        self.runs += 1
        if check.status == "completed":
            self.completed += 1
        elif check.status == "completed_with_errors":
            self.completed_with_errors += 1
        elif check.status == "aborted":
            self.aborted += 1
        else:
            self.other += 1
        self.lost += len(check.lost)
        self.duplicates += len(check.duplicates)
        self.unrecorded += len(check.unrecorded) + len(check.inconsistent)

    def line(self) -> str:
        per = self.seconds / self.trials if self.trials else 0.0
        return (
            f"{self.scenario:<22} trials {self.trials:>3}  faults {self.faults:>4}  runs {self.runs:>3}"
            f"  completed {self.completed:>3}  with_errors {self.completed_with_errors:>3}"
            f"  aborted {self.aborted}  other {self.other}  lost {self.lost}  duplicates {self.duplicates}"
            f"  unrecorded {self.unrecorded}  {per:6.1f} s/trial"
        )


REPORT: list[Tally] = []


def aborted_at_segmentation(store: Any, run_id: str) -> bool:
    """The run failed because its segmentation failed twice (seed §11: "retry once; abort run
    on second failure"), and errors.jsonl says so: the one outcome a failing model may cause."""
    from shared.storage import NotFound

    run = json.loads(store.get(f"runs/{run_id}/run.json"))
    if run["status"] != "failed" or not run.get("failure_reason"):
        return False
    try:
        errors = _jsonl(store, f"runs/{run_id}/errors.jsonl")
    except NotFound:
        return False
    return any(
        e.get("phase") == "segment"
        and e.get("error_type") == "SegmentationFailed"
        and e.get("outcome") == "aborted"
        for e in errors
    )


# ------------------------------------------------------------------------------------------------
# input files made on the spot


def minimal_pdf(lines: list[str]) -> bytes:
    """A one-page PDF whose content stream shows ``lines`` (Helvetica), written by hand."""

    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops = ["BT", "/F1 11 Tf", "14 TL", "72 760 Td"]
    for line in lines:
        ops += [f"({esc(line)}) Tj", "T*"]
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def docx_bytes(paragraphs: list[str]) -> bytes:
    import io

    import docx

    document = docx.Document()
    for p in paragraphs:
        document.add_paragraph(p)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()
