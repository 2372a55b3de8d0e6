"""``python -m loaders.ado_loader``: the existing Azure DevOps backlog into the index (seed §2.1).

Sources:
- the REST API (``AZURE_DEVOPS_ORG_URL`` as a full URL, ``AZURE_DEVOPS_PROJECT``,
  ``AZURE_DEVOPS_PAT``): WIQL for the configured work item types (Epic, Feature and the story
  type as the project's process names them; Bug with ``--include-bugs``) paged past the 20,000
  cap, then ``workitemsbatch`` 200 at a time;
- an export file (``--file``): ADO's CSV export, REST JSON (``{"value": [...]}``), or the normalized
  JSONL the evaluation datasets use.

The load itself is ``shared.indexing.backlog.load_backlog`` (the process detected or configured,
items normalized, hashed, skipped when unchanged, otherwise embedded and upserted; items gone from
the source deleted; ``ingestion/ado/{project}/ado_vectors.jsonl`` rewritten). This module is the
command: its options, its output and its exit codes: 0 loaded, 1 loaded with per-item errors,
2 failed.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from loaders.console import (
    add_common_options,
    build_loader_services,
    exit_code,
    fail,
    print_summary,
    setup_logging,
)
from shared import layout
from shared.errors import ConfigurationError
from shared.indexing.backlog import IndexBusy, load_backlog


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
