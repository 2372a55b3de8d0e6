"""What the two loader commands share: services, the progress bar, the summary, exit codes.

- Services come from the settings exactly as for the CLI's ``run`` (embedder, vector index and
  store chosen by the settings; the local folder store without Azure), with an in-process bus that
  nothing is sent to. Loaders are not traced (seed §2).
- The progress bar (tqdm) is drawn on stderr only when stderr is a terminal, so logs, pipes and
  ``--json`` stay clean.
- Exit codes: 0 loaded, 1 loaded with per-item / per-file errors, 2 failed (nothing or not all
  was done; the message says why).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from shared.indexing.indexer import LoadSummary

log = logging.getLogger("loaders")

EXIT_OK = 0
EXIT_ITEM_ERRORS = 1
EXIT_FAILED = 2


def prepare_namespace(svc: Any, project: str, *, rebuild: bool) -> None:
    """Before a load: with ``rebuild``, empty the project's namespace (after a change of embedder:
    every vector must be made again, by both loaders); without, check that the namespace holds
    vectors of the configured embedder, so a mismatch fails before anything is fetched or embedded
    (``DimensionMismatch``, a ``ValueError`` naming both embedders and the fix)."""
    from shared.vectorstore import check_index, drop_namespace

    if rebuild:
        removed = drop_namespace(svc.index, project)
        log.warning(
            "namespace %s emptied for a rebuild (%s vectors removed): load the other source too",
            project,
            "?" if removed < 0 else removed,
        )
    else:
        check_index(svc.index, project, svc.embedder)


def build_loader_services(settings: Any) -> Any:
    from shared.bus.memory import InProcessBus
    from shared.services import build_services

    return build_services(settings, bus=InProcessBus(workers=1))


@contextmanager
def progress_bar(
    total: int | None, desc: str, unit: str, stream: TextIO | None = None
) -> Iterator[Callable[[int], None]]:
    """A callable advancing a tqdm bar on a terminal, and doing nothing elsewhere."""
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        yield lambda n: None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=unit, file=stream, leave=False) as bar:

        def advance(n: int) -> None:
            bar.update(n)

        yield advance


def print_summary(
    summary: LoadSummary, *, as_json: bool, what: str, artifact: str | None, out: TextIO
) -> None:
    if as_json:
        out.write(json.dumps(summary.as_dict(), ensure_ascii=False) + "\n")
        return
    d = summary.as_dict()
    out.write(
        f"{what}: fetched {d['fetched']}, embedded {d['embedded']}, skipped {d['skipped']}, "
        f"upserted {d['upserted']}, deleted {d['deleted']}, errors {len(d['errors'])}\n"
    )
    for error in summary.errors:
        where = error.get("file") or error.get("work_item_id") or error.get("line") or ""
        out.write(f"  error {where}: {error.get('error')}\n".replace("  error : ", "  error: "))
    if artifact:
        out.write(f"wrote {artifact}\n")


def exit_code(summary: LoadSummary) -> int:
    return EXIT_ITEM_ERRORS if summary.errors else EXIT_OK


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def fail(message: str, err: TextIO | None = None) -> int:
    (err or sys.stderr).write(f"error: {message}\n")
    return EXIT_FAILED


def add_common_options(p: argparse.ArgumentParser, *, empty: str, reload_other: str) -> None:
    """The options both loaders share: ``empty`` names the empty source, ``reload_other`` what to
    load again after a rebuild."""
    p.add_argument(
        "--allow-empty", action="store_true", help=f"let an empty {empty} clear the namespace"
    )
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="empty the project's namespace first (after changing the embedder; then load the "
        f"{reload_other} again too)",
    )
    p.add_argument("--json", action="store_true", help="print a one-line JSON summary")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
