"""Segmentation quality: Pk and WindowDiff of the configured segmenter against gold topic
boundaries, beside simple baselines.

Gold file format (``datasets/ami-qmsum-val/segmentation_gold.jsonl``): one line per meeting with
``meeting_id``, ``n_turns`` and ``boundary_turns`` (turn indices where a new topic starts); the
meeting itself is ``{meeting_id}.json`` beside the gold file (QMSum: ``meeting_transcripts`` of
``{speaker, content}``). Each meeting becomes ``Speaker: text`` lines, one turn a line, as the
samples are made, and goes through the same normalization as an upload. The segmenter returns
character offsets; a segment that starts at a line start starts a new topic at that turn, one
that starts inside a turn counts at the nearer turn edge.

Baselines, on the same turns and the same ``k`` (half the mean gold segment length):
- even split with as many segments as the engine made (same count, no content), and with as
  many as the gold has;
- TextTiling (Hearst 1997, ``nltk.tokenize.TextTilingTokenizer``, default parameters) on the turn
  texts as paragraphs (AMI markers removed), bag of words without any embedding;
- one segment (no boundary at all), which Pk is known to reward.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any

from shared.errors import SynthesizerError
from shared.eval.metrics import default_k, even_boundaries, pk, windowdiff
from shared.eval.report import table
from shared.models import utcnow

DEFAULT_GOLD = Path("datasets/ami-qmsum-val/segmentation_gold.jsonl")
_MARKER = re.compile(r"\{\s*[A-Za-z_]+\s*\}")
METHODS = ("engine", "even_engine_count", "even_gold_count", "texttiling", "single_segment")


class GoldError(SynthesizerError, ValueError):
    """The gold file or a meeting file is missing or malformed."""


@dataclass
class Meeting:
    meeting_id: str
    turns: list[tuple[str, str]]  # (speaker, content)
    gold: list[int]

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    def transcript(self) -> str:
        return "".join(
            f"{speaker}: {' '.join(content.split())}\n" for speaker, content in self.turns
        )


def load_gold(path: str | Path, meetings: list[str] | None = None) -> list[Meeting]:
    path = Path(path)
    if not path.is_file():
        raise GoldError(f"{path} is missing")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            meeting_id, n_turns = str(row["meeting_id"]), int(row["n_turns"])
            gold = sorted({int(b) for b in row["boundary_turns"]})
        except (ValueError, KeyError, TypeError) as err:
            raise GoldError(f"{path}:{n}: {err!r}") from None
        if meetings and meeting_id not in meetings:
            continue
        source = path.parent / f"{meeting_id}.json"
        if not source.is_file():
            raise GoldError(f"{path}:{n}: the meeting file {source} is missing")
        data = json.loads(source.read_text(encoding="utf-8"))
        turns = [(str(t["speaker"]), str(t["content"])) for t in data["meeting_transcripts"]]
        if len(turns) != n_turns:
            raise GoldError(f"{source} has {len(turns)} turns, the gold file says {n_turns}")
        out.append(Meeting(meeting_id, turns, [b for b in gold if 0 < b < n_turns]))
    if meetings:
        missing = sorted(set(meetings) - {m.meeting_id for m in out})
        if missing:
            raise GoldError(f"{path} has no meeting {', '.join(missing)}")
    if not out:
        raise GoldError(f"{path} holds no meeting")
    return out


def turn_boundaries(transcript: str, starts: list[int]) -> list[int]:
    """Segment start offsets (into ``transcript``, one turn a line) as the turns they start."""
    line_starts = [0] + [
        m.end() for m in re.finditer("\n", transcript) if m.end() < len(transcript)
    ]
    turns = set()
    for start in starts:
        i = bisect.bisect_right(line_starts, start) - 1
        line_end = line_starts[i + 1] if i + 1 < len(line_starts) else len(transcript)
        if start - line_starts[i] > line_end - start:
            i += 1  # nearer to the next turn's start
        if 0 < i < len(line_starts):
            turns.add(i)
    return sorted(turns)


def texttiling_boundaries(meeting: Meeting) -> list[int] | None:
    """TextTiling over the turns as paragraphs; None when the meeting is too short for it."""
    from nltk.tokenize.texttiling import TextTilingTokenizer

    from shared.engine.offline.language import STOPWORDS

    texts = [" ".join(_MARKER.sub(" ", c).split()) or "." for _, c in meeting.turns]
    text = "\n\n".join(texts)
    try:
        pieces = TextTilingTokenizer(stopwords=sorted(STOPWORDS)).tokenize(text)
    except ValueError:
        return None
    boundaries, turn = [], 0
    for piece in pieces[:-1]:
        # each piece holds whole paragraphs; count them to find where the next one starts
        turn += len([p for p in re.split(r"\n\n", piece) if p.strip()])
        boundaries.append(turn)
    return [b for b in boundaries if 0 < b < meeting.n_turns]


def engine_boundaries(segmenter: Any, meeting: Meeting) -> tuple[list[int], int]:
    """The segmenter's boundaries (as turns) and how many segments it made."""
    from shared.textio import normalize

    transcript = normalize(meeting.transcript())
    result = segmenter.segment(transcript)
    starts = sorted({min(max(s.start, 0), len(transcript)) for s in result.spans} - {0})
    return turn_boundaries(transcript, starts), len(starts) + 1


def evaluate(
    segmenter: Any,
    meetings: list[Meeting],
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    rows = []
    for meeting in meetings:
        if progress:
            progress(meeting.meeting_id)
        n = meeting.n_turns
        k = default_k(n, meeting.gold)
        hyp, n_segments = engine_boundaries(segmenter, meeting)
        methods: dict[str, list[int] | None] = {
            "engine": hyp,
            "even_engine_count": even_boundaries(n, n_segments),
            "even_gold_count": even_boundaries(n, len(meeting.gold) + 1),
            "texttiling": texttiling_boundaries(meeting),
            "single_segment": [],
        }
        row: dict[str, Any] = {
            "meeting_id": meeting.meeting_id,
            "n_turns": n,
            "k": k,
            "gold": meeting.gold,
            "boundaries": methods,
            "pk": {},
            "windowdiff": {},
        }
        for name, b in methods.items():
            row["pk"][name] = None if b is None else round(pk(n, meeting.gold, b, k), 4)
            row["windowdiff"][name] = (
                None if b is None else round(windowdiff(n, meeting.gold, b, k), 4)
            )
        rows.append(row)
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"meetings": len(rows)}
    for metric in ("pk", "windowdiff"):
        out[metric] = {}
        for name in METHODS:
            values = [r[metric][name] for r in rows if r[metric][name] is not None]
            out[metric][name] = round(mean(values), 4) if values else None
    out["segments"] = {
        "gold": round(mean(len(r["gold"]) + 1 for r in rows), 2),
        "engine": round(mean(len(r["boundaries"]["engine"]) + 1 for r in rows), 2),
        "texttiling": round(
            mean(
                len(r["boundaries"]["texttiling"]) + 1
                for r in rows
                if r["boundaries"]["texttiling"] is not None
            ),
            2,
        )
        if any(r["boundaries"]["texttiling"] is not None for r in rows)
        else None,
    }
    return out


def eval_id_for(gold_path: Path, meetings: list[Meeting], basis: dict[str, Any]) -> str:
    digest = hashlib.sha256(gold_path.read_bytes())
    digest.update(json.dumps([m.meeting_id for m in meetings]).encode())
    digest.update(json.dumps(basis, sort_keys=True).encode())
    return f"segmentation-{digest.hexdigest()[:10]}"


def document(
    eval_id: str,
    gold_path: Path,
    segmenter: Any,
    settings_snapshot: dict[str, Any],
    rows: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "eval_id": eval_id,
        "kind": "segmentation",
        "created_at": utcnow().isoformat().replace("+00:00", "Z"),
        "gold": str(gold_path),
        "engine": segmenter.engine,
        "segmentation_version": segmenter.version,
        "model": segmenter.model,
        "segmentation_settings": settings_snapshot,
        "k": "half the mean gold segment length per meeting",
        "summary": summarize(rows),
        "meetings": rows,
    }


def render(doc: dict[str, Any]) -> str:
    def cells(r: dict[str, Any], metric: str) -> list[Any]:
        return [r[metric][m] for m in METHODS]

    rows: list[list[Any]] = [
        [
            r["meeting_id"],
            r["n_turns"],
            len(r["gold"]) + 1,
            len(r["boundaries"]["engine"]) + 1,
            r["k"],
            *cells(r, "pk"),
            *cells(r, "windowdiff"),
        ]
        for r in doc["meetings"]
    ]
    s = doc["summary"]
    rows.append(
        ["mean", None, s["segments"]["gold"], s["segments"]["engine"], None]
        + [s["pk"][m] for m in METHODS]
        + [s["windowdiff"][m] for m in METHODS]
    )
    short = ["engine", "even(n=eng)", "even(n=gold)", "TextTiling", "one seg"]
    headers = ["meeting", "turns", "gold", "engine", "k"]
    headers += [f"Pk {h}" for h in short] + [f"WD {h}" for h in short]
    return "\n".join(
        [
            f"segmentation  {doc['gold']}  ({doc['eval_id']})",
            f"engine {doc['engine']} ({doc['segmentation_version']}); lower is better; "
            "'gold'/'engine' = number of segments",
            "",
            table(headers, rows),
        ]
    )
