"""Reading uploads into text and cutting text into spans with stable character offsets.

Everything downstream points into the *normalized* transcript by character offset: segments,
source quotes, coverage. So normalization happens exactly once (here), and every span helper returns
``(start, end)`` offsets into the string it was given.
"""

from __future__ import annotations

import codecs
import io
import re
import unicodedata
from dataclasses import dataclass

SUPPORTED_EXTENSIONS = ("txt", "md", "vtt", "docx", "pdf")


class UnreadableInput(ValueError):
    """The upload cannot be turned into a transcript; the message says why, for the user."""


# ------------------------------------------------------------------------------------------------
# decoding


def file_extension(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def decode_text(data: bytes) -> str:
    """Bytes to str: BOMs first (UTF-8, UTF-16, UTF-32), then strict UTF-8, then Windows-1252/latin-1."""
    for bom, enc in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(enc)
            except UnicodeDecodeError as err:
                raise UnreadableInput(
                    f"the file starts with a {enc} byte-order mark but {err}"
                ) from None
    if b"\x00" in data[:4096]:
        raise UnreadableInput("the file looks binary (NUL bytes), not a text transcript")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_VTT_TIMING = re.compile(
    r"^\s*(\d{1,2}:)?\d{1,2}:\d{2}[.,]\d{3}\s+-->\s+(\d{1,2}:)?\d{1,2}:\d{2}[.,]\d{3}"
)
_VTT_VOICE = re.compile(r"<v(?:\.[^ >]*)?\s+([^>]+)>")
_TAG = re.compile(r"</?[^>]+>")


def vtt_to_transcript(text: str) -> str:
    """WebVTT captions to ``Speaker: text`` lines (timestamps, cue ids and styling dropped)."""
    lines: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if not block:
            return
        timing_at = next((i for i, ln in enumerate(block) if _VTT_TIMING.match(ln)), None)
        if timing_at is not None:
            for raw in block[timing_at + 1 :]:
                voice = _VTT_VOICE.search(raw)
                content = _TAG.sub("", raw).strip()
                if not content:
                    continue
                if voice:
                    lines.append(f"{voice.group(1).strip()}: {content}")
                else:
                    lines.append(content)
        block.clear()

    for raw in text.splitlines():
        if raw.strip() == "":
            flush()
        elif raw.startswith(("WEBVTT", "NOTE", "STYLE", "REGION")) and not block:
            block.append("")  # header or comment block: skipped by flush (no timing line)
        else:
            block.append(raw)
    flush()
    return "\n".join(lines)


def _docx_text(data: bytes) -> str:
    try:
        import docx  # python-docx
    except ImportError as err:  # pragma: no cover - it is a pinned dependency
        raise UnreadableInput("reading .docx needs python-docx") from err
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as err:
        raise UnreadableInput(f"the .docx file could not be read: {err}") from None
    return "\n".join(p.text for p in document.paragraphs)


def _pdf_text(data: bytes) -> str:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as err:  # pragma: no cover - it is a pinned dependency
        raise UnreadableInput("reading .pdf needs pypdf") from err
    try:
        reader = PdfReader(io.BytesIO(data))
        return "\n".join((page.extract_text() or "") for page in reader.pages)
    except (PdfReadError, ValueError, KeyError, TypeError) as err:
        raise UnreadableInput(f"the .pdf file could not be read: {err}") from None


def extract_text(data: bytes, ext: str) -> str:
    """The upload's text, not yet normalized. Raises UnreadableInput with a reason for the user."""
    ext = ext.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        raise UnreadableInput(
            f"unsupported file type '.{ext}'; supported: "
            + ", ".join(f".{e}" for e in SUPPORTED_EXTENSIONS)
        )
    if not data:
        raise UnreadableInput("the file is empty")
    if ext == "docx":
        return _docx_text(data)
    if ext == "pdf":
        return _pdf_text(data)
    text = decode_text(data)
    if ext == "vtt":
        text = vtt_to_transcript(text)
    return text


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TRAILING_WS = re.compile(r"[ \t]+\n")
_MANY_BLANK = re.compile(r"\n{3,}")


def normalize(text: str) -> str:
    """NFC, LF newlines, no control characters, no trailing spaces, at most one blank line in a row,
    ending in a single newline. Raises UnreadableInput when nothing readable is left."""
    if text and sum(1 for c in text[:8192] if _CONTROL.match(c)) > 0.02 * min(len(text), 8192):
        raise UnreadableInput("the file looks binary (control characters), not a text transcript")
    text = unicodedata.normalize("NFC", text)
    text = (
        text.replace("\r\n", "\n")
        .replace("\r", "\n")
        .replace("\u2028", "\n")
        .replace("\u2029", "\n")
    )
    text = _CONTROL.sub(" ", text).replace("\ufeff", "")
    text = _TRAILING_WS.sub("\n", text + "\n")
    text = _MANY_BLANK.sub("\n\n", text).strip("\n")
    if not text.strip():
        raise UnreadableInput("the file holds no text (empty or whitespace only)")
    return text + "\n"


# ------------------------------------------------------------------------------------------------
# spans


@dataclass(frozen=True)
class Span:
    start: int
    end: int

    def text(self, source: str) -> str:
        return source[self.start : self.end]


def line_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Lines of text[start:end], each span including its newline; they tile the range exactly."""
    end = len(text) if end is None else end
    spans: list[Span] = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl == -1 else nl + 1
        spans.append(Span(pos, stop))
        pos = stop
    return spans


_SPEAKER = re.compile(r"^([A-Z][\w .'-]{0,40}|[A-Z]{2,}\d*):\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[.!?])[\"')\]]*$")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|Mr|Mrs|Ms|Dr|No|approx|incl)\.$", re.IGNORECASE)


def speaker_of(line: str) -> tuple[str | None, int]:
    """('Marketing', 11) for 'Marketing: we need...' -> the speaker and where the content starts."""
    m = _SPEAKER.match(line)
    if not m:
        return None, 0
    return m.group(1).strip(), m.end()


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Sentences of text[start:end] without speaker prefixes, list markers or surrounding blanks."""
    end = len(text) if end is None else end
    out: list[Span] = []
    for line in line_spans(text, start, end):
        raw = text[line.start : line.end]
        _, content_at = speaker_of(raw)
        bullet = re.match(r"\s*(?:[-*+•]|\d+[.)]|#+)\s+", raw[content_at:])
        if bullet:
            content_at += bullet.end()
        pos = line.start + content_at
        body_end = line.start + len(raw.rstrip())
        cursor = pos
        for m in _SENTENCE_END.finditer(text, pos, body_end):
            if _ABBREV.search(text[cursor : m.start()]):
                continue
            _append_trimmed(text, cursor, m.start(), out)
            cursor = m.end()
        _append_trimmed(text, cursor, body_end, out)
    return out


def _append_trimmed(text: str, start: int, end: int, out: list[Span]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append(Span(start, end))


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def jaccard(a: str, b: str) -> float:
    sa, sb = set(words(a)), set(words(b))
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)
