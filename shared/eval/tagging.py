"""Tagging F1 (seed §9.1): the configured tagging engine on a labelled dataset.

For one split: the backlog goes into a fresh embedded index (a temporary local folder store, the
configured embedder, through the loaders' indexer), then every case is tagged by
``shared.pipeline.tag.tag_story``, the pipeline's own step (retrieval of the top user stories,
then the tagger agent with its retry and ``new`` fallback). The result, ``tagging_f1.json``, holds
per-tag precision / recall / F1, macro and micro F1, the confusion matrix, recall@k of the gold
related ids among the retrieved stories, counts, and what ran (engine, embedder, thresholds and
their profile, dataset and its hash). ``tagging_cases.jsonl`` holds every decision for error
analysis, ``confusion_matrix.png`` the matrix.

The eval id is derived from what was measured (dataset hash, engine, embedder, tagger version,
thresholds, top-k), so running the same evaluation twice writes the same place.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from shared.agents import Agents
from shared.embeddings import Embedder
from shared.eval.dataset import DatasetSplit, TaggingCase, tag_counts
from shared.eval.metrics import classification_report, recall_at_k
from shared.eval.report import confusion_png, table
from shared.models import TAGS, GeneratedItem, SourceQuote, TagPart, utcnow
from shared.settings import Settings

PROJECT = "eval"
RECALL_KS = (1, 3, 5, 10)


def case_story(case: TaggingCase, eval_id: str, source: str, engine: str) -> GeneratedItem:
    """A test case as the generated user story the tagger receives in a run."""
    text = case.story_description or case.story_title
    return GeneratedItem(
        run_id=eval_id,
        segment_id="seg-0001",
        segment_order=1,
        type="User Story",
        item_id=case.story_id,
        story_id=case.story_id,
        title=case.story_title,
        description=case.story_description,
        acceptance_criteria=case.story_acceptance_criteria,
        source_doc=source,
        source_doc_segment=f"0-{len(text)}",
        source_quotes=[SourceQuote(text=text, start=0, end=len(text))],
        generation_agent_version="eval-dataset",
        engine=engine,
    )


def eval_id_for(
    split: DatasetSplit,
    settings: Settings,
    tagger_version: str,
    embedder: str,
    model: str | None = None,
) -> str:
    basis = json.dumps(
        {
            "dataset": split.sha256,
            "engine": settings.resolved_engine(),
            "embedder": embedder,
            "tagger": tagger_version,
            "model": model,
            "thresholds": settings.pipeline.thresholds.applied(),
            "top_k": settings.pipeline.retrieval.tagging_top_k,
        },
        sort_keys=True,
    )
    return f"tagging-{split.slug}-{hashlib.sha256(basis.encode()).hexdigest()[:10]}"


def fresh_services(
    settings: Settings,
    store_dir: str,
    embedder: Embedder | None,
    agents: Agents | None,
) -> Any:
    from shared.bus.memory import InProcessBus
    from shared.services import Services, build_agents, build_embedder
    from shared.storage.local import LocalFolderStore
    from shared.vectorstore.embedded import EmbeddedVectorIndex

    return Services(
        settings=settings,
        store=LocalFolderStore(store_dir),
        bus=InProcessBus(workers=1),
        embedder_factory=(lambda s: embedder) if embedder is not None else build_embedder,
        # a fresh index every time, whatever vector store the settings name: the evaluation
        # measures tagging, and must not write into a production namespace
        index_factory=lambda s, st, e: EmbeddedVectorIndex(st, e.dimension),
        agents_factory=(lambda s, e: agents) if agents is not None else build_agents,
    )


def evaluate_split(
    settings: Settings,
    split: DatasetSplit,
    *,
    embedder: Embedder | None = None,
    agents: Agents | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Tag every case of ``split``; returns (the tagging_f1.json document, one row per case)."""
    from shared.indexing.indexer import index_work_items
    from shared.pipeline.tag import tag_story

    with tempfile.TemporaryDirectory(prefix="synth-eval-") as tmp:
        svc = fresh_services(settings, tmp, embedder, agents)
        tagger = svc.agents.tagger
        eval_id = eval_id_for(
            split, settings, tagger.version, svc.embedder.model_name, tagger.model
        )
        loaded = index_work_items(svc.embedder, svc.index, PROJECT, split.backlog, prune=False)
        if loaded.errors:
            raise RuntimeError(f"loading the backlog failed: {loaded.errors[:3]}")
        source = f"datasets/{split.name}"
        stories = [case_story(c, eval_id, source, tagger.engine) for c in split.cases]
        done = [0]
        lock = threading.Lock()

        def one(story: GeneratedItem) -> TagPart:
            part = tag_story(svc, eval_id, PROJECT, story)
            with lock:
                done[0] += 1
                if progress:
                    progress(done[0], len(stories))
            return part

        with ThreadPoolExecutor(max_workers=workers or settings.workers) as pool:
            parts = list(pool.map(one, stories))

    records = [p.record for p in parts]
    gold = [c.gold_tag for c in split.cases]
    predicted = [r.decision_tag for r in records]
    report = classification_report(gold, predicted, TAGS)
    ranked = [[s.work_item_id for s in r.similarity_scores] for r in records]
    gold_ids = [c.gold_related_ids for c in split.cases]
    top_k = settings.pipeline.retrieval.tagging_top_k
    recall = {
        f"recall@{k}": _round(recall_at_k(gold_ids, ranked, k)) for k in RECALL_KS if k <= top_k
    }
    linked = [
        (c, r)
        for c, r in zip(split.cases, records, strict=True)
        if c.gold_tag != "new" and r.decision_tag == c.gold_tag
    ]
    related_hit = (
        sum(
            1
            for c, r in linked
            if r.related_story_ids[:1] and r.related_story_ids[0] in c.gold_related_ids
        )
        / len(linked)
        if linked
        else None
    )
    thresholds = settings.pipeline.thresholds
    usage = sum((p.usage.prompt_tokens + p.usage.completion_tokens for p in parts), 0)
    document: dict[str, Any] = {
        "eval_id": eval_id,
        "kind": "tagging_f1",
        "created_at": utcnow().isoformat().replace("+00:00", "Z"),
        "dataset": {
            "name": split.name,
            "version": split.version,
            "split": split.split,
            "path": str(split.path),
            "sha256": split.sha256,
            "cases": len(split.cases),
            "backlog_items": len(split.backlog),
        },
        "engine": tagger.engine,
        "tagging_agent_version": tagger.version,
        "model": next((r.model for r in records if r.model), None),
        "embedder": svc.embedder.model_name,
        "thresholds": {"profile": getattr(thresholds, "profile", "seed"), **thresholds.applied()},
        "tagging_top_k": top_k,
        "metrics": {
            **report.as_dict(),
            **recall,
            "related_id_hit": _round(related_hit),
        },
        "counts": {
            "gold": tag_counts(split.cases),
            "predicted": {t: predicted.count(t) for t in TAGS},
            "tagging_failed": sum(1 for r in records if r.tagging_failed),
            "needs_review": sum(1 for r in records if r.needs_review),
        },
        "tokens": usage,
    }
    rows = [
        {
            "story_id": c.story_id,
            "story_title": c.story_title,
            "gold_tag": c.gold_tag,
            "predicted_tag": r.decision_tag,
            "correct": c.gold_tag == r.decision_tag,
            "gold_related_ids": c.gold_related_ids,
            "related_story_ids": r.related_story_ids,
            "retrieved": [[s.work_item_id, s.score] for s in r.similarity_scores],
            "max_similarity": r.max_similarity,
            "confidence": r.confidence,
            "needs_review": r.needs_review,
            "tagging_failed": r.tagging_failed,
            "reasoning_excerpt": r.reasoning_excerpt,
        }
        for c, r in zip(split.cases, records, strict=True)
    ]
    return document, rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def render(document: dict[str, Any]) -> str:
    m = document["metrics"]
    rows: list[list[Any]] = [
        [t, s["precision"], s["recall"], s["f1"], s["support"]] for t, s in m["per_tag"].items()
    ]
    rows.append(["macro F1", None, None, m["macro_f1"], document["dataset"]["cases"]])
    rows.append(["micro F1", None, None, m["micro_f1"], document["dataset"]["cases"]])
    labels = m["labels"]
    matrix = m["confusion_matrix"]["matrix"]
    confusion = table(
        ["gold \\ predicted", *labels], [[g, *row] for g, row in zip(labels, matrix, strict=True)]
    )
    recall = "  ".join(f"{k} {v:.3f}" for k, v in m.items() if k.startswith("recall@") and v)
    th = document["thresholds"]
    return "\n".join(
        [
            f"tagging F1  {document['dataset']['name']}  ({document['eval_id']})",
            f"engine {document['engine']} ({document['tagging_agent_version']}), "
            f"embedder {document['embedder']}, thresholds {th['profile']}: "
            + ", ".join(f"{k} {v}" for k, v in th.items() if k != "profile"),
            "",
            table(["tag", "precision", "recall", "F1", "support"], rows),
            "",
            confusion,
            "",
            f"retrieval of gold related ids: {recall}",
            f"related id hit (correct non-new decisions): {m['related_id_hit']}",
        ]
    )


def picture(document: dict[str, Any]) -> bytes:
    m = document["metrics"]
    title = (
        f"{document['dataset']['name']}: {document['engine']}, {document['embedder']}, "
        f"{document['thresholds']['profile']} (macro F1 {m['macro_f1']:.2f})"
    )
    return confusion_png(m["labels"], m["confusion_matrix"]["matrix"], title)
