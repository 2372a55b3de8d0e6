"""Put work items and architecture documents into the vector index, incrementally.

Work items: vector id ``ado-{work_item_id}``, metadata per seed §11.3 plus the text the generation
prompt shows (title, description, acceptance criteria), ``work_item_hash`` and the embedding model;
an item whose hash and model are unchanged is skipped without embedding, and with ``prune`` every
``ado-`` vector whose item is gone from the source is deleted.

Documents: chunks of ``chunk_size`` tokens with ``chunk_overlap`` (seed §2.2), vector ids
``arch-{document_id}-{chunk_index:04d}``, metadata per seed §11.1. A document whose file checksum,
chunking and embedding model match every stored chunk is skipped before it is even parsed; a
changed one is re-chunked, upserted, and its leftover chunks deleted. With ``prune`` the chunks of
documents no longer among the sources are deleted too.

Hygiene (docs/RELIABILITY.md "The hygiene gate"): work item text (title, description, acceptance
criteria, tags) and document text pass the transcript's redaction before anything is hashed,
embedded, stored in the index or written to the ingestion files; a record stores ``hygiene`` (the
gate's version, ``off`` when ``redact_secrets`` is off) and, when they are not zero,
``redacted_secrets`` and ``instruction_annotations`` (instruction-like spans, which the prompt
builders flag again when they show the text). A document indexed under another ``hygiene`` is
re-chunked even when its file is unchanged. The originals kept under
``ingestion/architecture/{project}/raw/`` are the files as given, like a run's raw upload.

Counts in ``LoadSummary``: for work items every count is in items; ``skipped`` means not embedded
(an unchanged item whose metadata outside the hash changed, e.g. its url, is still upserted). For
documents ``fetched`` and ``skipped`` count documents; ``embedded``, ``upserted`` and ``deleted``
count chunks (vectors).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from shared import layout
from shared.embeddings import Embedder
from shared.errors import SynthesizerError
from shared.hygiene import HYGIENE_VERSION, find_annotations, redact_text
from shared.indexing.workitems import work_item_hash
from shared.models import ArchitectureChunk, WorkItem
from shared.settings import ArchitectureLoaderConfig, HygieneConfig
from shared.storage import ArtifactStore
from shared.textio import UnreadableInput, extract_text, file_extension, normalize
from shared.vectorstore import VectorIndex, VectorRecord

ADO_PREFIX = "ado-"
ARCH_PREFIX = "arch-"
EMBED_BATCH = 64
UPSERT_BATCH = 512  # the embedded index rewrites its namespace blob per upsert: few, larger ones
FETCH_BATCH = 200
SPLITTER = "semantic-text-splitter"
TOKENIZER_MODEL = "gpt-4o"

Progress = Callable[[int], None]


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


def _embed_and_upsert(
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


def _hygiene_metadata(hygiene: HygieneConfig, redacted: int, text: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"hygiene": hygiene_tag(hygiene)}
    if redacted:
        meta["redacted_secrets"] = redacted
    flagged = len(find_annotations(text)) if hygiene.annotate_instructions else 0
    if flagged:
        meta["instruction_annotations"] = flagged
    return meta


def _placeholders(text: str) -> int:
    """Redaction placeholders in a chunk of redacted text (the gate's longer two forms)."""
    return text.count("[REDACTED") + text.count("[SECRET")


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
        meta.update(_hygiene_metadata(hygiene, redacted, item.embedding_text()))
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
    _embed_and_upsert(embedder, index, project, todo, summary, progress)
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


# ------------------------------------------------------------------------------------------------
# architecture documents

DOCUMENT_EXTENSIONS = ("md", "txt", "pdf", "docx")
_CHUNK_ID = re.compile(rf"^{ARCH_PREFIX}([0-9a-f]+)-(\d+)$")


@dataclass(frozen=True)
class DocumentSource:
    """A document to load: ``name`` is its path relative to the folder it was found in (its
    identity: the document id and the stored original derive from it)."""

    path: Path
    name: str

    @classmethod
    def of(cls, value: Path | DocumentSource) -> DocumentSource:
        if isinstance(value, DocumentSource):
            return value
        return cls(Path(value), Path(value).name)


def document_id(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:16]


def chunk_vector_id(doc_id: str, n: int) -> str:
    return f"{ARCH_PREFIX}{doc_id}-{n:04d}"


def chunking_signature(cfg: ArchitectureLoaderConfig) -> str:
    """Stored with every chunk: a change of splitter settings re-chunks unchanged files."""
    return f"{SPLITTER}/{TOKENIZER_MODEL}/{cfg.chunk_size}/{cfg.chunk_overlap}"


def chunk_text(text: str, cfg: ArchitectureLoaderConfig, markdown: bool) -> list[str]:
    """Recursive token chunking with semantic-text-splitter (headings, paragraphs, sentences)."""
    from semantic_text_splitter import MarkdownSplitter, TextSplitter

    splitter_cls = MarkdownSplitter if markdown else TextSplitter
    splitter = splitter_cls.from_tiktoken_model(
        TOKENIZER_MODEL, cfg.chunk_size, overlap=cfg.chunk_overlap
    )
    return [c for c in splitter.chunks(text) if c.strip()]


def document_text(data: bytes, name: str) -> str:
    """The document's text; UnreadableInput (with the reason) for anything that is not one."""
    ext = file_extension(name)
    if ext not in DOCUMENT_EXTENSIONS:
        raise UnreadableInput(
            f"unsupported document type '.{ext}' (supported: "
            + ", ".join(f".{e}" for e in DOCUMENT_EXTENSIONS)
            + ")"
        )
    try:
        return normalize(extract_text(data, ext))
    except UnreadableInput:
        raise
    except Exception as err:  # noqa: BLE001 - parsers of hostile files raise anything
        raise UnreadableInput(f"the .{ext} file could not be read: {err}") from None


def document_chunks(
    path: Path | DocumentSource,
    project: str,
    cfg: ArchitectureLoaderConfig,
    now: datetime | None = None,
    data: bytes | None = None,
    hygiene: HygieneConfig | None = None,
) -> list[ArchitectureChunk]:
    """The document's chunks, its text redacted before it is cut (``hygiene``: the defaults when
    None)."""
    source = DocumentSource.of(path)
    data = source.path.read_bytes() if data is None else data
    text, _ = redact_text(document_text(data, source.name), hygiene or HygieneConfig())
    checksum = hashlib.sha256(data).hexdigest()
    doc_id = document_id(source.name)
    chunks = chunk_text(text, cfg, markdown=file_extension(source.name) == "md")
    uploaded = (now or datetime.now(UTC)).replace(microsecond=0)
    return [
        ArchitectureChunk(
            document_id=doc_id,
            chunk_id=chunk_vector_id(doc_id, n),
            checksum=checksum,
            project=project,
            uploaded_at=uploaded,
            file_name=Path(source.name).name,
            chunk_index=n,
            total_chunks=len(chunks),
            text=chunk,
        )
        for n, chunk in enumerate(chunks)
    ]


def chunk_metadata(
    chunk: ArchitectureChunk,
    *,
    source_path: str | None = None,
    chunking: str | None = None,
    embedding_model: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    meta = chunk.model_dump(mode="json", exclude_none=True)
    meta["uploaded_at"] = meta["uploaded_at"].replace("+00:00", "Z")
    for key, value in (
        ("source_path", source_path),
        ("chunking", chunking),
        ("embedding_model", embedding_model),
    ):
        if value:
            meta[key] = value
    meta.update(extra or {})
    return meta


def chunk_from_metadata(meta: dict[str, Any]) -> ArchitectureChunk:
    return ArchitectureChunk.model_validate(
        {k: v for k, v in meta.items() if k in ArchitectureChunk.model_fields}
    )


def _stored_chunks(
    index: VectorIndex, project: str, doc_id: str
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(chunk 0's metadata, metadata of every chunk chunk 0 says the document has)."""
    first = fetch_metadata(index, project, [chunk_vector_id(doc_id, 0)])
    head = first.get(chunk_vector_id(doc_id, 0))
    if head is None:
        return None, {}
    total = int(head.get("total_chunks") or 0)
    ids = [chunk_vector_id(doc_id, n) for n in range(total)]
    return head, fetch_metadata(index, project, ids)


def _index_document(
    embedder: Embedder,
    index: VectorIndex,
    project: str,
    source: DocumentSource,
    cfg: ArchitectureLoaderConfig,
    summary: LoadSummary,
    store: ArtifactStore | None,
    model: str | None,
    chunking: str,
    now: datetime | None,
    hygiene: HygieneConfig,
) -> list[ArchitectureChunk]:
    """One document into the index (skipped when unchanged, the same gate included); its chunks,
    or none after an error recorded in ``summary``."""
    doc_id = document_id(source.name)
    try:
        data = source.path.read_bytes()
    except OSError as err:
        summary.errors.append({"file": source.name, "error": f"cannot read: {err.strerror}"})
        return []
    checksum = hashlib.sha256(data).hexdigest()
    head, stored = _stored_chunks(index, project, doc_id)
    if (
        head is not None
        and stored
        and len(stored) == int(head.get("total_chunks") or -1)
        and all(
            m.get("checksum") == checksum
            and m.get("chunking") == chunking
            and m.get("embedding_model") == model
            and m.get("hygiene") == hygiene_tag(hygiene)
            for m in stored.values()
        )
    ):
        summary.skipped += 1
        if store is not None and not store.exists(layout.arch_raw(project, source.name)):
            store.put(layout.arch_raw(project, source.name), data)
        return [chunk_from_metadata(m) for m in stored.values()]
    try:
        chunks = document_chunks(source, project, cfg, now=now, data=data, hygiene=hygiene)
    except UnreadableInput as err:
        summary.errors.append({"file": source.name, "error": str(err)})
        return []
    if not chunks:
        summary.errors.append({"file": source.name, "error": "no text to index"})
        return []
    _embed_and_upsert(
        embedder,
        index,
        project,
        [
            (
                c.chunk_id,
                c.text,
                chunk_metadata(
                    c,
                    source_path=source.name,
                    chunking=chunking,
                    embedding_model=model,
                    extra=_hygiene_metadata(hygiene, _placeholders(c.text), c.text),
                ),
            )
            for c in chunks
        ],
        summary,
        None,
    )
    # new chunks first, then the old document's leftovers: retrieval never sees it missing
    new_ids = {c.chunk_id for c in chunks}
    old_ids = set(stored)
    lister = getattr(index, "list_ids", None)
    if lister is not None:
        old_ids |= set(lister(project, f"{ARCH_PREFIX}{doc_id}-"))
    leftovers = sorted(old_ids - new_ids)
    if leftovers:
        summary.deleted += index.delete(project, leftovers)
    if store is not None:
        store.put(layout.arch_raw(project, source.name), data)
    return chunks


def index_documents(
    embedder: Embedder,
    index: VectorIndex,
    project: str,
    paths: Sequence[Path | DocumentSource],
    cfg: ArchitectureLoaderConfig,
    *,
    store: ArtifactStore | None = None,
    prune: bool = False,
    allow_empty: bool = False,
    progress: Progress | None = None,
    now: datetime | None = None,
    hygiene: HygieneConfig | None = None,
) -> tuple[LoadSummary, list[ArchitectureChunk]]:
    """Load documents one by one; a document that cannot be read is one error in the summary and
    keeps whatever it had in the index. With ``store``, each indexed original is kept under
    ``ingestion/architecture/{project}/raw/`` (and removed when its document is pruned)."""
    summary = LoadSummary()
    loaded: list[ArchitectureChunk] = []
    model = getattr(embedder, "model_name", None)
    hygiene = hygiene or HygieneConfig()
    chunking = chunking_signature(cfg)
    present: set[str] = set()
    seen_names: set[str] = set()
    for source in map(DocumentSource.of, paths):
        summary.fetched += 1
        if source.name in seen_names:
            summary.errors.append({"file": source.name, "error": "given twice; loaded once"})
        else:
            seen_names.add(source.name)
            present.add(document_id(source.name))
            loaded += _index_document(
                embedder, index, project, source, cfg, summary, store, model, chunking, now, hygiene
            )
        if progress:
            progress(1)
    if prune:
        summary.deleted += _prune_documents(index, project, present, store, allow_empty)
    return summary, loaded


def _prune_documents(
    index: VectorIndex,
    project: str,
    present: set[str],
    store: ArtifactStore | None,
    allow_empty: bool,
) -> int:
    by_doc: dict[str, list[str]] = {}
    for vid in list_ids(index, project, ARCH_PREFIX):
        match = _CHUNK_ID.match(vid)
        if match:
            by_doc.setdefault(match.group(1), []).append(vid)
    gone = sorted(set(by_doc) - present)
    if not gone:
        return 0
    if not present and not allow_empty:
        raise LoaderError(
            f"no documents were given, and pruning would delete all {len(gone)} indexed documents "
            f"of project {project!r}; check the path, or pass --allow-empty to clear"
        )
    deleted = 0
    for doc_id in gone:
        ids = sorted(by_doc[doc_id])
        head = fetch_metadata(index, project, ids[:1]).get(ids[0]) or {}
        deleted += index.delete(project, ids)
        source_path = head.get("source_path") or head.get("file_name")
        if store is not None and source_path:
            store.delete(layout.arch_raw(project, str(source_path)))
    return deleted


def chunk_lines(index: VectorIndex, project: str) -> list[dict[str, Any]]:
    """``arch_vectors.jsonl``: one line per ``arch-`` vector, by document and chunk."""
    ids = list_ids(index, project, ARCH_PREFIX)
    lines = [
        {
            "vector_id": vid,
            "document_id": meta.get("document_id"),
            "source_path": meta.get("source_path") or meta.get("file_name"),
            "chunk_index": meta.get("chunk_index"),
            "checksum": meta.get("checksum"),
            "metadata": meta,
        }
        for vid, meta in fetch_metadata(index, project, ids).items()
    ]
    return sorted(lines, key=lambda line: (str(line["source_path"]), line["chunk_index"] or 0))
