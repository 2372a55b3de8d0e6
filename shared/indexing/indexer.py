"""Put work items into the vector index, incrementally; what both kinds of record share.

Work items: vector id ``ado-{work_item_id}``, metadata per seed §11.3 plus the text the generation
prompt shows (title, description, acceptance criteria), ``work_item_hash`` and the embedding model;
an item whose hash and model are unchanged is skipped without embedding, and with ``prune`` every
``ado-`` vector whose item is gone from the source is deleted. Architecture documents are indexed
by ``shared.indexing.documents`` with the same batches, summary and hygiene.

Hygiene (docs/RELIABILITY.md "The hygiene gate"): work item text (title, description, acceptance
criteria, tags) and document text pass the transcript's redaction before anything is hashed,
embedded, stored in the index or written to the ingestion files; a record stores ``hygiene`` (the
gate's version, ``off`` when ``redact_secrets`` is off) and, when they are not zero,
``redacted_secrets`` and ``instruction_annotations`` (instruction-like spans, which the prompt
builders flag again when they show the text).

Counts in ``LoadSummary``: for work items every count is in items; ``skipped`` means not embedded
(an unchanged item whose metadata outside the hash changed, e.g. its url, is still upserted). For
documents ``fetched`` and ``skipped`` count documents; ``embedded``, ``upserted`` and ``deleted``
count chunks (vectors).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from shared.embeddings import Embedder
from shared.errors import SynthesizerError
from shared.indexing.workitems import work_item_hash
from shared.models import WorkItem
from shared.settings import HygieneConfig
from shared.text.hygiene import HYGIENE_VERSION, redact_text
from shared.text.instructions import find_annotations
from shared.vectorstore import VectorIndex, VectorRecord

ADO_PREFIX = "ado-"
ARCH_PREFIX = "arch-"
EMBED_BATCH = 64
UPSERT_BATCH = 512  # the embedded index rewrites its namespace blob per upsert: few, larger ones
FETCH_BATCH = 200

Progress = Callable[[int], None]

log = logging.getLogger("shared.indexing")


class LoaderError(SynthesizerError, ValueError):
    """The load cannot go on safely; the message says why and what to do."""


@dataclass
class LoadSummary:
    fetched: int = 0
    embedded: int = 0
    skipped: int = 0
    upserted: int = 0
    deleted: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "fetched": self.fetched,
            "embedded": self.embedded,
            "skipped": self.skipped,
            "upserted": self.upserted,
            "deleted": self.deleted,
            "errors": self.errors,
        }


def prepare_namespace(svc: Any, project: str, *, rebuild: bool) -> None:
    """Before a load: with ``rebuild``, empty the project's namespace (after a change of embedder:
    every vector must be made again, by both loads); without, check that the namespace holds
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


@contextmanager
def progress_bar(
    total: int | None, desc: str, unit: str, stream: TextIO | None = None
) -> Iterator[Progress]:
    """A callable advancing a tqdm bar on a terminal (stderr by default), and doing nothing
    elsewhere, so logs, pipes and ``--json`` stay clean."""
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


def list_ids(index: VectorIndex, namespace: str, prefix: str) -> list[str]:
    """Ids under a prefix; a store that cannot list cannot find stale vectors, which is an error
    (silently keeping them would leave deleted items in retrieval)."""
    lister = getattr(index, "list_ids", None)
    if lister is None:
        raise LoaderError(
            f"the vector store {type(index).__name__} cannot list ids, so vectors of deleted "
            "items cannot be found; load without pruning (--no-prune)"
        )
    return list(lister(namespace, prefix))


def fetch_records(
    index: VectorIndex, namespace: str, ids: Sequence[str]
) -> dict[str, VectorRecord]:
    found: dict[str, VectorRecord] = {}
    for start in range(0, len(ids), FETCH_BATCH):
        found.update(index.fetch(namespace, list(ids[start : start + FETCH_BATCH])))
    return found


def fetch_metadata(index: VectorIndex, namespace: str, ids: Sequence[str]) -> dict[str, Any]:
    return {vid: rec.metadata for vid, rec in fetch_records(index, namespace, ids).items()}


def embed_and_upsert(
    embedder: Embedder,
    index: VectorIndex,
    namespace: str,
    todo: Sequence[tuple[str, str, dict[str, Any]]],
    summary: LoadSummary,
    progress: Progress | None,
) -> None:
    pending: list[VectorRecord] = []
    # similar lengths in one embedding batch pad less (the embedder pads to the longest text)
    todo = sorted(todo, key=lambda t: len(t[1]))
    for start in range(0, len(todo), EMBED_BATCH):
        chunk = todo[start : start + EMBED_BATCH]
        vectors = embedder.embed([text for _, text, _ in chunk])
        summary.embedded += len(chunk)
        pending.extend(
            VectorRecord(vid, vec.tolist(), meta)
            for (vid, _, meta), vec in zip(chunk, vectors, strict=True)
        )
        if len(pending) >= UPSERT_BATCH:
            summary.upserted += index.upsert(namespace, pending)
            pending = []
        if progress:
            progress(len(chunk))
    if pending:
        summary.upserted += index.upsert(namespace, pending)


# ------------------------------------------------------------------------------------------------
# hygiene


def hygiene_tag(hygiene: HygieneConfig) -> str:
    """Stored with every record: which gate its text passed."""
    return HYGIENE_VERSION if hygiene.redact_secrets else "off"


def hygiene_metadata(hygiene: HygieneConfig, redacted: int, text: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"hygiene": hygiene_tag(hygiene)}
    if redacted:
        meta["redacted_secrets"] = redacted
    flagged = len(find_annotations(text)) if hygiene.annotate_instructions else 0
    if flagged:
        meta["instruction_annotations"] = flagged
    return meta


def clean_work_item(item: WorkItem, hygiene: HygieneConfig) -> tuple[WorkItem, int]:
    """The item with its secrets redacted (title, description, criteria, tags) and how many."""
    total = 0

    def clean(text: str) -> str:
        nonlocal total
        out, n = redact_text(text, hygiene)
        total += n
        return out

    cleaned = item.model_copy(
        update={
            "title": clean(item.title),
            "description": clean(item.description),
            "acceptance_criteria": [clean(c) for c in item.acceptance_criteria],
            "tags": [clean(t) for t in item.tags],
        }
    )
    return (cleaned, total) if total else (item, 0)


# ------------------------------------------------------------------------------------------------
# work items


def ado_vector_id(work_item_id: int) -> str:
    return f"{ADO_PREFIX}{work_item_id}"


def ado_metadata(
    item: WorkItem, project: str, embedding_model: str | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "work_item_id": item.work_item_id,
        "source_type": "ado_backlog",
        "project": project,
        "work_item_type": item.work_item_type,
        "state": item.state,
        "tags": item.tags,
        "updated_at": item.updated_at.isoformat().replace("+00:00", "Z") if item.updated_at else "",
        "url": item.url or "",
        "title": item.title,
        "description": item.description[:2000],
        "acceptance_criteria": item.acceptance_criteria[:20],
        "work_item_hash": work_item_hash(item),
    }
    if embedding_model:
        meta["embedding_model"] = embedding_model
    # Pinecone metadata cannot hold nulls: absent values are left out
    if item.parent_id is not None:
        meta["parent_id"] = item.parent_id
    if item.priority is not None:
        meta["priority"] = item.priority
    if item.ado_work_item_type:
        meta["ado_work_item_type"] = item.ado_work_item_type
    if item.rev is not None:
        meta["rev"] = item.rev
    return meta


Outcome = Literal["added", "updated", "unchanged", "stale"]


def _older(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """The stored vector is of a later revision than the item given (both revs known): a sync or
    a load that read the item before a write indexed its newer revision."""
    old_rev, new_rev = old.get("rev"), new.get("rev")
    return isinstance(old_rev, int) and isinstance(new_rev, int) and new_rev < old_rev


def index_work_items(
    embedder: Embedder,
    index: VectorIndex,
    project: str,
    items: Sequence[WorkItem],
    *,
    prune: bool = True,
    keep_ids: Iterable[int] = (),
    allow_empty: bool = False,
    progress: Progress | None = None,
    hygiene: HygieneConfig | None = None,
    outcomes: dict[int, Outcome] | None = None,
) -> LoadSummary:
    """Embed and upsert new and changed items. With ``prune``, delete indexed items that are not
    in ``items`` and not in ``keep_ids`` (items the source still lists but could not be read this
    time keep their last good vector). Refuses to empty a namespace from an empty source unless
    ``allow_empty``. Every item's text is redacted first (``hygiene``: the pipeline's settings,
    the defaults when None). An item older (``rev``) than the one indexed is left as it is.
    ``outcomes``, when given, gets each item's outcome: ``added``, ``updated`` (embedded again),
    ``unchanged`` (same text and model: not embedded; metadata outside the hash refreshed) or
    ``stale``."""
    hygiene = hygiene or HygieneConfig()
    summary = LoadSummary(fetched=len(items))
    model = getattr(embedder, "model_name", None)
    cleaned = [clean_work_item(i, hygiene) for i in items]
    items = [item for item, _ in cleaned]
    ids = [ado_vector_id(i.work_item_id) for i in items]
    stored = fetch_records(index, project, ids)
    todo = []
    refreshed: list[VectorRecord] = []
    seen: dict[int, Outcome] = {}
    for vid, item, (_, redacted) in zip(ids, items, cleaned, strict=True):
        meta = ado_metadata(item, project, model)
        meta.update(hygiene_metadata(hygiene, redacted, item.embedding_text()))
        old = stored.get(vid)
        if old is not None and _older(old.metadata, meta):
            summary.skipped += 1
            seen[item.work_item_id] = "stale"
            if progress:
                progress(1)
            continue
        if (
            old is not None
            and old.metadata.get("work_item_hash") == meta["work_item_hash"]
            and old.metadata.get("embedding_model") == model
        ):
            # same text, same model: no embedding; metadata outside the hash (url, tags,
            # priority) is refreshed on the stored vector when it differs
            summary.skipped += 1
            seen[item.work_item_id] = "unchanged"
            if "rev" not in meta and "rev" in old.metadata:
                meta["rev"] = old.metadata["rev"]  # an export without revs: the same revision
            if old.metadata != meta:
                refreshed.append(VectorRecord(vid, old.values, meta))
            if progress:
                progress(1)
            continue
        seen[item.work_item_id] = "added" if old is None else "updated"
        todo.append((vid, item.embedding_text(), meta))
    if prune:
        present = set(ids) | {ado_vector_id(i) for i in keep_ids}
        stale = sorted(set(list_ids(index, project, ADO_PREFIX)) - present)
        if stale and not present and not allow_empty:
            raise LoaderError(
                f"the source has no work items, and pruning would delete all {len(stale)} indexed "
                f"items of project {project!r}; check the source, or pass --allow-empty to clear"
            )
    if refreshed:
        summary.upserted += index.upsert(project, refreshed)
    embed_and_upsert(embedder, index, project, todo, summary, progress)
    if outcomes is not None:
        outcomes.update(seen)
    if prune and stale:
        summary.deleted = index.delete(project, stale)
    return summary


def work_item_lines(index: VectorIndex, project: str) -> list[dict[str, Any]]:
    """``ado_vectors.jsonl``: one line per ``ado-`` vector the index holds, by work item id."""
    ids = list_ids(index, project, ADO_PREFIX)
    lines = [
        {
            "vector_id": vid,
            "work_item_id": meta.get("work_item_id"),
            "work_item_hash": meta.get("work_item_hash"),
            "metadata": meta,
        }
        for vid, meta in fetch_metadata(index, project, ids).items()
    ]
    return sorted(lines, key=lambda line: (line["work_item_id"] or 0, line["vector_id"]))
