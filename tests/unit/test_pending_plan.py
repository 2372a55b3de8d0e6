"""The write plan (no I/O) of stories whose counterpart is a pending story of another run
(reviewed, not yet written: a negative related id with its ``pending_refs``), and the fake ADO's
WIQL date comparisons the sync relies on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from devhost.standins.fake_ado.replies import _Reply
from devhost.standins.fake_ado.wiql import WiqlError, _date_condition, _matches, parse_wiql
from shared.ado.ops import changed_since, work_items_query
from shared.indexing.pending import candidate_id
from shared.models import PendingRef
from shared.review.plan import InvalidDecisions, build_plan
from tests.support.backlog_items import Backlog

OTHER = "run-" + "b" * 20


def with_pending() -> tuple[Backlog, dict[str, str], dict[str, int]]:
    b = Backlog()
    ids = {"epic": b.epic("Parental control")}
    ids["f1"] = b.feature("Locks", ids["epic"])
    cids = {}
    for key, tag in (("dup", "duplicate"), ("ext", "extend"), ("con", "conflict")):
        cids[key] = candidate_id(OTHER, f"seg-0001-st0{len(cids) + 1}")
        ids[key] = b.story(f"Lock story {key}", ids["f1"], tag=tag, related=[cids[key]])
    refs = {
        r.story_id: r.model_copy(
            update={
                "pending_refs": [
                    PendingRef(
                        candidate_id=r.related_story_ids[0],
                        run_id=OTHER,
                        story_id=f"seg-0001-st0{n}",
                        title="Lock the remote with a PIN",
                    )
                ]
            }
        )
        for n, r in enumerate(b.records, start=1)
    }
    b.records = [refs[r.story_id] for r in b.records]
    return b, ids, cids


def test_a_pending_counterpart_is_never_patched_or_linked() -> None:
    b, ids, _ = with_pending()
    plan = {p.item_id: p for p in build_plan(b.run_id, b.items, b.records).items}
    dup, ext, con = plan[ids["dup"]], plan[ids["ext"]], plan[ids["con"]]
    assert dup.action == "skip" and dup.existing_id is None
    assert "that run's write writes it" in dup.reason and OTHER in dup.reason
    for entry in (ext, con):
        assert entry.action == "blocked" and entry.needs_decision and entry.existing_id is None
        assert OTHER in entry.reason and "not yet written" in entry.reason
        assert entry.view()["pending"] == {
            "run_id": OTHER,
            "story_id": entry.pending.story_id,  # type: ignore[union-attr]
            "title": "Lock the remote with a PIN",
        }
    # nothing is created under the feature while nothing of it is written
    assert plan[ids["f1"]].action == "skip"


def test_accept_creates_it_as_a_story_of_its_own_and_skip_skips_it() -> None:
    b, ids, _ = with_pending()
    decisions = {ids["ext"]: "accept", ids["con"]: "skip", ids["dup"]: "accept"}
    plan = {p.item_id: p for p in build_plan(b.run_id, b.items, b.records, decisions).items}
    assert plan[ids["ext"]].action == "create" and plan[ids["ext"]].existing_id is None
    assert "created as a new story" in plan[ids["ext"]].reason
    assert plan[ids["con"]].action == "skip"
    assert plan[ids["dup"]].action == "skip"  # accepting a duplicate writes nothing
    assert plan[ids["f1"]].action == "create"


@pytest.mark.parametrize("decision", ["keep_existing", "replace", "both"])
def test_decisions_that_need_an_ado_item_are_refused(decision: str) -> None:
    b, ids, _ = with_pending()
    with pytest.raises(InvalidDecisions, match="not yet written"):
        build_plan(b.run_id, b.items, b.records, {ids["con"]: decision})


def test_an_unsure_tag_against_a_pending_story_waits_even_when_a_duplicate() -> None:
    b, ids, _ = with_pending()
    b.records = [
        r.model_copy(update={"needs_review": True, "review_reasons": ["low confidence"]})
        if r.story_id == ids["dup"]
        else r
        for r in b.records
    ]
    plan = {p.item_id: p for p in build_plan(b.run_id, b.items, b.records).items}
    assert plan[ids["dup"]].action == "blocked" and "low confidence" in plan[ids["dup"]].reason


def test_candidate_ids_are_negative_and_stable() -> None:
    a = candidate_id(OTHER, "seg-0001-st01")
    assert a < 0 and a == candidate_id(OTHER, "seg-0001-st01")
    assert a != candidate_id(OTHER, "seg-0001-st02")
    with pytest.raises(ValueError):
        PendingRef(candidate_id=5, run_id=OTHER, story_id="seg-0001-st01")


# ------------------------------------------------------------------------------------------------
# the fake's WIQL dates


def item(changed: str) -> dict:
    return {"id": 1, "fields": {"System.ChangedDate": changed, "System.TeamProject": "P"}}


def conditions(when: datetime, precise: bool) -> list:
    query = parse_wiql(work_items_query(["Epic"], conditions=[changed_since(when)]))
    return [_date_condition(c, precise) for c in query.conditions]


def test_changed_since_compares_to_the_second_with_time_precision() -> None:
    when = datetime(2026, 3, 1, 12, 0, 30, 900_000, tzinfo=UTC)  # rounded down to :30
    conds = [c for c in conditions(when, True) if c[0] == "System.ChangedDate"]
    assert _matches(item("2026-03-01T12:00:30.000Z"), conds[0], "P", True)
    assert _matches(item("2026-03-01T12:00:31.5Z"), conds[0], "P", True)
    assert not _matches(item("2026-03-01T12:00:29.999Z"), conds[0], "P", True)
    assert not _matches(item("2026-02-28T23:59:59Z"), conds[0], "P", True)


def test_a_time_of_day_without_time_precision_is_refused_and_dates_compare_by_day() -> None:
    with pytest.raises(_Reply) as refused:
        conditions(datetime(2026, 3, 1, 12, 0, tzinfo=UTC), False)
    assert refused.value.status == 400 and "timePrecision" in refused.value.message
    day = _date_condition(("System.ChangedDate", ">=", "2026-03-01"), False)
    assert _matches(item("2026-03-01T00:00:01Z"), day, "P", False)
    assert not _matches(item("2026-02-28T23:59:59Z"), day, "P", False)
    with pytest.raises(WiqlError):
        _date_condition(("System.ChangedDate", ">=", "yesterday"), True)
