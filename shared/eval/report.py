"""Plain-text tables for the terminal and the confusion-matrix picture.

matplotlib is a development dependency (requirements-dev.txt) and is imported only when a picture
is drawn, with the non-interactive Agg backend, so nothing here needs a display.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A left-aligned first column and right-aligned figures, floats with 3 decimals."""

    def cell(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.3f}"
        return str(v)

    text = [[cell(h) for h in headers]] + [[cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in text) for i in range(len(headers))]

    def line(r: list[str]) -> str:
        return "  ".join(
            (c.ljust(widths[i]) if i == 0 else c.rjust(widths[i])) for i, c in enumerate(r)
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(text[0]), rule, *(line(r) for r in text[1:])])


def confusion_png(labels: Sequence[str], matrix: Sequence[Sequence[int]], title: str) -> bytes:
    """The confusion matrix (rows gold, columns predicted) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 4.8), dpi=120)
    try:
        ax.imshow(matrix, cmap="Blues")
        ax.set_xticks(range(len(labels)), labels=labels, rotation=30, ha="right")
        ax.set_yticks(range(len(labels)), labels=labels)
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        ax.set_title(title, fontsize=9)
        peak = max((max(r) for r in matrix), default=0) or 1
        for i, row in enumerate(matrix):
            for j, value in enumerate(row):
                ax.text(
                    j,
                    i,
                    str(value),
                    ha="center",
                    va="center",
                    color="white" if value > peak / 2 else "black",
                )
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue()
    finally:
        plt.close(fig)
