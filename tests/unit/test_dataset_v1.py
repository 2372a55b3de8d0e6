"""datasets/v1: schema, size, labels in both splits, references, no duplicates, no leakage between
the splits, and the committed JSONL equal to what datasets/v1/build.py makes from its sources."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from shared.eval.dataset import load_dataset
from shared.models import TAGS, WorkItem

V1 = Path(__file__).resolve().parents[2] / "datasets" / "v1"
PLACEHOLDER = re.compile(r"\bTBD\b|to be (?:decided|defined|confirmed)|not yet|still|open", re.I)


@pytest.fixture(scope="module")
def splits():
    return {s.split: s for s in load_dataset(V1)}


def test_two_splits_with_at_least_200_cases(splits) -> None:
    assert set(splits) == {"dev", "test"}
    assert sum(len(s.cases) for s in splits.values()) >= 200
    assert all(len(s.cases) >= 100 for s in splits.values())


def test_every_tag_in_both_splits(splits) -> None:
    for split in splits.values():
        counts = {t: sum(1 for c in split.cases if c.gold_tag == t) for t in TAGS}
        assert min(counts.values()) >= 15, (split.split, counts)


def test_backlog_rows_are_work_items(splits) -> None:
    for split in splits.values():
        raw = (split.path / "existing_backlog.jsonl").read_text().splitlines()
        for line in raw:
            row = json.loads(line)
            assert set(row) >= {
                "work_item_id",
                "work_item_type",
                "title",
                "description",
                "acceptance_criteria",
                "state",
                "tags",
                "parent_id",
                "updated_at",
                "url",
            }
            WorkItem.model_validate(row)
        stories = [w for w in split.backlog if w.work_item_type == "User Story"]
        epics = {w.work_item_id for w in split.backlog if w.work_item_type == "Epic"}
        assert len(stories) >= 100 and all(s.parent_id in epics for s in stories)
        assert len({w.work_item_id for w in split.backlog}) == len(split.backlog)


def test_related_ids_are_user_stories_of_the_split(splits) -> None:
    for split in splits.values():
        stories = {w.work_item_id for w in split.backlog if w.work_item_type == "User Story"}
        for case in split.cases:
            assert set(case.gold_related_ids) <= stories
            assert (case.gold_tag == "new") == (not case.gold_related_ids), case.story_id


def test_no_duplicate_ids_or_titles_across_splits(splits) -> None:
    cases = [c for s in splits.values() for c in s.cases]
    assert len({c.story_id for c in cases}) == len(cases)
    assert len({c.story_title.lower() for c in cases}) == len(cases)
    assert len({c.story_description.lower() for c in cases}) == len(cases)


def test_the_splits_share_no_backlog(splits) -> None:
    dev = {w.work_item_id for w in splits["dev"].backlog}
    test = {w.work_item_id for w in splits["test"].backlog}
    assert not dev & test
    dev_texts = {w.description for w in splits["dev"].backlog}
    assert not dev_texts & {w.description for w in splits["test"].backlog}


def test_every_gap_case_fills_an_explicit_open_point(splits) -> None:
    for split in splits.values():
        items = {w.work_item_id: w for w in split.backlog}
        for case in split.cases:
            if case.gold_tag == "gap":
                target = items[case.gold_related_ids[0]]
                assert any(PLACEHOLDER.search(ac) for ac in target.acceptance_criteria), case


def test_cases_read_as_stories_with_criteria(splits) -> None:
    for split in splits.values():
        for case in split.cases:
            assert re.match(r"As [\w ,'-]+?,? I (?:want|need)\b", case.story_description), (
                case.story_id
            )
            assert case.story_acceptance_criteria, case.story_id


def test_committed_files_match_the_build_script() -> None:
    spec = importlib.util.spec_from_file_location("v1_build", V1 / "build.py")
    assert spec and spec.loader
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    for path, text in build.outputs().items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run build.py"
