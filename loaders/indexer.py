"""Put work items and architecture documents into the vector index, incrementally.

Work items: vector id ``ado-{work_item_id}``, metadata per seed §11.3 plus the text the generation
prompt shows (title, description, acceptance criteria) and ``work_item_hash``; an unchanged hash is
skipped without embedding. Documents: chunks of ``chunk_size`` tokens with ``chunk_overlap`` (seed
§2.2), vector ids ``arch-{document_id}-{chunk_index}``, metadata per seed §11.1; an unchanged checksum
is skipped and a changed document's old chunks are deleted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loaders.workitems import work_item_hash
from shared.embeddings import Embedder
from shared.models import ArchitectureChunk, WorkItem
from shared.settings import ArchitectureLoaderConfig
from shared.textio import UnreadableInput, extract_text, file_extension, normalize
from shared.vectorstore import VectorIndex, VectorRecord

ADO_PREFIX = "ado-"
ARCH_PREFIX = "arch-"
EMBED_BATCH = 64


@dataclass
class LoadSummary:
    fetched: int = 0
    embedded: int = 0
    skipped: int = 0
    upserted: int = 0
    deleted: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "fetched": self.fetched,
            "embedded": self.embedded,
            "skipped": self.skipped,
            "upserted": self.upserted,
            "deleted": self.deleted,
            "errors": self.errors,
        }


def ado_vector_id(work_item_id: int) -> str:
    return f"{ADO_PREFIX}{work_item_id}"


def ado_metadata(item: WorkItem, project: str) -> dict[str, Any]:
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
    # Pinecone metadata cannot hold nulls: absent values are left out
    if item.parent_id is not None:
        meta["parent_id"] = item.parent_id
    if item.priority is not None:
        meta["priority"] = item.priority
    return meta


def _existing(index: VectorIndex, namespace: str, ids: Sequence[str], key: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for start in range(0, len(ids), 200):
        for vid, rec in index.fetch(namespace, ids[start : start + 200]).items():
            found[vid] = rec.metadata.get(key)
    return found


def _embed_and_upsert(
    embedder: Embedder,
    index: VectorIndex,
    namespace: str,
    batch: list[tuple[str, str, dict[str, Any]]],
    summary: LoadSummary,
    progress: Callable[[int], None] | None,
) -> None:
    for start in range(0, len(batch), EMBED_BATCH):
        chunk = batch[start : start + EMBED_BATCH]
        vectors = embedder.embed([text for _, text, _ in chunk])
        summary.embedded += len(chunk)
        summary.upserted += index.upsert(
            namespace,
            [
                VectorRecord(vid, vec.tolist(), meta)
                for (vid, _, meta), vec in zip(chunk, vectors, strict=True)
            ],
        )
        if progress:
            progress(len(chunk))


def index_work_items(
    embedder: Embedder,
    index: VectorIndex,
    project: str,
    items: Sequence[WorkItem],
    *,
    prune: bool = True,
    existing_ids: Iterable[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> LoadSummary:
    """Embed and upsert changed items; with ``prune``, delete indexed items no longer present
    (``existing_ids``: what the index holds under ``ado-``, when the caller knows it)."""
    summary = LoadSummary(fetched=len(items))
    ids = [ado_vector_id(i.work_item_id) for i in items]
    stored = _existing(index, project, ids, "work_item_hash")
    todo = []
    for vid, item in zip(ids, items, strict=True):
        meta = ado_metadata(item, project)
        if stored.get(vid) == meta["work_item_hash"]:
            summary.skipped += 1
            if progress:
                progress(1)
            continue
        todo.append((vid, item.embedding_text(), meta))
    _embed_and_upsert(embedder, index, project, todo, summary, progress)
    if prune:
        if existing_ids is None:
            lister = getattr(index, "list_ids", None)
            existing_ids = lister(project, ADO_PREFIX) if lister else []
        stale = sorted(set(existing_ids) - set(ids))
        if stale:
            summary.deleted = index.delete(project, stale)
    return summary


# ------------------------------------------------------------------------------------------------
# architecture documents

DOCUMENT_EXTENSIONS = ("md", "txt", "pdf", "docx")


def document_id(file_name: str) -> str:
    return hashlib.sha256(file_name.encode()).hexdigest()[:16]


def chunk_text(text: str, cfg: ArchitectureLoaderConfig, markdown: bool) -> list[str]:
    """Recursive token chunking with semantic-text-splitter (headings, paragraphs, sentences)."""
    from semantic_text_splitter import MarkdownSplitter, TextSplitter

    splitter_cls = MarkdownSplitter if markdown else TextSplitter
    splitter = splitter_cls.from_tiktoken_model("gpt-4o", cfg.chunk_size, overlap=cfg.chunk_overlap)
    return [c for c in splitter.chunks(text) if c.strip()]


def document_chunks(
    path: Path, project: str, cfg: ArchitectureLoaderConfig, now: datetime | None = None
) -> list[ArchitectureChunk]:
    data = path.read_bytes()
    ext = file_extension(path.name)
    if ext not in DOCUMENT_EXTENSIONS:
        raise UnreadableInput(f"unsupported document type '.{ext}'")
    text = normalize(extract_text(data, ext))
    checksum = hashlib.sha256(data).hexdigest()
    doc_id = document_id(path.name)
    chunks = chunk_text(text, cfg, markdown=ext == "md")
    uploaded = (now or datetime.now(UTC)).replace(microsecond=0)
    return [
        ArchitectureChunk(
            document_id=doc_id,
            chunk_id=f"{ARCH_PREFIX}{doc_id}-{n:04d}",
            checksum=checksum,
            project=project,
            uploaded_at=uploaded,
            file_name=path.name,
            chunk_index=n,
            total_chunks=len(chunks),
            text=chunk,
        )
        for n, chunk in enumerate(chunks)
    ]


def chunk_metadata(chunk: ArchitectureChunk) -> dict[str, Any]:
    meta = chunk.model_dump(mode="json", exclude_none=True)
    meta["uploaded_at"] = meta["uploaded_at"].replace("+00:00", "Z")
    return meta


def index_documents(
    embedder: Embedder,
    index: VectorIndex,
    project: str,
    paths: Sequence[Path],
    cfg: ArchitectureLoaderConfig,
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[LoadSummary, list[ArchitectureChunk]]:
    summary = LoadSummary()
    loaded: list[ArchitectureChunk] = []
    lister = getattr(index, "list_ids", None)
    for path in paths:
        summary.fetched += 1
        try:
            chunks = document_chunks(path, project, cfg)
        except (UnreadableInput, OSError) as err:
            summary.errors.append({"file": path.name, "error": str(err)})
            continue
        if not chunks:
            summary.errors.append({"file": path.name, "error": "no text to index"})
            continue
        first = chunks[0]
        stored = _existing(index, project, [first.chunk_id], "checksum")
        if stored.get(first.chunk_id) == first.checksum:
            summary.skipped += 1
            loaded.extend(chunks)
            continue
        old = lister(project, f"{ARCH_PREFIX}{first.document_id}-") if lister else []
        new_ids = {c.chunk_id for c in chunks}
        stale = [i for i in old if i not in new_ids]
        if stale:
            summary.deleted += index.delete(project, stale)
        _embed_and_upsert(
            embedder,
            index,
            project,
            [(c.chunk_id, c.text, chunk_metadata(c)) for c in chunks],
            summary,
            progress,
        )
        loaded.extend(chunks)
    return summary, loaded
