"""Evaluation metrics against values computed by hand (see the comments for the arithmetic)."""

from __future__ import annotations

import pytest

from shared.eval.metrics import (
    boundary_string,
    classification_report,
    default_k,
    even_boundaries,
    pk,
    recall_at_k,
    windowdiff,
)
from shared.eval.segmentation import turn_boundaries
from shared.models import TAGS

GOLD = ["new", "new", "extend", "gap", "conflict", "duplicate", "extend"]
PRED = ["new", "extend", "extend", "gap", "gap", "duplicate", "new"]


def test_per_tag_precision_recall_f1_by_hand() -> None:
    r = classification_report(GOLD, PRED, TAGS)
    got = {t: (s.tp, s.fp, s.fn) for t, s in r.per_label.items()}
    # new: right at 0, missed at 1, wrongly claimed at 6; extend: right at 2, claimed at 1,
    # missed at 6; gap: right at 3, claimed at 4; conflict: missed at 4; duplicate: right at 5
    assert got == {
        "new": (1, 1, 1),
        "extend": (1, 1, 1),
        "gap": (1, 1, 0),
        "conflict": (0, 0, 1),
        "duplicate": (1, 0, 0),
    }
    assert r.per_label["gap"].precision == pytest.approx(0.5)
    assert r.per_label["gap"].recall == pytest.approx(1.0)
    assert r.per_label["gap"].f1 == pytest.approx(2 / 3)
    assert r.per_label["conflict"].f1 == 0.0
    # macro: (0.5 + 0.5 + 2/3 + 0 + 1) / 5; micro: 2*4 / (2*4 + 3 + 3) = accuracy 4/7
    assert r.macro_f1 == pytest.approx((0.5 + 0.5 + 2 / 3 + 0 + 1) / 5)
    assert r.micro_f1 == pytest.approx(4 / 7)
    assert r.accuracy == pytest.approx(4 / 7)


def test_confusion_matrix_rows_are_gold_columns_predicted() -> None:
    r = classification_report(GOLD, PRED, TAGS)
    assert r.confusion == [
        [1, 1, 0, 0, 0],  # new
        [1, 1, 0, 0, 0],  # extend
        [0, 0, 1, 0, 0],  # gap
        [0, 0, 1, 0, 0],  # conflict
        [0, 0, 0, 0, 1],  # duplicate
    ]
    d = r.as_dict()
    assert d["per_tag"]["gap"]["support"] == 1 and d["total"] == 7 and d["correct"] == 4


def test_macro_f1_ignores_tags_absent_from_the_gold_data() -> None:
    r = classification_report(["new", "extend"], ["new", "extend"], TAGS)
    assert r.macro_f1 == 1.0  # gap, conflict and duplicate have no support


def test_bad_input_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown label"):
        classification_report(["new"], ["maybe"], TAGS)
    with pytest.raises(ValueError, match="gold labels"):
        classification_report(["new", "gap"], ["new"], TAGS)


def test_recall_at_k_by_hand() -> None:
    gold = [[1, 2], [3], []]
    ranked = [[2, 9, 1], [4, 3], [5]]
    # k=1: case 1 finds 2 of {1,2} -> 1/2, case 2 finds nothing -> 0; the case without gold ids
    # does not count
    assert recall_at_k(gold, ranked, 1) == pytest.approx(0.25)
    assert recall_at_k(gold, ranked, 2) == pytest.approx(0.75)
    assert recall_at_k(gold, ranked, 3) == pytest.approx(1.0)
    assert recall_at_k([[]], [[1]], 3) is None


def test_boundary_string_and_k() -> None:
    assert boundary_string(5, [2, 4]) == "0101"
    assert boundary_string(5, [0, 2, 9]) == "0100"  # 0 and out-of-range ignored
    assert default_k(10, [5]) == 2  # 10 units / 2 segments / 2 = 2.5, rounded to even
    assert default_k(30, [10, 20]) == 5
    assert even_boundaries(10, 3) == [3, 7]
    assert even_boundaries(10, 1) == []


def test_pk_and_windowdiff_by_hand() -> None:
    # 10 units, reference cut before unit 5, k = 2: 8 probes over gaps (i, i+1)
    assert pk(10, [5], [5], 2) == 0.0
    assert windowdiff(10, [5], [5], 2) == 0.0
    # hypothesis cut before unit 3: probes 1, 2 (hyp only) and 3, 4 (ref only) disagree -> 4/8
    assert pk(10, [5], [3], 2) == pytest.approx(0.5)
    assert windowdiff(10, [5], [3], 2) == pytest.approx(0.5)
    # an extra cut before 4: Pk sees only probe 2 (hyp has a cut, ref none) -> 1/8; WindowDiff
    # also counts probe 3, where both have cuts but 2 against 1 -> 2/8
    assert pk(10, [5], [4, 5], 2) == pytest.approx(0.125)
    assert windowdiff(10, [5], [4, 5], 2) == pytest.approx(0.25)
    # no boundary at all: the 2 probes spanning the reference cut disagree -> 2/8
    assert pk(10, [5], [], 2) == pytest.approx(0.25)


def test_segment_offsets_map_to_turns() -> None:
    transcript = "A: x\nB: yy\nC: zzz\nD: w\n"  # lines start at 0, 5, 11, 18
    assert turn_boundaries(transcript, [5, 18]) == [1, 3]
    assert turn_boundaries(transcript, [12]) == [2]  # inside C's line, nearer its start
    assert turn_boundaries(transcript, [9]) == [2]  # inside B's line, nearer C's start
    assert turn_boundaries(transcript, [0, 2]) == []  # nothing before the first turn
