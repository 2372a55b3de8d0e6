"""``python -m loaders.arch_loader``: architecture documents into the index (seed §2.2).

Takes files and folders (folders are read recursively; hidden files are left out) of .md, .txt,
.pdf and .docx. Each document is converted to text, cut into token chunks (size 1000, overlap 200,
semantic-text-splitter), embedded and upserted with seed §11.1 metadata into the project's
namespace; its original is stored under ``ingestion/architecture/{project}/raw/{path}`` and
``ingestion/architecture/{project}/arch_vectors.jsonl`` is rewritten with one line per chunk.

Incremental: an unchanged file (same checksum, chunking and embedder) is skipped without parsing;
a changed one replaces its chunks and the leftovers are deleted.

Removed documents: when every path given is a folder, the folders are taken as the project's whole
document set, and the chunks (and stored original) of any indexed document not found in them are
deleted — nothing stale is left behind. When files are given one by one nothing else is touched,
unless ``--prune`` says they are the whole set; ``--no-prune`` never deletes other documents.
A document that is present but unreadable keeps its previous chunks and is reported as an error.

A file that cannot be loaded (corrupt, empty, unsupported type) is one error in the summary; the
others still load. Exit codes: 0 loaded, 1 loaded with per-file errors, 2 failed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
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
from shared.errors import ConfigurationError
from shared.indexing.indexer import (
    DocumentSource,
    LoaderError,
    LoadSummary,
    chunk_lines,
    index_documents,
)
from shared.storage import dump_jsonl


def collect_documents(paths: Sequence[str | Path]) -> tuple[list[DocumentSource], bool]:
    """The documents under ``paths`` and whether every path was a folder. A path that does not
    exist is an error: with pruning, a typo would otherwise delete the documents it missed."""
    sources: list[DocumentSource] = []
    folders_only = bool(paths)
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                rel = file.relative_to(path)
                if any(part.startswith(".") for part in rel.parts) or not file.is_file():
                    continue
                sources.append(DocumentSource(file, rel.as_posix()))
        elif path.is_file():
            folders_only = False
            sources.append(DocumentSource(path, path.name))
        else:
            raise LoaderError(f"{path}: no such file or folder")
    return sources, folders_only


def load_documents(
    svc: Any,
    project: str,
    paths: Sequence[str | Path],
    *,
    prune: bool | None = None,
    allow_empty: bool = False,
    show_progress: bool = True,
    rebuild: bool = False,
) -> LoadSummary:
    """The whole load; ``prune=None`` prunes exactly when every path is a folder. Used by
    ``python -m loaders.arch_loader``, ``python -m shared.cli load-docs`` and the demo.
    ``rebuild``: empty the project's namespace first (after a change of embedder); without it, a
    namespace of another embedder fails before anything is read or embedded."""
    from shared.ids import check_project

    check_project(project)
    cfg = svc.settings.pipeline.external_loaders.architecture
    if not cfg.enabled:
        raise ConfigurationError(
            "the architecture loader is disabled "
            "(SYNTH_PIPELINE__EXTERNAL_LOADERS__ARCHITECTURE__ENABLED=false)"
        )
    sources, folders_only = collect_documents(paths)
    prepare_namespace(svc, project, rebuild=rebuild)
    with progress_bar(len(sources), "documents", "doc") as advance:
        summary, _ = index_documents(
            svc.embedder,
            svc.index,
            project,
            sources,
            cfg,
            store=svc.store,
            prune=folders_only if prune is None else prune,
            allow_empty=allow_empty,
            progress=advance if show_progress else None,
            hygiene=svc.settings.pipeline.hygiene,
        )
    svc.store.put(layout.arch_vectors(project), dump_jsonl(chunk_lines(svc.index, project)))
    return summary


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m loaders.arch_loader",
        description="Load architecture documents (.md .txt .pdf .docx) into the index.",
    )
    p.add_argument("paths", nargs="+", help="files and folders (read recursively)")
    p.add_argument("--project", required=True, help="index namespace")
    prune = p.add_mutually_exclusive_group()
    prune.add_argument(
        "--prune",
        dest="prune",
        action="store_true",
        default=None,
        help="the paths are the whole document set: delete indexed documents not among them "
        "(the default when every path is a folder)",
    )
    prune.add_argument(
        "--no-prune", dest="prune", action="store_false", help="never delete other documents"
    )
    add_common_options(p, empty="folder", reload_other="backlog")
    return p


def main(
    argv: list[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    args = parser().parse_args(argv)
    setup_logging(args.verbose)
    from shared.settings import Settings

    try:
        svc = build_loader_services(Settings())
        summary = load_documents(
            svc,
            args.project,
            args.paths,
            prune=args.prune,
            allow_empty=args.allow_empty,
            rebuild=args.rebuild,
        )
    except (ConfigurationError, ValueError, OSError) as error:
        return fail(str(error), err)
    print_summary(
        summary,
        as_json=args.json,
        what=f"architecture documents of {args.project}",
        artifact=layout.arch_vectors(args.project),
        out=out,
    )
    return exit_code(summary)


if __name__ == "__main__":
    sys.exit(main())
