"""``eval segmentation`` on a small handmade meeting: offsets become turn boundaries, the baselines
are scored on the same k, and the command writes and prints its results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.agents import SegmentationResult, SegmentSpan
from shared.cli import main
from shared.eval.segmentation import evaluate, load_gold, summarize
from tests.integration.test_eval_tagging import clean_env

TOPIC_A = [
    "The remote needs bigger buttons for the channels .",
    "Yes , and the power button should be red .",
    "Buttons should be easy to find in the dark .",
]
TOPIC_B = [
    "For lunch we could order pizza from the Italian place .",
    "Or sandwiches , they are cheaper for a team of four .",
    "Let's decide lunch on Friday then .",
]
N = 30
GOLD = [15]


def write_meeting(folder: Path) -> Path:
    turns = [
        {"speaker": "Marketing" if i % 2 else "Project Manager", "content": text}
        for i, text in enumerate(
            [TOPIC_A[i % 3] for i in range(15)] + [TOPIC_B[i % 3] for i in range(15)]
        )
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "M1.json").write_text(json.dumps({"meeting_transcripts": turns}))
    gold = folder / "gold.jsonl"
    gold.write_text(json.dumps({"meeting_id": "M1", "n_turns": N, "boundary_turns": GOLD}) + "\n")
    return gold


class CutAtTurn:
    """Cuts the transcript at the start of the given turns (lines)."""

    version, engine, model = "seg-fake", "offline", None

    def __init__(self, *turns: int) -> None:
        self.turns = turns

    def segment(self, transcript: str) -> SegmentationResult:
        starts = [0]
        for line in transcript.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        cuts = [0, *(starts[t] for t in self.turns)]
        ends = [*cuts[1:], len(transcript)]
        return SegmentationResult(
            spans=[SegmentSpan(start=a, end=b) for a, b in zip(cuts, ends, strict=True)]
        )


def test_engine_offsets_are_scored_as_turn_boundaries(tmp_path: Path) -> None:
    meetings = load_gold(write_meeting(tmp_path))
    (exact,) = evaluate(CutAtTurn(15), meetings)
    assert exact["k"] == 8  # 30 turns / 2 segments / 2 = 7.5, rounded to even
    assert exact["boundaries"]["engine"] == [15]
    assert exact["pk"]["engine"] == 0.0 and exact["windowdiff"]["engine"] == 0.0
    # one segment: the 8 probes whose window spans the gold cut disagree, of 30 - 8 = 22
    assert exact["pk"]["single_segment"] == pytest.approx(8 / 22, abs=1e-4)
    assert exact["pk"]["even_gold_count"] == 0.0  # the even split with 2 segments cuts at 15
    (off,) = evaluate(CutAtTurn(10, 20), meetings)
    assert off["boundaries"]["engine"] == [10, 20]
    assert off["boundaries"]["even_engine_count"] == [10, 20]  # same count, no content
    assert 0 < off["pk"]["engine"] <= 1 and off["windowdiff"]["engine"] >= off["pk"]["engine"]
    summary = summarize([exact, off])
    assert summary["pk"]["engine"] == pytest.approx(
        (exact["pk"]["engine"] + off["pk"]["engine"]) / 2, abs=1e-4
    )


def test_eval_segmentation_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    clean_env(monkeypatch, SYNTH_LOCAL_STORE_DIR=str(tmp_path / "store"), SYNTH_ENGINE="offline")
    gold = write_meeting(tmp_path / "gold")
    assert main(["eval", "segmentation", str(gold), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "Pk engine" in printed and "M1" in printed and "mean" in printed
    (folder,) = (tmp_path / "out").iterdir()
    doc = json.loads((folder / "segmentation.json").read_text())
    assert doc["engine"] == "offline" and doc["segmentation_version"] == "seg-offline-v2"
    row = doc["meetings"][0]
    assert row["n_turns"] == N and row["gold"] == GOLD
    for metric in ("pk", "windowdiff"):
        for value in row[metric].values():
            assert value is None or 0.0 <= value <= 1.0
    assert (tmp_path / "store" / "eval" / folder.name / "segmentation.json").is_file()
    assert main(["eval", "segmentation", str(gold), "--meetings", "NOPE"]) == 2
