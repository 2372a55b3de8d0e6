"""Command line: ``python -m shared.cli <command>``.

run          a transcript through the same handlers in-process (local folder or Azurite store,
             in-process queue); prints the run id and where the artifacts are
load-backlog an ADO export (.csv / REST .json / normalized .jsonl), or the REST API, into the index
             (the same load as ``python -m loaders.ado_loader``)
load-docs    architecture documents (.md .txt .pdf .docx) into the index
             (the same load as ``python -m loaders.arch_loader``)
status       a run's status
pull         a run's artifacts into a folder
tree         a completed run's backlog as a tree
write        a completed run (its saved review applied) into Azure DevOps:
             ``write RUN_ID [--dry-run] [--decisions FILE] [--by NAME]``
             (AZURE_DEVOPS_ORG_URL, AZURE_DEVOPS_PROJECT, AZURE_DEVOPS_PAT; shared/writer)
rollback     undo a write: ``rollback RUN_ID [--write-id W] [--dry-run]`` (the latest write by
             default; created items deleted, patches reverted, items changed since left alone)
export       a completed run (its saved review applied) as a file:
             ``export RUN_ID --format csv|md [--out DIR] [-o FILE]`` (shared/export.py)
retag        tag a completed run's stories again against the current index
sync         the project's index up to date with what changed in Azure DevOps since the last
             sync: ``sync [--project P] [--full] [--json]`` (shared/indexing/sync.py)
retry        run a failed (or completed_with_errors) run again from its stored upload, with the
             current settings, in-process like ``run``: ``retry RUN_ID [--out DIR]``
eval         evaluation: ``eval tagging DIR``, ``eval segmentation [GOLD]``, ``eval judge RUN_ID``
             (shared/eval/commands.py)

The store is chosen by the settings: the local folder (``SYNTH_LOCAL_STORE_DIR``, default
``.data/store``) unless ``AzureWebJobsStorage`` is set.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared import layout
from shared.settings import Settings

if TYPE_CHECKING:
    from shared.ado.client import AdoClient
    from shared.models import RunStatus


def _services(settings: Settings, workers: int | None = None) -> Any:
    from shared.bus.memory import InProcessBus
    from shared.pipeline import bind_in_process
    from shared.services import build_services

    bus = InProcessBus(workers=workers or settings.workers)
    svc = build_services(settings, bus=bus)
    bind_in_process(bus, svc)
    return svc, bus


def pull(svc: Any, run_id: str, dest: Path) -> Path:
    """Copy a run's top-level artifacts (not its parts) to ``dest/run_id``."""
    target = dest / run_id
    target.mkdir(parents=True, exist_ok=True)
    for name in svc.store.children(layout.run_prefix(run_id)):
        path = layout.run_file(run_id, name)
        if not svc.store.exists(path):
            continue  # a folder such as parts/
        (target / name).write_bytes(svc.store.get(path))
    return target


def _tree_text(svc: Any, run_id: str) -> str:
    from shared.api import get_backlog
    from shared.backlog_tree import render_tree

    response = get_backlog(svc, run_id)
    if response.status != 200:
        return response.json().get("error", "")
    return render_tree(response.json())


def cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    from shared.ids import check_project
    from shared.pipeline.runs import load_run, start_run

    check_project(args.project)
    source = Path(args.file)
    if not source.is_file():
        print(f"error: {source} is not a file", file=sys.stderr)
        return 2
    svc, bus = _services(settings, args.workers)
    data = source.read_bytes()
    blob_path = f"transcripts/{args.project}/{source.name}"
    etag = svc.store.put(blob_path, data)  # the same path a blob drop would use
    run = start_run(svc, blob_path, data, etag=etag)
    bus.drain()
    return _report(svc, load_run(svc, run.run_id), args)


def _report(svc: Any, run: RunStatus, args: argparse.Namespace) -> int:
    """Pull a finished run's artifacts to ``--out`` and print what ``run`` and ``retry`` print."""
    out = pull(svc, run.run_id, Path(args.out))
    if args.json:
        line: dict[str, Any] = {"run_id": run.run_id, "status": run.status, "path": str(out)}
        if run.failure_reason:
            line["failure_reason"] = run.failure_reason
        if run.retry_of:
            line.update({"retry_of": run.retry_of, "attempt": run.attempt})
        print(json.dumps(line))
    else:
        print(f"run_id: {run.run_id}")
        if run.retry_of:
            print(f"attempt: {run.attempt} (runs {run.retry_of} again)")
        print(f"status: {run.status}" + (f" ({run.failure_reason})" if run.failure_reason else ""))
        print(f"artifacts: {out}")
        if args.tree and run.status != "failed":
            print()
            print(_tree_text(svc, run.run_id))
    return 0 if run.status in ("completed", "completed_with_errors") else 1


def cmd_retry(args: argparse.Namespace, settings: Settings) -> int:
    """A new attempt of a failed run, driven in-process (the same handlers and queue as ``run``)."""
    from shared.ids import check_run_id
    from shared.pipeline.runs import (
        RunNotRetryable,
        UnknownRun,
        UploadMissing,
        load_run,
        retry_run,
    )

    check_run_id(args.run_id)
    svc, bus = _services(settings, args.workers)
    try:
        run, started = retry_run(svc, args.run_id)
    except UnknownRun:
        print(f"error: run {args.run_id} not found", file=sys.stderr)
        return 1
    except (RunNotRetryable, UploadMissing) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if not started:
        print(
            f"note: run {args.run_id} was already run again as {run.run_id} "
            f"(attempt {run.attempt}); nothing new started",
            file=sys.stderr,
        )
    bus.drain()
    return _report(svc, load_run(svc, run.run_id), args)


def cmd_load_backlog(args: argparse.Namespace, settings: Settings) -> int:
    """The same load as ``python -m loaders.ado_loader`` (one code path)."""
    from loaders.ado_loader import load_backlog
    from shared.ado.errors import AdoError
    from shared.ado.process import ProcessError
    from shared.indexing.backlog import IndexBusy

    svc, _ = _services(settings)
    try:
        summary = load_backlog(
            svc, args.project, file=args.file, prune=not args.no_prune, rebuild=args.rebuild
        )
    except (AdoError, ProcessError, OSError, IndexBusy) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(summary.as_dict()))
    return 1 if summary.errors else 0


def cmd_load_docs(args: argparse.Namespace, settings: Settings) -> int:
    """The same load as ``python -m loaders.arch_loader`` (one code path)."""
    from loaders.arch_loader import load_documents

    svc, _ = _services(settings)
    summary = load_documents(
        svc,
        args.project,
        args.paths,
        prune=False if args.no_prune else None,
        rebuild=args.rebuild,
    )
    print(json.dumps(summary.as_dict()))
    return 1 if summary.errors else 0


def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    from shared.api import get_run

    svc, _ = _services(settings)
    response = get_run(svc, args.run_id)
    print(json.dumps(response.json(), indent=2))
    return 0 if response.status == 200 else 1


def cmd_pull(args: argparse.Namespace, settings: Settings) -> int:
    from shared.ids import check_run_id
    from shared.pipeline.runs import UnknownRun, load_run

    svc, _ = _services(settings)
    try:
        load_run(svc, check_run_id(args.run_id))
    except UnknownRun:
        print(f"error: run {args.run_id} not found", file=sys.stderr)
        return 1
    print(pull(svc, args.run_id, Path(args.dir)))
    return 0


def cmd_tree(args: argparse.Namespace, settings: Settings) -> int:
    svc, _ = _services(settings)
    print(_tree_text(svc, args.run_id))
    return 0


def _read_decisions(path: str) -> Any:
    """A decisions file: ``{story_id: decision}``, or an object with a ``decisions`` key."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict) and isinstance(data.get("decisions"), dict):
        return data["decisions"]
    return data


def _ado_client(settings: Settings, *, dry_run: bool) -> tuple[AdoClient | None, bool]:
    """The ADO client, or None when ADO is not configured: fine for a dry run (said on stderr),
    an error otherwise (``configured`` False: exit 2)."""
    from shared.ado.client import AdoClient
    from shared.errors import ConfigurationError

    try:
        return AdoClient.from_settings(settings), True
    except ConfigurationError as err:
        if not dry_run:
            print(f"error: {err}", file=sys.stderr)
            return None, False
        print(f"note: not checked against Azure DevOps ({err})", file=sys.stderr)
        return None, True


def cmd_write(args: argparse.Namespace, settings: Settings) -> int:
    from shared.ado.errors import AdoError
    from shared.ado.process import ProcessError
    from shared.ids import check_run_id
    from shared.pipeline.runs import UnknownRun
    from shared.writer.plan import InvalidDecisions
    from shared.writer.report import render_write
    from shared.writer.runs import EmptyBacklogRefused, RunNotWritable, WriteInProgress, write_run

    check_run_id(args.run_id)
    decisions = None
    if args.decisions:
        try:
            decisions = _read_decisions(args.decisions)
        except (OSError, ValueError) as err:
            print(f"error: cannot read the decisions file {args.decisions}: {err}", file=sys.stderr)
            return 2
    client, configured = _ado_client(settings, dry_run=args.dry_run)
    if not configured:
        return 2
    svc, _ = _services(settings)
    try:
        body = write_run(
            svc,
            args.run_id,
            client,
            decisions=decisions,
            dry_run=args.dry_run,
            allow_empty_backlog=args.allow_empty_backlog,
            requester=args.by or _os_user(),
        )
    except UnknownRun:
        print(f"error: run {args.run_id} not found", file=sys.stderr)
        return 1
    except InvalidDecisions as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (RunNotWritable, WriteInProgress, EmptyBacklogRefused, AdoError, ProcessError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            client.close()
    print(json.dumps(body, indent=2) if args.json else render_write(body))
    return 1 if body.get("counts", {}).get("failed") else 0


def cmd_rollback(args: argparse.Namespace, settings: Settings) -> int:
    """Exit 0 when everything is (or would be) rolled back, 1 when something stays (changed
    since the write, kept, failed) or the rollback is refused, 2 on bad input or no ADO."""
    from shared.ids import check_run_id
    from shared.pipeline.runs import UnknownRun
    from shared.writer.rollback import (
        NothingToRollBack,
        UnknownWrite,
        check_write_id,
        render_rollback,
        rollback_run,
    )
    from shared.writer.runs import WriteInProgress

    check_run_id(args.run_id)
    if args.write_id is not None:
        check_write_id(args.write_id)
    client, configured = _ado_client(settings, dry_run=args.dry_run)
    if not configured:
        return 2
    svc, _ = _services(settings)
    try:
        body = rollback_run(svc, args.run_id, client, write_id=args.write_id, dry_run=args.dry_run)
    except UnknownRun:
        print(f"error: run {args.run_id} not found", file=sys.stderr)
        return 1
    except (NothingToRollBack, UnknownWrite, WriteInProgress) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            client.close()
    print(json.dumps(body, indent=2) if args.json else render_rollback(body))
    counts = body["counts"]
    return 1 if counts["failed"] or counts["changed_since_write"] or counts["kept"] else 0


def cmd_sync(args: argparse.Namespace, settings: Settings) -> int:
    """Exit 0 when the sync completed, 1 when it completed with unreadable items, 2 when it
    failed or could not start (ADO not configured, another sync or a load of the project
    running); the watermark of a failed sync stays, so running it again resumes."""
    from shared.ado.errors import AdoError
    from shared.ado.process import ProcessError
    from shared.errors import ConfigurationError
    from shared.indexing.backlog import IndexBusy
    from shared.indexing.sync import scheduled_project, sync_project

    project = args.project or scheduled_project(settings)
    if not project:
        print(
            "error: give --project or set SYNTH_SYNC_PROJECT / AZURE_DEVOPS_PROJECT",
            file=sys.stderr,
        )
        return 2
    svc, _ = _services(settings)
    try:
        report = sync_project(svc, project, full=args.full)
    except (ConfigurationError, IndexBusy) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (AdoError, ProcessError, OSError, RuntimeError, ValueError) as err:
        print(f"error: the sync of {project} failed: {err}", file=sys.stderr)
        print("running it again resumes from the same watermark", file=sys.stderr)
        return 2
    if args.json:
        print(report.model_dump_json())
    else:
        counts = report.counts()
        print(
            f"sync {report.sync_id} of {project} ({'full' if report.full else 'since ' + str(report.watermark_from)}): "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
        )
        for error in report.errors:
            print(f"  error: {error.get('error')}")
        print(f"wrote {layout.sync_report(project, report.sync_id)}")
    return 1 if report.errors else 0


def _os_user() -> str:
    """Who runs the CLI, for ``decided_by`` (``--by`` overrides it)."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (some containers)
        return "unknown"


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from shared.export import export_run
    from shared.ids import check_run_id
    from shared.pipeline.runs import UnknownRun
    from shared.writer.plan import InvalidDecisions
    from shared.writer.runs import RunNotWritable

    check_run_id(args.run_id)
    svc, _ = _services(settings)
    try:
        data = export_run(svc, args.run_id, args.format)
    except UnknownRun:
        print(f"error: run {args.run_id} not found", file=sys.stderr)
        return 1
    except (RunNotWritable, InvalidDecisions) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    target = Path(args.output) if args.output else None
    if target is None and args.out:
        target = Path(args.out) / f"{args.run_id}.{args.format}"
    if target is None:
        sys.stdout.write(data.decode("utf-8"))
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    print(target)
    return 0


def cmd_retag(args: argparse.Namespace, settings: Settings) -> int:
    from shared.ids import check_run_id
    from shared.pipeline.runs import UnknownRun
    from shared.writer.report import render_retag
    from shared.writer.retag import retag_run
    from shared.writer.runs import RunNotWritable, WriteInProgress

    check_run_id(args.run_id)
    svc, _ = _services(settings)
    try:
        body = retag_run(svc, args.run_id)
    except UnknownRun:
        print(f"error: run {args.run_id} not found", file=sys.stderr)
        return 1
    except (RunNotWritable, WriteInProgress) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(json.dumps(body, indent=2) if args.json else render_retag(body))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m shared.cli", description=__doc__.split("\n\n")[0])
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a transcript in-process and write its artifacts")
    run.add_argument("file")
    run.add_argument("--project", required=True)
    run.add_argument("--out", default="out", help="artifacts go to OUT/<run_id>/ (default: out)")
    run.add_argument("--workers", type=int, default=None, help="parallel workers (default 4)")
    run.add_argument("--no-tree", dest="tree", action="store_false", help="don't print the tree")
    run.add_argument("--json", action="store_true", help="print one JSON line instead")
    run.set_defaults(func=cmd_run)

    lb = sub.add_parser(
        "load-backlog",
        help="load an ADO export file (or, without one, the REST API) into the index",
    )
    lb.add_argument("file", nargs="?", help="ADO CSV / REST JSON / .jsonl; omit for the REST API")
    lb.add_argument("--project", required=True)
    lb.add_argument("--no-prune", action="store_true", help="keep indexed items absent from FILE")
    lb.add_argument(
        "--rebuild", action="store_true", help="empty the namespace first (embedder changed)"
    )
    lb.set_defaults(func=cmd_load_backlog)

    ld = sub.add_parser("load-docs", help="load architecture documents into the index")
    ld.add_argument("paths", nargs="+")
    ld.add_argument("--project", required=True)
    ld.add_argument(
        "--no-prune", action="store_true", help="keep indexed documents missing from the folders"
    )
    ld.add_argument(
        "--rebuild", action="store_true", help="empty the namespace first (embedder changed)"
    )
    ld.set_defaults(func=cmd_load_docs)

    st = sub.add_parser("status", help="print a run's status")
    st.add_argument("run_id")
    st.set_defaults(func=cmd_status)

    pl = sub.add_parser("pull", help="copy a run's artifacts to DIR/<run_id>/")
    pl.add_argument("run_id")
    pl.add_argument("dir")
    pl.set_defaults(func=cmd_pull)

    tr = sub.add_parser("tree", help="print a completed run's backlog tree")
    tr.add_argument("run_id")
    tr.set_defaults(func=cmd_tree)

    wr = sub.add_parser("write", help="write a completed run into Azure DevOps (or plan it)")
    wr.add_argument("run_id")
    wr.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    wr.add_argument(
        "--decisions",
        metavar="FILE",
        help='JSON {story_id: "accept"|"skip"|"keep_existing"|"replace"|"both"}',
    )
    wr.add_argument("--json", action="store_true", help="print the JSON body instead of a table")
    wr.add_argument(
        "--allow-empty-backlog",
        action="store_true",
        help="write even though the run's project had no indexed backlog (all stories new)",
    )
    wr.add_argument(
        "--by",
        metavar="NAME",
        help="who decides, recorded as decided_by of the results (default: your OS user)",
    )
    wr.set_defaults(func=cmd_write)

    rb = sub.add_parser(
        "rollback", help="undo a write to Azure DevOps (delete what it created, revert patches)"
    )
    rb.add_argument("run_id")
    rb.add_argument("--write-id", help="the write to undo (default: the latest)")
    rb.add_argument(
        "--dry-run", action="store_true", help="list what would be done, change nothing"
    )
    rb.add_argument("--json", action="store_true", help="print the JSON body instead of a table")
    rb.set_defaults(func=cmd_rollback)
    sy = sub.add_parser(
        "sync", help="bring a project's index up to date with what changed in Azure DevOps"
    )
    sy.add_argument(
        "--project",
        help="index namespace (default: SYNTH_SYNC_PROJECT, else AZURE_DEVOPS_PROJECT)",
    )
    sy.add_argument(
        "--full", action="store_true", help="compare every item, not only those changed since"
    )
    sy.add_argument("--json", action="store_true", help="print the sync report as JSON")
    sy.set_defaults(func=cmd_sync)
    ex = sub.add_parser("export", help="a completed run's reviewed backlog as CSV or Markdown")
    ex.add_argument("run_id")
    ex.add_argument(
        "--format", required=True, choices=("csv", "md"), help="csv: ADO's CSV import; md: to read"
    )
    ex.add_argument("--out", metavar="DIR", help="write DIR/<run_id>.<format>")
    ex.add_argument("-o", "--output", metavar="FILE", help="write FILE (default: stdout)")
    ex.set_defaults(func=cmd_export)

    rt = sub.add_parser("retag", help="tag a completed run's stories again (current index)")
    rt.add_argument("run_id")
    rt.add_argument("--json", action="store_true", help="print the JSON body")
    rt.set_defaults(func=cmd_retag)

    ry = sub.add_parser(
        "retry", help="run a failed run again from its stored upload (current settings)"
    )
    ry.add_argument("run_id")
    ry.add_argument("--out", default="out", help="artifacts go to OUT/<run_id>/ (default: out)")
    ry.add_argument("--workers", type=int, default=None, help="parallel workers (default 4)")
    ry.add_argument("--no-tree", dest="tree", action="store_false", help="don't print the tree")
    ry.add_argument("--json", action="store_true", help="print one JSON line instead")
    ry.set_defaults(func=cmd_retry)

    from shared.eval.commands import add_parser as add_eval_commands

    add_eval_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from shared.errors import ConfigurationError
    from shared.ids import InvalidIdentifier

    try:
        return int(args.func(args, Settings()))
    except (InvalidIdentifier, ConfigurationError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
