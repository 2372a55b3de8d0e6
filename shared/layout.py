"""Where every artifact lives (docs/ARCHITECTURE.md, "The artifact layout" and "The event flow").

runs/{run_id}/
  run.json                status; changed only at phase transitions, ETag-guarded
  config_snapshot.yaml    seed §10 settings as used
  transcript.txt          the normalized, redacted transcript every offset points into
  segments.jsonl          seed §4
  generated_backlog.jsonl seed §5 / §11.4, with assigned_tag (written by finalize)
  tagging_analysis.jsonl  seed §6 / §11.5 (written by finalize)
  errors.jsonl            every failed unit (written by finalize or when a run is aborted)
  summary.json            counts, tag distribution, tokens, cost, coverage
  parts/generated/{segment_id}.json   one per generation unit (fan-out 1)
  parts/tags/{story_id}.json          one per tagging unit (fan-out 2)
  parts/errors/{phase}-{unit}.json    one per failed unit
  parts/attempts/{phase}-{unit}.json  the last exception of a unit still being retried
  parts/outbox/{step}.sent            "downstream messages were sent" markers
  ado_write_results.jsonl             the latest ADO write: one line per item (shared/writer)
  parts/writes/{write_id}.jsonl       every ADO write's results, kept (the latest is also above)
  parts/write.lock                    leased while a write or a retag of the run is in progress
  parts/rollbacks/{rollback_id}.jsonl every rollback of a write: one line per item (shared/writer)
  parts/retag/{n}/                    the tagging a retag replaced (tagging_analysis.jsonl, ...)
  review.json                         the saved review: edits and decisions (shared/review_state)
  parts/review/{version:04d}.json     every saved review a later save replaced, kept
uploads/{run_id}/raw.{ext}            the upload as received
index/{namespace}/vectors.npz         the embedded vector index
ingestion/ado/{project}/ado_vectors.jsonl, ingestion/architecture/{project}/...
ingestion/ado/{project}/index.lock    leased by a sync or a load of the project's backlog
ingestion/ado/{project}/sync.json     the sync's watermark and its last outcome
ingestion/ado/{project}/syncs/{sync_id}.json   every sync's report (added, updated, deleted ids)
ingestion/limits/{deployment}.json    a model deployment's shared rate budget (shared/llm/limiter.py)
"""

from __future__ import annotations

import re

FINAL_ARTIFACTS = (
    "run.json",
    "config_snapshot.yaml",
    "transcript.txt",
    "segments.jsonl",
    "generated_backlog.jsonl",
    "tagging_analysis.jsonl",
    "errors.jsonl",
    "summary.json",
)


def run_prefix(run_id: str) -> str:
    return f"runs/{run_id}/"


def run_file(run_id: str, name: str) -> str:
    return f"runs/{run_id}/{name}"


def run_json(run_id: str) -> str:
    return run_file(run_id, "run.json")


def upload(run_id: str, ext: str) -> str:
    return f"uploads/{run_id}/raw.{ext}"


def generated_part(run_id: str, segment_id: str) -> str:
    return f"runs/{run_id}/parts/generated/{segment_id}.json"


def generated_parts_prefix(run_id: str) -> str:
    return f"runs/{run_id}/parts/generated/"


def tag_part(run_id: str, story_id: str) -> str:
    return f"runs/{run_id}/parts/tags/{story_id}.json"


def tag_parts_prefix(run_id: str) -> str:
    return f"runs/{run_id}/parts/tags/"


def error_part(run_id: str, phase: str, unit_id: str) -> str:
    return f"runs/{run_id}/parts/errors/{phase}-{unit_id}.json"


def error_parts_prefix(run_id: str) -> str:
    return f"runs/{run_id}/parts/errors/"


def attempt_part(run_id: str, phase: str, unit_id: str) -> str:
    return f"runs/{run_id}/parts/attempts/{phase}-{unit_id}.json"


def outbox(run_id: str, step: str) -> str:
    return f"runs/{run_id}/parts/outbox/{step}.sent"


def expected_stories(run_id: str) -> str:
    return f"runs/{run_id}/parts/expected_stories.json"


def ado_write_results(run_id: str) -> str:
    return f"runs/{run_id}/ado_write_results.jsonl"


def write_results_part(run_id: str, write_id: str) -> str:
    return f"runs/{run_id}/parts/writes/{write_id}.jsonl"


def write_results_prefix(run_id: str) -> str:
    return f"runs/{run_id}/parts/writes/"


def rollback_part(run_id: str, rollback_id: str) -> str:
    return f"runs/{run_id}/parts/rollbacks/{rollback_id}.jsonl"


def rollback_prefix(run_id: str) -> str:
    return f"runs/{run_id}/parts/rollbacks/"


def write_lock(run_id: str) -> str:
    """Leased by an ADO write or a retag of the run (one at a time per run)."""
    return f"runs/{run_id}/parts/write.lock"


def ado_write_lock() -> str:
    """Leased by every ADO write, whatever the run: two runs holding the same item must not both
    find its signature missing and create it twice."""
    return "ingestion/ado/write.lock"


def retag_snapshot(run_id: str, n: int, name: str) -> str:
    """What the n-th retag replaced (``tagging_analysis.jsonl``, ``summary.json``)."""
    return f"runs/{run_id}/parts/retag/{n:03d}/{name}"


def retag_prefix(run_id: str) -> str:
    return f"runs/{run_id}/parts/retag/"


def unit_of(path: str) -> str:
    """'runs/x/parts/tags/seg-0001-st01.json' -> 'seg-0001-st01'."""
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def review_state(run_id: str) -> str:
    """The run's saved review (edits and decisions), replaced under an ETag condition."""
    return f"runs/{run_id}/review.json"


def review_version(run_id: str, version: int) -> str:
    """A saved review that a later save replaced (kept, one file per version)."""
    return f"runs/{run_id}/parts/review/{version:04d}.json"


def review_versions_prefix(run_id: str) -> str:
    return f"runs/{run_id}/parts/review/"


def index_blob(namespace: str) -> str:
    return f"index/{namespace}/vectors.npz"


def ado_vectors(project: str) -> str:
    """One line per indexed work item (vector id, work item id, hash, metadata), per load."""
    return f"ingestion/ado/{project}/ado_vectors.jsonl"


def arch_vectors(project: str) -> str:
    """One line per indexed architecture chunk, rewritten by each load."""
    return f"ingestion/architecture/{project}/arch_vectors.jsonl"


def arch_raw(project: str, source_path: str) -> str:
    """The original document as loaded (``source_path`` relative to the loaded folder)."""
    return f"ingestion/architecture/{project}/raw/{source_path}"


def index_lock(project: str) -> str:
    """Leased while a sync, a load or a write's index update changes the project's ADO items in
    the index (shared/indexing/backlog.py)."""
    return f"ingestion/ado/{project}/index.lock"


def sync_state(project: str) -> str:
    """The sync's watermark (advanced only by a completed sync) and its last outcome."""
    return f"ingestion/ado/{project}/sync.json"


def sync_report(project: str, sync_id: str) -> str:
    return f"ingestion/ado/{project}/syncs/{sync_id}.json"


def sync_reports_prefix(project: str) -> str:
    return f"ingestion/ado/{project}/syncs/"


def model_limit(deployment: str) -> str:
    """The rate budget every instance shares for one model deployment (shared/llm/limiter.py);
    the name is reduced to letters, digits, ``.``, ``_`` and ``-``."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", deployment).strip("-.") or "model"
    return f"ingestion/limits/{slug}.json"
