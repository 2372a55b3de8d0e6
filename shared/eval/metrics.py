"""The figures every evaluation reports, as plain functions of labels and boundaries.

Classification (seed §9.1): per-tag precision, recall and F1 from true/false positives and false
negatives, macro F1 (the mean over tags) and micro F1 (over all decisions; with one label per
case it equals accuracy), the confusion matrix (rows gold, columns predicted) and recall@k of the
gold related ids among the retrieved stories. These are a dozen lines each, tested against
hand-computed values; scikit-learn would bring ~100 MB for them.

Segmentation: Pk (Beeferman et al. 1999) and WindowDiff (Pevzner & Hearst 2002) from
``nltk.metrics.segmentation``. A segmentation of ``n`` units is written as the ``n - 1`` gaps
between them, ``"1"`` where a new segment starts; a probe at unit ``i`` looks ``k`` gaps ahead, so
both metrics count ``n - k`` probes. ``k`` is half the mean reference segment length (rounded, at
least 1), as usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class TagScores:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    support: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "support": self.support,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
        }


@dataclass
class ClassificationReport:
    labels: list[str]
    per_label: dict[str, TagScores]
    confusion: list[list[int]]  # confusion[gold][predicted], in ``labels`` order
    total: int
    correct: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def macro_f1(self) -> float:
        """Mean F1 over the labels that occur in the gold data."""
        present = [s for s in self.per_label.values() if s.support]
        return sum(s.f1 for s in present) / len(present) if present else 0.0

    @property
    def micro_f1(self) -> float:
        tp = sum(s.tp for s in self.per_label.values())
        fp = sum(s.fp for s in self.per_label.values())
        fn = sum(s.fn for s in self.per_label.values())
        return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "labels": self.labels,
            "per_tag": {label: self.per_label[label].as_dict() for label in self.labels},
            "macro_f1": round(self.macro_f1, 4),
            "micro_f1": round(self.micro_f1, 4),
            "accuracy": round(self.accuracy, 4),
            "confusion_matrix": {"rows": "gold", "columns": "predicted", "matrix": self.confusion},
            "total": self.total,
            "correct": self.correct,
        }


def classification_report(
    gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]
) -> ClassificationReport:
    """Per-label TP/FP/FN and the confusion matrix. A label outside ``labels`` is an error."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    index = {label: i for i, label in enumerate(labels)}
    for label in (*gold, *predicted):
        if label not in index:
            raise ValueError(f"unknown label {label!r} (labels: {', '.join(labels)})")
    scores = {label: TagScores() for label in labels}
    confusion = [[0] * len(labels) for _ in labels]
    for g, p in zip(gold, predicted, strict=True):
        confusion[index[g]][index[p]] += 1
        scores[g].support += 1
        if g == p:
            scores[g].tp += 1
        else:
            scores[g].fn += 1
            scores[p].fp += 1
    correct = sum(1 for g, p in zip(gold, predicted, strict=True) if g == p)
    return ClassificationReport(list(labels), scores, confusion, len(gold), correct)


def recall_at_k(
    gold_ids: Sequence[Sequence[int]], ranked_ids: Sequence[Sequence[int]], k: int
) -> float | None:
    """Mean share of each case's gold ids found among its first ``k`` ranked ids; cases without
    gold ids are left out (None when no case has any)."""
    shares = []
    for gold, ranked in zip(gold_ids, ranked_ids, strict=True):
        if not gold:
            continue
        top = set(list(ranked)[:k])
        shares.append(sum(1 for g in gold if g in top) / len(gold))
    return sum(shares) / len(shares) if shares else None


# ------------------------------------------------------------------------------------------------
# segmentation


def boundary_string(n_units: int, boundaries: Sequence[int]) -> str:
    """Gaps between ``n_units`` units as '0'/'1'; ``boundaries`` are the indices of units that
    start a segment (0 and out-of-range indices are ignored)."""
    gaps = ["0"] * max(n_units - 1, 0)
    for b in boundaries:
        if 1 <= b < n_units:
            gaps[b - 1] = "1"
    return "".join(gaps)


def default_k(n_units: int, reference: Sequence[int]) -> int:
    """Half the mean segment length of the reference, rounded, at least 1."""
    segments = len({b for b in reference if 1 <= b < n_units}) + 1
    return max(1, round(n_units / segments / 2))


def pk(n_units: int, reference: Sequence[int], hypothesis: Sequence[int], k: int) -> float:
    from nltk.metrics.segmentation import pk as nltk_pk

    return float(
        nltk_pk(boundary_string(n_units, reference), boundary_string(n_units, hypothesis), k)
    )


def windowdiff(n_units: int, reference: Sequence[int], hypothesis: Sequence[int], k: int) -> float:
    from nltk.metrics.segmentation import windowdiff as nltk_windowdiff

    return float(
        nltk_windowdiff(
            boundary_string(n_units, reference), boundary_string(n_units, hypothesis), k
        )
    )


def even_boundaries(n_units: int, n_segments: int) -> list[int]:
    """The even-split baseline: ``n_segments`` segments of (nearly) equal length."""
    n_segments = max(1, min(n_segments, n_units))
    return sorted({round(i * n_units / n_segments) for i in range(1, n_segments)})
