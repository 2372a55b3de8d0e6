"""Build datasets/v2/eudi-arf/ from raw/hlr-extract.tsv and source.yaml.

``python datasets/v2/eudi-arf/build.py`` rewrites ``existing_backlog.jsonl`` and
``tagging_test.jsonl``; ``--check`` only compares and exits 1 when they differ. The output is a pure
function of the two sources (stdlib + PyYAML), so the committed JSONL can be checked against it.

- ``existing_backlog.jsonl``: one Epic per ARF topic (Topic 1 → 1000, Topic 6 → 2000, Topic 7 →
  3000, Topic 9 → 4000, Topic 10 → 5000, Topic 19 → 6000) and the high-level requirements chosen in
  ``source.yaml`` as ``User Story`` items. The id is the Epic id plus the item's position in its
  list (``1001`` is OIA_01). The description is the requirement text of the extract with markdown
  links reduced to their text (``[Topic 9](./annex-2.02-...)`` → ``Topic 9``) and outer blanks
  stripped; the title is the phrase written in ``source.yaml``; the tags are the requirement index
  (``OIA_01``) and the topic. Acceptance criteria are empty except for the editorial open points
  of ``source.yaml``.
- ``tagging_test.jsonl``: one line per case, ``story_id`` = ``v2-eudi-arf-NNN``.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # datasets/: buildlib
from buildlib import KINDS, TAGS, jsonl, write_or_check

HERE = Path(__file__).resolve().parent
RAW = HERE / "raw" / "hlr-extract.tsv"
SOURCE = HERE / "source.yaml"
SLUG = "eudi-arf"
BASE_DATE = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
_LINK = re.compile(r"\[([^\[\]]+)\]\((?:<[^>]*>|[^)\s]*)\)")


def stamp(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def plain(text: str) -> str:
    """The requirement as read: markdown links reduced to their text, outer blanks stripped."""
    return _LINK.sub(r"\1", text).strip()


def read_requirements() -> dict[str, tuple[int, str]]:
    """Requirement index -> (topic number, requirement text)."""
    lines = RAW.read_text(encoding="utf-8").split("\n")
    if lines[0] != "Index\tTopic_Number\tRequirement_specification":
        raise ValueError(f"{RAW.name}: unexpected header {lines[0]!r}")
    reqs: dict[str, tuple[int, str]] = {}
    for n, line in enumerate(lines[1:], 2):
        if not line:
            continue
        index, topic, text = line.split("\t")
        if index in reqs:
            raise ValueError(f"{RAW.name}:{n}: {index} appears twice")
        reqs[index] = (int(topic), plain(text))
    return reqs


def build() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    spec = yaml.safe_load(SOURCE.read_text(encoding="utf-8"))
    reqs = read_requirements()
    open_points: dict[str, str] = spec.get("open_points") or {}

    backlog: list[dict[str, Any]] = []
    ids: dict[str, int] = {}
    titles: set[str] = set()
    for epic in spec["epics"]:
        epic_id, topic = int(epic["id"]), int(epic["topic"])
        backlog.append(
            {
                "work_item_id": epic_id,
                "work_item_type": "Epic",
                "title": epic["title"],
                "description": (
                    f"Topic {topic} ({epic['title']}) of the high-level requirements of the "
                    "European Digital Identity Wallet Architecture and Reference Framework "
                    "(European Commission), CC BY 4.0."
                ),
                "acceptance_criteria": [],
                "state": "Active",
                "tags": [f"Topic {topic}"],
                "parent_id": None,
                "updated_at": stamp(BASE_DATE),
                "url": None,
            }
        )
        for n, (index, title) in enumerate(epic["items"], 1):
            if index not in reqs:
                raise ValueError(f"{index} is not a requirement of {RAW.name}")
            if reqs[index][0] != topic:
                raise ValueError(f"{index} belongs to topic {reqs[index][0]}, not {topic}")
            if index in ids:
                raise ValueError(f"{index} is selected twice")
            if len(title) > 80 or title.lower() in titles:
                raise ValueError(f"{index}: title too long or repeated: {title!r}")
            titles.add(title.lower())
            wid = epic_id + n
            ids[index] = wid
            backlog.append(
                {
                    "work_item_id": wid,
                    "work_item_type": "User Story",
                    "title": title,
                    "description": reqs[index][1],
                    "acceptance_criteria": [open_points[index]] if index in open_points else [],
                    "state": "New" if n % 3 == 0 else "Active",
                    "tags": [index, f"Topic {topic}"],
                    "parent_id": epic_id,
                    "updated_at": stamp(BASE_DATE + timedelta(days=n % 90)),
                    "url": None,
                }
            )
    missing = sorted(set(open_points) - set(ids))
    if missing:
        raise ValueError(f"open points on items not in the backlog: {missing}")

    cases: list[dict[str, Any]] = []
    seen_titles: set[str] = set()
    seen_descriptions: set[str] = set()
    for n, case in enumerate(spec["cases"], 1):
        where = f"case {n} ({case.get('title')!r})"
        tag, kind = case["tag"], case.get("kind", "")
        if tag not in TAGS or kind not in KINDS[tag]:
            raise ValueError(f"{where}: tag {tag!r} with kind {kind!r}")
        related = list(case.get("related") or [])
        if (tag == "new") != (not related):
            raise ValueError(f"{where}: 'new' has no related items, every other tag has")
        unknown = [r for r in related if r not in ids]
        if unknown:
            raise ValueError(f"{where}: related {unknown} are not in the backlog")
        if tag == "gap" and not all(r in open_points for r in related):
            raise ValueError(f"{where}: a gap must relate to an item with an open point")
        description = " ".join(case["description"].split())
        if case["title"].lower() in seen_titles or description.lower() in seen_descriptions:
            raise ValueError(f"{where}: title or description repeats an earlier case")
        seen_titles.add(case["title"].lower())
        seen_descriptions.add(description.lower())
        ac = list(case.get("ac") or [])
        if len(ac) > 3:
            raise ValueError(f"{where}: at most 3 acceptance criteria")
        cases.append(
            {
                "story_id": f"v2-{SLUG}-{n:03d}",
                "story_title": case["title"],
                "story_description": description,
                "story_acceptance_criteria": ac,
                "gold_tag": tag,
                "gold_related_ids": [ids[r] for r in related],
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
