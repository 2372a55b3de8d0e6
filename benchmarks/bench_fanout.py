"""Fan-out (issue 6): ``python -m benchmarks.bench_fanout`` -- NOT IMPLEMENTED YET.

What it will measure: a transcript that gives 12 segments and 36 stories, dropped into the
``transcripts`` container of a private Azurite and processed by ``devhost.host.LocalHost`` running
``function_app.py`` with the LLM engine, every model call answered by
``tests/support/openai_standin.py`` after a fixed 300 ms. Reported: the end-to-end time (blob
drop to ``completed``) divided by the critical path (3 sequential model calls - segmentation,
one generation, one tagging - plus finalize) and the speedup over the seed's sequential design
(the sum of all 1 + 12 + 36 calls). Goals: at most 1.5x the critical path, at least 8x faster
than sequential.

It needs the LLM engine and the stand-in's fixed-delay mode of issue 3 to be finished; until then
this module measures nothing and ``make bench`` lists it as pending (``PENDING`` below).
"""

from __future__ import annotations

import sys

PENDING = (
    "needs the LLM engine on the local host with the OpenAI stand-in's fixed 300 ms delay "
    "(issue 3); no figure is measured yet"
)


def main(argv: list[str] | None = None) -> int:
    print(f"bench_fanout is not implemented yet: {PENDING}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
