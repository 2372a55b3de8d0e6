"""Train the capture classifier (``shared/analysis/assets/capture_model.json``).

    python -m shared.eval.train_capture [DEV_DIR] [--out PATH] [--check] [--sweep]
                                        [--sentence-threshold]

Reads the labelled dev meetings (default ``datasets/capture-v1/dev``; never the test split),
cuts each into the sentences the engine reads (``capture.sentences_of``), gives every sentence the
label of the statement it lies in, and fits a multinomial logistic regression (scikit-learn, a
development dependency; the product only reads the weights) on the lexical features and the
packaged MiniLM embeddings of the sentence and of its neighbours. Every meeting weighs the same
(sample weights), so one long meeting does not set the model.

Everything is chosen by leave-one-meeting-out on dev (each meeting predicted by a model trained
on the others):
- ``C`` by sentence F2 (recall weighs twice: a missed requirement costs the product owner more
  than a sentence they delete) among thresholds whose held-out precision is at least
  ``MIN_PRECISION``;
- the shipped threshold on p(F) + p(A) by the whole offline generator (grouping, drafting and
  all), run on every dev meeting with its held-out model at each threshold of
  ``GENERATOR_THRESHOLDS``: the highest quote precision that keeps statement recall at least
  ``MIN_STATEMENT_RECALL`` (``choose_operating_point``). Sentence F2 alone ignores what the
  generator does with a sentence (a weak one joins a need as evidence); ``--sentence-threshold``
  ships the sentence-F2 threshold instead and skips the sweep.

The report prints the held-out precision and recall per meeting and both curves; ``--check``
only verifies that the shipped model was trained on the current dev files (same hash);
``--sweep`` only runs the whole-generator sweep of the current engine at the shipped ``C`` and
says which threshold the rule would pick now (it trains and writes nothing).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shared.analysis.capture import (
    CLASSES,
    LEXICAL_NAMES,
    MODEL_PATH,
    Sentence,
    embed_all,
    embed_text,
    lexical_features,
    mix,
    neighbour_context,
    ngram_matrix,
    ngrams,
    sentences_of,
)
from shared.analysis.capture_encoder import HeldOutEncoder
from shared.eval.capture import Meeting, read_meetings

DEFAULT_DEV = Path(__file__).resolve().parents[2] / "datasets" / "capture-v1" / "dev"
C_GRID = (0.1, 0.3, 1.0)
NGRAM_MIN_MEETINGS = 3  # an n-gram is a feature when this many training meetings say it
NGRAM_SCALE = 0.5
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.10, 0.91, 0.02))
BETA = 2.0
MIN_PRECISION = 0.5
# the shipped threshold: the whole generator's operating point (``choose_operating_point``)
GENERATOR_THRESHOLDS = tuple(round(float(t), 2) for t in np.arange(0.30, 0.61, 0.02))
MIN_STATEMENT_RECALL = 0.75  # issue 13: recall >= 0.75 at the best quote precision


@dataclass
class Rows:
    meeting: list[str]
    sentences: list[Sentence]
    labels: list[str]
    lexical: np.ndarray
    vectors: np.ndarray


def feature_set() -> str:
    """A short name of the lexical features (a model with other features is another model)."""
    return "f" + hashlib.sha256(",".join(LEXICAL_NAMES).encode()).hexdigest()[:4]


def dataset_hash(meetings: list[Meeting]) -> str:
    digest = hashlib.sha256()
    for m in sorted(meetings, key=lambda m: m.meeting_id):
        digest.update(f"{m.meeting_id}:{m.sha256}\n".encode())
    return digest.hexdigest()


def sentence_rows(meetings: list[Meeting], embedder: Any) -> Rows:
    """Every sentence with a content word, labelled by the statement it starts in, with the
    context the classifier sees in a run (its neighbours in the meeting)."""
    meeting_ids: list[str] = []
    sentences: list[Sentence] = []
    labels: list[str] = []
    vectors: list[np.ndarray] = []
    for m in meetings:
        spans = [(s.span.start, s.span.end, s.label) for s in m.statements]
        every = sentences_of(m.transcript)
        vecs, todo = embed_all(every, embedder)
        context = neighbour_context(vecs)
        for k in todo:
            sentence = every[k]
            label = statement_label(spans, sentence)
            meeting_ids.append(m.meeting_id)
            sentences.append(sentence)
            labels.append(label)
            vectors.append(np.concatenate([vecs[k], context[k]]))
    lexical = np.array([lexical_features(s) for s in sentences], dtype=np.float64)
    return Rows(meeting_ids, sentences, labels, lexical, np.array(vectors))


def statement_label(spans: list[tuple[int, int, str]], sentence: Sentence) -> str:
    """The label of the statement (start, end, label) a sentence starts in; NULL outside all."""
    return next((lab for a, b, lab in spans if a <= sentence.span.start < b), "NULL")


def vocabulary(sentences: list[Sentence], meetings: list[str]) -> list[str]:
    """The n-grams said in at least ``NGRAM_MIN_MEETINGS`` of the given meetings, sorted."""
    seen: dict[str, set[str]] = {}
    for sentence, meeting in zip(sentences, meetings, strict=True):
        for gram in ngrams(sentence.text):
            seen.setdefault(gram, set()).add(meeting)
    return sorted(g for g, where in seen.items() if len(where) >= NGRAM_MIN_MEETINGS)


def _fit(
    sentences: list[Sentence],
    lexical: np.ndarray,
    vectors: np.ndarray,
    labels: list[str],
    meetings: list[str],
    c: float,
) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression

    mean = lexical.mean(axis=0)
    scale = lexical.std(axis=0)
    scale[scale == 0] = 1.0
    grams = vocabulary(sentences, meetings)
    index = {g: k for k, g in enumerate(grams)}
    x = np.hstack([(lexical - mean) / scale, vectors, ngram_matrix(sentences, index, NGRAM_SCALE)])
    y = np.array([CLASSES.index(label) for label in labels])
    sizes = {m: meetings.count(m) for m in set(meetings)}
    weight = np.array([1000.0 / sizes[m] for m in meetings])
    clf = LogisticRegression(C=c, class_weight="balanced", max_iter=3000)
    clf.fit(x, y, sample_weight=weight)
    coef = np.zeros((len(CLASSES), x.shape[1]))
    intercept = np.zeros(len(CLASSES))
    for row, cls in enumerate(clf.classes_):
        coef[cls] = clf.coef_[row]
        intercept[cls] = clf.intercept_[row]
    return {"mean": mean, "scale": scale, "coef": coef, "intercept": intercept, "ngrams": grams}


def _predict(
    weights: dict[str, Any], sentences: list[Sentence], lexical: np.ndarray, vectors: np.ndarray
) -> np.ndarray:
    index = {g: k for k, g in enumerate(weights["ngrams"])}
    x = np.hstack(
        [
            (lexical - weights["mean"]) / weights["scale"],
            vectors,
            ngram_matrix(sentences, index, NGRAM_SCALE),
        ]
    )
    logits = x @ weights["coef"].T + weights["intercept"]
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def _prf(gold: np.ndarray, predicted: np.ndarray) -> tuple[float, float, float]:
    tp = float(np.sum(gold & predicted))
    precision = tp / max(float(np.sum(predicted)), 1.0)
    recall = tp / max(float(np.sum(gold)), 1.0)
    b2 = BETA * BETA
    f = (1 + b2) * precision * recall / max(b2 * precision + recall, 1e-12)
    return precision, recall, f


def _held_out_weights(rows: Rows, c: float) -> dict[str, dict[str, Any]]:
    """For each meeting, the weights of a model trained on all the other meetings."""
    out: dict[str, dict[str, Any]] = {}
    ids = np.array(rows.meeting)
    for meeting in sorted(set(rows.meeting)):
        train = ids != meeting
        out[meeting] = _fit(
            [s for s, t in zip(rows.sentences, train, strict=True) if t],
            rows.lexical[train],
            rows.vectors[train],
            [lab for lab, t in zip(rows.labels, train, strict=True) if t],
            [m for m, t in zip(rows.meeting, train, strict=True) if t],
            c,
        )
    return out


def leave_one_meeting_out(
    rows: Rows, c: float, encoder: Encoding | None = None
) -> tuple[np.ndarray, dict[str, dict[str, Any]]]:
    """p(F) + p(A) of every sentence from a model that never saw its meeting (mixed with the
    encoder's held-out probabilities when there is an encoder), and those models' weights (per
    meeting)."""
    held = np.zeros(len(rows.labels))
    ids = np.array(rows.meeting)
    weights = _held_out_weights(rows, c)
    for meeting, w in weights.items():
        test = ids == meeting
        mine = [s for s, t in zip(rows.sentences, test, strict=True) if t]
        p = _predict(w, mine, rows.lexical[test], rows.vectors[test])
        if encoder is not None:
            read = HeldOutEncoder(meeting, encoder.tables[meeting])
            p = mix(p, read.probabilities([embed_text(s) for s in mine]), encoder.weight)
        held[test] = p[:, 0] + p[:, 1]
    return held, weights


@dataclass
class Encoding:
    """The shipped capture encoder's record (``train_encoder``) and its held-out probabilities
    per dev meeting (``train_encoder.read_held_out``)."""

    record: dict[str, Any]
    tables: dict[str, dict[str, list[float]]]

    @property
    def weight(self) -> float:
        return float(self.record["weight"])

    @classmethod
    def of(cls, record: dict[str, Any] | None, meetings: list[Meeting]) -> Encoding | None:
        """The encoder of a model file's ``encoder`` record, None when there is none."""
        if not record:
            return None
        from shared.eval.train_encoder import read_held_out

        return cls(record, read_held_out(meetings))


def train(
    dev: Path,
    embedder: Any,
    operating_point: bool = True,
    encoder: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], str]:
    """The model file's content and a report. C and a sentence-level threshold come from
    leave-one-meeting-out F2; with ``operating_point`` the shipped threshold is then the one the
    whole generator is run at (``choose_operating_point``). ``encoder``: the capture encoder's
    record (``train_encoder``), kept in the file and mixed in everywhere, held out on dev."""
    meetings = read_meetings(dev)
    encoding = Encoding.of(encoder, meetings)
    rows = sentence_rows(meetings, embedder)
    gold = np.array([label != "NULL" for label in rows.labels])
    # (f2, c, threshold, held probabilities, held-out weights)
    best: tuple[float, float, float, np.ndarray, dict[str, Any]] | None = None
    grid = []
    for c in C_GRID:
        held, held_weights = leave_one_meeting_out(rows, c, encoding)
        for t in THRESHOLDS:
            p, r, f = _prf(gold, held >= t)
            grid.append({"C": c, "threshold": t, "precision": p, "recall": r, "f2": f})
            if p >= MIN_PRECISION and (best is None or f > best[0] + 1e-9):
                best = (f, c, t, held, held_weights)
    assert best is not None
    _, c, threshold, held, held_weights = best
    sweep: list[dict[str, Any]] = []
    if operating_point:
        docs = _held_out_documents(
            meetings, held_weights, embedder.model_name, c, threshold, encoding
        )
        sweep = generator_sweep(meetings, docs, embedder)
        threshold = choose_operating_point(sweep)["threshold"]
    ids = np.array(rows.meeting)
    per_meeting = {}
    for m in sorted(set(rows.meeting)):
        sel = ids == m
        p, r, f = _prf(gold[sel], held[sel] >= threshold)
        per_meeting[m] = {
            "sentences": int(sel.sum()),
            "requirements": int(gold[sel].sum()),
            "precision": round(p, 4),
            "recall": round(r, 4),
            "f2": round(f, 4),
        }
    p, r, f = _prf(gold, held >= threshold)
    weights = _fit(rows.sentences, rows.lexical, rows.vectors, rows.labels, rows.meeting, c)
    digest = dataset_hash(meetings)
    doc = model_document(weights, embedder.model_name, c, threshold, digest, encoder)
    doc["trained_on"] = {
        "path": str(dev.relative_to(DEFAULT_DEV.parents[2])) if dev.is_absolute() else str(dev),
        "sha256": digest,
        "meetings": sorted(m.meeting_id for m in meetings),
        "sentences": len(rows.labels),
        "labels": {lab: rows.labels.count(lab) for lab in CLASSES},
    }
    doc["leave_one_meeting_out"] = {
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f2": round(f, 4),
        "per_meeting": per_meeting,
    }
    if sweep:
        doc["operating_point"] = {
            "rule": (
                f"highest quote precision with statement recall >= {MIN_STATEMENT_RECALL}, "
                "whole generator, leave one meeting out on dev"
            ),
            "sentence_f2_threshold": best[2],
            "sweep": sweep,
        }
    report = _report(doc, grid)
    return doc, report


class _MemoEmbedder:
    """The embedder with every vector kept in memory: the sweep runs the same meetings again."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_name: str = inner.model_name
        self.dimension: int = inner.dimension
        self._seen: dict[str, np.ndarray] = {}

    def embed(self, texts: Any) -> np.ndarray:
        texts = list(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if todo:
            self._seen.update(zip(todo, np.asarray(self.inner.embed(todo)), strict=True))
        rows = [self._seen[t] for t in texts]
        return np.array(rows, dtype=np.float32).reshape(len(rows), self.dimension)


def generator_sweep(
    meetings: list[Meeting],
    docs: dict[str, dict[str, Any]],
    embedder: Any,
    thresholds: tuple[float, ...] | None = None,
) -> list[dict[str, Any]]:
    """The whole offline generator's figures on ``meetings`` (each with its held-out model of
    ``docs``) at each threshold: what a product owner gets, not one sentence at a time."""
    from shared.eval.capture import evaluate
    from shared.settings import Settings

    settings = Settings(engine="offline", embedder="minilm")
    memo = _MemoEmbedder(embedder)
    out = []
    quiet = logging.getLogger("shared.pipeline")  # "no indexed backlog", once per meeting run
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        for t in thresholds or GENERATOR_THRESHOLDS:
            at_t = {m: {**d, "threshold": t} for m, d in docs.items()}
            figures, _ = evaluate(settings, meetings, held_out_models=at_t, embedder=memo)
            total = figures["overall"]
            out.append(
                {
                    "threshold": t,
                    "statement_recall": total["statement_recall"],
                    "quote_precision": total["quote_precision"],
                    "story_precision": total["story_precision"],
                    "stories": total["stories"],
                    "checks": total["judge_all_checks_passed"],
                }
            )
            print(f"  threshold {t}: {out[-1]}", file=sys.stderr)  # progress: minutes in all
    finally:
        quiet.setLevel(level)
    return out


def choose_operating_point(sweep: list[dict[str, Any]]) -> dict[str, Any]:
    """The threshold a product owner is served at: the highest quote precision among those that
    keep statement recall at ``MIN_STATEMENT_RECALL`` (ties: the lower threshold); when none
    does, the one with the best recall."""
    ok = [s for s in sweep if s["statement_recall"] >= MIN_STATEMENT_RECALL]
    if not ok:
        return max(sweep, key=lambda s: (s["statement_recall"], -s["threshold"]))
    return max(ok, key=lambda s: (s["quote_precision"], -s["threshold"]))


def model_document(
    weights: dict[str, Any],
    embedder_name: str,
    c: float,
    threshold: float,
    digest: str,
    encoder: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The model file's content (``capture.CaptureModel`` reads it); the keys in file order.
    ``encoder``: the capture encoder's record (its version names the encoder file)."""
    mixed = f"-e{encoder.get('sha256', 'held-out')[:6]}" if encoder else ""
    doc: dict[str, Any] = {
        "version": f"capture-{digest[:8]}-{feature_set()}-c{c}-t{threshold}{mixed}",
        "kind": "multinomial logistic regression (scikit-learn), balanced classes",
        "embedder": embedder_name,
        "classes": list(CLASSES),
        "lexical_names": list(LEXICAL_NAMES),
        "threshold": threshold,
        "C": c,
        "trained_on": {},
        "leave_one_meeting_out": {},
        "ngrams": weights["ngrams"],
        "ngram_scale": NGRAM_SCALE,
        "lexical_mean": [round(float(v), 6) for v in weights["mean"]],
        "lexical_scale": [round(float(v), 6) for v in weights["scale"]],
        "coef": [[round(float(v), 6) for v in row] for row in weights["coef"]],
        "intercept": [round(float(v), 6) for v in weights["intercept"]],
    }
    if encoder:
        doc["encoder"] = encoder
    return doc


def held_out_models(
    meetings: list[Meeting],
    embedder: Any,
    c: float,
    threshold: float,
    encoder: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """For each meeting, the model file's content of a model trained on all the other meetings
    (same ``c`` and ``threshold``; with the capture encoder's held-out probabilities when the
    shipped model has an ``encoder``): what ``eval capture --lomo`` runs each meeting with, so a
    development estimate of the whole generator never uses a model that saw the meeting."""
    encoding = Encoding.of(encoder, meetings)
    weights = _held_out_weights(sentence_rows(meetings, embedder), c)
    return _held_out_documents(meetings, weights, embedder.model_name, c, threshold, encoding)


def _held_out_documents(
    meetings: list[Meeting],
    weights: dict[str, dict[str, Any]],
    embedder_name: str,
    c: float,
    threshold: float,
    encoding: Encoding | None = None,
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for m in meetings:
        others = [o for o in meetings if o.meeting_id != m.meeting_id]
        digest = dataset_hash(others)
        held_out = None
        if encoding is not None:  # the encoder's probabilities from models that never saw m
            held_out = {
                "sha256": encoding.record.get("sha256", "held-out"),
                "weight": encoding.weight,
                "held_out": {
                    "meeting": m.meeting_id,
                    "probabilities": encoding.tables[m.meeting_id],
                },
            }
        doc = model_document(weights[m.meeting_id], embedder_name, c, threshold, digest, held_out)
        doc["trained_on"] = {
            "sha256": digest,
            "meetings": sorted(o.meeting_id for o in others),
            "held_out": m.meeting_id,
        }
        out[m.meeting_id] = doc
    return out


def _report(doc: dict[str, Any], grid: list[dict[str, Any]]) -> str:
    from shared.eval.report import table

    lomo = doc["leave_one_meeting_out"]
    rows = [
        [m, v["sentences"], v["requirements"], v["precision"], v["recall"], v["f2"]]
        for m, v in lomo["per_meeting"].items()
    ]
    rows.append(["all (held out)", doc["trained_on"]["sentences"], None, lomo["precision"],
                 lomo["recall"], lomo["f2"]])  # fmt: skip
    best_c = [g for g in grid if g["C"] == doc["C"]]
    curve = [
        [g["threshold"], g["precision"], g["recall"], g["f2"]]
        for g in best_c
        if round(g["threshold"] * 100) % 10 == 0
    ]
    point = doc.get("operating_point")
    how = (
        f"the whole generator's operating point ({point['rule']}; sentence F2 alone: "
        f"{point['sentence_f2_threshold']})"
        if point
        else "leave-one-meeting-out F2 on dev"
    )
    lines = [
        f"capture model {doc['version']}: C={doc['C']}, threshold {doc['threshold']} on "
        f"p(F)+p(A), chosen by {how}",
        "",
        table(["meeting (held out)", "sentences", "F/A", "precision", "recall", "F2"], rows),
        "",
        "sentences, leave one meeting out:",
        table(["threshold", "precision", "recall", "F2"], curve),
    ]
    if point:
        names = ["threshold", "statement_recall", "quote_precision", "story_precision",
                 "stories", "checks"]  # fmt: skip
        lines += [
            "",
            "whole generator, leave one meeting out:",
            table(names, [[s[n] for n in names] for s in point["sweep"]]),
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dev", nargs="?", default=str(DEFAULT_DEV))
    parser.add_argument("--out", default=str(MODEL_PATH))
    parser.add_argument(
        "--check", action="store_true", help="only check the shipped model's training-data hash"
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="only run the whole-generator sweep with the shipped model's C and encoder (each dev "
        "meeting with a model that never saw it) and print it; trains and writes nothing",
    )
    parser.add_argument(
        "--sentence-threshold",
        action="store_true",
        help="ship the sentence-F2 threshold; skip the whole-generator sweep (minutes faster)",
    )
    args = parser.parse_args(argv)
    dev = Path(args.dev)
    if dev.name == "test" or "test" in dev.parts[-1:]:
        print("error: the capture model is trained on dev only, never on test", file=sys.stderr)
        return 2
    if args.check:
        shipped = json.loads(Path(args.out).read_text())
        current = dataset_hash(read_meetings(dev))
        ok = shipped["trained_on"]["sha256"] == current
        print(f"{args.out}: trained on {shipped['trained_on']['sha256'][:12]}, dev is "
              f"{current[:12]}: {'up to date' if ok else 'STALE, retrain'}")  # fmt: skip
        return 0 if ok else 1
    from shared.embeddings.minilm import MiniLMEmbedder

    if args.sweep:
        return _sweep_only(dev, Path(args.out), MiniLMEmbedder())
    out = Path(args.out)
    encoder = json.loads(out.read_text()).get("encoder") if out.exists() else None
    try:
        doc, report = train(
            dev, MiniLMEmbedder(), operating_point=not args.sentence_threshold, encoder=encoder
        )
    except (OSError, ValueError) as err:  # the encoder's held-out probabilities: missing, stale
        print(f"error: {err}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(report)
    print(f"\nwritten to {out}")
    return 0


def _sweep_only(dev: Path, model: Path, embedder: Any) -> int:
    """The whole-generator sweep of the current engine at the shipped model's ``C``: what the
    operating point rule (``choose_operating_point``) would pick now, beside the shipped one."""
    shipped = json.loads(model.read_text())
    meetings = read_meetings(dev)
    docs = held_out_models(
        meetings, embedder, shipped["C"], shipped["threshold"], shipped.get("encoder")
    )
    sweep = generator_sweep(meetings, docs, embedder)
    from shared.eval.report import table

    names = list(sweep[0])
    print(table(names, [[row[n] for n in names] for row in sweep]))
    chosen = choose_operating_point(sweep)["threshold"]
    print(f"\nshipped threshold {shipped['threshold']}; the operating point rule picks {chosen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
