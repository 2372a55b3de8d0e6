"""``eval tagging DIR --leave-one-source-out``: the tagging pair model judged on sources it was not
trained on. For each split of the dataset a pair model is fitted on the other sources
(``shared.eval.train_tagging.fit``) and the real pipeline tagging step tags the held-out split
with it, beside the seed-threshold tagger on the same split; ``render_loso`` prints the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from shared.engine.offline.pairs import PairModel
from shared.eval.report import table
from shared.eval.train_tagging import fit, read_data, source_name


def evaluate_loso(
    settings: Any,
    dataset: Path,
    train_also: list[Path],
    cache: Path | None = None,
    workers: int | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``eval tagging DIR --leave-one-source-out``: every split of ``dataset`` is one source; for
    each, a pair model is trained on the other sources (and ``train_also``, grouped by
    ``SOURCE_OF``), and the real pipeline tagging step tags the held-out split with it, beside
    the seed-threshold tagger on the same split. Returns (summary document, per-split docs)."""
    from shared.agents import Agents
    from shared.analysis.capture import _minilm
    from shared.engine.offline.tagging import OfflineTagger
    from shared.eval.dataset import load_dataset
    from shared.eval.tagging import evaluate_split
    from shared.services import build_agents, build_embedder
    from shared.settings import TaggingConfig

    splits = load_dataset(dataset)
    data = read_data([s.path for s in splits] + train_also, _minilm(), cache)
    shipped = PairModel.load()
    embedder = build_embedder(settings)
    base = build_agents(settings, embedder)
    docs, rows = [], []
    for split in splits:
        held = source_name(split)
        fold = fit(data, set(data.sources) - {held}, float(shipped.doc.get("C", 0.1)))
        fold.update(temperature=shipped.temperature, review_below=shipped.review_below)
        fold["version"] = f"loso-without-{held}"
        results = {}
        for scorer in ("pairs", "thresholds"):
            tagger = OfflineTagger(
                embedder,
                settings.pipeline.thresholds,
                TaggingConfig(scorer=scorer),
                pair_model=PairModel(fold) if scorer == "pairs" else None,
            )
            agents = Agents(segmenter=base.segmenter, generator=base.generator, tagger=tagger)
            doc, _ = evaluate_split(
                settings, split, embedder=embedder, agents=agents, workers=workers
            )
            results[scorer] = doc
        docs.append(results["pairs"])
        m, t = results["pairs"]["metrics"], results["thresholds"]["metrics"]
        rows.append(
            {
                "source": held,
                "cases": len(split.cases),
                "macro_f1": m["macro_f1"],
                "f1_new": m["per_tag"]["new"]["f1"],
                "f1_conflict": m["per_tag"]["conflict"]["f1"],
                "thresholds_macro_f1": t["macro_f1"],
            }
        )
    summary = {
        "kind": "tagging_f1_leave_one_source_out",
        "dataset": str(dataset),
        "trained_also_on": [str(p) for p in train_also],
        "per_source": rows,
        "mean_macro_f1": round(float(np.mean([r["macro_f1"] for r in rows])), 4),
        "worst_macro_f1": round(float(min(r["macro_f1"] for r in rows)), 4),
        "mean_f1_new": round(float(np.mean([r["f1_new"] for r in rows])), 4),
        "thresholds_mean_macro_f1": round(
            float(np.mean([r["thresholds_macro_f1"] for r in rows])), 4
        ),
    }
    return summary, docs


def render_loso(summary: dict[str, Any]) -> str:
    rows: list[list[Any]] = [
        [
            r["source"],
            r["cases"],
            r["macro_f1"],
            r["f1_new"],
            r["f1_conflict"],
            r["thresholds_macro_f1"],
        ]
        for r in summary["per_source"]
    ]
    rows.append(
        [
            "mean",
            sum(r["cases"] for r in summary["per_source"]),
            summary["mean_macro_f1"],
            summary["mean_f1_new"],
            "",
            summary["thresholds_mean_macro_f1"],
        ]
    )
    return "\n".join(
        [
            f"tagging F1, leave one source out: {summary['dataset']} "
            f"(worst source {summary['worst_macro_f1']})",
            table(
                ["held-out source", "cases", "macro F1", "F1 new", "F1 conflict", "thresholds"],
                rows,
            ),
        ]
    )
