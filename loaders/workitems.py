"""Work items from REST JSON, ADO CSV exports and normalized JSONL; ``work_item_hash``.

The code lives in ``shared.indexing.workitems`` (the writer and the sync keep the index current
with it, and ``shared/`` never imports ``loaders/``); this module keeps the loaders' import path.
"""

from __future__ import annotations

from shared.indexing.workitems import (
    BacklogFormatError,
    from_csv,
    from_rest,
    parse_backlog_file,
    parse_csv,
    parse_records,
    read_backlog_file,
    work_item_hash,
)

__all__ = [
    "BacklogFormatError",
    "work_item_hash",
    "from_rest",
    "parse_csv",
    "from_csv",
    "parse_records",
    "parse_backlog_file",
    "read_backlog_file",
]
