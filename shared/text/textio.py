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
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from shared.errors import SynthesizerError

SUPPORTED_EXTENSIONS = ("txt", "md", "vtt", "srt", "docx", "pdf")

R = TypeVar("R")
SHORT_TEXT_CHARS = 2000  # short_text_cache remembers results for texts up to this length


class UnreadableInput(SynthesizerError, ValueError):
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


_CAPTION_TIMING = re.compile(  # "00:01:02.500 --> ...", "1:02,500 --> ...", "0:0:3.48 --> ..."
    r"^\s*(?P<start>(?:\d{1,2}:)?\d{1,2}:\d{1,2}[.,]\d{1,3})\s+-->\s+"
    r"(?:\d{1,2}:)?\d{1,2}:\d{1,2}[.,]\d{1,3}"
)
# a speaker's name on a line of its own at the top of each cue (Teams' older transcripts:
# "0:0:0.0 --> 0:0:3.480" / "Ana Lopez" / "We need reminders.")
_NAME_LINE = re.compile(r"[A-Z\u00c0-\u00de][\w.'-]*(?: [\w.'-]+){0,3}(?<![.])")
_MAX_SPEAKERS = 20
_VTT_VOICE = re.compile(r"<v(?:\.[^ >]*)?\s+([^>]+)>")
_TAG = re.compile(r"</?[^>]+>")
_BRACKET_NAME = re.compile(r"^\s*(?:-\s*)?\[(?P<name>[^\]\d][^\]]{0,40})\]\s*(?P<text>.*)$")


def _clock(stamp: str) -> str:
    """'00:01:02.500' / '1:02,500' / '0:03' -> '00:01:02' (whole seconds, always with hours)."""
    numbers = [int(p) for p in re.split(r"[.,]", stamp.strip())[0].split(":")]
    while len(numbers) < 3:
        numbers.insert(0, 0)
    h, m, sec = numbers[-3:]
    return f"{h:02d}:{m:02d}:{sec:02d}"


def _caption_parts(raw: str) -> tuple[str | None, str]:
    """(speaker or None, words) of one caption text line."""
    voice = _VTT_VOICE.search(raw)
    content = re.sub(r"^-\s+", "", _TAG.sub("", raw).strip())
    if voice:
        return voice.group(1).strip(), content
    bracket = _BRACKET_NAME.match(content)
    if bracket and bracket.group("text"):
        return bracket.group("name").strip(), bracket.group("text").strip()
    named = _LINE_PREFIX.match(content)
    if named and named.group("speaker"):
        return named.group("speaker").strip(), content[named.end() :].strip()
    return None, content


# a caption that ends a sentence ("... online.", "... fixed?\"", "... so.)")
_STOP = "[.!?\u2026]"  # what ends a sentence
_CLOSERS = "[\"'\u2019\u201d)\\]]*"  # closing quotes and brackets after it
_ENDS_A_SENTENCE = re.compile(rf"{_STOP}{_CLOSERS}$")
# captions punctuated (most cues end a sentence somewhere): only then does a cue that ends
# without one continue into the next; unpunctuated automatic captions keep one line per cue
_PUNCTUATED_SHARE = 0.3


def captions_to_transcript(text: str) -> str:
    """WebVTT or SubRip captions to ``[hh:mm:ss] Speaker: text`` lines, one per cue and speaker:
    the cue's start time and its speaker (``<v Name>``, ``[Name]`` or ``Name:``) kept, the lines
    of a cue joined, cue numbers, end times, styling, headers and notes dropped. A sentence the
    captions cut across cues ("So what we need is a way for" / "residents to report a pothole
    online.", as Teams, Zoom and YouTube cut them) is one line, timed by its first cue, when
    the same speaker goes on and the captions are punctuated: the engine reads and quotes it
    whole."""
    turns = _caption_turns(text)
    punctuated = [bool(re.search(_STOP, said)) for _, _, said in turns]
    join = bool(turns) and sum(punctuated) >= _PUNCTUATED_SHARE * len(turns)
    lines: list[tuple[str, str | None, str]] = []
    for stamp, speaker, said in turns:
        if join and lines and lines[-1][1] == speaker and not _ENDS_A_SENTENCE.search(lines[-1][2]):
            at, who, before = lines[-1]
            lines[-1] = (at, who, f"{before} {said}")
        else:
            lines.append((stamp, speaker, said))
    return "\n".join(
        f"[{stamp}] " + (f"{speaker}: {said}" if speaker else said)
        for stamp, speaker, said in lines
    )


def _names_on_their_own_line(cues: list[tuple[str, list[str]]]) -> set[str]:
    """The speakers' names when the captions put one on a line of its own at the top of every
    cue of two lines or more (a few names, each a short capitalised line that ends no sentence,
    each heading two cues on average); empty otherwise."""
    firsts = [raw[0].strip() for _, raw in cues if len(raw) >= 2]
    if len(cues) < 2 or len(firsts) < 0.8 * len(cues):
        return set()
    names = {f for f in firsts if _NAME_LINE.fullmatch(f) and not _VTT_VOICE.search(f)}
    if sum(1 for f in firsts if f in names) < 0.9 * len(firsts) or len(names) > _MAX_SPEAKERS:
        return set()
    # names come back cue after cue; the first lines of wrapped subtitles do not
    return names if 2 * len(names) <= len(firsts) else set()


def _caption_turns(text: str) -> list[tuple[str, str | None, str]]:
    """(start time, speaker or None, words) per cue and speaker, in order. A cue is its timing
    line and the lines after it up to the next cue's number or timing line (a line of spaces
    inside a cue, as YouTube writes them, does not end it); headers, NOTE, STYLE and REGION
    blocks are skipped."""
    cues: list[tuple[str, list[str]]] = []
    skipping = False  # inside a header or comment block
    after_blank = True
    maybe_number = False  # the line just before came after a blank: the next cue's number?
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            after_blank, skipping, maybe_number = True, False, False
            continue
        timing = _CAPTION_TIMING.match(line)
        if timing:
            if maybe_number and cues and cues[-1][1]:
                cues[-1][1].pop()  # "2" or a cue id before the timing: no words
            cues.append((_clock(timing.group("start")), []))
            skipping = maybe_number = False
        elif after_blank and line.startswith(("WEBVTT", "NOTE", "STYLE", "REGION")):
            skipping = True
        elif not skipping:
            maybe_number = after_blank
            if cues:
                cues[-1][1].append(line)
        after_blank = False
    named = _names_on_their_own_line(cues)
    lines: list[tuple[str, str | None, str]] = []
    shown: list[tuple[str | None, str]] = []  # the lines the cue before showed
    for stamp, raw_lines in cues:
        cue = [_caption_parts(raw) for raw in raw_lines]
        if named and len(raw_lines) >= 2 and raw_lines[0].strip() in named:
            cue = [(raw_lines[0].strip(), " ".join(words for _, words in cue[1:] if words))]
        said = [(speaker, words) for speaker, words in cue if words]
        # rolling captions (YouTube's) show the line before again above the new one: said
        # once (a line of a few words, the same speaker; "Yes." may well be said twice)
        fresh = said
        while fresh and fresh[0] in shown and len(fresh[0][1].split()) >= 3:
            fresh = fresh[1:]
        shown = said
        turns: list[tuple[str | None, list[str]]] = []
        for speaker, words in fresh:
            if turns and (speaker is None or speaker == turns[-1][0]):
                turns[-1][1].append(words)
            else:
                turns.append((speaker, [words]))
        lines += [(stamp, speaker, " ".join(spoken)) for speaker, spoken in turns]
    return lines


# Transcript exports put the speaker and the time on a line of their own and the words on the
# lines below: "Ana Lopez   0:03" (Teams, Stream, Otter), "[00:00:03] Ana Lopez", "Ana Lopez
# (00:00:03):" (Rev), "**Ana Lopez** 0:03"
_TIME = r"(?:\d{1,2}:)?\d{1,2}:\d{2}(?:[.,]\d{1,3})?"
# a name opens with a capital letter, accented ones too ("Élodie", "Øyvind")
_CAPITAL = r"[A-ZÀ-ÖØ-ÞĀ-Ž]"
_HEADER_NAME = rf"(?:\*\*)?{_CAPITAL}[\w .'-]{{0,40}}?(?:\*\*)?"
_SPEAKER_HEADER = re.compile(
    rf"^\s*(?:(?P<name>{_HEADER_NAME})\s+(?:[-\u2013\u2014|]\s+)?"  # "Ana Lopez - 0:03" too
    rf"(?:(?P<time>{_TIME})|[(\[](?P<time3>{_TIME})[)\]]:?)"
    rf"|\[(?P<time2>{_TIME})\]\s+(?P<name2>{_HEADER_NAME})"
    rf"|\[(?P<name4>{_HEADER_NAME})\]\s+(?P<time4>{_TIME}))\s*$"  # "[Ana Lopez] 10:03:15" (Zoom)
)


def speaker_blocks(paragraphs: list[str], keep_blank: bool = False) -> list[str]:
    """Paragraphs with ``Name  0:03`` header lines folded into ``[00:00:03] Name: text`` lines;
    unchanged when fewer than two such headers appear (then it is not a transcript export).
    ``keep_blank`` keeps the empty paragraphs (the blank lines of a text file)."""
    headers: list[tuple[str, str | None] | None] = []
    for p in paragraphs:
        header = _SPEAKER_HEADER.match(p)
        if header is None:
            headers.append(None)
            continue
        name = header.group("name") or header.group("name2") or header.group("name4")
        stamp = (
            header.group("time")
            or header.group("time2")
            or header.group("time3")
            or header.group("time4")
        )
        headers.append((name.strip(" *"), _clock(stamp)))
    if sum(1 for h in headers if h) < 2:
        headers = _names_alone(paragraphs)
        if not any(headers):
            return paragraphs
    out: list[str] = []
    current: tuple[str, str | None] | None = None
    for paragraph, found in zip(paragraphs, headers, strict=True):
        if found:
            current = found
        elif paragraph.strip() and current:
            stamp = f"[{current[1]}] " if current[1] else ""
            out.append(f"{stamp}{current[0]}: {paragraph.strip()}")
        elif paragraph.strip() or keep_blank:
            out.append(paragraph)
    return out


# a speaker's name alone on a line above their words, with no time ("ANA LOPEZ:", "Ana:")
_NAME_ALONE = re.compile(
    rf"^\s*(?:\*\*)?(?P<name>{_CAPITAL}[\w .'-]{{0,40}}?)(?:\*\*)?:(?:\*\*)?\s*$"
)


def _names_alone(paragraphs: list[str]) -> list[tuple[str, str | None] | None]:
    """Per paragraph, the speaker whose name it holds alone ("Ana Lopez:"), when the text is a
    transcript written that way: three such lines or more, two names or more, each name back
    twice on average (labels of notes, "Scope:" / "Budget:", come once each) and none a label
    of notes ("Decision:", "Action:"); all None otherwise."""
    found = [_NAME_ALONE.match(p) for p in paragraphs]
    names = [m.group("name").strip() for m in found if m]
    if (
        len(names) < 3
        or not 2 <= len(set(names)) <= _MAX_SPEAKERS
        or 2 * len(set(names)) > len(names) + 1
        or any(n.lower() in _NOTE_LABELS for n in names)
    ):
        return [None] * len(paragraphs)
    return [(m.group("name").strip(), None) if m else None for m in found]


def _docx_text(data: bytes) -> str:
    try:
        import docx  # python-docx
        from docx.table import Table
    except ImportError as err:  # pragma: no cover - it is a pinned dependency
        raise UnreadableInput("reading .docx needs python-docx") from err
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as err:  # noqa: BLE001 - python-docx on a hostile file raises anything
        raise UnreadableInput(f"the .docx file could not be read: {err}") from None
    lines: list[str] = []
    for block in document.iter_inner_content():  # paragraphs and tables, in document order
        if isinstance(block, Table):
            lines += _table_lines(block)
        else:
            lines.append(block.text)
    return "\n".join(speaker_blocks(lines))


def _table_lines(table: Any) -> list[str]:
    """A table's rows as lines: ``[0:03] Ana Lopez: words`` for a transcript's rows (a short
    name and a time, then the words), else its cells joined by " | " (merged cells once)."""
    out = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if text and (not cells or cells[-1] != text):
                cells.append(text)
        if not cells:
            continue
        timed = [c for c in cells if re.fullmatch(_TIME, c)]
        named = [c for c in cells if c not in timed and _NAME_LINE.fullmatch(c)]
        words = [c for c in cells if c not in timed and c not in named]
        if (
            len(cells) in (2, 3)
            and len(named) == 1
            and len(timed) <= 1
            and len(words) == 1
            and cells[-1] == words[0]  # the words last: "Decision | Owner" rows name an owner
        ):
            stamp = f"[{_clock(timed[0])}] " if timed else ""
            out.append(f"{stamp}{named[0]}: {words[0]}")
        else:
            out.append(" | ".join(cells))
    return out


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


# a line cut where a sentence goes on: long enough to have been wrapped, not ending a sentence
# or a label; the next line going on in lower case, with no speaker, list marker or heading
_WRAPPED_AT_LEAST = 40
_LINE_ENDS_A_SENTENCE = re.compile(rf"(?:{_STOP}|[:;]){_CLOSERS}\**\s*$")  # or a label
_STARTS_A_BLOCK = re.compile(r"^\s*(?:[-*+\u2022>#|]|\d+[.)]\s)")
_ALIGNED = re.compile(r"\S(?: {3,}|\t)\S")  # columns lined up with spaces: a table, kept


def unwrap(text: str) -> str:
    """``text`` with every line that a fixed width cut mid-sentence joined to the line it goes on
    from (PDF text, e-mail and editor wrapping: "a way for residents to report a" / "pothole
    online."), so a sentence is read and quoted whole. A line goes on from the one before when
    that one is at least ``_WRAPPED_AT_LEAST`` characters long and ends no sentence, label or
    heading, and it starts in lower case with no speaker, timecode or list marker of its own
    (lines of a fenced code block or of columns lined up with spaces stay as they are). A text
    with few sentence ends (under ``_PUNCTUATED_SHARE`` of its lines hold one) is left as it is:
    its lines are the only boundaries it has."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    said = [line for line in lines if line.strip()]
    ends = sum(1 for line in said if re.search(rf"{_STOP}(?:\s|$)", line))
    if ends < _PUNCTUATED_SHARE * len(said):
        # no sentence ends to go by (speech recognised one utterance a line, unpunctuated):
        # joining would run the whole text into one line
        return text
    out: list[str] = []
    fenced = False  # inside a ``` code block, lines stay as they are
    for line in lines:
        before = out[-1].rstrip() if out else ""
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if (
            not fenced
            and len(before) >= _WRAPPED_AT_LEAST
            and not _ALIGNED.search(before)
            and not _ALIGNED.search(line)
            and not _LINE_ENDS_A_SENTENCE.search(before)
            and not before.lstrip().startswith(("#", "|"))
            and re.match(r"\s*[a-z]", line)
            and not _STARTS_A_BLOCK.match(line)
            and not line_prefix(line).content_at
        ):
            out[-1] = f"{before} {line.strip()}"
        else:
            out.append(line)
    return "\n".join(out)


def _are_captions(text: str) -> bool:
    """Whether a text upload holds captions saved under another name (a ``.txt`` of WebVTT or
    SubRip cues): at least two cue timing lines, and one for every eight lines or fewer."""
    lines = [line for line in text.splitlines() if line.strip()]
    timed = sum(1 for line in lines if _CAPTION_TIMING.match(line))
    return timed >= 2 and timed * 8 >= len(lines)


def extract_text(data: bytes, ext: str, *, join_cut_lines: bool = True) -> str:
    """The upload's text, not yet normalized. Raises UnreadableInput with a reason for the user.
    ``join_cut_lines``: lines a fixed width cut mid-sentence are joined (``unwrap``), as a
    transcript is read; documents chunked by their own structure keep their lines (False)."""
    ext = ext.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        raise UnreadableInput(
            f"unsupported file type '.{ext}'; supported: "
            + ", ".join(f".{e}" for e in SUPPORTED_EXTENSIONS)
        )
    if not data:
        raise UnreadableInput("the file is empty")
    keep: Callable[[str], str] = unwrap if join_cut_lines else str
    if ext == "docx":
        text = _docx_text(data)
        return captions_to_transcript(text) if _are_captions(text) else keep(text)
    if ext == "pdf":
        return keep(_pdf_text(data))
    text = decode_text(data)
    if ext in ("vtt", "srt") or _are_captions(text):
        return captions_to_transcript(text)
    text = keep(text)
    lines = text.split("\n")
    folded = speaker_blocks(lines, keep_blank=True)
    return text if folded is lines else "\n".join(folded)


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


# "Marketing: ...", "[00:01:02] Ana Lopez: ...", "00:01:02 Ana: ..." (an unbracketed time only
# before a speaker, so "12:30 is the deadline" keeps its words), "[00:01:02] words", and as
# exports and notes write them: "**Ana Lopez:** ...", "**Ana**: ...", "Ana Lopez (00:01:02): ...",
# "Ana Lopez [00:01:02]: ...", "[SPEAKER_00]: ...", "(PERSON4) ...", "Tom (librarian): ..." (the
# speaker "Tom (librarian)")
_LINE_PREFIX = re.compile(
    rf"^(?:\[(?P<tc>{_TIME})\]\s+|(?P<tc2>{_TIME})\s+(?={_CAPITAL}[\w .'-]{{0,40}}:\s))?"
    # "[SPEAKER_00]: ..." (diarization output), "[Ana Lopez]: ...", "(PERSON4) ..." (ELITR)
    rf"(?:\[(?P<bracketed>{_CAPITAL}[\w .'-]{{0,40}}?)\]:\s+"
    r"|\((?P<parenthesized>[A-Z][A-Za-z_ ]{0,20}?\d{1,3})\):?\s+"  # a numbered speaker only
    rf"|(?P<bold>\*\*)?(?P<speaker>{_CAPITAL}[\w .'-]{{0,40}}?|[A-Z]{{2,}}\d*)"
    rf"(?:\s+\((?:(?P<tc3>{_TIME})|(?P<role>[A-Za-z][\w .'/&-]{{0,40}}))\)"
    rf"|\s+\[(?P<tc4>{_TIME})\])?"  # "Ana Lopez [00:01:02]: ..."
    r"(?(bold)(?::\*\*|\*\*:)|:)\s+)?"
)
# what notes label a line with, never a speaker, when a bracket follows ("Action (Tom): ...")
_NOTE_LABELS = frozenset(
    """note notes action actions decision decisions question questions answer todo update risk
    risks issue issues summary agenda item status outcome comment idea important warning example
    problem context goal owner topic follow-up""".split()
) | {"next step", "next steps", "open question", "open questions", "follow up", "action item"}
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[.!?])[\"')\]]*$")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|Mr|Mrs|Ms|Dr|approx|incl)\.$", re.IGNORECASE)
_NUMBER_ABBREV = re.compile(r"\bNo\.$")  # "No. 5" (a number), not "Ooh, no. They'd ..."


@dataclass(frozen=True)
class LinePrefix:
    speaker: str | None
    timecode: str | None
    content_at: int  # where the words start in the line


def line_prefix(line: str) -> LinePrefix:
    """'[00:01:02] Ana: we need...' -> speaker 'Ana', timecode '00:01:02', content at 16."""
    m = _LINE_PREFIX.match(line)
    if not m or not m.end():
        return LinePrefix(None, None, 0)
    stamp = m.group("tc") or m.group("tc2") or m.group("tc3") or m.group("tc4")
    speaker = m.group("speaker") or m.group("bracketed") or m.group("parenthesized")
    if speaker and m.group("role"):
        if speaker.strip().lower() in _NOTE_LABELS:  # "Note (important): ...": no one speaks
            return LinePrefix(None, None, 0)
        speaker = f"{speaker.strip()} ({m.group('role').strip()})"
    return LinePrefix(
        speaker.strip() if speaker else None, _clock(stamp) if stamp else None, m.end()
    )


def prefix_at(text: str, position: int) -> LinePrefix:
    """The speaker and timecode of the line of ``text`` that holds ``position``; a line that
    names none goes on with the turn above it ("Ana: We need reminders." / "They go out at six."
    is Ana's), up to a blank line or ``_TURN_LINES`` lines back; a list item or a heading is
    no one's."""
    if not 0 <= position <= len(text):
        return LinePrefix(None, None, 0)
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", start)
    here = text[start : len(text) if end < 0 else end]
    own = line_prefix(here)
    at = start
    said = own.speaker is None and not _STARTS_A_BLOCK.match(here)  # no list item of notes
    for _ in range(_TURN_LINES if said else 0):
        if at == 0:
            break
        above = text.rfind("\n", 0, at - 1) + 1
        line = text[above : at - 1]
        if not line.strip():
            break  # a blank line ends the turn
        turn = line_prefix(line)
        if turn.speaker:
            return LinePrefix(turn.speaker, own.timecode or turn.timecode, own.content_at)
        at = above
    return own


_TURN_LINES = 50  # how far above a line without a speaker its turn's speaker is looked for


def speaker_of(line: str) -> tuple[str | None, int]:
    """('Marketing', 11) for 'Marketing: we need...': the speaker and where the words start
    (after a leading timecode too)."""
    prefix = line_prefix(line)
    return prefix.speaker, prefix.content_at


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
            if _ABBREV.search(text[cursor : m.start()]) or (
                _NUMBER_ABBREV.search(text[cursor : m.start()])
                and text[m.end() : m.end() + 1].isdigit()
            ):
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


# ------------------------------------------------------------------------------------------------
# spoken text, cleaned

_MARKER = re.compile(r"\{\s*[A-Za-z_]+\s*\}")  # AMI: {vocalsound} {disfmarker} {gap}
_UNDERSCORE_ACRONYM = re.compile(r"\b((?:[A-Za-z]_){2,})")  # AMI: T_V_, L_C_D_
_FILLER_TOKEN = re.compile(
    r"(?<![\w'-])(?:u+m+|u+h+m*|e+r+m*|h+m+|m+h?m+|mm-hmm|uh-huh|um-hmm|ah+|oh+)(?![\w'-])"
    r"\s*,?",
    re.IGNORECASE,
)
# a filler set off by commas after a word that ends no phrase goes with both commas ("under, um,
# two hundred pounds" -> "under two hundred pounds"); after any other word one comma stays ("red,
# um, green and blue" -> "red, green and blue"), and so do both when a new clause starts after it
# ("tips are, um, I think we allow ...": the speaker started again)
_FILLER_BETWEEN_COMMAS = re.compile(
    r"(?P<before>[\w']+)\s*,\s*(?:u+m+|u+h+m*|e+r+m*|h+m+|you know|i mean)\s*,\s*"
    r"(?=\w)(?!(?:i|we|you|they|he|she|it|there|so|and|but|then)\b)",
    re.IGNORECASE,
)
_ENDS_NO_PHRASE = frozenset(
    """under over about around for with to of in on at by from into than the a an is are was
    were be been should must can could will would shall may might need needs have has had do
    does did it we they i you he she and or but that which who""".split()
)


def _without_filler(found: re.Match[str]) -> str:
    before = found.group("before")
    return f"{before} " if before.lower() in _ENDS_NO_PHRASE else f"{before}, "


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?])")
_REPEATED_WORD = re.compile(r"\b(\w+)(?:\s+\1\b)+", re.IGNORECASE)  # "to to", "like like"
# a phrase said again as the speaker restarts ("consistent with consistent with"), a longer word
# broken off ("doub double-curved"): ``clean_restarts``, for generated text only
_REPEATED_PHRASE = re.compile(r"\b(\w+(?:\s+\w+){0,3})(?:\s+\1\b)+", re.IGNORECASE)
_LONG_FRAGMENT = re.compile(r"(?<![-'\u2019])\b([A-Za-z]{4,})\s+(\1[a-z'][\w'-]*)", re.IGNORECASE)
_SPACES = re.compile(r"[ \t]+")
# AMI: a spelled letter broken off before the acronym is said whole ("L_ {disfmarker} L_C_D_")
# ("F_ eight", "three point O_" are kept: the letter is all that was said)
_SPELLED_LETTER = re.compile(r"(?<![\w'-])([A-Za-z])_\s+(?=([A-Z]{2,})\b)")
# a cut-off start of the next word, as in "w we'll", "wha what", "p portable"
_FRAGMENT = re.compile(r"(?<!['\u2019])\b([A-Za-z]{1,3})\s+(?=\1[a-z'])", re.IGNORECASE)
_SHORT_WORDS = frozenset(
    """a i an as at be by do go he if in is it me my no of on or so to up us we the and for are
    but not you all any can had her was one our out day get has him his how new now old see two
    way who did its let put say she too use few lot""".split()
)


_SET_OFF_FILLER = re.compile(
    r"(?:(?<=^)|(?<=[,.;:!?]\s)|(?<=[,.;:!?]))\s*(?:you know|i mean|like|sort of|kind of)\s*,\s*"
    r"|,\s*(?:you know|i mean)\s*(?=[,.;:!?]|$)|\b(?:you know|i mean)\s*,\s*",
    re.IGNORECASE,
)


def strip_markers(text: str) -> str:
    """The text without transcript markers ({vocalsound}, {disfmarker}, {gap}) and the spaces
    they leave; everything else as it was."""
    return _SPACES.sub(" ", _MARKER.sub(" ", text)).strip()


def short_text_cache(maxsize: int = 16384) -> Callable[[Callable[[str], R]], Callable[[str], R]]:
    """A pure function of one text, remembered per process for texts of at most
    ``SHORT_TEXT_CHARS`` characters (the most recent ``maxsize``; a longer text is computed each
    time, so a transcript is never held). For analyses that see the same short texts again and
    again: the tagging pair model compares every story with the same retrieved existing stories
    (docs/PERFORMANCE.md, "Fan-out"). The result is shared: it must be immutable (a str, a
    tuple, a frozenset)."""

    def decorate(fn: Callable[[str], R]) -> Callable[[str], R]:
        cached = lru_cache(maxsize=maxsize)(fn)

        def call(text: str) -> R:
            return cached(text) if len(text) <= SHORT_TEXT_CHARS else fn(text)

        call.__doc__, call.__name__ = fn.__doc__, fn.__name__
        return call

    return decorate


@short_text_cache()
def clean_spoken(text: str) -> str:
    """Spoken text made readable: AMI markers ({vocalsound}), fillers (uh, um), acronym
    underscores (T_V_), repeated words and cut-off word starts out. For analysis and for every
    generated text field; never for quotes, which stay verbatim."""
    text = _MARKER.sub(" ", text)
    text = _UNDERSCORE_ACRONYM.sub(lambda m: m.group(1).replace("_", "").upper(), text)
    text = _FILLER_TOKEN.sub(" ", text)
    text = _SET_OFF_FILLER.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _REPEATED_WORD.sub(r"\1", text)
    text = _FRAGMENT.sub(
        lambda m: "" if m.group(1).lower() not in _SHORT_WORDS else m.group(0), text
    )
    text = _SPACES.sub(" ", text)
    return re.sub(r"^[\s,;:.]+", "", text).strip()


# a preposition or article left hanging where the speaker broke off ("time in {disfmarker} and
# effort"): for generated text only (``drop_abandoned``), before the markers are cleaned out
_ABANDONED = re.compile(
    r"(?<!kind )(?<!sort )\b(?:in|on|at|of|for|with|from|into|about|the|a|an)\s+"
    r"(?=\{\s*disfmarker\s*\})",
    re.IGNORECASE,
)


# a word the speaker broke off after and said again once the repair was in ("change mode
# {disfmarker} zapping mode", "it {disfmarker} I think it"): the repair replaces it
_RESTATED = re.compile(r"\b(\w+)\s+\{\s*disfmarker\s*\}\s+((?:[\w']+\s+){1,2}?)\1\b", re.IGNORECASE)
# ... and the verb before it, when the repair changes that verb ("has to {disfmarker} have to")
_AUX = r"(?:has|have|had|is|are|was|were|be|can|could|will|would|should|must|do|does|did)"
_RESTATED_VERB = re.compile(
    rf"\b{_AUX}\s+(\w+)\s+\{{\s*disfmarker\s*\}}\s+({_AUX}\s+)\1\b", re.IGNORECASE
)


# a noun phrase broken off and said again from its determiner ("these messages {disfmarker}
# these key buttons"): the repair replaces it
_RESTARTED_PHRASE = re.compile(
    r"\b(these|those|this|the|our|their|your|my)\s+(?:[\w']+\s+){1,2}\{\s*disfmarker\s*\}\s+"
    r"(?=\1\s)",
    re.IGNORECASE,
)


def drop_abandoned(text: str) -> str:
    """Raw spoken text without a preposition or article the speaker broke off after ("lots of
    time in {disfmarker} and effort" -> "lots of time {disfmarker} and effort") and without a
    word the repair says again ("change mode {disfmarker} zapping mode" -> "change zapping
    mode", "these messages {disfmarker} these key buttons" -> "these key buttons"), and without
    a filler set off by commas after a word that ends no phrase, commas and
    all ("under, um, two hundred" -> "under two hundred"), and without the stress on a want
    ("we'd really like" -> "we'd like"). For generated text (the offline drafts) only: the
    analyses keep the text they were measured on; quotes stay verbatim."""
    text = _RESTATED_VERB.sub(r"\2\1", _ABANDONED.sub("", _RESTARTED_PHRASE.sub("", text)))
    text = _FILLER_BETWEEN_COMMAS.sub(_without_filler, text)
    text = _LIKE_STRESSED.sub(r"\1 \2", text)
    return _RESTATED.sub(r"\2\1", text)


# "we'd really like automatic reminders": the want, without the stress on it (which the spoken
# cleaning would take for a filler "really like", and drop both words)
_LIKE_STRESSED = re.compile(
    r"\b(would|'d|\u2019d)\s+(?:really|just|also|so|very much|actually|definitely)\s+(like|love)\b",
    re.IGNORECASE,
)


# an auxiliary said again as another ("you don't won't have to", "it can will be"): the second
# ("what we can do will help" keeps its words: a bare "do" is a verb)
_RESTART_AUX = (
    r"(?:don't|doesn't|will|won't|can|can't|could|couldn't|should|shouldn't|would|wouldn't)"
)
_RESTARTED_AUXILIARY = re.compile(
    rf"\b{_RESTART_AUX}\s+({_RESTART_AUX})(?=\s+(?!not\b)[a-z])", re.IGNORECASE
)

# one word of a phrase said again in its place ("scroll it straight roll it straight down"):
# the phrase as said the second time; not a phrase of function words ("the power button and
# the mute and the joystick")
_FUNCTION = (
    r"(?:and|or|but|then|so|if|the|a|an|this|that|we|you|i|they|it|to|of|in|on|at|can|could"
    r"|will|would|should|must|be|is|are|have|has|do)"
)
_RESTARTED_WORD = re.compile(
    rf"\b(?!{_FUNCTION}\b)([a-z]+)\s+((?!(?:and|or|but|then|so|if)\s)[a-z']+\s+(?!{_FUNCTION}\b)[a-z']+)\s+"
    rf"(?!{_FUNCTION}\b)(?!\1\b)([a-z]+)\s+\2\b",
    re.IGNORECASE,
)


def _said_anew(found: re.Match[str]) -> str:
    """The phrase as said the second time, unless its new word is a start of the old one broken
    off ("it signals the different sig the different symbols": "signals the different")."""
    old, phrase, new = found.group(1), found.group(2), found.group(3)
    if old.lower().startswith(new.lower()):
        return f"{old} {phrase}"
    return f"{new} {phrase}"


def clean_restarts(text: str) -> str:
    """``clean_spoken`` text without the restarts it keeps: a word or phrase said twice ("in the
    in the design" -> "in the design") and a start of the next word of four letters or more that
    is no word ("doub double-curved", "everyth everything", "devel develop"); a word before a
    longer one that starts with it ("some something", "techno technologically") stays, a
    spelled letter broken off ("L_ LCD") goes, and so does a phrase whose one word was said anew
    ("scroll it straight roll it straight down" -> "roll it straight down"). For
    generated text (the offline drafts) only: the analyses keep the text they were measured on."""
    from shared.embeddings.minilm import vocabulary_words

    text = _SPELLED_LETTER.sub(
        lambda m: "" if m.group(1).upper() == m.group(2)[0] else m.group(0), text
    )
    text = _REPEATED_PHRASE.sub(r"\1", text)
    text = _RESTARTED_AUXILIARY.sub(r"\1", text)
    text = _RESTARTED_WORD.sub(_said_anew, text)
    words = vocabulary_words()

    def repair(found: re.Match[str]) -> str:
        start, word = found.group(1), found.group(2)
        if start.lower() in words:
            return found.group(0)
        return word[0].upper() + word[1:] if start[0].isupper() else word

    return _LONG_FRAGMENT.sub(repair, text)
