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

import argparse
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
SOURCE_DIR = HERE.parent / "dalpiaz-user-stories"
SPLITS = ("dev", "test")
TAGS = ("new", "extend", "gap", "conflict", "duplicate")
_PREFIX = re.compile(r"^#(G\d+)#\s*")
_MEANS = re.compile(
    r"^as (?:an?|the)?\s*[^,]+?,?\s*i(?: want| need| would like| would|'m| am)?(?: to)?\s+"
    r"(?:be able to\s+|must\s+)?(?P<means>.+?)(?:[,.]?\s*so that\b.*)?$",
    re.IGNORECASE | re.DOTALL,
)
BASE_DATE = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def clean(text: str) -> str:
    text = text.replace("\\'", "'").replace('\\"', '"')
    return re.sub(r"\s+", " ", text).strip()


def title_of(story: str) -> str:
    """The story's "I want ..." clause, capitalized, at most 80 characters."""
    m = _MEANS.match(story)
    means = (m.group("means") if m else story).strip().rstrip(".!,; ")
    means = means[0].upper() + means[1:] if means else story
    if len(means) > 80:
        means = means[:77].rsplit(" ", 1)[0].rstrip(",;") + "..."
    return means


def group_number(group: str) -> int:
    return int(group.lstrip("G"))


def ref_id(ref: str) -> int:
    group, line = ref.split(":")
    return group_number(group) * 1000 + int(line)


def read_backlog(group: str, file: str) -> dict[int, str]:
    """Line number -> cleaned story text, exact repeats within the backlog left out."""
    stories: dict[int, str] = {}
    seen: set[str] = set()
    for n, raw in enumerate((SOURCE_DIR / file).read_text(encoding="utf-8").splitlines(), 1):
        m = _PREFIX.match(raw)
        if not m:
            continue
        if m.group(1) != group:
            raise ValueError(f"{file}:{n} belongs to {m.group(1)}, expected {group}")
        text = clean(raw[m.end() :])
        if not text or text.lower() in seen:
            continue
        seen.add(text.lower())
        stories[n] = text
    return stories


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
        for line, text in read_backlog(group, b["file"]).items():
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


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def outputs() -> dict[Path, str]:
    out: dict[Path, str] = {}
    for split in SPLITS:
        backlog, cases = build_split(split)
        out[HERE / split / "existing_backlog.jsonl"] = jsonl(backlog)
        out[HERE / split / "tagging_test.jsonl"] = jsonl(cases)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = parser.parse_args(argv)
    stale = []
    for path, text in outputs().items():
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(HERE)))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(HERE)} ({text.count(chr(10))} lines)")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
