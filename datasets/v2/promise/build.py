"""Build datasets/v2/promise/ from raw/PROMISE_exp.csv and source.yaml.

``python datasets/v2/promise/build.py`` rewrites ``existing_backlog.jsonl`` and
``tagging_test.jsonl``; ``--check`` only compares them with what it would write and exits 1 on a
difference. The output is a pure function of the two sources (stdlib + PyYAML only).

- ``existing_backlog.jsonl``: one Epic per selected PROMISE_exp project (``work_item_id`` =
  project × 1000) and every requirement of that project as a ``User Story`` whose id is
  project × 1000 + its row number within the project (the N-th CSV line of project 8 → 8000 + N).
  ``description`` is the requirement as written in the CSV, with the CSV's escaped Windows-1252
  bytes (``\\92`` and the like) turned back into the characters they stand for and runs of
  whitespace collapsed; ``title`` comes from ``source.yaml``; ``tags`` = [project label, class].
  The acceptance criteria are empty except for the editorial open points of ``source.yaml``.
- ``tagging_test.jsonl``: one line per case, ``story_id`` = ``v2-promise-NNN``.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # datasets/: buildlib
from buildlib import KINDS, jsonl, write_or_check

HERE = Path(__file__).resolve().parent
RAW = HERE / "raw" / "PROMISE_exp.csv"
SOURCE = HERE / "source.yaml"
SLUG = "promise"
BASE_DATE = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
CLASSES = {"F", "A", "FT", "L", "LF", "MN", "O", "PE", "PO", "SC", "SE", "US"}
_LINE = re.compile(r"^(?P<project>\d+),'(?P<text>.*)',(?P<cls>[A-Z]+)$")
_CP1252 = re.compile(r"\\(9[0-9a-fA-F])")


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def clean(text: str) -> str:
    """The requirement as written: ``\\92`` → ’ (cp1252), whitespace runs → one space."""
    text = _CP1252.sub(lambda m: bytes([int(m.group(1), 16)]).decode("cp1252"), text)
    return re.sub(r"\s+", " ", text).strip()


def read_raw() -> dict[int, list[tuple[int, str, str]]]:
    """Project -> [(row within project, cleaned text, class)], rows numbered from 1."""
    projects: dict[int, list[tuple[int, str, str]]] = {}
    for n, line in enumerate(RAW.read_text(encoding="utf-8").split("\n"), 1):
        m = _LINE.match(line)
        if not m:
            raise ValueError(f"{RAW.name}:{n}: not a PROMISE_exp line: {line[:60]!r}")
        if m.group("cls") not in CLASSES:
            raise ValueError(f"{RAW.name}:{n}: unknown class {m.group('cls')!r}")
        rows = projects.setdefault(int(m.group("project")), [])
        rows.append((len(rows) + 1, clean(m.group("text")), m.group("cls")))
    return projects


def build() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    spec = yaml.safe_load(SOURCE.read_text(encoding="utf-8"))
    raw = read_raw()
    titles: dict[int, str] = {int(k): v for k, v in spec["titles"].items()}
    open_points: dict[int, str] = {int(k): v for k, v in (spec.get("open_points") or {}).items()}

    backlog: list[dict[str, Any]] = []
    for p in spec["projects"]:
        number, label, epic = p["project"], p["label"], p["epic"]
        epic_id = number * 1000
        backlog.append(
            {
                "work_item_id": epic_id,
                "work_item_type": "Epic",
                "title": epic,
                "description": (
                    f"The {epic} backlog: the requirements of project {number} in PROMISE_exp "
                    "(Lima et al. 2019, expanded PROMISE NFR data set), CC BY-SA 3.0."
                ),
                "acceptance_criteria": [],
                "state": "Active",
                "tags": [label],
                "parent_id": None,
                "updated_at": _iso(BASE_DATE),
                "url": None,
            }
        )
        seen: set[str] = set()
        for row, text, cls in raw[number]:
            if text.lower() in seen:  # a word-for-word repeat within the project is left out
                continue
            seen.add(text.lower())
            wid = epic_id + row
            if wid not in titles:
                raise ValueError(f"no title for requirement {wid}")
            title = titles[wid]
            if not title or len(title) > 80:
                raise ValueError(f"title of {wid} must be 1-80 characters: {title!r}")
            backlog.append(
                {
                    "work_item_id": wid,
                    "work_item_type": "User Story",
                    "title": title,
                    "description": text,
                    "acceptance_criteria": [open_points[wid]] if wid in open_points else [],
                    "state": "New" if row % 3 == 0 else "Active",
                    "tags": [label, cls],
                    "parent_id": epic_id,
                    "updated_at": _iso(BASE_DATE + timedelta(days=row % 90)),
                    "url": None,
                }
            )

    stories = {w["work_item_id"] for w in backlog if w["work_item_type"] == "User Story"}
    for what, ids in (("titles", titles), ("open points", open_points)):
        unknown = sorted(set(ids) - stories)
        if unknown:
            raise ValueError(f"{what} for ids that are not in the backlog: {unknown}")

    cases: list[dict[str, Any]] = []
    seen_titles: set[str] = set()
    seen_descriptions: set[str] = set()
    for n, case in enumerate(spec["cases"], 1):
        where = f"case {n} ({case.get('title')!r})"
        tag, kind = case["tag"], case.get("kind", "")
        if tag not in KINDS:
            raise ValueError(f"{where}: unknown tag {tag!r}")
        if kind not in KINDS[tag]:
            raise ValueError(f"{where}: kind {kind!r} does not fit tag {tag!r}")
        related = [int(r) for r in case.get("related") or []]
        if (tag == "new") != (not related):
            raise ValueError(f"{where}: 'new' has no related ids, every other tag has")
        unknown = [r for r in related if r not in stories]
        if unknown:
            raise ValueError(f"{where}: related ids {unknown} are not user stories of the backlog")
        if tag == "gap" and not any(r in open_points for r in related):
            raise ValueError(f"{where}: a gap must relate to an item with an open point")
        title = case["title"].strip()
        description = case["description"].strip()
        ac = [a.strip() for a in case.get("ac") or []]
        if len(ac) > 3:
            raise ValueError(f"{where}: at most 3 acceptance criteria")
        if title.lower() in seen_titles or description.lower() in seen_descriptions:
            raise ValueError(f"{where}: title or description repeats an earlier case")
        seen_titles.add(title.lower())
        seen_descriptions.add(description.lower())
        cases.append(
            {
                "story_id": f"v2-{SLUG}-{n:03d}",
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
