"""``python -m shared.cli eval ...``: the evaluation commands (registered by shared/cli.py).

eval tagging DIR          tagging F1 of the configured engine on a dataset folder or split;
                          --leave-one-source-out: per source, a pair model trained on the others
eval segmentation [GOLD]  Pk / WindowDiff of the configured segmenter, with baselines
eval capture [DIR]        requirement capture of the configured engine on a capture dataset
                          (default datasets/capture-v1/test): statement recall, quote and story
                          precision, story checks; --lomo (dev only): each meeting run with a
                          capture model trained on the others; --captions N / --wrap N: each
                          meeting uploaded as WebVTT captions of N words a cue / as text
                          wrapped at N columns
eval judge RUN_ID         story quality of a completed run: the model-free checks, and the LLM
                          judge when a chat model is configured (OPENAI_API_KEY / OPENAI_BASE_URL
                          or AZURE_OPENAI_ENDPOINT)

Results go to ``eval/{id}/`` in the artifact store (the local folder or Azure, as the settings
say) and, with ``--out``, to ``OUT/{id}/``; each command prints its table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from shared import layout
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
        path = layout.eval_file(folder, name)
        store.put(path, data, content_type_for(path))
    where = f"{layout.eval_prefix(folder)} in {store!r}"
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

    if args.leave_one_source_out:
        return _tagging_loso(args, settings)

    for split in load_dataset(args.dir):
        doc, rows = evaluate_split(
            settings, split, workers=args.workers, progress=_progress(f"tagging {split.name}")
        )
        files = {
            layout.EVAL_TAGGING_F1: json.dumps(doc, indent=2).encode(),
            layout.EVAL_TAGGING_CASES: _jsonl(rows),
        }
        if not args.no_png:
            files[layout.EVAL_CONFUSION_MATRIX] = picture(doc)
        where = _write(settings, args.out, doc["eval_id"], files)
        print(render(doc))
        print(f"written to {where}\n")
    return 0


def _tagging_loso(args: argparse.Namespace, settings: Settings) -> int:
    import hashlib

    try:
        import sklearn  # noqa: F401  (training each fold needs it)

        from shared.eval.tagging_loso import evaluate_loso, render_loso
    except ImportError:
        print(
            "error: --leave-one-source-out trains a model per fold and needs scikit-learn "
            "(pip install -r requirements-dev.txt)",
            file=sys.stderr,
        )
        return 2
    if settings.resolved_engine() != "offline":
        print("error: --leave-one-source-out evaluates the offline pair model", file=sys.stderr)
        return 2
    also = [Path(p) for p in args.train_also]
    summary, docs = evaluate_loso(
        settings, Path(args.dir), also, Path(args.cache) if args.cache else None, args.workers
    )
    key = hashlib.sha256(json.dumps([d["dataset"]["sha256"] for d in docs]).encode()).hexdigest()[
        :10
    ]
    files = {layout.EVAL_TAGGING_LOSO: json.dumps({**summary, "folds": docs}, indent=2).encode()}
    where = _write(settings, args.out, f"tagging-loso-{key}", files)
    print(render_loso(summary))
    print(f"written to {where}")
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
        settings, args.out, eval_id, {layout.EVAL_SEGMENTATION: json.dumps(doc, indent=2).encode()}
    )
    print(render(doc))
    print(f"written to {where}")
    return 0


def cmd_capture(args: argparse.Namespace, settings: Settings) -> int:
    from shared.eval.capture import DEFAULT_DIR, DatasetError, evaluate, read_meetings, render

    try:
        meetings = read_meetings(Path(args.dir) if args.dir else DEFAULT_DIR)
    except (DatasetError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    def progress(meeting_id: str) -> None:
        if sys.stderr.isatty():
            print(f"capture: running {meeting_id} ...", file=sys.stderr)

    held_out = None
    if args.lomo:
        held_out = _held_out_capture_models(meetings, args.dir)
        if held_out is None:
            return 2
    if args.captions is not None and args.captions < 1:
        print("error: --captions takes the words per cue, at least 1", file=sys.stderr)
        return 2
    if args.wrap is not None and args.wrap < 20:
        print("error: --wrap takes the columns a line holds, at least 20", file=sys.stderr)
        return 2
    if args.wrap and args.captions:
        print("error: --captions or --wrap, not both", file=sys.stderr)
        return 2
    doc, rows = evaluate(
        settings,
        meetings,
        progress=progress,
        held_out_models=held_out,
        captions=args.captions or 0,
        wrap=args.wrap or 0,
    )
    where = _write(
        settings,
        args.out,
        doc["eval_id"],
        {
            layout.EVAL_CAPTURE: json.dumps(doc, indent=2).encode(),
            layout.EVAL_CAPTURE_STORIES: _jsonl(rows),
        },
    )
    print(render(doc))
    print(f"written to {where}")
    failed = [m["meeting"] for m in doc["meetings"] if m.get("run_status") != "completed"]
    if failed:
        # a segment that failed lost its stories: the figures undercount what the engine does
        print(
            f"warning: {len(failed)} meeting(s) had failed units, their figures are incomplete "
            f"(see the run's errors.jsonl): {', '.join(failed)}",
            file=sys.stderr,
        )
        return 1
    return 0


def _held_out_capture_models(meetings: list[Any], folder: str | None) -> Any:
    """Per meeting, a capture model trained on the other meetings with the shipped model's C and
    threshold (``train_capture.held_out_models``); None, with the reason, on the test split."""
    from shared.analysis.capture import CaptureModel
    from shared.embeddings.minilm import MiniLMEmbedder
    from shared.eval.capture import DEFAULT_DIR
    from shared.eval.train_capture import held_out_models
    from shared.eval.train_encoder import HeldOutMissing

    where = Path(folder) if folder else DEFAULT_DIR
    if where.name == "test" or where.parent.name == "test" or len(meetings) < 2:
        print(
            "error: --lomo trains on the meetings it evaluates: give the dev split (never test)",
            file=sys.stderr,
        )
        return None
    shipped = CaptureModel.load()
    if sys.stderr.isatty():
        print(f"capture: training {len(meetings)} held-out models ...", file=sys.stderr)
    embedder = MiniLMEmbedder()
    c, threshold = shipped.doc["C"], shipped.threshold
    try:
        return held_out_models(meetings, embedder, c, threshold, shipped.doc.get("encoder"))
    except HeldOutMissing as err:  # another labelled split: the classifier alone, said so
        print(
            f"note: {err}: the capture encoder is left out of this estimate (the classifier "
            "alone; the held-out models' versions have no -e suffix)",
            file=sys.stderr,
        )
        return held_out_models(meetings, embedder, c, threshold)
    except (OSError, ValueError) as err:  # the encoder's held-out file: missing or stale
        print(f"error: {err}", file=sys.stderr)
        return None


def _related_stories(svc: Any, project: str) -> Any:
    """``record -> texts`` of the existing stories a tagging record relates to, from the ADO
    loader's artifact ``ingestion/ado/{project}/ado_vectors.jsonl`` (the items as indexed; read
    once, whatever embedder is configured now), else the titles the record keeps."""
    from shared.storage import NotFound

    items: dict[int, dict[str, Any]] = {}
    try:
        for line in svc.store.get(layout.ado_vectors(project)).decode().splitlines():
            row = json.loads(line) if line.strip() else {}
            if row.get("work_item_id") is not None:
                items[int(row["work_item_id"])] = row.get("metadata") or {}
    except (NotFound, ValueError):
        pass

    def related(record: Any) -> list[str]:
        titles = {s.work_item_id: s.title for s in record.similarity_scores}
        texts = []
        for i in dict.fromkeys(record.related_story_ids):
            meta = items.get(i)
            if meta:
                lines = [f"[#{i}] {meta.get('title', '')}", str(meta.get("description", ""))]
                lines += [f"- {ac}" for ac in meta.get("acceptance_criteria") or []]
                texts.append("\n".join(line for line in lines if line.strip()))
            else:
                texts.append(f"[#{i}] {titles.get(i, '(text not available)')}")
        return texts

    return related


def cmd_judge(args: argparse.Namespace, settings: Settings) -> int:
    from shared.bus.memory import InProcessBus
    from shared.eval.quality import NO_CHAT_MODEL, LLMJudge, judge_chat_model, judge_run
    from shared.eval.report import table
    from shared.ids import check_run_id
    from shared.models import TERMINAL_STATES, GeneratedItem, Segment, TaggingRecord
    from shared.pipeline.runs import UnknownRun, load_run
    from shared.services import Services, build_store
    from shared.storage import NotFound, read_jsonl

    run_id = check_run_id(args.run_id)
    # the judge only reads a run's artifacts: no queue, no tracing (seed §12)
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

    items = read(layout.GENERATED_BACKLOG, GeneratedItem)
    records = read(layout.TAGGING_ANALYSIS, TaggingRecord)
    segments = read(layout.SEGMENTS, Segment)
    try:
        transcript = svc.store.get(layout.transcript(run_id)).decode()
    except NotFound:
        transcript = None

    chat = judge_chat_model(settings)
    judge = (
        LLMJudge(chat, temperature=settings.pipeline.judge.temperature)
        if chat is not None
        else None
    )
    rows, summary = judge_run(
        items,
        records,
        segments,
        transcript,
        judge,
        _related_stories(svc, run.project) if judge else None,
        workers=args.workers or 4,
        progress=_progress("judging"),
    )
    summary = {
        "run_id": run_id,
        "engine": run.engine,
        **summary,
        "llm_judge": (
            {
                "status": "ran",
                "model": judge.model,
                "prompt_version": judge.version,
                "judged": summary["llm_judged"],
                "failed": summary["llm_failed"],
            }
            if judge
            else {"status": "not_run", "reason": NO_CHAT_MODEL}
        ),
    }
    where = _write(
        settings,
        args.out,
        run_id,
        {
            layout.EVAL_JUDGE_QUALITY: _jsonl(rows),
            layout.EVAL_JUDGE_SUMMARY: json.dumps(summary, indent=2).encode(),
        },
    )
    n = summary["stories"]
    print(f"story quality  {run_id}  ({n} stories, engine {run.engine})\n")
    print("model-free checks (AQUSA-style)")
    print(
        table(
            ["check", "pass rate"],
            [[name, rate] for name, rate in summary["pass_rate"].items()]
            + [["all checks", summary["all_checks_passed"] / n]]
            if n
            else [],
        )
    )
    print(f"\nmean AQUSA-style score: {summary['mean_aqusa_score']}")
    if judge is None:
        print(f"\nLLM judge not run: {NO_CHAT_MODEL}")
    else:
        usage = summary["llm_usage"]
        print(
            f"\nLLM judge  model {judge.model}, prompt {judge.version}: "
            f"{summary['llm_judged']} of {n} stories judged, {summary['llm_failed']} failed "
            f"({usage['calls']} calls, {usage['prompt_tokens']} prompt + "
            f"{usage['completion_tokens']} completion tokens)"
        )
        print(
            table(
                ["score (0-1)", "mean", "stories"],
                [
                    [key, summary[key], summary["llm_judged"]]
                    for key in ("invest_score", "ac_completeness", "traceability_score")
                ]
                + [["gap_correctness", summary["gap_correctness"], summary["gap_stories_judged"]]],
            )
        )
        failures = [r for r in rows if r["judge_status"] == "failed"]
        for row in failures[:5]:
            print(f"judge failed for {row['story_id']}: {row['llm']['error'][:160]}")
    print(f"written to {where}")
    return 1 if judge is not None and n and not summary["llm_judged"] else 0


def add_parser(sub: Any) -> None:
    """The ``eval`` command group."""
    ev = sub.add_parser("eval", help="evaluation: tagging F1, segmentation, story quality")
    group = ev.add_subparsers(dest="eval_command", required=True)

    tg = group.add_parser("tagging", help="tagging F1 of the configured engine on a dataset")
    tg.add_argument("dir", help="a dataset folder (datasets/v1) or one split (datasets/v1/test)")
    tg.add_argument("--out", help="also write the results to OUT/<eval_id>/")
    tg.add_argument("--workers", type=int, default=None, help="parallel taggings (default 4)")
    tg.add_argument("--no-png", action="store_true", help="skip the confusion-matrix picture")
    tg.add_argument(
        "--leave-one-source-out",
        action="store_true",
        help="each split is a source: train the pair model on the others, tag it (offline)",
    )
    tg.add_argument(
        "--train-also",
        action="append",
        default=["datasets/v1/dev"],
        help="more training folders for --leave-one-source-out (default datasets/v1/dev)",
    )
    tg.add_argument("--cache", help="keep feature rows here between --leave-one-source-out runs")
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

    cp = group.add_parser("capture", help="requirement capture of the configured engine")
    cp.add_argument(
        "dir", nargs="?", help="a capture split or file (default datasets/capture-v1/test)"
    )
    cp.add_argument("--out", help="also write the results to OUT/<eval_id>/")
    cp.add_argument(
        "--lomo",
        action="store_true",
        help="leave one meeting out (dev only): run each meeting with a capture model trained "
        "on the others",
    )
    cp.add_argument(
        "--captions",
        type=int,
        metavar="N",
        help="upload each meeting as WebVTT captions of N words a cue (a sentence often runs "
        "over two cues, as meeting tools caption speech) instead of one statement a line",
    )
    cp.add_argument(
        "--wrap",
        type=int,
        metavar="N",
        help="upload each meeting as text hard-wrapped at N columns (each turn a paragraph, cut "
        "where the line is full, as PDF text and e-mail are) instead of one statement a line",
    )
    cp.set_defaults(func=cmd_capture)

    jd = group.add_parser("judge", help="story quality of a completed run")
    jd.add_argument("run_id")
    jd.add_argument("--out", help="also write the results to OUT/<run_id>/")
    jd.add_argument("--workers", type=int, default=None, help="parallel judge calls (default 4)")
    jd.set_defaults(func=cmd_judge)
