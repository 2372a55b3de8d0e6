"""Build datasets/v2/dalpiaz/ from source.yaml and the Dalpiaz backlogs copied into raw/.

``python datasets/v2/dalpiaz/build.py`` rewrites ``existing_backlog.jsonl`` and
``tagging_test.jsonl`` (``--check`` only compares and exits 1 when they differ). The output is a
pure function of ``raw/`` and ``source.yaml`` (stdlib + PyYAML), so the committed JSONL can be
checked against it offline.

- ``existing_backlog.jsonl``: one Epic per source backlog (``work_item_id`` = group number × 1000)
  and every story of that backlog as a ``User Story`` (shared.models.WorkItem fields) with
  ``work_item_id`` = group number × 1000 + line number (``G26`` line 16 → 26016), exactly as
  datasets/v1 does. The title is the story's "I want ..." clause, capitalized, cut to 80
  characters; the description is the story as written (backslash escapes removed, whitespace
  collapsed). A line repeating an earlier line of the same backlog word for word is left out, and
  so is an empty line. The acceptance criteria are empty except for the explicit editorial open
  points that ``source.yaml`` adds (the targets of the gap cases).
- ``tagging_test.jsonl``: one line per case, ``story_id`` = ``v2-dalpiaz-NNN``, with ``kind``.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # datasets/: buildlib
from buildlib import (
    KINDS,
    TAGS,
    group_number,
    jsonl,
    read_dalpiaz,
    ref_id,
    title_of,
    write_or_check,
)

HERE = Path(__file__).resolve().parent
RAW_DIR = HERE / "raw"
SOURCE = "dalpiaz"
BASE_DATE = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def stamp(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def build() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    spec = yaml.safe_load((HERE / "source.yaml").read_text(encoding="utf-8"))
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
                    f"The {b['epic']} backlog: user stories of {b['file']} in Dalpiaz, "
                    "Requirements data sets (user stories), CC BY 4.0."
                ),
                "acceptance_criteria": [],
                "state": "Active",
                "tags": [group],
                "parent_id": None,
                "updated_at": stamp(BASE_DATE),
                "url": None,
            }
        )
        for line, text in read_dalpiaz(RAW_DIR / b["file"], group).items():
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
                    "updated_at": stamp(BASE_DATE + timedelta(days=line % 90)),
                    "url": None,
                }
            )
    known = {w["work_item_id"] for w in backlog if w["work_item_type"] == "User Story"}
    missing = sorted(set(open_points) - known)
    if missing:
        raise ValueError(f"open points on unknown items {missing}")

    cases: list[dict[str, Any]] = []
    titles: set[str] = set()
    descriptions: set[str] = set()
    for n, case in enumerate(spec["cases"], 1):
        tag, kind = case["tag"], case.get("kind", "")
        if tag not in TAGS:
            raise ValueError(f"case {n}: unknown tag {tag!r}")
        if kind not in KINDS[tag]:
            raise ValueError(f"case {n}: kind {kind!r} does not fit tag {tag!r}")
        related = [ref_id(r) for r in case.get("related") or []]
        if (tag == "new") != (not related):
            raise ValueError(f"case {n}: 'new' has no related ids, every other tag has")
        unknown = [r for r in related if r not in known]
        if unknown:
            raise ValueError(f"case {n}: related ids {unknown} are not user stories of the backlog")
        if tag == "gap" and not any(r in open_points for r in related):
            raise ValueError(f"case {n}: a gap must relate to an item with an open point")
        title, description = case["title"].strip(), " ".join(case["description"].split())
        if title.lower() in titles:
            raise ValueError(f"case {n}: duplicate title {title!r}")
        if description.lower() in descriptions:
            raise ValueError(f"case {n}: duplicate description")
        titles.add(title.lower())
        descriptions.add(description.lower())
        ac = [" ".join(c.split()) for c in case.get("ac") or []]
        if len(ac) > 3:
            raise ValueError(f"case {n}: at most 3 acceptance criteria")
        cases.append(
            {
                "story_id": f"v2-{SOURCE}-{n:03d}",
                "story_title": title,
                "story_description": description,
                "story_acceptance_criteria": ac,
                "gold_tag": tag,
                "gold_related_ids": related,
                "kind": kind,
            }
        )
    return backlog, cases


def outputs() -> dict[Path, str]:
    backlog, cases = build()
    return {
        HERE / "existing_backlog.jsonl": jsonl(backlog),
        HERE / "tagging_test.jsonl": jsonl(cases),
    }


def main(argv: list[str] | None = None) -> int:
    return write_or_check(outputs(), HERE, __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    sys.exit(main())
