"""Writing a completed run to Azure DevOps: checks, locks, the plan, the write and its records.

Only a ``completed`` or ``completed_with_errors`` run can be written (RunNotWritable otherwise),
with its saved review applied (``reviewed_run``; shared/review/state.py).
A write holds two blob leases, renewed while it lasts and released at its end (a process that dies
loses them within ``LEASE_SECONDS``):
- ``runs/{run_id}/parts/write.lock``: one write or retag of a run at a time;
- ``ingestion/ado/write.lock``: one ADO write at a time, whatever the run, so two runs holding the
  same item cannot both find its signature missing and both create it.
A held lease is WriteInProgress (HTTP 409). A dry run takes no lease and writes nothing.

Records: the write's results go to ``runs/{run_id}/parts/writes/{write_id}.jsonl`` (kept, one file
per write) and ``runs/{run_id}/ado_write_results.jsonl`` (the latest write), both rewritten after
each item that changed ADO and at the end, so a write that dies still says what it created.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from shared import layout
from shared.ado import process as processes
from shared.ado.errors import AdoError
from shared.ado.ports import WorkItemReader, WorkItemWriter
from shared.ado.process import AGILE, Process, ProcessError
from shared.errors import ConfigurationError, SynthesizerError
from shared.indexing import pending, writes
from shared.models import GeneratedItem, RunStatus, TaggingRecord
from shared.pipeline.runs import load_run
from shared.review.edits import Applied, apply
from shared.review.plan import InvalidDecisions, Plan, build_plan
from shared.review.state import ReviewState, check, load_state, unquoted_statements
from shared.services import Services
from shared.storage import ArtifactStore, NotFound, dump_jsonl, leases, read_jsonl
from shared.storage.leases import LEASE_SECONDS, LeaseBusy
from shared.writer.execute import Writer, WriteResult, counts, preview

log = logging.getLogger("shared.writer")

WRITABLE = ("completed", "completed_with_errors")


class RunNotWritable(SynthesizerError, RuntimeError):
    """The run has not completed (or failed): there is nothing reviewed to write, retag, export
    or review. ``status``: the run's status."""

    def __init__(self, message: str, *, status: str | None = None) -> None:
        super().__init__(message)
        self.status = status


class EmptyBacklogRefused(SynthesizerError, RuntimeError):
    """The run's project had no indexed backlog: every story was tagged new, and creating them
    all is refused unless the request allows it."""


class WriteInProgress(LeaseBusy):
    """Another write or retag holds the lease."""


# ------------------------------------------------------------------------------------------------
# leases


def held_lease(
    store: ArtifactStore, path: str, busy: str, seconds: int = LEASE_SECONDS
) -> AbstractContextManager[None]:
    """Hold the lease on ``path`` for the block, renewing it; WriteInProgress(busy) if taken."""
    return leases.held_lease(store, path, busy, seconds, error=WriteInProgress)


def run_lock(svc: Services, run_id: str) -> AbstractContextManager[None]:
    return held_lease(
        svc.store, layout.write_lock(run_id), f"a write or retag of run {run_id} is in progress"
    )


@contextmanager
def ado_write_locks(svc: Services, run_id: str) -> Iterator[None]:
    """The run's lease and the one ADO write lease: held by a write and by a rollback."""
    with (
        run_lock(svc, run_id),
        held_lease(
            svc.store,
            layout.ado_write_lock(),
            "another write to Azure DevOps is in progress; try again when it has finished",
        ),
    ):
        yield


# ------------------------------------------------------------------------------------------------
# reading a completed run


def completed_run(
    svc: Services, run_id: str
) -> tuple[RunStatus, list[GeneratedItem], list[TaggingRecord]]:
    """The run (UnknownRun if absent) with its backlog and tagging; RunNotWritable unless it has
    completed."""
    run = load_run(svc, run_id)
    if run.status not in WRITABLE:
        raise RunNotWritable(
            f"run {run_id} is {run.status}; only a completed run (completed or "
            "completed_with_errors) can be written or retagged",
            status=run.status,
        )
    items = read_jsonl(svc.store, layout.generated_backlog(run_id), GeneratedItem)
    records = read_jsonl(svc.store, layout.tagging_analysis(run_id), TaggingRecord)
    return run, items, records


@dataclass
class ReviewedRun:
    """A completed run with its saved review applied: what a write, a dry run and an export
    work from (shared/review/state.py)."""

    run: RunStatus
    items: list[GeneratedItem]  # the edited backlog
    records: list[TaggingRecord]  # its tagging (split stories copied, merged ones gone)
    state: ReviewState
    etag: str | None
    applied: Applied


def reviewed_run(svc: Services, run_id: str) -> ReviewedRun:
    """The completed run (UnknownRun, RunNotWritable) with its saved review applied;
    InvalidDecisions if the saved review no longer fits the run."""
    run, items, records = completed_run(svc, run_id)
    state, etag = load_state(svc, run_id)
    unquoted = unquoted_statements(svc, run_id)
    problems = check(state, items, unquoted)
    if problems:
        raise InvalidDecisions([f"the saved review: {p}" for p in problems])
    items, records, applied = apply(state, items, records, unquoted)
    # pending stories of other runs written since: their ADO items (shared/indexing/pending.py)
    records, _ = pending.resolve(svc, records)
    return ReviewedRun(run, items, records, state, etag, applied)


def plan_run(
    svc: Services,
    run_id: str,
    decisions: Mapping[str, Any] | None = None,
    process: Process = AGILE,
    *,
    requester: str | None = None,
    now: datetime | None = None,
) -> Plan:
    """The plan of the edited backlog for ``process``. The saved review's decisions are the
    defaults; those of the request (``decisions``) override them story by story. Each entry
    records who decided: the review's saved_by / saved_at for a decision that came from it, else
    ``requester`` at ``now`` (the write's time)."""
    reviewed = reviewed_run(svc, run_id)
    state = reviewed.state
    chosen: Any = decisions
    if decisions is None or isinstance(decisions, Mapping):
        chosen = {**state.decisions, **(decisions or {})}
    plan = build_plan(run_id, reviewed.items, reviewed.records, chosen, process)
    now = now or svc.clock()
    requested = set(decisions or ()) if isinstance(decisions, Mapping) else set()
    for entry in plan.items:
        if entry.item_id in state.decisions and entry.item_id not in requested:
            entry.decided_by, entry.decided_at = state.saved_by, state.saved_at
        else:
            entry.decided_by, entry.decided_at = requester, now
    return plan


def project_process(settings: Any, client: WorkItemReader | None) -> Process | None:
    """The process to write for: AZURE_DEVOPS_PROCESS, else the one ``client``'s project has
    (detected once per client); None without either. Raises ProcessError (a project whose types
    say nothing) and AdoError (detection could not ask ADO)."""
    chosen = processes.configured(settings)
    if chosen is not None or client is None:
        return chosen
    return processes.detect(client)


# ------------------------------------------------------------------------------------------------
# writing


def new_write_id(svc: Services, run_id: str) -> str:
    """The run's n-th write and its time: ``w-0001-20260101T120000Z`` (sorts in order; taken under
    the run's lease, so two writes never get the same one)."""
    n = len(write_ids(svc, run_id)) + 1
    return f"w-{n:04d}-" + svc.clock().strftime("%Y%m%dT%H%M%SZ")


def write_run(
    svc: Services,
    run_id: str,
    client: WorkItemWriter | None,
    *,
    decisions: Mapping[str, Any] | None = None,
    dry_run: bool = False,
    allow_empty_backlog: bool = False,
    requester: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Plan (``dry_run``) or write a completed run, with its saved review applied; the response
    body of POST .../write. ``requester``: who asks (each result's ``decided_by`` when the
    decision did not come from the saved review).

    ``client`` (an AdoClient) may be None for a dry run: the plan is then not checked against ADO.
    Raises UnknownRun, RunNotWritable, InvalidDecisions, WriteInProgress; EmptyBacklogRefused
    when the run's project had no indexed backlog and the plan creates something (unless
    ``allow_empty_backlog``); ValueError when a write has no client; ProcessError or AdoError
    when a write cannot tell the project's process (a dry run then plans as for the processes
    with features, says ``"process": null`` and why in ``ado_error``).
    """
    now = svc.clock()
    stopped: str | None = None
    try:
        process = project_process(svc.settings, client)
    except (AdoError, ProcessError) as err:
        if not dry_run:
            raise
        process, stopped = None, str(err)
    plan = plan_run(svc, run_id, decisions, process or AGILE, requester=requester, now=now)
    run = load_run(svc, run_id)
    empty = next((w for w in run.warnings if w.code == "empty_index"), None)
    if dry_run:
        if client is not None and stopped is None:
            stopped = preview(plan, client)
        body: dict[str, Any] = {
            "run_id": run_id,
            "dry_run": True,
            "checked_against_ado": client is not None and stopped is None,
            "process": process.name if process else None,
            "plan": plan.view(),
            "counts": plan.counts(),
            "warnings": [w.model_dump() for w in run.warnings],
        }
        if stopped:
            body["ado_error"] = stopped
        return body
    if empty is not None and not allow_empty_backlog and plan.counts()["create"]:
        raise EmptyBacklogRefused(
            f"{empty.message} Writing would create {plan.counts()['create']} items without "
            'comparing them with any backlog: send "allow_empty_backlog": true (CLI: '
            "--allow-empty-backlog) to write anyway."
        )
    if client is None or process is None:
        raise ConfigurationError("writing to Azure DevOps needs a client (AZURE_DEVOPS_* settings)")
    write_id = ""  # set under the leases

    def flush(results: list[WriteResult]) -> None:
        data = dump_jsonl(results)
        svc.store.put(layout.write_results_part(run_id, write_id), data, "application/x-ndjson")
        svc.store.put(layout.ado_write_results(run_id), data, "application/x-ndjson")

    def on_result(result: WriteResult, results: list[WriteResult]) -> None:
        if result.status in ("created", "modified"):
            flush(results)

    with ado_write_locks(svc, run_id):
        # planned again under the lease: a retag of the run may just have ended
        plan = plan_run(svc, run_id, decisions, process or AGILE, requester=requester, now=now)
        write_id = new_write_id(svc, run_id)
        writer = Writer(
            client,
            run_id=run_id,
            write_id=write_id,
            sleep=sleep,
            clock=svc.clock,
            on_result=on_result,
        )
        index_update: dict[str, Any] | None = None
        try:
            results = writer.run(plan)
            # the project's index follows what was written (shared/indexing/writes.py)
            index_update = writes.after_write(svc, run_id, run.project, client, process, results)
        finally:
            flush(writer.results)
    log.info("write %s of run %s (%s): %s", write_id, run_id, process.name, counts(results))
    return {
        **results_body(run_id, write_id, results, dry_run=False),
        "process": process.name,
        "index_update": index_update,
    }


def results_body(
    run_id: str, write_id: str | None, results: list[WriteResult], *, dry_run: bool | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"run_id": run_id}
    if dry_run is not None:
        body["dry_run"] = dry_run
    body.update(
        {
            "write_id": write_id,
            "results": [r.model_dump(mode="json") for r in results],
            "counts": counts(results),
            "created_ids": [i for r in results for i in r.created_ids],
            "modified_ids": [i for r in results for i in r.modified_ids],
        }
    )
    return body


def write_ids(svc: Services, run_id: str) -> list[str]:
    return [layout.unit_of(p) for p in svc.store.list(layout.write_results_prefix(run_id))]


def latest_write(svc: Services, run_id: str) -> dict[str, Any]:
    """GET .../write: the latest write's results (``results: []`` and ``write_id: null`` when the
    run was never written) and the ids of every write (``writes``, oldest first). The caller has
    loaded the run (an unknown run is its 404)."""
    try:
        results = read_jsonl(svc.store, layout.ado_write_results(run_id), WriteResult)
    except NotFound:
        results = []
    body = results_body(run_id, results[0].write_id if results else None, results, dry_run=None)
    body["writes"] = write_ids(svc, run_id)
    return body
