"""Run lifecycle: starting a run from an upload, reading and changing its status, recording errors,
and running a failed run again (attempts).

``run.json`` changes only at phase transitions, always through ``update_run`` (read, change, write
under the ETag just read; on a conflict read again). A terminal run never changes again, so a late or
duplicated message can never resurrect a finished run; the one exception is ``mark_retried``, which
only sets ``retried_by`` on a failed or completed_with_errors run, under the same ETag condition.

Attempts. The first run of an upload has the id ``make_run_id(blob path, sha256:size)``: the same
upload never starts two runs. A ``failed`` or ``completed_with_errors`` run can be run again
(``retry_run``: POST /api/runs/{run_id}/retry, ``python -m shared.cli retry``) from its stored
upload with the current settings; the new attempt's id is ``make_attempt_id(old run id, attempt)``,
created once, so a duplicated or concurrent retry finds the same attempt instead of starting a
second. The new run records ``retry_of`` and ``attempt``, the old one ``retried_by``: the attempts
of an upload form a chain from its first run, whose last link is its newest attempt.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import yaml

from shared import PIPELINE_VERSION, layout
from shared.bus import SEGMENT_QUEUE
from shared.errors import SynthesizerError, error_record
from shared.ids import (
    InvalidIdentifier,
    check_project,
    check_upload_name,
    content_sha256,
    make_attempt_id,
    make_run_id,
    normalize_etag,
)
from shared.llm.config import run_model_label
from shared.models import (
    RETRYABLE_STATES,
    TERMINAL_STATES,
    ErrorRecord,
    Message,
    RunStatus,
    SegmentMessage,
)
from shared.services import Services
from shared.storage import (
    LeaseHeld,
    NotFound,
    PreconditionFailed,
    create_model,
    dump_jsonl,
    dump_model,
    read_model,
    read_model_or_none,
)
from shared.text.textio import UnreadableInput, extract_text, file_extension, normalize

log = logging.getLogger(__name__)


class UnknownRun(SynthesizerError, LookupError):
    """No run.json for the run id."""


def load_run(svc: Services, run_id: str) -> RunStatus:
    try:
        return read_model(svc.store, layout.run_json(run_id), RunStatus)
    except NotFound:
        raise UnknownRun(run_id) from None


def update_run(
    svc: Services, run_id: str, change: Callable[[RunStatus], RunStatus | None]
) -> RunStatus:
    """Apply ``change`` to the current status under an ETag condition; ``None`` means no change.

    Terminal runs are never changed.
    """
    path = layout.run_json(run_id)
    for _ in range(50):
        data, etag = svc.store.get_with_etag(path)
        current = RunStatus.model_validate_json(data)
        if current.status in TERMINAL_STATES:
            return current
        updated = change(current.model_copy(deep=True))
        if updated is None or updated == current:
            return current
        updated.updated_at = svc.clock()
        try:
            svc.store.replace_if_match(path, dump_model(updated), etag)
            return updated
        except PreconditionFailed:
            continue
    raise PreconditionFailed(f"{path}: gave up after 50 conflicting updates")


class OutboxBusy(SynthesizerError, RuntimeError):
    """Another delivery of the same message is sending this step's messages; retry later."""


OUTBOX_LEASE_SECONDS = 15  # the shortest blob lease Azure grants


def send_once(
    svc: Services,
    run_id: str,
    step: str,
    messages: Sequence[tuple[str, Message]],
    *,
    wait_seconds: float = OUTBOX_LEASE_SECONDS + 5,
    exclusive: bool = True,
    unsent: bool = False,
) -> bool:
    """Send a step's downstream messages exactly once per step (outbox pattern).

    A lease serializes concurrent deliveries of the same message; the marker, written after the
    sends, tells later deliveries the work is done. A crash between the sends and the marker re-sends
    on redelivery (harmless: every handler is idempotent), so nothing is ever lost.

    A delivery that finds the lease held waits for the marker, and keeps trying to take the lease
    itself: the holder may have crashed (a killed host never releases it), and then the lease
    expires within ``OUTBOX_LEASE_SECONDS`` and this delivery does the sending. Waiting longer than
    the lease (``wait_seconds``) means a redelivery after a crash succeeds instead of failing with
    OutboxBusy and burning one of the message's dequeues (a segment message that runs out of them
    fails the whole run).

    ``exclusive=False`` skips the lease: the marker is checked, the messages sent, the marker
    written. Two deliveries running at the same moment may then both send (at least once, as
    after a crash above), which is for steps whose duplicates cost little: a generation unit's tag
    messages (a duplicate tag unit finds the tag part, or at worst repeats one tagging call whose
    second write is refused). It saves four round trips per step (the lock blob, the lease taken
    and released, the check under it), on the run's critical path.

    ``unsent`` (with ``exclusive=False``): the caller knows that no delivery has sent them yet
    (it has just created the output the messages come from, create-once), so the marker is not
    looked for; another delivery running at the same moment may still send them too, as above.
    """
    marker = layout.outbox(run_id, step)
    if not exclusive:
        return _send_unless_marked(svc, marker, messages, check=not unsent)
    deadline = time.monotonic() + wait_seconds
    while True:
        if svc.store.exists(marker):
            return False
        try:
            with svc.store.lease(marker + ".lock", seconds=OUTBOX_LEASE_SECONDS):
                return _send_unless_marked(svc, marker, messages)
        except LeaseHeld:
            if time.monotonic() >= deadline:
                raise OutboxBusy(
                    f"{run_id}: step {step} is being sent by another delivery"
                ) from None
            time.sleep(0.1)


def _send_unless_marked(
    svc: Services, marker: str, messages: Sequence[tuple[str, Message]], *, check: bool = True
) -> bool:
    if check and svc.store.exists(marker):
        return False
    for queue, message in messages:
        svc.bus.send(queue, message)
    svc.store.put(marker, f"{len(messages)}\n".encode())
    return True


def record_error(svc: Services, error: ErrorRecord) -> bool:
    """One error part per failed unit (create-once: a redelivered failure is not counted twice)."""
    path = layout.error_part(error.run_id, error.phase, error.unit_id)
    return create_model(svc.store, path, error)


def read_errors(svc: Services, run_id: str) -> list[ErrorRecord]:
    phase_order = {"start": 0, "segment": 1, "generate": 2, "tag": 3, "finalize": 4}
    errors = []
    for path in svc.store.list(layout.error_parts_prefix(run_id)):
        try:
            errors.append(read_model(svc.store, path, ErrorRecord))
        except NotFound:
            continue
    return sorted(errors, key=lambda e: (phase_order[e.phase], e.unit_id))


def last_attempt_error(svc: Services, run_id: str, phase: str, unit_id: str) -> str:
    try:
        return svc.store.get(layout.attempt_part(run_id, phase, unit_id)).decode()
    except NotFound:
        return "no error was recorded by the failing attempts"


def abort_run(svc: Services, run_id: str, error: ErrorRecord) -> RunStatus:
    """End a run as failed: the error is recorded, errors.jsonl written, the reason in run.json."""
    record_error(svc, error)
    errors = read_errors(svc, run_id)
    svc.store.put(layout.run_errors(run_id), dump_jsonl(errors))

    def fail(run: RunStatus) -> RunStatus:
        run.status = "failed"
        run.phase = "failed"
        run.failure_reason = f"{error.phase}: {error.message}"
        run.error_count = len(errors)
        run.completed_at = svc.clock()
        return run

    failed = update_run(svc, run_id, fail)
    # the run's root observation, once per run, shows why it ended
    trace_run_end(
        svc,
        failed,
        error=f"{error.phase}: {error.message}"[:500],
        segment_count=failed.segment_count or 0,
        error_count=failed.error_count,
    )
    return failed


TRACE_ROOT_STEP = "trace_root"


def trace_run_end(svc: Services, run: RunStatus, **metrics: object) -> bool:
    """Write the run's root observation ``synthesis_run`` (seed §12) once per run, when it has
    ended: finalize and an aborted run both call this, and a duplicate delivery of either finds
    the create-once marker ``parts/outbox/trace_root.sent`` and writes nothing. True when this call
    wrote it. Tracing never fails the pipeline: a store error here is logged and ignored."""
    tracer = svc.tracer
    if not getattr(tracer, "enabled", True):
        return False
    try:
        if not svc.store.create(layout.outbox(run.run_id, TRACE_ROOT_STEP), b"1\n"):
            return False
    except Exception:  # noqa: BLE001 - tracing must never fail the pipeline
        log.warning("could not record the trace root of %s", run.run_id, exc_info=True)
        return False
    metadata: dict[str, object] = {
        "project": run.project,
        "source_name": run.source_name,
        "status": run.status,
        "engine": run.engine,
        "model": run.model or "",
        "embedding_model": run.embedding_model,
        **metrics,
    }
    run_root = getattr(tracer, "run_root", None)
    if run_root is not None:
        run_root(
            run.run_id,
            started_at=run.created_at,
            ended_at=run.completed_at or svc.clock(),
            **metadata,
        )
    else:  # a tracer without run_root (a test's recorder): a plain span
        with tracer.span(run.run_id, "synthesis_run", **metadata):
            pass
    return True


# ------------------------------------------------------------------------------------------------
# start


def parse_transcript_path(blob_path: str) -> tuple[str, str]:
    """'transcripts/{project}/{name}' -> (project, name). Raises InvalidIdentifier."""
    container, _, rest = blob_path.partition("/")
    project, _, name = rest.partition("/")
    if container != layout.TRANSCRIPTS_CONTAINER or not project or not name:
        raise InvalidIdentifier(
            f"transcripts must be uploaded as {layout.transcript_drop('{project}', '{file}')}, "
            f"got {blob_path!r}"
        )
    check_project(project)
    check_upload_name(name.rsplit("/", 1)[-1])
    return project, name


def start_run(
    svc: Services,
    blob_path: str,
    data: bytes,
    *,
    size: int | None = None,
    etag: str | None = None,
) -> RunStatus:
    """The blob trigger's (and POST /api/runs') handler. Idempotent: same upload, same run.

    ``data`` may be a prefix of the upload when ``size`` says it is over the limit: an oversized file
    is rejected without reading or copying it.

    ``etag`` is the ETag of the blob version the bytes came from (the trigger's ``blob_properties``,
    or what the upload's own write answered), recorded as ``source_etag``. For the same path and
    bytes as an existing run:

    - no ETag given, or no ETag recorded on any attempt of the upload, or the ETag of one of them
      (a duplicate event), or the newest attempt is not failed / completed_with_errors: nothing
      starts; the answer is the newest attempt (its start message re-sent while it has not ended);
    - a new ETag (the same bytes uploaded again) while the newest attempt failed or completed with
      errors: a new attempt of it (``retry_of`` = that attempt), as ``retry_run`` would start. A
      duplicate event for the new version finds it by its ETag and starts nothing.
    """
    size = len(data) if size is None else size
    etag = normalize_etag(etag)
    run_id = make_run_id(blob_path, f"{content_sha256(data)}:{size}")
    existing = read_model_or_none(svc.store, layout.run_json(run_id), RunStatus)
    if existing is None:
        return _start_attempt(svc, run_id, blob_path, data, size, source_etag=etag)[0]
    chain = attempts(svc, existing)
    latest = chain[-1]
    known = {r.source_etag for r in chain if r.source_etag}
    if etag and known and etag not in known and latest.status in RETRYABLE_STATES:
        attempt = latest.attempt + 1
        run, created = _start_attempt(
            svc,
            make_attempt_id(latest.run_id, attempt),
            blob_path,
            data,
            size,
            retry_of=latest.run_id,
            attempt=attempt,
            source_etag=etag,
        )
        mark_retried(svc, latest.run_id, run.run_id)
        if created:
            log.info("run %s: %s uploaded again, attempt %d", run.run_id, blob_path, attempt)
        return run
    if latest.status not in TERMINAL_STATES:
        send_once(
            svc, latest.run_id, "start", [(SEGMENT_QUEUE, SegmentMessage(run_id=latest.run_id))]
        )
    return latest


def _start_attempt(
    svc: Services,
    run_id: str,
    blob_path: str,
    data: bytes,
    size: int,
    *,
    retry_of: str | None = None,
    attempt: int = 1,
    source_etag: str | None = None,
) -> tuple[RunStatus, bool]:
    """Create run ``run_id`` from the upload and send its start message: (the run, whether this call
    created it). Every artifact is written create-once and ``run.json`` last, so two calls for the
    same id (a duplicated event or retry) leave one run and send one start message."""
    settings = svc.settings
    now = svc.clock()
    name = blob_path.rsplit("/", 1)[-1]
    project = blob_path.split("/")[1] if blob_path.count("/") >= 2 else ""
    run = RunStatus(
        run_id=run_id,
        project=project,
        source_path=blob_path,
        source_name=name,
        content_sha256=content_sha256(data),
        size_bytes=size,
        status="queued",
        phase="queued",
        engine=settings.resolved_engine(),
        model=run_model_label(settings),
        embedding_model=_embedding_model_name(svc),
        created_at=now,
        updated_at=now,
        versions={"pipeline": PIPELINE_VERSION},
        attempt=attempt,
        retry_of=retry_of,
        source_etag=source_etag,
    )

    limit = settings.pipeline.limits.max_upload_bytes
    try:
        project, name = parse_transcript_path(blob_path)
        if size > limit:
            raise UnreadableInput(
                f"the file is {size:,} bytes, over the limit of {limit:,} bytes "
                f"({limit / 1048576:.0f} MiB); split it or raise SYNTH_PIPELINE__LIMITS__MAX_UPLOAD_BYTES"
            )
        text = normalize(extract_text(data, file_extension(name)))
    except (InvalidIdentifier, UnreadableInput) as err:
        return _reject(svc, run, str(err))

    # the hygiene gate: everything downstream reads transcript.txt, so it holds the sanitized
    # text; the raw upload (kept as uploaded) is the only artifact that may hold a secret
    from shared.text.hygiene import apply_gate  # imported on first use: cold start

    gate = apply_gate(text, settings.pipeline.hygiene)
    run.redacted_secrets = gate.report.redaction_count
    run.instruction_annotations = gate.report.annotation_count
    ext = file_extension(name)
    svc.store.create(layout.upload(run_id, ext), data)
    svc.store.create(layout.hygiene_report(run_id), dump_model(gate.report))
    svc.store.create(layout.transcript(run_id), gate.text.encode())
    if settings.pipeline.observability.store_config_snapshot:
        snapshot = settings.snapshot()
        snapshot["run"] = {"run_id": run_id, "pipeline_version": PIPELINE_VERSION}
        if retry_of:
            snapshot["run"].update({"retry_of": retry_of, "attempt": attempt})
        svc.store.create(
            layout.config_snapshot(run_id),
            yaml.safe_dump(snapshot, sort_keys=False).encode(),
        )
    created = create_model(svc.store, layout.run_json(run_id), run)
    if not created:
        run = load_run(svc, run_id)
    if run.status not in TERMINAL_STATES:
        send_once(svc, run_id, "start", [(SEGMENT_QUEUE, SegmentMessage(run_id=run_id))])
    if created:
        log.info("run %s started for %s (%d bytes)", run_id, blob_path, size)
    return run, created


def _embedding_model_name(svc: Services) -> str:
    backend = svc.settings.resolved_embedder()
    if backend == "minilm":
        from shared.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder.model_name
    return svc.settings.pipeline.embedding.model


def _reject(svc: Services, run: RunStatus, reason: str) -> tuple[RunStatus, bool]:
    """A bad upload becomes a failed run with the reason: visible in run.json and the status API."""
    error = error_record(
        run.run_id,
        "start",
        run.run_id,
        "UnreadableInput",
        message=reason,
        outcome="aborted",
        timestamp=svc.clock(),
    )
    record_error(svc, error)
    svc.store.put(layout.run_errors(run.run_id), dump_jsonl([error]))
    run.status = "failed"
    run.phase = "failed"
    run.failure_reason = f"start: {reason}"
    run.error_count = 1
    run.completed_at = run.created_at
    if not create_model(svc.store, layout.run_json(run.run_id), run):
        return load_run(svc, run.run_id), False
    log.warning("run %s rejected: %s", run.run_id, reason)
    return run, True


# ------------------------------------------------------------------------------------------------
# attempts: running a failed run again

MAX_ATTEMPTS = 100  # a chain is walked at most this far (a guard, not a policy)


class RunNotRetryable(SynthesizerError, RuntimeError):
    """Only a failed or completed_with_errors run can be run again."""

    def __init__(self, run: RunStatus) -> None:
        self.run = run
        if run.status == "completed":
            why = "it completed without errors; there is nothing to run again"
        else:
            why = "it has not ended yet: wait for it to end"
        super().__init__(
            f"run {run.run_id} is {run.status}: only a failed or completed_with_errors run can be "
            f"run again, and {why}"
        )


class UploadMissing(SynthesizerError, LookupError):
    """The run's upload is no longer stored (or never was), so it cannot be run again from it.
    ``status``: the run's status."""

    def __init__(self, message: str, *, status: str | None = None) -> None:
        super().__init__(message)
        self.status = status


def next_attempt(svc: Services, run: RunStatus) -> RunStatus | None:
    """The attempt that ran ``run`` again, if any. ``retried_by`` names it; a retry cut short before
    it set ``retried_by`` (or a plain overwrite of run.json that lost it) is found by its derived id,
    and ``retried_by`` repaired."""
    if run.retried_by:
        found = read_model_or_none(svc.store, layout.run_json(run.retried_by), RunStatus)
        if found is not None:
            return found
    if run.status not in RETRYABLE_STATES:
        return None
    derived = make_attempt_id(run.run_id, run.attempt + 1)
    found = read_model_or_none(svc.store, layout.run_json(derived), RunStatus)
    if found is not None and run.retried_by != derived:
        mark_retried(svc, run.run_id, derived)
    return found


def attempts(svc: Services, run: RunStatus) -> list[RunStatus]:
    """``run`` and every later attempt of it, oldest first: the last one is the newest attempt."""
    chain, seen = [run], {run.run_id}
    while len(chain) < MAX_ATTEMPTS:
        found = next_attempt(svc, chain[-1])
        if found is None or found.run_id in seen:
            break
        chain.append(found)
        seen.add(found.run_id)
    return chain


def mark_retried(svc: Services, run_id: str, retried_by: str) -> RunStatus:
    """Record on run ``run_id`` (failed or completed_with_errors, so terminal: ``update_run`` would
    leave it alone) that ``retried_by`` runs it again. Only this field (and ``updated_at``) changes,
    under the ETag just read; set once: an attempt's successor id is derived, so setting it again
    is a no-op, and a different value already there is kept (the first attempt created wins)."""
    path = layout.run_json(run_id)
    for _ in range(50):
        data, etag = svc.store.get_with_etag(path)
        current = RunStatus.model_validate_json(data)
        if current.retried_by == retried_by:
            return current
        if current.retried_by is not None:
            log.warning(
                "run %s is already retried by %s, not %s", run_id, current.retried_by, retried_by
            )
            return current
        if current.status not in RETRYABLE_STATES:
            raise RunNotRetryable(current)
        updated = current.model_copy(update={"retried_by": retried_by, "updated_at": svc.clock()})
        try:
            svc.store.replace_if_match(path, dump_model(updated), etag)
            return updated
        except PreconditionFailed:
            continue
    raise PreconditionFailed(f"{path}: gave up after 50 conflicting updates")


def stored_upload(svc: Services, run: RunStatus) -> bytes:
    """The bytes ``run`` was started from: its copy ``uploads/{run_id}/raw.{ext}``, or, for a run
    refused at start (which keeps no copy), the dropped blob itself while it still holds the same
    bytes. UploadMissing otherwise."""
    try:
        return svc.store.get(layout.upload(run.run_id, file_extension(run.source_name)))
    except NotFound:
        pass
    try:
        data = svc.store.get(run.source_path)
    except (NotFound, ValueError):
        data = None
    if (
        data is not None
        and len(data) == run.size_bytes
        and content_sha256(data) == run.content_sha256
    ):
        return data
    raise UploadMissing(
        f"run {run.run_id} cannot be run again: its upload is no longer stored "
        f"(uploads/{run.run_id}/ is empty and {run.source_path} holds other bytes or is gone); "
        "upload the file again",
        status=run.status,
    )


def retry_run(svc: Services, run_id: str) -> tuple[RunStatus, bool]:
    """Run a failed or completed_with_errors run again: a new attempt from its stored upload, with
    the current settings. Returns (the attempt, whether this call started it).

    - UnknownRun: no such run; RunNotRetryable: it is queued, running or completed;
      UploadMissing: its upload is gone.
    - Idempotent: the attempt's id is ``make_attempt_id(run_id, attempt + 1)`` and its ``run.json``
      is created once, so a duplicated or concurrent retry of the same run answers the same
      attempt (``False``: not started by this call), never a second one. A run that already has
      an attempt (``retried_by``) answers that attempt, whatever it became: to run it again after
      it failed too, retry it (the newest attempt); that makes attempt 3, and so on.
    """
    old = load_run(svc, run_id)
    if old.status not in RETRYABLE_STATES:
        raise RunNotRetryable(old)
    existing = next_attempt(svc, old)
    if existing is not None:
        return existing, False
    data = stored_upload(svc, old)
    attempt = old.attempt + 1
    run, created = _start_attempt(
        svc,
        make_attempt_id(old.run_id, attempt),
        old.source_path,
        data,
        len(data),
        retry_of=old.run_id,
        attempt=attempt,
        source_etag=old.source_etag,
    )
    mark_retried(svc, old.run_id, run.run_id)
    if created:
        log.info("run %s: attempt %d of %s", run.run_id, attempt, old.run_id)
    return run, created
