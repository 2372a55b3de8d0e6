"""The offline engine: the three agents without any chat model (recorded as ``engine: offline``).

- ``OfflineSegmenter``: TextTiling-style topic shifts on MiniLM sentence embeddings, seed limits;
- ``OfflineGenerator``: requirement-bearing sentences become stories that quote their source;
- ``OfflineTagger``: a learned pair model over similarity, overlap and contradiction features
  (or the seed's thresholds), with a calibrated confidence.

Each module's docstring states its rules. All three are deterministic and thread-safe (no state is
changed by a call), report ``Usage()`` zero and ``model=None``.
"""

from __future__ import annotations

from shared.agents import Agents
from shared.embeddings import Embedder
from shared.engine.offline.generation import OfflineGenerator
from shared.engine.offline.segmentation import OfflineSegmenter
from shared.engine.offline.tagging import OfflineTagger
from shared.settings import PipelineConfig

__all__ = [
    "OfflineGenerator",
    "OfflineSegmenter",
    "OfflineTagger",
    "build_offline_agents",
]


def build_offline_agents(embedder: Embedder, cfg: PipelineConfig) -> Agents:
    return Agents(
        segmenter=OfflineSegmenter(embedder, cfg.segmentation),
        generator=OfflineGenerator(embedder, cfg),
        tagger=OfflineTagger(embedder, cfg.thresholds, cfg.tagging),
    )
