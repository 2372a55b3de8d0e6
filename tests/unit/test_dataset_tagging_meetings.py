"""datasets/tagging-meetings: engine-drafted meeting stories labelled against the sample backlog;
every split loads (related ids are user stories of its backlog), holds every tag a meeting gave
and its own backlog, the same as the samples'."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.eval.dataset import load_dataset

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "datasets" / "tagging-meetings"


@pytest.fixture(scope="module")
def splits():
    return {s.split: s for s in load_dataset(FOLDER)}


def test_two_splits_with_their_counts(splits) -> None:
    assert set(splits) == {"ami-dev", "demo"}
    assert len(splits["ami-dev"].cases) == 247
    assert len(splits["demo"].cases) == 31


@pytest.mark.parametrize("split", ["ami-dev", "demo"])
def test_cases_are_labelled_against_the_sample_backlog(splits, split) -> None:
    data = splits[split]
    sample = (ROOT / "samples" / "backlog" / "remote_control_backlog.jsonl").read_bytes()
    assert (data.path / "existing_backlog.jsonl").read_bytes() == sample
    tags = {c.gold_tag for c in data.cases}
    assert {"new", "extend", "conflict", "duplicate"} <= tags
    assert {c.kind for c in data.cases} <= {"requirement", "not-a-requirement"}
    # a story that is no requirement relates to nothing
    assert all(c.gold_tag == "new" for c in data.cases if c.kind == "not-a-requirement")
    assert len({c.story_id for c in data.cases}) == len(data.cases)
