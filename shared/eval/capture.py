"""Requirement capture: does a run quote what the meeting asked for, and only that?

A capture dataset (``datasets/capture-v1``, see its README) holds meetings as numbered statements
labelled ``F`` (functional need or decision), ``A`` (quality constraint) or ``NULL``. Each meeting
becomes a transcript (one statement per line) that goes through the configured engine, the whole
pipeline in-process (segmentation, generation, tagging against an empty backlog, finalize) on a
temporary local store, so what is measured is what a user gets. Then, per meeting and overall:

- **statement recall**: share of F/A statements that some story quotes (a quote overlapping the
  statement's characters counts);
- **quote precision**: share of the statements quoted by some story that are F/A;
- **story precision**: share of stories whose main quote (the first of ``source_quotes``) lies in
  an F/A statement;
- **criterion precision**: share of acceptance criteria drawn from an F/A statement (each
  criterion is traced to the quoted statement that shares most of its content words: the drafting
  is literal, so the source is the statement it was cut from);
- the model-free story checks of ``eval judge`` (``shared.eval.checks``) on the same stories.

``eval/{eval_id}/capture.json`` holds the figures, ``capture_stories.jsonl`` every story with the
labels of the statements it quotes, for error analysis.

Other forms of the same meeting: ``captions=N`` uploads each spoken meeting as WebVTT captions
(``as_captions``), every turn cut into cues of N words wherever the N-th word falls, as meeting
tools caption speech, so a sentence often runs over two cues (written notes stay text);
``wrap=N`` uploads it as text hard-wrapped at N columns (``as_wrapped``: each turn one
paragraph, or each line of notes, cut where the line is full, as PDF text, e-mail and editors
cut them). The statements are found again, word for word, in the transcript the upload became
(``spans_by_words``) and scored the same way.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from shared.embeddings import Embedder
from shared.errors import SynthesizerError
from shared.models import GeneratedItem, utcnow
from shared.settings import Settings
from shared.text.textio import Span, line_spans, speaker_of

LABELS = ("F", "A", "NULL")
REQUIREMENT_LABELS = frozenset({"F", "A"})
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "datasets" / "capture-v1" / "test"
PROJECT = "capture-eval"


class DatasetError(SynthesizerError, ValueError):
    """A capture file that does not follow the format; the message names the file and line."""


@dataclass
class Statement:
    number: int
    text: str
    label: str
    span: Span = field(default_factory=lambda: Span(0, 0))  # its content in the transcript

    @property
    def is_requirement(self) -> bool:
        return self.label in REQUIREMENT_LABELS


@dataclass
class Meeting:
    meeting_id: str
    path: Path
    statements: list[Statement]
    transcript: str = ""
    sha256: str = ""


def read_meeting(path: Path) -> Meeting:
    """One ``statement_no<TAB>text<TAB>label`` file; the transcript is the statements, one a line."""
    statements: list[Statement] = []
    raw = path.read_bytes()
    for n, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != 3:
            raise DatasetError(f"{path}:{n}: expected 3 tab-separated columns, got {len(cells)}")
        number, text, label = cells[0].strip(), cells[1].strip(), cells[2].strip().upper()
        if label not in LABELS:
            raise DatasetError(f"{path}:{n}: label {cells[2]!r} is not one of F, A, NULL")
        if not number.isdigit() or not text:
            raise DatasetError(f"{path}:{n}: a statement number and a text are required")
        statements.append(Statement(int(number), " ".join(text.split()), label))
    if not statements:
        raise DatasetError(f"{path}: no statements")
    meeting = Meeting(path.stem, path, statements, sha256=hashlib.sha256(raw).hexdigest())
    meeting.transcript = "\n".join(s.text for s in statements) + "\n"
    for statement, span in zip(statements, line_spans(meeting.transcript), strict=True):
        line = meeting.transcript[span.start : span.end].rstrip("\n")
        _, content_at = speaker_of(line)
        statement.span = Span(span.start + content_at, span.start + len(line))
    return meeting


def read_meetings(folder: Path) -> list[Meeting]:
    """Every ``*.tsv`` of a split folder, or of its ``dev/`` and ``test/`` folders."""
    folder = Path(folder)
    if folder.is_file():
        return [read_meeting(folder)]
    files = sorted(folder.glob("*.tsv")) or sorted(folder.glob("*/*.tsv"))
    if not files:
        raise DatasetError(f"{folder}: no *.tsv meeting files")
    return [read_meeting(f) for f in files]


def spoken(meeting: Meeting) -> bool:
    """Whether the meeting is speech (most statements name their speaker), not written notes."""
    named = sum(1 for s in meeting.statements if speaker_of(s.text)[0])
    return named >= 0.8 * len(meeting.statements)


def as_captions(meeting: Meeting, words_per_cue: int) -> str:
    """The meeting as WebVTT captions: each turn (a speaker's statements in a row) cut into cues
    of ``words_per_cue`` words, two seconds a cue, the speaker as ``<v Name>``."""
    cues = ["WEBVTT", ""]
    second = 0
    for speaker, words in _turns(meeting):
        for at in range(0, len(words), words_per_cue):
            said = " ".join(words[at : at + words_per_cue])
            start, end = _vtt_time(second), _vtt_time(second + 2)
            cues += [f"{start} --> {end}", f"<v {speaker}>{said}" if speaker else said, ""]
            second += 2
    return "\n".join(cues)


def as_wrapped(meeting: Meeting, width: int) -> str:
    """The meeting as text hard-wrapped at ``width`` columns: each turn (a speaker's statements
    in a row) one paragraph, ``Name: `` on its first line, cut wherever the line is full;
    written notes line by line, a line's continuation indented as in Markdown."""
    import textwrap

    lines: list[str] = []
    if not spoken(meeting):  # notes: each line its own paragraph, its bullet kept
        for statement in meeting.statements:
            lines += textwrap.wrap(
                statement.text,
                width,
                subsequent_indent="  ",
                break_long_words=False,
                break_on_hyphens=False,
            )
        return "\n".join(lines) + "\n"
    for speaker, words in _turns(meeting):
        said = f"{speaker}: {' '.join(words)}" if speaker else " ".join(words)
        lines += textwrap.wrap(said, width, break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def _turns(meeting: Meeting) -> list[tuple[str | None, list[str]]]:
    """(speaker, words) of each turn: the statements one speaker says in a row."""
    turns: list[tuple[str | None, list[str]]] = []
    for statement in meeting.statements:
        speaker, content_at = speaker_of(statement.text)
        words = statement.text[content_at:].split()
        if turns and turns[-1][0] == speaker:
            turns[-1][1].extend(words)
        else:
            turns.append((speaker, words))
    return turns


def _vtt_time(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000"


def spans_by_words(transcript: str, statements: list[Statement]) -> list[Span]:
    """Each statement's characters in ``transcript``, found by its words in order (the line
    prefixes ``[hh:mm:ss] Name: `` the captions became are skipped): from its first word to its
    last, over a line break when the upload cut it."""
    found = []  # (start, end) of every word said, line prefixes left out
    for line in line_spans(transcript):
        text = transcript[line.start : line.end]
        _, content_at = speaker_of(text)
        found += [
            (line.start + content_at + m.start(), line.start + content_at + m.end())
            for m in re.finditer(r"\S+", text[content_at:])
        ]
    spans: list[Span] = []
    at = 0
    for statement in statements:
        _, content_at = speaker_of(statement.text)
        words = statement.text[content_at:].split()
        n = len(words)
        said = [transcript[a:b] for a, b in found[at : at + n]]
        if said != words:
            raise RuntimeError(
                f"statement {statement.number} is not in the upload's transcript word for word"
            )
        spans.append(Span(found[at][0], found[at + n - 1][1]))
        at += n
    return spans


# ------------------------------------------------------------------------------------------------
# scoring


def statement_index(meeting: Meeting) -> Callable[[int, int], list[Statement]]:
    """``(start, end) -> statements overlapping it``."""
    spans = [(s.span.start, s.span.end, s) for s in meeting.statements]

    def overlapping(start: int, end: int) -> list[Statement]:
        return [s for a, b, s in spans if a < end and start < b]

    return overlapping


def score_meeting(meeting: Meeting, stories: list[GeneratedItem]) -> tuple[dict[str, Any], list]:
    """(figures, one row per story) for the stories a run generated from ``meeting``."""
    overlapping = statement_index(meeting)
    quoted: dict[int, Statement] = {}
    rows = []
    main_ok = criteria = criteria_ok = 0
    for story in stories:
        labels = []
        mine: dict[int, Statement] = {}
        for q in story.source_quotes:
            hit = overlapping(q.start, q.end)
            for s in hit:
                quoted[s.number] = mine[s.number] = s
            labels.append([f"{s.number}:{s.label}" for s in hit])
        for q in story.superseded_quotes:  # evidence of the need too: what the meeting revised
            quoted.update((s.number, s) for s in overlapping(q.start, q.end))
        main = overlapping(story.source_quotes[0].start, story.source_quotes[0].end)
        ok = any(s.is_requirement for s in main)
        main_ok += ok
        sources = [
            criterion_source(ac, list(mine.values()), story.title)
            for ac in story.acceptance_criteria
        ]
        criteria += len(sources)
        criteria_ok += sum(1 for s in sources if s is not None and s.is_requirement)
        rows.append(
            {
                "meeting": meeting.meeting_id,
                "story_id": story.item_id,
                "title": story.title,
                "description": story.description,
                "acceptance_criteria": list(story.acceptance_criteria),
                "main_quote_is_requirement": ok,
                "criteria_sources": [f"{s.number}:{s.label}" if s else None for s in sources],
                "quotes": [q.text for q in story.source_quotes],
                "quoted_statements": labels,
                "superseded": [q.text for q in story.superseded_quotes],
            }
        )
    wanted = [s for s in meeting.statements if s.is_requirement]
    hits = [s for s in wanted if s.number in quoted]
    relevant_quoted = [s for s in quoted.values() if s.is_requirement]
    figures = {
        "meeting": meeting.meeting_id,
        "statements": len(meeting.statements),
        "requirement_statements": len(wanted),
        "quoted_requirement_statements": len(hits),
        "statement_recall": _ratio(len(hits), len(wanted)),
        "quoted_statements": len(quoted),
        "quote_precision": _ratio(len(relevant_quoted), len(quoted)),
        "stories": len(stories),
        "stories_main_quote_requirement": main_ok,
        "story_precision": _ratio(main_ok, len(stories)),
        "criteria": criteria,
        "criteria_from_requirements": criteria_ok,
        "criterion_precision": _ratio(criteria_ok, criteria),
        "missed": [f"{s.number}: {s.text[:120]}" for s in wanted if s.number not in quoted][:40],
    }
    return figures, rows


def criterion_source(
    criterion: str, statements: list[Statement], title: str = ""
) -> Statement | None:
    """The statement a criterion was drafted from: the one sharing the largest share of what the
    criterion adds to the title (its content words not in the title; all of them when it adds
    none); ties go to the earlier statement; None when none shares a word."""
    from shared.text.language import content_words

    words = set(content_words(criterion))
    words = (words - set(content_words(title))) or words
    best: tuple[float, int] = (0.0, 0)
    found: Statement | None = None
    for s in sorted(statements, key=lambda s: s.number):
        shared = len(words & set(content_words(s.text)))
        score = (shared / len(words) if words else 0.0, -s.number)
        if shared and score > best:
            best, found = score, s
    return found


def overall(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Micro-averaged figures over meetings (each statement and story counts once)."""

    def total(key: str) -> int:
        return sum(int(r[key]) for r in rows)

    return {
        "meetings": len(rows),
        "statements": total("statements"),
        "requirement_statements": total("requirement_statements"),
        "statement_recall": _ratio(
            total("quoted_requirement_statements"), total("requirement_statements")
        ),
        "quote_precision": _ratio(
            sum(round(r["quote_precision"] * r["quoted_statements"]) for r in rows),
            total("quoted_statements"),
        ),
        "stories": total("stories"),
        "story_precision": _ratio(total("stories_main_quote_requirement"), total("stories")),
        "criteria": total("criteria"),
        "criterion_precision": _ratio(total("criteria_from_requirements"), total("criteria")),
        "judge_all_checks_passed": _ratio(
            sum(r["judge"]["all_checks_passed"] for r in rows if "judge" in r),
            sum(r["judge"]["stories"] for r in rows if "judge" in r),
        ),
    }


def _ratio(a: float, b: float) -> float:
    return round(a / b, 4) if b else 0.0


# ------------------------------------------------------------------------------------------------
# running


def _run_meeting(
    svc: Any, bus: Any, meeting: Meeting, captions: int = 0, wrap: int = 0
) -> tuple[Any, list[GeneratedItem], Any, Meeting]:
    """The run of ``meeting`` uploaded as text, one statement a line (or as captions of
    ``captions`` words a cue, or as text wrapped at ``wrap`` columns), and the meeting to score
    it by: ``meeting`` itself, or a copy whose statements are spanned in the transcript the
    captions or the wrapped text became."""
    from shared import layout
    from shared.models import Segment, TaggingRecord
    from shared.pipeline.runs import load_run, start_run
    from shared.storage import NotFound, read_jsonl

    captions = captions if captions and spoken(meeting) else 0  # written notes stay text
    if captions:
        text = as_captions(meeting, captions)
    else:
        text = as_wrapped(meeting, wrap) if wrap else meeting.transcript
    data = text.encode("utf-8")
    name = f"{meeting.meeting_id}.{'vtt' if captions else 'txt'}"
    blob_path = layout.transcript_drop(PROJECT, name)
    svc.store.put(blob_path, data)
    run = start_run(svc, blob_path, data)
    bus.drain()
    run = load_run(svc, run.run_id)
    if run.status not in ("completed", "completed_with_errors"):
        raise RuntimeError(
            f"{meeting.meeting_id}: the run ended {run.status}: {run.failure_reason}"
        )
    transcript = svc.store.get(layout.transcript(run.run_id)).decode()
    scored = meeting
    if captions or wrap:
        spans = spans_by_words(transcript, meeting.statements)
        scored = replace(
            meeting,
            statements=[
                replace(s, span=span) for s, span in zip(meeting.statements, spans, strict=True)
            ],
        )
    elif transcript != meeting.transcript:
        raise RuntimeError(
            f"{meeting.meeting_id}: the normalized transcript differs from the statements joined "
            "by newlines (offsets would not match); check the file for unusual characters"
        )
    items = read_jsonl(svc.store, layout.generated_backlog(run.run_id), GeneratedItem)
    try:
        records = read_jsonl(svc.store, layout.tagging_analysis(run.run_id), TaggingRecord)
    except NotFound:
        records = []
    segments = read_jsonl(svc.store, layout.segments(run.run_id), Segment)
    return run, items, (records, segments, transcript), scored


def evaluate(
    settings: Settings,
    meetings: list[Meeting],
    *,
    progress: Callable[[str], None] | None = None,
    held_out_models: dict[str, dict[str, Any]] | None = None,
    embedder: Embedder | None = None,
    captions: int = 0,
    wrap: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run every meeting through the configured engine; (capture.json, story rows).
    ``held_out_models`` (``train_capture.held_out_models``): each meeting is classified with the
    capture model given for it, trained without it (a leave-one-meeting-out estimate on dev).
    ``embedder``: used instead of the configured one (the training sweep reuses one that keeps
    its vectors). ``captions``: each meeting uploaded as captions of that many words a cue
    (``as_captions``); ``wrap``: as text wrapped at that many columns (``as_wrapped``); 0, one
    statement a line."""
    from contextlib import nullcontext

    from shared.analysis.capture import CaptureModel, held_out
    from shared.bus.memory import InProcessBus
    from shared.eval.quality import judge_run
    from shared.pipeline import bind_in_process
    from shared.services import Services, build_agents, build_embedder
    from shared.storage.local import LocalFolderStore
    from shared.vectorstore.embedded import EmbeddedVectorIndex

    rows: list[dict[str, Any]] = []
    story_rows: list[dict[str, Any]] = []
    engine = version = segmenter = embedder_name = None
    model: str | None = None
    with tempfile.TemporaryDirectory(prefix="synth-capture-") as tmp:
        bus = InProcessBus(workers=settings.workers)
        svc = Services(
            settings=settings,
            store=LocalFolderStore(tmp),
            bus=bus,
            embedder_factory=build_embedder if embedder is None else lambda *_: embedder,
            # an empty index of its own: capture is measured without a backlog
            index_factory=lambda s, st, e: EmbeddedVectorIndex(st, e.dimension),
            agents_factory=build_agents,
        )
        bind_in_process(bus, svc)
        for meeting in meetings:
            if progress:
                progress(meeting.meeting_id)
            began = time.perf_counter()
            doc = (held_out_models or {}).get(meeting.meeting_id)
            with held_out(CaptureModel(doc)) if doc else nullcontext():
                run, items, (records, segments, transcript), scored = _run_meeting(
                    svc, bus, meeting, captions, wrap
                )
            seconds = time.perf_counter() - began
            stories = [i for i in items if i.type == "User Story"]
            figures, srows = score_meeting(scored, stories)
            checked, judged = judge_run(items, records, segments, transcript)
            failing = {
                r["story_id"]: [name for name, c in r["checks"].items() if not c["passed"]]
                for r in checked
            }
            for row in srows:
                row["failed_checks"] = failing.get(row["story_id"], [])
            figures["judge"] = {
                "stories": judged["stories"],
                "all_checks_passed": judged["all_checks_passed"],
                "pass_rate": judged["pass_rate"],
            }
            figures["run_seconds"] = round(seconds, 2)
            figures["run_status"] = run.status
            rows.append(figures)
            story_rows.extend(srows)
            engine, model = run.engine, run.model or model
            embedder_name = run.embedding_model
            version = next((s.generation_agent_version for s in stories), version)
            segmenter = next((s.segmentation_version for s in segments), segmenter)
    shipped = None if held_out_models else CaptureModel.load().version
    basis = json.dumps(
        {
            "meetings": [m.sha256 for m in meetings],
            "engine": engine,
            "model": model,
            "generator": version,
            "segmenter": segmenter,
            "embedder": embedder_name,
            "capture_model": shipped,
            "settings": settings.pipeline.generation.model_dump(mode="json"),
            **({"captions": captions} if captions else {}),
            **({"wrap": wrap} if wrap else {}),
            **(
                {"held_out": sorted(f"{k}:{d['version']}" for k, d in held_out_models.items())}
                if held_out_models
                else {}
            ),
        },
        sort_keys=True,
        default=str,
    )
    eval_id = f"capture-{hashlib.sha256(basis.encode()).hexdigest()[:10]}"
    document = {
        "eval_id": eval_id,
        "kind": "capture",
        "created_at": utcnow().isoformat().replace("+00:00", "Z"),
        "engine": engine,
        "model": model,
        "generation_agent_version": version,
        "segmentation_version": segmenter,
        "embedder": embedder_name,
        "capture_model": shipped,  # None: each meeting had its held-out model
        "leave_one_meeting_out": bool(held_out_models),
        "captions_words_per_cue": captions or None,
        "wrapped_at_columns": wrap or None,
        "dataset": [
            {"meeting": m.meeting_id, "path": str(m.path), "sha256": m.sha256} for m in meetings
        ],
        "overall": overall(rows),
        "meetings": rows,
    }
    return document, story_rows


def render(document: dict[str, Any]) -> str:
    from shared.eval.report import table

    def line(r: dict[str, Any], name: str) -> list[Any]:
        judge = r.get("judge") or {}
        judged = judge.get("stories") or 0
        return [
            name,
            r["statements"],
            r["requirement_statements"],
            r["statement_recall"],
            r["quote_precision"],
            r["stories"],
            r["story_precision"],
            r.get("criterion_precision"),
            (judge.get("all_checks_passed", 0) / judged) if judged else None,
        ]

    rows = [line(r, r["meeting"]) for r in document["meetings"]]
    o = document["overall"]
    rows.append(
        [
            "overall",
            o["statements"],
            o["requirement_statements"],
            o["statement_recall"],
            o["quote_precision"],
            o["stories"],
            o["story_precision"],
            o.get("criterion_precision"),
            o["judge_all_checks_passed"],
        ]
    )
    lomo = " (leave one meeting out)" if document.get("leave_one_meeting_out") else ""
    head = (
        f"requirement capture{lomo}  ({document['eval_id']})\n"
        f"engine {document['engine']} ({document['generation_agent_version']}, "
        f"{document.get('segmentation_version')}), "
        f"embedder {document['embedder']}\n"
    )
    return head + table(
        [
            "meeting",
            "statements",
            "F/A",
            "recall",
            "quote prec.",
            "stories",
            "story prec.",
            "AC prec.",
            "checks pass",
        ],
        rows,
    )
