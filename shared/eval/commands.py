"""``python -m shared.cli eval ...``: the evaluation commands (registered by shared/cli.py).

eval tagging DIR          tagging F1 of the configured engine on a dataset folder or split
eval segmentation [GOLD]  Pk / WindowDiff of the configured segmenter, with baselines
eval judge RUN_ID         story quality of a completed run (model-free checks; LLM judge when a
                          chat model is configured)

Results go to ``eval/{id}/`` in the artifact store (the local folder or Azure, as the settings
say) and, with ``--out``, to ``OUT/{id}/``; each command prints its table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from shared.settings import Settings


def _progress(label: str) -> Any:
    def report(done: int, total: int) -> None:
        if sys.stderr.isatty() and (done == total or done % 10 == 0):
            print(f"\r{label}: {done}/{total}", end="\n" if done == total else "", file=sys.stderr)

    return report


def _write(settings: Settings, out: str | None, folder: str, files: dict[str, bytes]) -> str:
    """Write ``files`` to ``eval/{folder}/`` in the store (and ``out/{folder}/``)."""
    from shared.services import build_store
    from shared.storage import content_type_for

    store = build_store(settings)
    for name, data in files.items():
        path = f"eval/{folder}/{name}"
        store.put(path, data, content_type_for(path))
    where = f"eval/{folder}/ in {store!r}"
    if out:
        target = Path(out) / folder
        target.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (target / name).write_bytes(data)
        where += f" and {target}/"
    return where


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def cmd_tagging(args: argparse.Namespace, settings: Settings) -> int:
    from shared.eval.dataset import load_dataset
    from shared.eval.tagging import evaluate_split, picture, render

    for split in load_dataset(args.dir):
        doc, rows = evaluate_split(
            settings, split, workers=args.workers, progress=_progress(f"tagging {split.name}")
        )
        files = {
            "tagging_f1.json": json.dumps(doc, indent=2).encode(),
            "tagging_cases.jsonl": _jsonl(rows),
        }
        if not args.no_png:
            files["confusion_matrix.png"] = picture(doc)
        where = _write(settings, args.out, doc["eval_id"], files)
        print(render(doc))
        print(f"written to {where}\n")
    return 0


def cmd_segmentation(args: argparse.Namespace, settings: Settings) -> int:
    from shared.eval.segmentation import (
        DEFAULT_GOLD,
        document,
        eval_id_for,
        evaluate,
        load_gold,
        render,
    )
    from shared.services import build_agents, build_embedder

    gold = Path(args.gold) if args.gold else DEFAULT_GOLD
    wanted = [m.strip() for m in args.meetings.split(",") if m.strip()] if args.meetings else None
    meetings = load_gold(gold, wanted)
    segmenter = build_agents(settings, build_embedder(settings)).segmenter
    snapshot = settings.pipeline.segmentation.model_dump(mode="json")
    eval_id = eval_id_for(
        gold,
        meetings,
        {"engine": segmenter.engine, "version": segmenter.version, "settings": snapshot},
    )

    def progress(meeting_id: str) -> None:
        if sys.stderr.isatty():
            print(f"segmenting {meeting_id} ...", file=sys.stderr)

    rows = evaluate(segmenter, meetings, progress)
    doc = document(eval_id, gold, segmenter, snapshot, rows)
    where = _write(
        settings, args.out, eval_id, {"segmentation.json": json.dumps(doc, indent=2).encode()}
    )
    print(render(doc))
    print(f"written to {where}")
    return 0


def cmd_judge(args: argparse.Namespace, settings: Settings) -> int:
    from shared import layout
    from shared.bus.memory import InProcessBus
    from shared.eval.quality import NO_CHAT_MODEL, LLMJudge, judge_chat_model, judge_run
    from shared.eval.report import table
    from shared.ids import check_run_id
    from shared.models import TERMINAL_STATES, GeneratedItem, Segment, TaggingRecord
    from shared.pipeline.runs import UnknownRun, load_run
    from shared.services import Services, build_store
    from shared.storage import NotFound, read_jsonl

    run_id = check_run_id(args.run_id)
    # the judge only reads a run's artifacts: no queue, no tracing
    svc = Services(settings=settings, store=build_store(settings), bus=InProcessBus(workers=1))
    try:
        run = load_run(svc, run_id)
    except UnknownRun:
        print(f"error: run {run_id} not found", file=sys.stderr)
        return 1
    if run.status not in TERMINAL_STATES or run.status == "failed":
        print(f"error: run {run_id} is {run.status}; judge a completed run", file=sys.stderr)
        return 1

    def read(name: str, model: Any) -> list[Any]:
        try:
            return read_jsonl(svc.store, layout.run_file(run_id, name), model)
        except NotFound:
            return []

    items = read("generated_backlog.jsonl", GeneratedItem)
    records = read("tagging_analysis.jsonl", TaggingRecord)
    segments = read("segments.jsonl", Segment)
    try:
        transcript = svc.store.get(layout.run_file(run_id, "transcript.txt")).decode()
    except NotFound:
        transcript = None

    not_wired = ""
    try:
        chat = judge_chat_model(settings)
    except NotImplementedError as err:  # a model is configured, the adapter is not wired yet
        chat, not_wired = None, str(err)
    judge = LLMJudge(chat) if chat is not None else None
    rows, summary = judge_run(items, records, segments, transcript, judge)
    reason = not_wired or NO_CHAT_MODEL
    summary = {
        "run_id": run_id,
        "engine": run.engine,
        **summary,
        "llm_judge": (
            {"status": "ran", "version": LLMJudge.version}
            if judge
            else {"status": "not_implemented" if not_wired else "not_run", "reason": reason}
        ),
    }
    where = _write(
        settings,
        args.out,
        run_id,
        {
            "judge_quality.jsonl": _jsonl(rows),
            "judge_summary.json": json.dumps(summary, indent=2).encode(),
        },
    )
    print(f"story quality  {run_id}  ({summary['stories']} stories, engine {run.engine})\n")
    print(
        table(
            ["check", "pass rate"],
            [[name, rate] for name, rate in summary["pass_rate"].items()]
            + [["all checks", summary["all_checks_passed"] / summary["stories"]]]
            if summary["stories"]
            else [],
        )
    )
    print(f"\nmean AQUSA-style score: {summary['mean_aqusa_score']}")
    if judge is None:
        print(f"LLM judge not run: {reason}")
    else:
        print(
            f"LLM judge: invest_score {summary['invest_score']}, ac_completeness "
            f"{summary['ac_completeness']}, traceability {summary['traceability_score']}, "
            f"gap correctness {summary['gap_correctness']}"
        )
    print(f"written to {where}")
    return 1 if not_wired else 0


def add_parser(sub: Any) -> None:
    """The ``eval`` command group."""
    ev = sub.add_parser("eval", help="evaluation: tagging F1, segmentation, story quality")
    group = ev.add_subparsers(dest="eval_command", required=True)

    tg = group.add_parser("tagging", help="tagging F1 of the configured engine on a dataset")
    tg.add_argument("dir", help="a dataset folder (datasets/v1) or one split (datasets/v1/test)")
    tg.add_argument("--out", help="also write the results to OUT/<eval_id>/")
    tg.add_argument("--workers", type=int, default=None, help="parallel taggings (default 4)")
    tg.add_argument("--no-png", action="store_true", help="skip the confusion-matrix picture")
    tg.set_defaults(func=cmd_tagging)

    sg = group.add_parser("segmentation", help="Pk / WindowDiff of the configured segmenter")
    sg.add_argument(
        "gold",
        nargs="?",
        help="gold file (default datasets/ami-qmsum-val/segmentation_gold.jsonl)",
    )
    sg.add_argument("--meetings", help="comma-separated meeting ids (default: all)")
    sg.add_argument("--out", help="also write the results to OUT/<eval_id>/")
    sg.set_defaults(func=cmd_segmentation)

    jd = group.add_parser("judge", help="story quality of a completed run")
    jd.add_argument("run_id")
    jd.add_argument("--out", help="also write the results to OUT/<run_id>/")
    jd.set_defaults(func=cmd_judge)
