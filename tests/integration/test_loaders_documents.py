"""The architecture loader end to end on a local folder store: .md .txt .pdf .docx into the index
with seed §11.1 metadata, originals stored, arch_vectors.jsonl; incremental by checksum (nothing
embedded twice), a changed document replaces its chunks, a removed one is pruned; a corrupt,
empty or unsupported file is one error while the others load."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from loaders import arch_loader
from shared import layout
from shared.bus.memory import InProcessBus
from shared.indexing.documents import document_id, load_documents
from shared.indexing.indexer import LoaderError
from shared.settings import Settings
from shared.storage.local import LocalFolderStore
from tests.support.fakes import HashEmbedder
from tests.support.pipeline import SAMPLES, fake_services

PROJECT = "rc"
SAMPLE_MD = SAMPLES / "architecture" / "remote_control_constraints.md"
SECTION_11_1 = {
    "document_id",
    "chunk_id",
    "doc_type",
    "source_type",
    "checksum",
    "project",
    "uploaded_at",
    "file_name",
    "chunk_index",
    "total_chunks",
}


def text_pdf(text: str) -> bytes:
    """A minimal one-page PDF with a Helvetica text stream (pypdf can read it; nothing to install)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def blank_pdf() -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def docx_bytes(*paragraphs: str) -> bytes:
    import docx

    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


@pytest.fixture
def embedder():
    return CountingEmbedder()


@pytest.fixture
def svc(tmp_path, embedder):
    settings = Settings(storage_backend="local", engine="offline", embedder="minilm")
    store = LocalFolderStore(tmp_path / "store")
    return fake_services(store, InProcessBus(), embedder=embedder, settings=settings)


@pytest.fixture
def docs(tmp_path) -> Path:
    folder = tmp_path / "architecture"
    (folder / "firmware").mkdir(parents=True)
    shutil.copy(SAMPLE_MD, folder / "constraints.md")
    (folder / "firmware" / "notes.txt").write_text(
        "Firmware updates in the field are not supported.\nKey presses reach the TV within 100 ms.\n"
    )
    (folder / "design.docx").write_bytes(
        docx_bytes("Case materials", "Titanium cases are only allowed in a flat shape.")
    )
    (folder / "power.pdf").write_bytes(text_pdf("Standby current stays below 5 microamps."))
    (folder / ".hidden.md").write_text("never loaded")
    return folder


def _chunks(svc) -> dict[str, dict]:
    ids = svc.index.list_ids(PROJECT, "arch-")
    return {vid: rec.metadata for vid, rec in svc.index.fetch(PROJECT, ids).items()}


def _lines(svc) -> list[dict]:
    text = svc.store.get(layout.arch_vectors(PROJECT)).decode()
    return [json.loads(line) for line in text.splitlines()]


def _texts_of(svc, source_path: str) -> str:
    return " ".join(m["text"] for m in _chunks(svc).values() if m["source_path"] == source_path)


def test_first_load_indexes_every_format_with_metadata_and_originals(svc, docs, embedder):
    summary = load_documents(svc, PROJECT, [docs])
    md_chunks = 3  # the sample is about 2,600 tokens: 3 chunks of <= 1000 with overlap
    assert summary.as_dict() == {
        "fetched": 4,
        "embedded": md_chunks + 3,
        "skipped": 0,
        "upserted": md_chunks + 3,
        "deleted": 0,
        "errors": [],
    }
    chunks = _chunks(svc)
    assert len(chunks) == md_chunks + 3 == len(embedder.texts)
    assert "Standby current stays below 5 microamps." in _texts_of(svc, "power.pdf")
    assert "only allowed in a flat shape" in _texts_of(svc, "design.docx")
    assert "within 100 ms" in _texts_of(svc, "firmware/notes.txt")
    for vid, meta in chunks.items():
        assert SECTION_11_1 <= set(meta)
        assert meta["doc_type"] == "architecture" and meta["source_type"] == "architecture_loader"
        assert meta["project"] == PROJECT and meta["chunk_id"] == vid
        assert meta["document_id"] == document_id(meta["source_path"])
        assert 0 <= meta["chunk_index"] < meta["total_chunks"]
    notes = next(m for m in chunks.values() if m["source_path"] == "firmware/notes.txt")
    assert notes["file_name"] == "notes.txt"
    for name in ("constraints.md", "firmware/notes.txt", "design.docx", "power.pdf"):
        stored = svc.store.get(layout.arch_raw(PROJECT, name))
        assert stored == (docs / name).read_bytes()
    assert not svc.store.exists(layout.arch_raw(PROJECT, ".hidden.md"))
    lines = _lines(svc)
    assert len(lines) == len(chunks)
    assert {line["vector_id"] for line in lines} == set(chunks)
    assert all(line["checksum"] == line["metadata"]["checksum"] for line in lines)


def test_reload_skips_then_a_change_replaces_then_a_removal_prunes(svc, docs, embedder):
    load_documents(svc, PROJECT, [docs])
    embedder.texts.clear()

    again = load_documents(svc, PROJECT, [docs])
    assert (again.fetched, again.embedded, again.skipped, again.deleted) == (4, 0, 4, 0)
    assert embedder.texts == []

    (docs / "firmware" / "notes.txt").write_text("Firmware can be updated over infrared.\n")
    changed = load_documents(svc, PROJECT, [docs])
    assert (changed.embedded, changed.skipped, changed.deleted) == (1, 3, 0)
    assert embedder.texts == ["Firmware can be updated over infrared."]
    assert "over infrared" in _texts_of(svc, "firmware/notes.txt")
    assert "within 100 ms" not in _texts_of(svc, "firmware/notes.txt")
    embedder.texts.clear()

    # a shorter version of a 3-chunk document: 1 chunk embedded, its 2 leftovers deleted
    (docs / "constraints.md").write_text("# Constraints v2\n\nTV only. Infrared only.\n")
    shorter = load_documents(svc, PROJECT, [docs])
    assert (shorter.embedded, shorter.deleted) == (1, 2)
    assert len([m for m in _chunks(svc).values() if m["source_path"] == "constraints.md"]) == 1

    (docs / "power.pdf").unlink()
    removed = load_documents(svc, PROJECT, [docs])
    assert (removed.fetched, removed.embedded, removed.skipped, removed.deleted) == (3, 0, 3, 1)
    assert "power.pdf" not in {m["source_path"] for m in _chunks(svc).values()}
    assert not svc.store.exists(layout.arch_raw(PROJECT, "power.pdf"))
    assert len(_lines(svc)) == len(_chunks(svc)) == 3


def test_bad_files_are_per_file_errors_and_the_rest_still_loads(svc, docs):
    load_documents(svc, PROJECT, [docs])
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    (docs / "broken.docx").write_bytes(b"PK\x03\x04 not a zip archive")
    (docs / "empty.md").write_bytes(b"")
    (docs / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (docs / "scan.pdf").write_bytes(blank_pdf())
    (docs / "new.md").write_text("# New\n\nThe remote has at most eight buttons.\n")
    summary = load_documents(svc, PROJECT, [docs])
    errors = {e["file"]: e["error"] for e in summary.errors}
    assert set(errors) == {"broken.pdf", "broken.docx", "empty.md", "diagram.png", "scan.pdf"}
    assert ".pdf file could not be read" in errors["broken.pdf"]
    assert ".docx file could not be read" in errors["broken.docx"]
    assert "empty" in errors["empty.md"]
    assert "unsupported document type '.png'" in errors["diagram.png"]
    assert "no text" in errors["scan.pdf"]
    assert (summary.fetched, summary.skipped, summary.embedded) == (10, 4, 1)
    assert "eight buttons" in _texts_of(svc, "new.md")


def test_a_present_but_now_unreadable_document_keeps_its_chunks(svc, docs):
    load_documents(svc, PROJECT, [docs])
    before = {k: v for k, v in _chunks(svc).items() if v["source_path"] == "design.docx"}
    (docs / "design.docx").write_bytes(b"corrupted by a bad sync")
    summary = load_documents(svc, PROJECT, [docs])
    assert [e["file"] for e in summary.errors] == ["design.docx"]
    assert summary.deleted == 0
    after = {k: v for k, v in _chunks(svc).items() if v["source_path"] == "design.docx"}
    assert after == before
    assert svc.store.get(layout.arch_raw(PROJECT, "design.docx")) != b"corrupted by a bad sync"


def test_single_files_touch_nothing_else_unless_prune(svc, docs, tmp_path):
    load_documents(svc, PROJECT, [docs])
    extra = tmp_path / "extra.txt"
    extra.write_text("An extra constraint.\n")
    one = load_documents(svc, PROJECT, [extra])
    assert (one.fetched, one.embedded, one.deleted) == (1, 1, 0)
    count = len(_chunks(svc))
    pruned = load_documents(svc, PROJECT, [extra], prune=True)
    assert pruned.skipped == 1 and pruned.deleted == count - 1
    assert {m["source_path"] for m in _chunks(svc).values()} == {"extra.txt"}


def test_missing_paths_and_empty_folders_never_wipe_the_index(svc, docs, tmp_path):
    load_documents(svc, PROJECT, [docs])
    count = len(_chunks(svc))
    with pytest.raises(LoaderError, match="no such file or folder"):
        load_documents(svc, PROJECT, [tmp_path / "architecure"], prune=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(LoaderError, match="--allow-empty"):
        load_documents(svc, PROJECT, [empty])
    assert len(_chunks(svc)) == count
    cleared = load_documents(svc, PROJECT, [empty], allow_empty=True)
    assert cleared.deleted == count and _chunks(svc) == {}


def test_a_chunking_change_rechunks_unchanged_files(svc, docs, embedder):
    load_documents(svc, PROJECT, [docs])
    embedder.texts.clear()
    svc.settings.pipeline.external_loaders.architecture.chunk_size = 500
    summary = load_documents(svc, PROJECT, [docs])
    assert summary.skipped == 0 and summary.embedded > 6
    md = [m for m in _chunks(svc).values() if m["source_path"] == "constraints.md"]
    assert len(md) > 3 and all(m["chunking"].endswith("/500/200") for m in md)


def test_command_json_line_exit_codes_and_the_cli_share_one_path(monkeypatch, tmp_path, docs):
    monkeypatch.delenv("AzureWebJobsStorage", raising=False)
    monkeypatch.setenv("SYNTH_STORAGE_BACKEND", "local")
    monkeypatch.setenv("SYNTH_LOCAL_STORE_DIR", str(tmp_path / "cli-store"))
    monkeypatch.setenv("SYNTH_EMBEDDER", "minilm")
    monkeypatch.setenv("SYNTH_VECTOR_STORE", "embedded")
    out, err = io.StringIO(), io.StringIO()
    code = arch_loader.main([str(docs), "--project", PROJECT, "--json"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    summary = json.loads(out.getvalue())
    assert out.getvalue().count("\n") == 1
    assert (summary["fetched"], summary["embedded"], summary["errors"]) == (4, 6, [])

    from shared import cli

    (docs / "empty.txt").write_bytes(b"")
    assert cli.main(["load-docs", str(docs), "--project", PROJECT]) == 1
    out = io.StringIO()
    code = arch_loader.main([str(docs), "--project", PROJECT], stdout=out, stderr=io.StringIO())
    assert code == 1
    assert "skipped 4" in out.getvalue() and "empty.txt" in out.getvalue()

    err = io.StringIO()
    code = arch_loader.main(
        [str(tmp_path / "nope"), "--project", PROJECT], stdout=io.StringIO(), stderr=err
    )
    assert code == 2 and "no such file or folder" in err.getvalue()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal():
    from shared.indexing.indexer import progress_bar

    terminal, pipe = _Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        with progress_bar(3, "documents", "doc", stream=stream) as advance:
            for _ in range(3):
                advance(1)
    assert "documents:" in terminal.getvalue() and "/3 [" in terminal.getvalue()
    assert pipe.getvalue() == ""
