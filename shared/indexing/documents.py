"""Put architecture documents into the vector index, incrementally.

Chunks of ``chunk_size`` tokens with ``chunk_overlap`` (seed §2.2), vector ids
``arch-{document_id}-{chunk_index:04d}``, metadata per seed §11.1. A document whose file checksum,
chunking and embedding model match every stored chunk is skipped before it is even parsed; a
changed one is re-chunked, upserted, and its leftover chunks deleted. With ``prune`` the chunks of
documents no longer among the sources are deleted too.

A document's text passes the hygiene gate before it is cut (``shared.indexing.indexer``); one
indexed under another ``hygiene`` is re-chunked even when its file is unchanged. The originals kept
under ``ingestion/architecture/{project}/raw/`` are the files as given, like a run's raw upload.

``load_documents`` is the whole load (``python -m loaders.arch_loader``, ``python -m shared.cli
load-docs`` and the demo run it): files and folders (folders read recursively, hidden files left
out), and ``ingestion/architecture/{project}/arch_vectors.jsonl`` rewritten with one line per
chunk. When every path given is a folder, the folders are the project's whole document set: the
chunks (and stored original) of an indexed document not found in them are deleted; files given one
by one touch nothing else unless ``prune`` says they are the whole set.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shared import layout
from shared.embeddings import Embedder
from shared.errors import ConfigurationError
from shared.indexing.indexer import (
    ARCH_PREFIX,
    LoaderError,
    LoadSummary,
    Progress,
    embed_and_upsert,
    fetch_metadata,
    hygiene_metadata,
    hygiene_tag,
    list_ids,
    prepare_namespace,
    progress_bar,
)
from shared.models import ArchitectureChunk
from shared.settings import ArchitectureLoaderConfig, HygieneConfig
from shared.storage import ArtifactStore, dump_jsonl
from shared.text.hygiene import redact_text
from shared.text.textio import UnreadableInput, extract_text, file_extension, normalize
from shared.vectorstore import VectorIndex

SPLITTER = "semantic-text-splitter"
TOKENIZER_MODEL = "gpt-4o"

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
        # the splitter reads the document's own structure: its lines stay as written
        return normalize(extract_text(data, ext, join_cut_lines=False))
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
    embed_and_upsert(
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
                    extra=hygiene_metadata(hygiene, _placeholders(c.text), c.text),
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


def _placeholders(text: str) -> int:
    """Redaction placeholders in a chunk of redacted text (the gate's longer two forms)."""
    return text.count("[REDACTED") + text.count("[SECRET")


# ------------------------------------------------------------------------------------------------
# the whole load


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
