"""Train the tagging pair model (``shared/engine/offline/assets/tagging_model.json``).

    python -m shared.eval.train_tagging [SOURCE_DIR ...] [--out PATH] [--check]

Every SOURCE_DIR is one independent source of labelled cases (default: each folder of
``datasets/v2`` plus ``datasets/v1/dev``, which joins the ``dalpiaz`` source because it comes from
the same data set; ``datasets/v1/test`` is never read). For each case the candidates are retrieved
exactly as the pipeline does (fresh index of the source's backlog, the packaged MiniLM), every
candidate becomes a row of ``pairs.FEATURES`` labelled with the case's tag when it is one of the
gold related ids and ``none`` otherwise, and a multinomial logistic regression (scikit-learn, a
development dependency; the product reads only the weights) is fitted with every source and
every relation weighing the same.

Chosen on held-out sources, never in-source: the regularization ``C`` (best mean macro-F1
leave-one-source-out: train on the other sources, tag the one left out with the real tagger), the
temperature that calibrates the confidence (least log-loss of the held-out tags), and
``review_below``, the lowest confidence at which the held-out tags above it are right at least
``REVIEW_TARGET`` of the time. The report prints the per-source table beside the seed-threshold
tagger on the same folds and the reliability table; ``--check`` verifies that the shipped model
was trained on the current files (same hash).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shared.agents import Candidate
from shared.engine.offline.pairs import (
    FEATURES,
    MODEL_PATH,
    STORY_FEATURES,
    PairModel,
    TagScores,
    scores_from,
    story_vector,
)
from shared.eval.dataset import DatasetSplit, load_split
from shared.eval.metrics import classification_report
from shared.eval.report import table
from shared.models import TAGS, GeneratedItem

ROOT = Path(__file__).resolve().parents[2]
C_GRID = (0.03, 0.1, 0.3, 1.0)
C_RELATED = 1.0
TEMPERATURES = tuple(round(t, 2) for t in np.arange(0.5, 3.01, 0.1))
REVIEW_GRID = tuple(round(t, 2) for t in np.arange(0.30, 0.96, 0.05))
REVIEW_TARGET = 0.80
BINS = (0.0, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)
SOURCE_OF = {"dev": "dalpiaz"}  # datasets/v1/dev is Dalpiaz data too: one source, not two


def default_sources() -> list[Path]:
    v2 = ROOT / "datasets" / "v2"
    found = (
        sorted(d for d in v2.iterdir() if (d / "tagging_test.jsonl").is_file())
        if v2.is_dir()
        else []
    )
    return [*found, ROOT / "datasets" / "v1" / "dev"]


@dataclass
class Case:
    source: str
    story: GeneratedItem
    candidates: list[Candidate]
    features: np.ndarray
    gold: str
    gold_ids: list[int]


@dataclass
class Data:
    cases: list[Case] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)

    @property
    def sources(self) -> list[str]:
        return sorted({c.source for c in self.cases})


def source_name(split: DatasetSplit) -> str:
    return SOURCE_OF.get(split.path.name, split.path.name)


def read_data(
    paths: list[Path], embedder: Any, cache: Path | None = None, progress: bool = True
) -> Data:
    """Every case of ``paths`` with its candidates and feature rows. ``cache``: a folder where
    the rows of a split are kept under the split's hash and the feature list (for iterating)."""
    import pickle

    from shared.engine.offline.pairs import pair_features
    from shared.eval.calibrate import retrieve
    from shared.settings import Settings

    settings = Settings(engine="offline", embedder="minilm", tagging_model="thresholds")
    data = Data()
    key = hashlib.sha256(" ".join(FEATURES).encode()).hexdigest()[:12]
    for path in paths:
        split = load_split(path)
        name = source_name(split)
        data.hashes[_relative(path)] = split.sha256
        stored = cache / f"{split.sha256[:16]}-{key}.pickle" if cache else None
        if stored and stored.is_file():
            cases = [_case_from(row) for row in pickle.loads(stored.read_bytes())]
            for case in cases:
                case.source = name
        else:
            cases = [
                Case(
                    source=name,
                    story=story,
                    candidates=candidates,
                    features=pair_features(story, candidates, embedder),
                    gold=case.gold_tag,
                    gold_ids=case.gold_related_ids,
                )
                for case, (story, candidates) in zip(
                    split.cases, retrieve(settings, split), strict=True
                )
            ]
            if stored:
                stored.parent.mkdir(parents=True, exist_ok=True)
                stored.write_bytes(pickle.dumps([_case_row(c) for c in cases]))
        data.cases += cases
        if progress:
            print(f"  {path}: {len(split.cases)} cases -> {name}", file=sys.stderr)
    if len(data.sources) < 2:
        raise SystemExit("error: leave-one-source-out needs at least two sources")
    return data


def _case_row(case: Case) -> dict[str, Any]:
    """Plain data (pickles the same under ``-m`` and from any importer)."""
    from dataclasses import asdict

    return {
        "source": case.source,
        "story": case.story.model_dump(mode="json"),
        "candidates": [asdict(c) for c in case.candidates],
        "features": case.features,
        "gold": case.gold,
        "gold_ids": case.gold_ids,
    }


def _case_from(row: dict[str, Any]) -> Case:
    return Case(
        source=row["source"],
        story=GeneratedItem.model_validate(row["story"]),
        candidates=[Candidate(**c) for c in row["candidates"]],
        features=row["features"],
        gold=row["gold"],
        gold_ids=row["gold_ids"],
    )


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def training_hash(hashes: dict[str, str]) -> str:
    """Of the training files and the feature lists: either changing means retraining."""
    digest = hashlib.sha256(" ".join([*FEATURES, "|", *STORY_FEATURES]).encode())
    for name in sorted(hashes):
        digest.update(f"{Path(name).name}:{hashes[name]}\n".encode())
    return digest.hexdigest()


def _standardised(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    return mean, scale


def _source_weights(sources: list[str], labels: np.ndarray) -> np.ndarray:
    """Every source the same total weight, and within it every label."""
    src = np.asarray(sources)
    weights = np.zeros(len(labels))
    for s in set(sources):
        in_s = src == s
        present = [v for v in np.unique(labels[in_s])]
        for v in present:
            mask = in_s & (labels == v)
            weights[mask] = 1.0 / (mask.sum() * len(present))
    return weights * len(labels) / weights.sum()


def fit_related(cases: list[Case]) -> dict[str, Any]:
    """Per candidate: is it one of the case's gold related ids (any tag but new)?"""
    from sklearn.linear_model import LogisticRegression

    xs, ys, srcs = [], [], []
    for case in cases:
        for k, c in enumerate(case.candidates):
            xs.append(case.features[k])
            ys.append(1 if case.gold != "new" and c.work_item_id in case.gold_ids else 0)
            srcs.append(case.source)
    x, y = np.asarray(xs), np.asarray(ys)
    mean, scale = _standardised(x)
    lr = LogisticRegression(C=C_RELATED, max_iter=5000)
    lr.fit((x - mean) / scale, y, sample_weight=_source_weights(srcs, y))
    return {
        "mean": mean.round(8).tolist(),
        "scale": scale.round(8).tolist(),
        "coef": lr.coef_.round(8).tolist(),
        "intercept": lr.intercept_.round(8).tolist(),
    }


def _related_probabilities(part: dict[str, Any], features: np.ndarray) -> np.ndarray:
    z = ((features - np.asarray(part["mean"])) / np.asarray(part["scale"])) @ np.asarray(
        part["coef"]
    ).T + np.asarray(part["intercept"])
    return np.asarray(1.0 / (1.0 + np.exp(-z[:, 0])))


def fit(data: Data, keep: set[str], c: float) -> dict[str, Any]:
    """Both stages on the sources in ``keep``. The story stage learns from related
    probabilities of a model that did not see the story's source (when there are two sources
    or more), so it learns how far those probabilities hold on a new source."""
    from sklearn.linear_model import LogisticRegression

    cases = [k for k in data.cases if k.source in keep and k.candidates]
    related = fit_related(cases)
    names = sorted(keep)
    crossed = {
        s: fit_related([k for k in cases if k.source != s]) if len(names) > 1 else related
        for s in names
    }
    rows = [
        story_vector(k.features, _related_probabilities(crossed[k.source], k.features))[0]
        for k in cases
    ]
    x = np.asarray(rows)
    y = np.asarray([TAGS.index(k.gold) for k in cases])
    mean, scale = _standardised(x)
    lr = LogisticRegression(C=c, max_iter=5000)
    lr.fit((x - mean) / scale, y, sample_weight=_source_weights([k.source for k in cases], y))
    coef = np.zeros((len(TAGS), x.shape[1]))
    intercept = np.full(len(TAGS), -30.0)  # a tag never seen in training is never predicted
    coef[lr.classes_] = lr.coef_
    intercept[lr.classes_] = lr.intercept_
    return {
        "features": list(FEATURES),
        "story_features": list(STORY_FEATURES),
        "tags": list(TAGS),
        "related": related,
        "tagger": {
            "mean": mean.round(8).tolist(),
            "scale": scale.round(8).tolist(),
            "coef": coef.round(8).tolist(),
            "intercept": intercept.round(8).tolist(),
        },
        "version": "fold",
    }


def predict(doc: dict[str, Any], cases: list[Case], temperature: float = 1.0) -> list[TagScores]:
    model = PairModel(doc)
    return [model.score(c.features, temperature) for c in cases]


def thresholds_tags(cases: list[Case]) -> list[str]:
    from shared.engine.offline.tagging import OfflineTagger
    from shared.settings import THRESHOLD_PROFILES, TaggingConfig, ThresholdsConfig

    tagger = OfflineTagger(
        None,  # no embedder: the thresholds scorer needs none
        ThresholdsConfig(**THRESHOLD_PROFILES["minilm"]),
        TaggingConfig(scorer="thresholds"),
    )
    return [
        tagger.tag(c.story, c.candidates).decision.decision_tag if c.candidates else "new"
        for c in cases
    ]


def leave_one_source_out(data: Data, c: float) -> dict[str, list[Any]]:
    """Held-out scores of every case (by the model trained on the other sources)."""
    out: dict[str, list[Any]] = {}
    for held in data.sources:
        doc = fit(data, set(data.sources) - {held}, c)
        out[held] = predict(doc, [k for k in data.cases if k.source == held])
    return out


def _nll(scores: list[TagScores], gold: list[str], temperature: float) -> float:
    total = 0.0
    for sc, g in zip(scores, gold, strict=True):
        z = sc.logits / temperature
        z = z - z.max()
        total -= float(z[TAGS.index(g)] - np.log(np.exp(z).sum()))
    return total / max(len(gold), 1)


def reliability(confidence: list[float], correct: list[bool]) -> list[dict[str, Any]]:
    rows = []
    conf, ok = np.asarray(confidence), np.asarray(correct, dtype=float)
    for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
        mask = (conf >= lo) & (conf < hi)
        n = int(mask.sum())
        rows.append(
            {
                "bin": f"{lo:.1f}-{min(hi, 1.0):.1f}",
                "cases": n,
                "mean_confidence": round(float(conf[mask].mean()), 3) if n else None,
                "accuracy": round(float(ok[mask].mean()), 3) if n else None,
            }
        )
    return rows


def expected_calibration_error(confidence: list[float], correct: list[bool]) -> float:
    rows = reliability(confidence, correct)
    n = sum(r["cases"] for r in rows)
    return sum(
        r["cases"] / n * abs(r["mean_confidence"] - r["accuracy"]) for r in rows if r["cases"]
    )


def choose_review_below(confidence: list[float], correct: list[bool]) -> float:
    conf, ok = np.asarray(confidence), np.asarray(correct, dtype=float)
    for t in REVIEW_GRID:
        kept = conf >= t
        if kept.any() and ok[kept].mean() >= REVIEW_TARGET:
            return float(t)
    return REVIEW_GRID[-1]


def train(
    paths: list[Path], embedder: Any, cache: Path | None = None
) -> tuple[dict[str, Any], str]:
    data = read_data(paths, embedder, cache)
    gold = {s: [k.gold for k in data.cases if k.source == s] for s in data.sources}
    grid = []
    for c in C_GRID:
        held = leave_one_source_out(data, c)
        f1 = {
            s: classification_report(gold[s], [x.tag for x in held[s]], TAGS).macro_f1
            for s in data.sources
        }
        grid.append((float(np.mean(list(f1.values()))), c, held, f1))
    grid.sort(key=lambda g: (-g[0], g[1]))
    _, best_c, held, f1 = grid[0]
    all_scores = [x for s in data.sources for x in held[s]]
    all_gold = [g for s in data.sources for g in gold[s]]
    temperature = min(TEMPERATURES, key=lambda t: _nll(all_scores, all_gold, t))
    calibrated = [
        scores_from(
            x.logits,
            temperature,
            int(np.argmax(x.p_related)) if len(x.p_related) else None,
            x.p_related,
        )
        for x in all_scores
    ]
    confidence = [x.confidence for x in calibrated]
    correct = [x.tag == g for x, g in zip(calibrated, all_gold, strict=True)]
    review_below = choose_review_below(confidence, correct)
    per_source: list[dict[str, Any]] = []
    for s in data.sources:
        cases = [k for k in data.cases if k.source == s]
        mine = classification_report(gold[s], [x.tag for x in held[s]], TAGS)
        seed = classification_report(gold[s], thresholds_tags(cases), TAGS)
        per_source.append(
            {
                "source": s,
                "cases": len(cases),
                "macro_f1": round(mine.macro_f1, 4),
                "f1": {t: round(mine.per_label[t].f1, 4) for t in TAGS},
                "thresholds_macro_f1": round(seed.macro_f1, 4),
            }
        )
    doc = fit(data, set(data.sources), best_c)
    h = training_hash(data.hashes)
    doc.update(
        {
            "version": "pairs-"
            + hashlib.sha256(json.dumps([doc["related"], doc["tagger"]]).encode()).hexdigest()[:8],
            "trained_on": {
                "sha256": h,
                "files": data.hashes,
                "sources": data.sources,
                "cases": len(data.cases),
                "embedder": getattr(embedder, "model_name", "?"),
            },
            "C": best_c,
            "temperature": temperature,
            "review_below": review_below,
            "leave_one_source_out": {
                "mean_macro_f1": round(float(np.mean([r["macro_f1"] for r in per_source])), 4),
                "worst_macro_f1": round(float(min(r["macro_f1"] for r in per_source)), 4),
                "per_source": per_source,
                "C_grid": {str(g[1]): round(g[0], 4) for g in grid},
                "reliability": reliability(confidence, correct),
                "ece": round(expected_calibration_error(confidence, correct), 4),
                "flagged_share": round(float(np.mean([c < review_below for c in confidence])), 4),
            },
        }
    )
    return doc, h


def report(doc: dict[str, Any]) -> str:
    loso = doc["leave_one_source_out"]
    rows = [
        [
            r["source"],
            r["cases"],
            r["macro_f1"],
            r["f1"].get("new"),
            r["f1"].get("conflict"),
            r["thresholds_macro_f1"],
        ]
        for r in loso["per_source"]
    ]
    rows.append(
        [
            "mean",
            sum(r["cases"] for r in loso["per_source"]),
            loso["mean_macro_f1"],
            "",
            "",
            round(float(np.mean([r["thresholds_macro_f1"] for r in loso["per_source"]])), 4),
        ]
    )
    out = [
        f"tagging pair model {doc['version']}: C={doc['C']}, temperature={doc['temperature']}, "
        f"review_below={doc['review_below']} ({loso['flagged_share']:.0%} of held-out tags flagged)",
        "leave-one-source-out (train on the others, tag the one left out):",
        table(
            [
                "held-out source",
                "cases",
                "macro F1",
                "F1 new",
                "F1 conflict",
                "thresholds macro F1",
            ],
            rows,
        ),
        f"reliability of the held-out confidence (ECE {loso['ece']}):",
        table(
            ["confidence", "cases", "mean confidence", "accuracy"],
            [
                [r["bin"], r["cases"], r["mean_confidence"], r["accuracy"]]
                for r in loso["reliability"]
            ],
        ),
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m shared.eval.train_tagging", description=__doc__)
    p.add_argument("sources", nargs="*", type=Path, help="source folders (default: v2 + v1/dev)")
    p.add_argument("--out", type=Path, default=MODEL_PATH)
    p.add_argument("--check", action="store_true", help="only verify the shipped model's hash")
    p.add_argument(
        "--cache",
        type=Path,
        help="keep feature rows here between runs (clear it when the feature code changes)",
    )
    args = p.parse_args(argv)
    paths = [s.resolve() for s in args.sources] or default_sources()
    if any(path.name == "test" and path.parent.name == "v1" for path in paths):
        print("error: datasets/v1/test is the test split; never train on it", file=sys.stderr)
        return 2
    if args.check:
        hashes = {_relative(path): load_split(path).sha256 for path in paths}
        shipped = json.loads(args.out.read_text(encoding="utf-8"))["trained_on"]["sha256"]
        if shipped != training_hash(hashes):
            print(f"{args.out} was trained on other data: retrain it", file=sys.stderr)
            return 1
        print(f"{args.out} matches the training data")
        return 0
    from shared.analysis.capture import _minilm

    doc, _ = train(paths, _minilm(), args.cache)
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(report(doc))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
