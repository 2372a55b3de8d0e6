"""Hand-made generated items and tagging records, for the writer's tests.

``Backlog`` builds a run's ``generated_backlog`` / ``tagging_analysis`` the way finalize writes them:
``epic()``, ``feature()`` and ``story()`` return the item ids; ``story`` takes its tag and the
existing work items it relates to.
"""

from __future__ import annotations

from datetime import UTC, datetime

from shared.models import AcDelta, GeneratedItem, SourceQuote, TaggingRecord

NOW = datetime(2026, 1, 1, tzinfo=UTC)


class Backlog:
    def __init__(self, run_id: str = "run-" + "a" * 20) -> None:
        self.run_id = run_id
        self.items: list[GeneratedItem] = []
        self.records: list[TaggingRecord] = []
        self._n = 0

    def _base(self, **kw: object) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "segment_id": "seg-0001",
            "segment_order": 1,
            "source_doc": "notes.md",
            "source_doc_segment": "0-100",
            "generation_agent_version": "gen-test",
            "engine": "offline",
            **kw,
        }

    def epic(self, title: str, *, parent_work_item_id: int | None = None) -> str:
        self._n += 1
        item_id = f"ep-{self._n:010d}"
        self.items.append(
            GeneratedItem(
                **self._base(
                    type="Epic",
                    item_id=item_id,
                    epic_id=item_id,
                    title=title,
                    description=f"Epic about {title}",
                    parent_work_item_id=parent_work_item_id,
                )
            )
        )
        return item_id

    def feature(
        self, title: str, epic_id: str | None = None, *, parent_work_item_id: int | None = None
    ) -> str:
        self._n += 1
        item_id = f"seg-0001-ft{self._n:02d}"
        self.items.append(
            GeneratedItem(
                **self._base(
                    type="Feature",
                    item_id=item_id,
                    feature_id=item_id,
                    epic_id=epic_id,
                    title=title,
                    description=f"Covers: {title}",
                    parent_work_item_id=parent_work_item_id,
                )
            )
        )
        return item_id

    def story(
        self,
        title: str,
        feature_id: str | None,
        *,
        tag: str | None = "new",
        related: list[int] | None = None,
        criteria: list[str] | None = None,
        description: str | None = None,
        deltas: list[str] | None = None,
        parent_work_item_id: int | None = None,
        tagging_failed: bool = False,
    ) -> str:
        self._n += 1
        item_id = f"seg-0001-st{self._n:02d}"
        feature = next((i for i in self.items if i.item_id == feature_id), None)
        related = related or []
        self.items.append(
            GeneratedItem(
                **self._base(
                    type="User Story",
                    item_id=item_id,
                    story_id=item_id,
                    feature_id=feature_id,
                    epic_id=feature.epic_id if feature else None,
                    title=title,
                    description=description or f"As a user, I want {title.lower()}.",
                    acceptance_criteria=criteria or [f"Given it, then {title.lower()}"],
                    assigned_tag=tag,
                    parent_work_item_id=parent_work_item_id,
                    extends_work_item_ids=related[:1] if tag in ("extend", "gap") else [],
                    ac_delta_entries=[
                        AcDelta(criterion=d, work_item_id=related[0] if related else None)
                        for d in deltas or []
                    ],
                    source_quotes=[SourceQuote(text=title, start=0, end=len(title))],
                )
            )
        )
        if tag is not None:
            self.records.append(
                TaggingRecord(
                    run_id=self.run_id,
                    segment_id="seg-0001",
                    story_id=item_id,
                    decision_tag=tag,  # type: ignore[arg-type]
                    related_story_ids=related,
                    max_similarity=0.9 if related else 0.2,
                    tagging_agent_version="tag-test",
                    tagging_failed=tagging_failed,
                    engine="offline",
                    timestamp=NOW,
                )
            )
        return item_id


def lone_story(
    title: str, description: str, acs: list[str] | None = None, item_id: str = "st-1"
) -> GeneratedItem:
    """One generated user story outside any run tree (for the taggers' tests)."""
    return GeneratedItem(
        run_id="run-1",
        segment_id="seg-0",
        segment_order=0,
        type="User Story",
        item_id=item_id,
        story_id=item_id,
        title=title,
        description=description,
        acceptance_criteria=acs or [],
        source_doc="notes.md",
        source_doc_segment="0-10",
        source_quotes=[SourceQuote(text="quote", start=0, end=5)],
        generation_agent_version="gen-offline-v2",
        engine="offline",
    )
