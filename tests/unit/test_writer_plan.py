"""The write plan (no I/O): actions per tag and decision, parents, signatures, validation, and the
text the writer sends (escaped, tags sanitized)."""

from __future__ import annotations

import pytest

from shared.ado.process import AGILE, BASIC, CMMI, SCRUM
from shared.review import render
from shared.review.plan import InvalidDecisions, build_plan
from tests.support.backlog_items import Backlog


def sample() -> tuple[Backlog, dict[str, str]]:
    b = Backlog()
    ids = {}
    ids["epic"] = b.epic("Voice control")
    ids["f1"] = b.feature("Voice commands", ids["epic"])
    ids["new"] = b.story("Say a channel number", ids["f1"])
    ids["extend"] = b.story(
        "Voice volume", ids["f1"], tag="extend", related=[1126], deltas=["Say 'louder'"]
    )
    ids["f2"] = b.feature("Only known items", ids["epic"])
    ids["dup"] = b.story("Mute by voice", ids["f2"], tag="duplicate", related=[1106])
    ids["conflict"] = b.story("No voice at all", ids["f2"], tag="conflict", related=[1126])
    ids["f3"] = b.feature("Under an existing epic", parent_work_item_id=1002)
    ids["under"] = b.story("Battery icon", ids["f3"])
    return b, ids


def by_id(plan):
    return {p.item_id: p for p in plan.items}


def test_stories_act_per_tag_and_containers_are_created_only_when_needed():
    b, ids = sample()
    plan = build_plan(b.run_id, b.items, b.records)
    p = by_id(plan)
    assert [e.item.type for e in plan.items] == ["Epic"] + ["Feature"] * 3 + ["User Story"] * 5
    assert p[ids["new"]].action == "create" and p[ids["new"]].parent_ref == ids["f1"]
    extend = p[ids["extend"]]
    assert (extend.action, extend.existing_id, extend.criteria) == ("patch", 1126, ["Say 'louder'"])
    assert p[ids["dup"]].action == "skip" and p[ids["dup"]].existing_id == 1106
    assert p[ids["conflict"]].action == "blocked" and "keep_existing" in p[ids["conflict"]].reason
    # f2 holds only a duplicate and a blocked conflict: no empty feature is created
    assert p[ids["f2"]].action == "skip" and p[ids["f1"]].action == "create"
    assert p[ids["epic"]].action == "create"
    assert p[ids["f3"]].action == "create" and p[ids["f3"]].parent_ref == "ado:1002"
    assert plan.counts() == {"create": 5, "patch": 1, "skip": 2, "blocked": 1, "existing": 0}
    view = plan.view()[0]
    assert set(view) >= {"item_id", "type", "title", "action", "status", "parent_ref", "reason"}


@pytest.mark.parametrize("process", [SCRUM, CMMI], ids=lambda p: p.name)
def test_processes_with_features_plan_alike_under_their_own_type_names(process):
    b, ids = sample()
    agile, other = (
        build_plan(b.run_id, b.items, b.records),
        build_plan(b.run_id, b.items, b.records, process=process),
    )
    assert [(e.item_id, e.action, e.parent_ref, e.signature) for e in other.items] == [
        (e.item_id, e.action, e.parent_ref, e.signature) for e in agile.items
    ]
    assert by_id(agile)[ids["new"]].ado_type == "User Story"
    assert by_id(other)[ids["new"]].ado_type == process.story_type
    assert by_id(other)[ids["f1"]].view()["work_item_type"] == "Feature"
    assert other.process is process and agile.process is AGILE


def test_basic_has_no_features_its_stories_go_under_the_features_parent():
    b, ids = sample()
    plan = build_plan(b.run_id, b.items, b.records, process=BASIC)
    p = by_id(plan)
    for feature in ("f1", "f2", "f3"):
        entry = p[ids[feature]]
        assert (entry.action, entry.ado_type) == ("skip", None)
        assert "basic process has no Feature type" in entry.reason
        assert entry.view()["work_item_type"] is None
    new, under = p[ids["new"]], p[ids["under"]]
    assert (new.action, new.ado_type, new.parent_ref) == ("create", "Issue", ids["epic"])
    assert new.feature_title == "Voice commands"
    # f3 hung under the existing epic #1002: its story does
    assert (under.parent_ref, under.feature_title) == ("ado:1002", "Under an existing epic")
    assert p[ids["epic"]].action == "create" and p[ids["epic"]].ado_type == "Epic"
    assert p[ids["extend"]].action == "patch" and p[ids["extend"]].existing_id == 1126
    assert plan.counts() == {"create": 3, "patch": 1, "skip": 4, "blocked": 1, "existing": 0}
    # a story's signature follows its parent chain: under the epic it is another item
    agile = by_id(build_plan(b.run_id, b.items, b.records))
    assert new.signature != agile[ids["new"]].signature
    assert p[ids["epic"]].signature == agile[ids["epic"]].signature


def test_basic_criteria_and_feature_go_into_the_description():
    b = Backlog()
    story = b.story("Say <it>", b.feature("Voice & co", b.epic("E")), criteria=["One", "<b>Two"])
    item = next(i for i in b.items if i.item_id == story)
    html = render.description_html(item, criteria=item.acceptance_criteria, feature="Voice & co")
    assert "<div><i>Feature:</i> Voice &amp; co</div>" in html
    assert "<h3>Acceptance criteria</h3><ul><li>One</li><li>&lt;b&gt;Two</li></ul>" in html
    assert html.index("Feature:") < html.index("Acceptance criteria") < html.index("Source")
    plain = render.description_html(item)
    assert "Acceptance criteria" not in plain and "Feature:" not in plain
    assert render.criteria_section_html([]) == ""


def test_decisions_resolve_conflicts_and_override_tags():
    b, ids = sample()
    plan = build_plan(b.run_id, b.items, b.records, {ids["conflict"]: "both", ids["new"]: "skip"})
    p = by_id(plan)
    both = p[ids["conflict"]]
    assert (both.action, both.decision, both.existing_id) == ("create", "both", 1126)
    assert p[ids["f2"]].action == "create"  # the kept-both story needs its feature
    assert p[ids["new"]].action == "skip" and p[ids["new"]].reason == "skipped by the reviewer"

    replace = by_id(build_plan(b.run_id, b.items, b.records, {ids["conflict"]: "replace"}))
    entry = replace[ids["conflict"]]
    assert (entry.action, entry.patch_mode, entry.existing_id) == ("patch", "replace", 1126)
    assert entry.criteria == ["Given it, then no voice at all"]
    keep = by_id(build_plan(b.run_id, b.items, b.records, {ids["conflict"]: "keep_existing"}))
    assert keep[ids["conflict"]].action == "skip" and keep[ids["f2"]].action == "skip"


@pytest.mark.parametrize(
    "decisions, problem",
    [
        ({"seg-9999-st01": "accept"}, "not a user story of this run"),
        ({"../../etc": "skip"}, "not a user story of this run"),
        ({"seg-0001-ft02": "skip"}, "not a user story of this run"),  # a feature
        ({"seg-0001-st03": "delete"}, "is not one of accept, skip"),
        ({"seg-0001-st03": "both"}, "needs an existing work item"),  # a new story
        ({"seg-0001-st03": 1}, "is not one of"),
    ],
)
def test_bad_decisions_are_rejected_with_every_problem(decisions, problem):
    b, _ = sample()
    with pytest.raises(InvalidDecisions) as err:
        build_plan(b.run_id, b.items, b.records, decisions)
    assert problem in str(err.value) and err.value.problems
    with pytest.raises(InvalidDecisions):
        build_plan(b.run_id, b.items, b.records, ["not", "a", "mapping"])  # type: ignore[arg-type]


def test_untagged_failed_and_unrelated_stories():
    b = Backlog()
    f = b.feature("F", b.epic("E"))
    untagged = b.story("Never tagged", f, tag=None)
    failed = b.story("Tagging failed", f, tagging_failed=True)
    lonely = b.story("Extend of nothing", f, tag="extend", related=[])
    p = by_id(build_plan(b.run_id, b.items, b.records))
    assert p[untagged].action == "blocked" and "retag" in p[untagged].reason
    assert p[failed].action == "create" and "tagging failed" in p[failed].reason
    assert p[lonely].action == "create" and "created as new" in p[lonely].reason


def test_signatures_follow_the_parent_chain_and_not_the_run():
    one, ids = sample()
    two, _ = sample()
    two.run_id = "run-" + "b" * 20
    for item in two.items:
        item.run_id = two.run_id
    sig_one = {p.item_id: p.signature for p in build_plan(one.run_id, one.items, one.records).items}
    sig_two = {p.item_id: p.signature for p in build_plan(two.run_id, two.items, two.records).items}
    assert sig_one == sig_two  # another run holding the same items: the same signatures
    assert len(set(sig_one.values())) == len(sig_one)

    renamed, _ = sample()
    renamed.items[0] = renamed.items[0].model_copy(update={"title": "Voice control v2"})
    sig_renamed = {
        p.item_id: p.signature for p in build_plan(renamed.run_id, renamed.items, []).items
    }
    assert sig_renamed[ids["new"]] != sig_one[ids["new"]]  # the parent chain is part of it
    assert sig_renamed[ids["under"]] == sig_one[ids["under"]]  # under an existing epic: unchanged
    tag = render.signature_tag(sig_one[ids["new"]])
    assert tag.startswith("synth-sig-") and len(tag) == len("synth-sig-") + 32


def test_model_text_is_escaped_and_tags_sanitized():
    b = Backlog()
    story = b.story(
        '<script>alert("x")</script> & "quotes"',
        b.feature("F", b.epic("E")),
        description="Click <img src=x onerror=alert(1)>",
        criteria=["<b>bold</b> & done"],
    )
    item = next(i for i in b.items if i.item_id == story)
    title = render.title_text(item.title)
    assert title == '&lt;script&gt;alert("x")&lt;/script&gt; &amp; "quotes"'
    assert "<img" not in render.description_html(item)
    assert "&lt;img src=x onerror=alert(1)&gt;" in render.description_html(item)
    assert render.criteria_html(item.acceptance_criteria) == (
        "<ul><li>&lt;b&gt;bold&lt;/b&gt; &amp; done</li></ul>"
    )
    long = render.title_text("a&" * 200)
    assert len(long) <= render.TITLE_LIMIT and long.endswith("…") and "&am…" not in long
    assert render.sanitize_tag(" synth; run, x ") == "synth run x"
    assert render.tags(["a", "A", "b;c", ""]) == ["a", "b c"]


def test_only_new_criteria_are_appended():
    existing = "<ul><li>The remote &amp; the TV pair</li><li>Beeps twice</li></ul>"
    added = render.new_criteria(existing, ["beeps  TWICE", "The remote & the TV pair", "New one"])
    assert added == ["New one"]
    assert render.new_criteria("", ["x", "X", " x "]) == ["x"]
