"""datasets/v2: four independent sources, each with every tag and every conflict kind, hard
negatives, references that resolve, and committed JSONL equal to what its build.py makes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shared.eval.dataset import load_dataset
from shared.models import TAGS

V2 = Path(__file__).resolve().parents[2] / "datasets" / "v2"
SOURCES = ("dalpiaz", "eudi-arf", "nasa-cfe", "promise")
CONFLICT_KINDS = {"quantity", "unit", "negation", "modal", "antonym", "frequency", "exclusivity"}


@pytest.fixture(scope="module")
def splits():
    return {s.split: s for s in load_dataset(V2)}


def test_four_sources_and_at_least_600_cases(splits) -> None:
    assert set(splits) == set(SOURCES)
    assert sum(len(s.cases) for s in splits.values()) >= 600


@pytest.mark.parametrize("source", SOURCES)
def test_every_tag_conflict_kind_and_hard_negatives(splits, source) -> None:
    cases = splits[source].cases
    counts = {t: sum(1 for c in cases if c.gold_tag == t) for t in TAGS}
    assert min(counts.values()) >= 40, counts
    kinds = {c.kind for c in cases if c.gold_tag == "conflict"}
    assert CONFLICT_KINDS <= kinds, CONFLICT_KINDS - kinds
    hard = [c for c in cases if c.gold_tag == "new" and c.kind == "hard-negative"]
    assert len(hard) >= 20
    plain = [c for c in cases if not c.story_acceptance_criteria]
    assert 0.3 <= len(plain) / len(cases) <= 0.7  # plain requirement statements and stories
    assert len({c.story_title for c in cases}) == len(cases)


@pytest.mark.parametrize("source", SOURCES)
def test_gaps_fill_an_open_point(splits, source) -> None:
    split = splits[source]
    items = {w.work_item_id: w for w in split.backlog}
    for case in split.cases:
        if case.gold_tag == "gap":
            assert any(items[i].acceptance_criteria for i in case.gold_related_ids), case.story_id


@pytest.mark.parametrize("source", SOURCES)
def test_jsonl_is_what_build_makes(source) -> None:
    done = subprocess.run(
        [sys.executable, str(V2 / source / "build.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
