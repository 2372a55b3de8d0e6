"""Tagging datasets (seed §9.1): ``existing_backlog.jsonl`` + ``tagging_test.jsonl`` per split.

A dataset folder is either one split (both files directly in it) or a version folder whose
sub-folders are splits (``datasets/v1/dev``, ``datasets/v1/test``). The backlog holds normalized
work items (``shared.models.WorkItem``, as the loaders produce them); each test case is a story
with its gold tag and the ids of the existing stories it relates to. A backlog taken from a Scrum,
CMMI or Basic project (Product Backlog Items, Requirements, Issues) is read as the loaders index
it: its story type as ``User Story`` (shared.ado.process).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from shared.ado.process import from_type_names, normalize_types
from shared.errors import SynthesizerError
from shared.models import TAGS, Record, Tag, WorkItem

BACKLOG_FILE = "existing_backlog.jsonl"
CASES_FILE = "tagging_test.jsonl"


class DatasetError(SynthesizerError, ValueError):
    """A dataset folder or file is missing or malformed; the message says where."""


class TaggingCase(Record):
    story_id: str = Field(min_length=1)
    story_title: str = Field(min_length=1)
    story_description: str = ""
    story_acceptance_criteria: list[str] = Field(default_factory=list)
    gold_tag: Tag
    gold_related_ids: list[int] = Field(default_factory=list)
    # what makes the case hard ("quantity", "negation", "hard-negative", ...): for reading a
    # confusion table, never used by the engines
    kind: str = ""

    @model_validator(mode="after")
    def _related_ids_match_tag(self) -> TaggingCase:
        if self.gold_tag != "new" and not self.gold_related_ids:
            raise ValueError(f"a '{self.gold_tag}' case needs gold_related_ids")
        return self


@dataclass
class DatasetSplit:
    path: Path
    version: str
    split: str
    backlog: list[WorkItem]
    cases: list[TaggingCase]
    sha256: str  # of both files, so a result names exactly what it measured

    @property
    def name(self) -> str:
        return f"{self.version}/{self.split}" if self.split else self.version

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-") or "dataset"


def _read_lines(path: Path, model: type[Record]) -> list:
    if not path.is_file():
        raise DatasetError(f"{path} is missing")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(model.model_validate_json(line))
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise DatasetError(f"{path}:{n}: {where}: {first['msg']}") from None
    return rows


def load_split(path: Path, version: str | None = None, split: str | None = None) -> DatasetSplit:
    path = Path(path)
    backlog: list[WorkItem] = _read_lines(path / BACKLOG_FILE, WorkItem)
    process = from_type_names(w.work_item_type for w in backlog)
    if process is not None:
        backlog = normalize_types(backlog, process)
    cases: list[TaggingCase] = _read_lines(path / CASES_FILE, TaggingCase)
    if not cases:
        raise DatasetError(f"{path / CASES_FILE} holds no cases")
    stories = {w.work_item_id for w in backlog if w.work_item_type == "User Story"}
    seen: set[str] = set()
    for case in cases:
        if case.story_id in seen:
            raise DatasetError(f"{path / CASES_FILE}: story_id {case.story_id} appears twice")
        seen.add(case.story_id)
        unknown = [i for i in case.gold_related_ids if i not in stories]
        if unknown:
            raise DatasetError(
                f"{path / CASES_FILE}: {case.story_id} relates to {unknown}, "
                "which are not user stories of the backlog"
            )
    digest = hashlib.sha256()
    for name in (BACKLOG_FILE, CASES_FILE):
        digest.update((path / name).read_bytes())
    if version is None:
        version, split = path.name, ""
    return DatasetSplit(path, version, split or "", backlog, cases, digest.hexdigest())


def load_dataset(path: str | Path) -> list[DatasetSplit]:
    """Every split in ``path``: the folder itself when it holds the files, else its sub-folders."""
    path = Path(path)
    if not path.is_dir():
        raise DatasetError(f"{path} is not a folder")
    if (path / CASES_FILE).is_file():
        parent = path.parent
        looks_split = (parent / path.name / BACKLOG_FILE).is_file() and any(
            (d / CASES_FILE).is_file() for d in parent.iterdir() if d.is_dir() and d != path
        )
        if looks_split:
            return [load_split(path, parent.name, path.name)]
        return [load_split(path)]
    splits = sorted(d for d in path.iterdir() if d.is_dir() and (d / CASES_FILE).is_file())
    if not splits:
        raise DatasetError(f"{path} holds no {CASES_FILE}, directly or in a split folder")
    return [load_split(d, path.name, d.name) for d in splits]


def tag_counts(cases: list[TaggingCase]) -> dict[str, int]:
    return {t: sum(1 for c in cases if c.gold_tag == t) for t in TAGS}
