"""Calibrate the offline tagger's thresholds for an embedder on a DEV split (never on test).

``python -m shared.eval.calibrate datasets/v1/dev [--out DIR]``: retrieves every case's candidates
once (fresh index, the configured embedder, exactly as ``eval tagging``), then runs the offline
tagger over a grid of thresholds and prints the best settings by macro F1 (ties: micro F1, then
the smallest change from the seed). The result is what ``THRESHOLD_PROFILES`` in
shared/settings.py holds for that embedder; docs/EVALUATION.md records the run.

The grid is coarse on purpose (steps of 0.05, 0.02 for duplicates): about a hundred cases cannot
support finer distinctions, and the test split then says whether the choice generalizes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from shared.agents import Candidate
from shared.eval.dataset import DatasetSplit, load_dataset
from shared.eval.metrics import classification_report
from shared.eval.report import table
from shared.eval.tagging import PROJECT, case_story, fresh_services
from shared.models import TAGS, GeneratedItem
from shared.settings import THRESHOLD_PROFILES, Settings, ThresholdsConfig

GRID: dict[str, list[float]] = {
    "new_below": [round(0.40 + 0.05 * i, 2) for i in range(6)],  # 0.40 .. 0.65
    "gap_at_least": [round(0.40 + 0.05 * i, 2) for i in range(7)],  # 0.40 .. 0.70
    "extend_similarity": [round(0.45 + 0.05 * i, 2) for i in range(8)],  # 0.45 .. 0.80
    "conflict_at_least": [round(0.45 + 0.05 * i, 2) for i in range(9)],  # 0.45 .. 0.85
    "duplicate_at_least": [round(0.80 + 0.02 * i, 2) for i in range(9)],  # 0.80 .. 0.96
    "duplicate_max_novelty": [0.25, 0.5, 0.75, 1.0],
}
SEED = THRESHOLD_PROFILES["seed"]


def retrieve(
    settings: Settings, split: DatasetSplit
) -> list[tuple[GeneratedItem, list[Candidate]]]:
    """Each case with its retrieved candidates (what the tagger sees in ``eval tagging``)."""
    from shared.indexing.indexer import index_work_items
    from shared.retrieval import tagging_candidates

    with tempfile.TemporaryDirectory(prefix="synth-calibrate-") as tmp:
        svc = fresh_services(settings, tmp, None, None)
        index_work_items(svc.embedder, svc.index, PROJECT, split.backlog, prune=False)
        out = []
        for case in split.cases:
            story = case_story(case, "calibration", split.name, "offline")
            candidates = tagging_candidates(
                svc.embedder, svc.index, settings.pipeline.retrieval, PROJECT, story
            )
            out.append((story, candidates))
        return out


@contextmanager
def _memoized_text_features() -> Iterator[None]:
    """The tagger's text features do not depend on thresholds: compute each pair once."""
    import functools

    from shared.engine.offline import tagging

    saved = {name: getattr(tagging, name) for name in ("contradiction_cues", "_novel_words")}
    cues = functools.lru_cache(maxsize=None)(saved["contradiction_cues"])
    novel: dict[tuple[str, int], Any] = {}

    def novel_words(story: GeneratedItem, c: Candidate) -> Any:
        key = (story.item_id, c.work_item_id)
        if key not in novel:
            novel[key] = saved["_novel_words"](story, c)
        return novel[key]

    tagging.contradiction_cues = cues
    tagging._novel_words = novel_words
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(tagging, name, fn)


def score(
    cases: list[tuple[GeneratedItem, list[Candidate]]],
    gold: Sequence[str],
    values: dict[str, float],
) -> tuple[float, float]:
    from shared.engine.offline.tagging import OfflineTagger

    tagger = OfflineTagger(None, ThresholdsConfig(**values))
    predicted = [
        tagger.tag(story, cands).decision.decision_tag if cands else "new" for story, cands in cases
    ]
    report = classification_report(gold, predicted, TAGS)
    return report.macro_f1, report.micro_f1


def search(
    cases: list[tuple[GeneratedItem, list[Candidate]]],
    gold: Sequence[str],
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[float, float, float, dict[str, float]]]:
    """Every grid point (gap <= extend, new <= gap) scored; best first."""
    keys = list(GRID)
    points = [
        dict(zip(keys, combo, strict=True))
        for combo in itertools.product(*(GRID[k] for k in keys))
        if combo[keys.index("new_below")]
        <= combo[keys.index("gap_at_least")]
        <= combo[keys.index("extend_similarity")]
    ]
    results = []
    with _memoized_text_features():
        for n, values in enumerate(points, 1):
            macro, micro = score(cases, gold, values)
            distance = sum(abs(values[k] - SEED[k]) for k in keys)
            results.append((macro, micro, -distance, values))
            if progress and n % 2000 == 0:
                progress(n, len(points))
    results.sort(key=lambda r: (r[0], r[1], r[2]), reverse=True)
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m shared.eval.calibrate", description=__doc__)
    p.add_argument("dataset", help="a DEV split folder, e.g. datasets/v1/dev")
    p.add_argument("--out", help="write calibration.json into this folder")
    args = p.parse_args(argv)
    splits = load_dataset(args.dataset)
    if len(splits) != 1:
        print("error: name one split folder (the dev split)", file=sys.stderr)
        return 2
    split = splits[0]
    if split.split == "test":
        print(
            "error: calibrating on the test split would make its figures meaningless",
            file=sys.stderr,
        )
        return 2
    settings = Settings(engine="offline")
    cases = retrieve(settings, split)
    gold = [c.gold_tag for c in split.cases]
    results = search(cases, gold, lambda n, t: print(f"  {n}/{t}", file=sys.stderr))
    with _memoized_text_features():
        seed_macro, seed_micro = score(cases, gold, SEED)
    keys = list(GRID)
    rows = [["seed", round(seed_macro, 4), round(seed_micro, 4), *(SEED[k] for k in keys)]]
    rows += [
        [f"#{i + 1}", round(m, 4), round(u, 4), *(v[k] for k in keys)]
        for i, (m, u, _, v) in enumerate(results[:10])
    ]
    print(f"calibration on {split.name} ({len(split.cases)} cases), {len(results)} grid points")
    print(table(["", "macro F1", "micro F1", *keys], rows))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "calibration.json").write_text(
            json.dumps(
                {
                    "dataset": split.name,
                    "sha256": split.sha256,
                    "grid": GRID,
                    "seed": {"values": SEED, "macro_f1": seed_macro, "micro_f1": seed_micro},
                    "best": [
                        {"values": v, "macro_f1": m, "micro_f1": u} for m, u, _, v in results[:20]
                    ],
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
