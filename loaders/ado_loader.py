"""``python -m loaders.ado_loader``: the existing Azure DevOps backlog into the index (seed §2.1).

Sources:
- the REST API (``AZURE_DEVOPS_ORG_URL`` as a full URL, ``AZURE_DEVOPS_PROJECT``,
  ``AZURE_DEVOPS_PAT``): WIQL for the configured work item types (Epic, Feature and the story
  type as the project's process names them; Bug with ``--include-bugs``) paged past the 20,000
  cap, then ``workitemsbatch`` 200 at a time;
- an export file (``--file``): ADO's CSV export, REST JSON (``{"value": [...]}``), or the normalized
  JSONL the evaluation datasets use.

The process (shared.ado.process) is ``AZURE_DEVOPS_PROCESS``, or detected: from the project's work
item types over REST, from the types in the file for an export. The configured types ``Epic``,
``Feature`` and ``User Story`` stand for the process's levels (a Scrum project loads its Product
Backlog Items, a CMMI project its Requirements, a Basic project its Epics and Issues), and the
items are indexed under those three names (the ADO name kept as ``ado_work_item_type``), so
retrieval and tagging work the same for every process.

Each item is normalized (HTML to text, parent from relations), hashed (``work_item_hash``), skipped
when unchanged, otherwise embedded (title + description + ACs) and upserted with seed §11.3
metadata into the project's namespace. Items gone from the source are deleted from the index;
``ingestion/ado/{project}/ado_vectors.jsonl`` is rewritten with one line per indexed item.

A record that cannot be read is an error in the summary; its last good vector is kept. Exit codes:
0 loaded, 1 loaded with per-item errors, 2 failed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from loaders.console import (
    add_common_options,
    build_loader_services,
    exit_code,
    fail,
    prepare_namespace,
    print_summary,
    progress_bar,
    setup_logging,
)
from shared import layout
from shared.ado import process as processes
from shared.ado.ports import BacklogSource
from shared.ado.process import Process, normalize_types
from shared.errors import ConfigurationError
from shared.indexing.backlog import (
    IndexBusy,
    configured_types,
    index_lease,
    parse_rest,
    select_types,
    write_ado_vectors,
)
from shared.indexing.indexer import LoadSummary, index_work_items
from shared.indexing.workitems import parse_backlog_file
from shared.models import WorkItem
from shared.storage.leases import LEASE_SECONDS

log = logging.getLogger("loaders.ado")


@dataclass
class FetchedBacklog:
    """What a source gave: readable items, and errors for records it lists but could not read."""

    items: list[WorkItem]
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def unreadable_ids(self) -> list[int]:
        return [e["work_item_id"] for e in self.errors if "work_item_id" in e]

    @property
    def complete_listing(self) -> bool:
        """Whether every record that failed still named its id (else pruning could delete it)."""
        return all("work_item_id" in e for e in self.errors)


def fetch_rest(
    client: BacklogSource,
    work_item_types: Sequence[str],
    progress: Callable[[int], None] | None = None,
) -> FetchedBacklog:
    """Every work item of the types through the REST API (ids by WIQL, items by workitemsbatch)."""
    ids = list(client.iter_ids(work_item_types))
    log.info("WIQL listed %d work items", len(ids))
    raw: list[dict[str, Any]] = []
    for item in client.get_work_items(ids):
        raw.append(item)
        if progress:
            progress(1)
    items, errors = parse_rest(raw)
    return FetchedBacklog(select_types(items, work_item_types), errors)


def read_file(
    path: str | Path, work_item_types: Sequence[str], process: Process | None = None
) -> FetchedBacklog:
    """An export's items of ``work_item_types`` (the kinds Epic / Feature / User Story stand for
    the process's types), normalized for ``process``: by default the one whose story type the
    file holds (Agile when it holds none)."""
    items, errors = parse_backlog_file(path)
    chosen = process or processes.from_type_names(i.work_item_type for i in items)
    chosen = chosen or processes.AGILE
    # the configured names as given too: a normalized JSONL already says "User Story"
    wanted = chosen.ado_types(work_item_types) + list(work_item_types)
    return FetchedBacklog(normalize_types(select_types(items, wanted), chosen), errors)


def work_item_types(
    settings: Any, include_bugs: bool = False, types: Sequence[str] = ()
) -> list[str]:
    """The types to load as configured (shared.indexing.backlog.configured_types)."""
    return configured_types(settings, include_bugs, types)


def load_work_items(
    svc: Any,
    project: str,
    fetched: FetchedBacklog,
    *,
    prune: bool = True,
    allow_empty: bool = False,
    progress: Callable[[int], None] | None = None,
) -> LoadSummary:
    """Index what a source gave, delete what it no longer has, rewrite ``ado_vectors.jsonl``;
    under the project's index lease (a sync, or another load, of the project waits; one still
    holding it after a minute is IndexBusy)."""
    with index_lease(svc, project, wait=LEASE_SECONDS):
        return _load_work_items(svc, project, fetched, prune, allow_empty, progress)


def _load_work_items(
    svc: Any,
    project: str,
    fetched: FetchedBacklog,
    prune: bool,
    allow_empty: bool,
    progress: Callable[[int], None] | None,
) -> LoadSummary:
    if prune and not fetched.complete_listing:
        log.warning("some records have no readable id: nothing is pruned this time")
        prune = False
    summary = index_work_items(
        svc.embedder,
        svc.index,
        project,
        fetched.items,
        prune=prune,
        keep_ids=fetched.unreadable_ids,
        allow_empty=allow_empty,
        progress=progress,
        hygiene=svc.settings.pipeline.hygiene,
    )
    summary.fetched += len(fetched.errors)
    summary.errors = fetched.errors + summary.errors
    if not prune and not fetched.complete_listing:
        summary.errors.append(
            {"error": "records without a readable id: stale items were not pruned this time"}
        )
    write_ado_vectors(svc, project)
    return summary


def load_backlog(
    svc: Any,
    project: str,
    *,
    file: str | Path | None = None,
    client: BacklogSource | None = None,
    types: Sequence[str] = (),
    include_bugs: bool = False,
    prune: bool = True,
    allow_empty: bool = False,
    show_progress: bool = True,
    rebuild: bool = False,
    process: Process | None = None,
) -> LoadSummary:
    """The whole load from ``file`` or, without one, the REST API (``client`` or from settings).
    Used by ``python -m loaders.ado_loader``, ``python -m shared.cli load-backlog`` and the demo.
    ``rebuild``: empty the project's namespace first (after a change of embedder), once the items
    are fetched; without it, a namespace of another embedder fails before anything is fetched.
    ``process``: the project's process; by default AZURE_DEVOPS_PROCESS, else detected (module
    docstring)."""
    from shared.ids import check_project

    check_project(project)
    settings = svc.settings
    if not settings.pipeline.external_loaders.ado.enabled:
        raise ConfigurationError(
            "the ADO loader is disabled (SYNTH_PIPELINE__EXTERNAL_LOADERS__ADO__ENABLED=false)"
        )
    if not rebuild:
        prepare_namespace(svc, project, rebuild=False)
    chosen = work_item_types(settings, include_bugs, types)
    process = process or processes.configured(settings)
    if file is not None:
        fetched = read_file(file, chosen, process)
    else:
        from shared.ado.client import AdoClient

        own = client is None
        client = client or AdoClient.from_settings(settings)
        try:
            process = process or processes.detect(client)
            log.info("%s process: loading %s", process.name, ", ".join(process.ado_types(chosen)))
            with progress_bar(None, "fetching", "item") as advance:
                fetched = fetch_rest(
                    client, process.ado_types(chosen), advance if show_progress else None
                )
            fetched.items = normalize_types(fetched.items, process)
        finally:
            if own:
                client.close()
    if rebuild:
        prepare_namespace(svc, project, rebuild=True)
    total = len(fetched.items)
    with progress_bar(total, "indexing", "item") as advance:
        return load_work_items(
            svc,
            project,
            fetched,
            prune=prune,
            allow_empty=allow_empty,
            progress=advance if show_progress else None,
        )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m loaders.ado_loader",
        description="Load the Azure DevOps backlog (REST API or an export file) into the index.",
    )
    p.add_argument(
        "--file",
        help="an export instead of the REST API: ADO CSV, REST JSON, or normalized .jsonl",
    )
    p.add_argument(
        "--project",
        help="index namespace (default: AZURE_DEVOPS_PROJECT, when it is a valid namespace)",
    )
    p.add_argument("--types", nargs="+", metavar="TYPE", help="work item types to load")
    p.add_argument("--include-bugs", action="store_true", help="load Bugs too")
    p.add_argument("--no-prune", action="store_true", help="keep indexed items the source lacks")
    add_common_options(p, empty="source", reload_other="architecture documents")
    return p


def main(
    argv: list[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    args = parser().parse_args(argv)
    setup_logging(args.verbose)
    from shared.ado.errors import AdoError
    from shared.ids import InvalidIdentifier
    from shared.settings import Settings

    try:
        settings = Settings()
        project = args.project or settings.azure_devops_project
        if not project:
            return fail("give --project (the index namespace) or set AZURE_DEVOPS_PROJECT", err)
        svc = build_loader_services(settings)
        summary = load_backlog(
            svc,
            project,
            file=args.file,
            types=args.types or (),
            include_bugs=args.include_bugs,
            prune=not args.no_prune,
            allow_empty=args.allow_empty,
            rebuild=args.rebuild,
        )
    except InvalidIdentifier as error:
        return fail(f"{error}; pass --project with a valid namespace", err)
    except (AdoError, ConfigurationError, ValueError, OSError, IndexBusy) as error:
        return fail(str(error), err)
    print_summary(
        summary,
        as_json=args.json,
        what=f"work items of {project}",
        artifact=layout.ado_vectors(project),
        out=out,
    )
    return exit_code(summary)


if __name__ == "__main__":
    sys.exit(main())
