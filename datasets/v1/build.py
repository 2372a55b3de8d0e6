"""Build datasets/v1/{dev,test}/ from source/{dev,test}.yaml and the Dalpiaz backlogs.

``python datasets/v1/build.py`` rewrites ``dev/`` and ``test/`` (``--check`` only compares). The
output is a pure function of the sources, so the committed JSONL can be checked against it.

- ``existing_backlog.jsonl``: one Epic per source backlog and every story of that backlog as a
  ``User Story`` (shared.models.WorkItem fields). ``work_item_id`` = group number × 1000 + line number
  (``G13`` line 28 → 13028), so every item points back to its source line. The title is the story's
  "I want ..." clause; the description is the story as written (backslash escapes removed). A line
  repeating an earlier line of the same backlog word for word is left out. The acceptance criteria
  are empty except for the explicit open points the source YAML adds (for gap cases).
- ``tagging_test.jsonl``: one line per case (seed §9.1 fields), ``story_id`` = ``v1-{split}-NNN``.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # datasets/: buildlib
from buildlib import (
    TAGS,
    group_number,
    jsonl,
    read_dalpiaz,
    ref_id,
    title_of,
    write_or_check,
)

HERE = Path(__file__).resolve().parent
SOURCE_DIR = HERE.parent / "dalpiaz-user-stories"
SPLITS = ("dev", "test")
BASE_DATE = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def build_split(split: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    spec = yaml.safe_load((HERE / "source" / f"{split}.yaml").read_text(encoding="utf-8"))
    open_points = {ref_id(k): v for k, v in (spec.get("open_points") or {}).items()}
    backlog: list[dict[str, Any]] = []
    for b in spec["backlogs"]:
        group = b["group"]
        epic_id = group_number(group) * 1000
        backlog.append(
            {
                "work_item_id": epic_id,
                "work_item_type": "Epic",
                "title": b["epic"],
                "description": (
                    f"The {b['epic']} backlog: user stories of {b['file']} in Dalpiaz et al., "
                    "Requirements data sets (user stories), CC BY 4.0."
                ),
                "acceptance_criteria": [],
                "state": "Active",
                "tags": [group],
                "parent_id": None,
                "updated_at": BASE_DATE.isoformat().replace("+00:00", "Z"),
                "url": None,
            }
        )
        for line, text in read_dalpiaz(SOURCE_DIR / b["file"], group).items():
            wid = epic_id + line
            backlog.append(
                {
                    "work_item_id": wid,
                    "work_item_type": "User Story",
                    "title": title_of(text),
                    "description": text,
                    "acceptance_criteria": [open_points[wid]] if wid in open_points else [],
                    "state": "New" if line % 3 == 0 else "Active",
                    "tags": [group],
                    "parent_id": epic_id,
                    "updated_at": (BASE_DATE + timedelta(days=line % 90))
                    .isoformat()
                    .replace("+00:00", "Z"),
                    "url": None,
                }
            )
    known = {w["work_item_id"] for w in backlog if w["work_item_type"] == "User Story"}
    missing = sorted(set(open_points) - known)
    if missing:
        raise ValueError(f"{split}: open points on unknown items {missing}")

    cases: list[dict[str, Any]] = []
    titles: set[str] = set()
    for n, case in enumerate(spec["cases"], 1):
        tag = case["tag"]
        if tag not in TAGS:
            raise ValueError(f"{split} case {n}: unknown tag {tag!r}")
        related = [ref_id(r) for r in case.get("related") or []]
        if (tag == "new") != (not related):
            raise ValueError(f"{split} case {n}: 'new' has no related ids, every other tag has")
        unknown = [r for r in related if r not in known]
        if unknown:
            raise ValueError(f"{split} case {n}: related ids {unknown} are not in the backlog")
        if case["title"].lower() in titles:
            raise ValueError(f"{split} case {n}: duplicate title {case['title']!r}")
        titles.add(case["title"].lower())
        cases.append(
            {
                "story_id": f"v1-{split}-{n:03d}",
                "story_title": case["title"],
                "story_description": case["description"].strip(),
                "story_acceptance_criteria": list(case.get("ac") or []),
                "gold_tag": tag,
                "gold_related_ids": related,
            }
        )
    return backlog, cases


def outputs() -> dict[Path, str]:
    out: dict[Path, str] = {}
    for split in SPLITS:
        backlog, cases = build_split(split)
        out[HERE / split / "existing_backlog.jsonl"] = jsonl(backlog)
        out[HERE / split / "tagging_test.jsonl"] = jsonl(cases)
    return out


def main(argv: list[str] | None = None) -> int:
    return write_or_check(outputs(), HERE, __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
