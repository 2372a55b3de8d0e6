"""Cut the capture-v1 meetings into numbered statements (run once, before labelling).

    python datasets/capture-v1/make_statements.py            # writes unlabelled/*.tsv
    python datasets/capture-v1/make_statements.py --check    # the statements of the labelled
                                                             # files still match their sources

A statement is one speaker turn, cut at its sentence ends (". ", "? ", "! "); a piece of fewer
than three words stays with the piece before it, so "Yeah . Yep ." is one statement. Written
notes: one statement per non-blank line (a bullet, a heading). Each line of the output is
``statement_no<TAB>text<TAB>label`` with ``text`` = ``Speaker: sentence`` for spoken meetings (the
turn's speaker repeated on every statement of the turn) and the label ``?`` until labelled.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
AMI = ROOT / "datasets" / "ami-qmsum-val"
SOURCES: dict[str, Path] = {
    # meeting id -> source file (AMI json from QMSum, or a text transcript / notes)
    "IS1006b": AMI / "IS1006b.json",
    "ES2006b": AMI / "ES2006b.json",
    "TS3010c": AMI / "TS3010c.json",
    "ES2009c": AMI / "ES2009c.json",
    "TS3009b": AMI / "TS3009b.json",
    "IS1006c": AMI / "IS1006c.json",
    "ES2006c": AMI / "ES2006c.json",
    "TS3010b": AMI / "TS3010b.json",
    "TS3010d": AMI / "TS3010d.json",
    "ES2006a": AMI / "ES2006a.json",
    "ES2006d": AMI / "ES2006d.json",
    "IS1006a": AMI / "IS1006a.json",
    "IS1006d": AMI / "IS1006d.json",
    "TS3010a": AMI / "TS3010a.json",
    "planning-notes": ROOT / "samples" / "transcripts" / "remote_control_planning_notes.md",
    "clinic-booking": HERE / "sources" / "clinic-booking.txt",
    "waste-collection": HERE / "sources" / "waste-collection.txt",
    "expense-claims": HERE / "sources" / "expense-claims.txt",
    "room-booking": HERE / "sources" / "room-booking.txt",
    "volunteer-rota": HERE / "sources" / "volunteer-rota.txt",
}
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_SPEAKER = re.compile(r"^([A-Z][\w .'()-]{0,40}):\s+(.*)$")


def _sentences(content: str) -> list[str]:
    pieces = [p.strip() for p in _SENTENCE_END.split(content.strip()) if p.strip()]
    out: list[str] = []
    for piece in pieces:
        if out and len(piece.split()) < 3:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    if len(out) > 1 and len(out[0].split()) < 3:
        out[1] = f"{out[0]} {out[1]}"
        out = out[1:]
    return out


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\t", " ")).strip()


def statements(meeting: str) -> list[str]:
    """The meeting's statements as ``Speaker: text`` (spoken) or the line itself (notes)."""
    source = SOURCES[meeting]
    out: list[str] = []
    if source.suffix == ".json":
        for turn in json.loads(source.read_text(encoding="utf-8"))["meeting_transcripts"]:
            speaker = _clean(turn["speaker"])
            for sentence in _sentences(_clean(turn["content"])):
                out.append(f"{speaker}: {sentence}")
        return out
    text = source.read_text(encoding="utf-8")
    for line in text.splitlines():
        line = _clean(line)
        if not line:
            continue
        m = _SPEAKER.match(line)
        if source.suffix == ".md" or not m:
            out.append(line)
            continue
        for sentence in _sentences(m.group(2)):
            out.append(f"{m.group(1)}: {sentence}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("meetings", nargs="*", default=sorted(SOURCES))
    args = parser.parse_args(argv)
    bad = 0
    for meeting in args.meetings:
        if not SOURCES[meeting].exists():
            print(f"{meeting}: source {SOURCES[meeting]} missing", file=sys.stderr)
            bad += 1
            continue
        rows = statements(meeting)
        if args.check:
            labelled = list((HERE / "dev").glob(f"{meeting}.tsv")) + list(
                (HERE / "test").glob(f"{meeting}.tsv")
            )
            for path in labelled:
                texts = [ln.split("\t")[1] for ln in path.read_text().splitlines() if ln]
                if texts != rows:
                    print(f"{path}: statements differ from the source", file=sys.stderr)
                    bad += 1
            continue
        target = HERE / "unlabelled" / f"{meeting}.tsv"
        target.parent.mkdir(exist_ok=True)
        target.write_text("".join(f"{k}\t{t}\t?\n" for k, t in enumerate(rows, start=1)))
        print(f"{meeting}: {len(rows)} statements -> {target.relative_to(ROOT)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
