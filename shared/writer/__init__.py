"""The ADO writer (seed §8): a reviewed, completed run into Azure DevOps, idempotently; its undo
(rollback); and retag.

- ``execute``: doing it against ADO (signature tags, retries, failures; rules in its docstring)
- ``runs``: run checks, the leases, the result records (``ado_write_results.jsonl``)
- ``revert``: undo a write: delete what it created, revert what it patched, leave alone and
  report what changed in ADO since (rules in its docstring)
- ``rollback``: a run's rollback: which write, the leases, the rollback's records
- ``retag``: tag a completed run's stories again against the current index (seed §13.13)
- ``report``: the plan, a write, a rollback and a retag as tables for the command line

What a write would do, item by item, is the reviewed backlog's plan (``shared.review.plan``, pure;
its rules in its docstring), with the fields, tags and signatures of ``shared.review.render``.

No Langfuse spans here (seed §8.6). Entry points: ``python -m shared.cli write|rollback|retag`` and the
HTTP API below (shared/api/writes.py). The HTTP calls are synchronous: a Functions HTTP request is cut
at 230 s by Azure's load balancer whatever the function timeout, so a write that takes longer
answers 502/504 to its caller while it goes on to the end; its results then appear at
GET .../write, and running it again (after the lease is released) finishes anything left, writing
nothing twice. Large runs are better written with the CLI.

HTTP (function auth level; a malformed run id → 400, an unknown run → 404, every error body is
``{"error": "..."}``):

The saved review (``runs/{run_id}/review.json``, shared/review/state.py) is applied first: a
dry run, a write and an export see the edited titles, descriptions and criteria, moved, merged and
split stories, and leave out the stories made open questions. Its saved ``decisions`` are the
defaults; the request's ``decisions`` override them story by story. Signatures hash what is
written (the edited title and criteria), so an edited story is a new item to ADO. Each plan entry
and each result records who decided and when: ``decided_by`` / ``decided_at`` are the review's
``saved_by`` / ``saved_at`` for a decision that came from the saved review, else the requester of
the write (HTTP: shared.api.review.requester: the ``x-ms-client-principal-name`` header, else
"function key", else "anonymous"; CLI: ``--by NAME``, default the OS user) and the time of the
write.

``POST /api/runs/{run_id}/write`` with the body ``{"dry_run": true|false, "decisions": {story_id:
"accept"|"skip"|"keep_existing"|"replace"|"both"}, "allow_empty_backlog": false}`` (all keys
optional; ``dry_run`` defaults to **true**, so writing needs ``"dry_run": false``; other keys →
400). A run whose project had no indexed backlog (``warnings`` of run.json holds
``empty_index``) is refused with 409 ``{"error", "code": "empty_index"}`` when its write would
create anything, unless ``"allow_empty_backlog": true``; the dry run lists the run's
``warnings``.

- dry run → 200::

    {"run_id": "run-…", "dry_run": true,
     "checked_against_ado": true,          # false when ADO is not configured (plan from files only)
     "process": "agile"|"scrum"|"cmmi"|"basic"|null,   # null: unknown (planned as for agile)
     "ado_error": "…",                     # only when checking stopped early (auth, throttling)
     "plan": [PlanItem, …],                # epics, then features, then stories
     "counts": {"create": 0, "patch": 0, "skip": 0, "blocked": 0, "existing": 0}}

  PlanItem::

    {"item_id": "seg-0001-st01", "type": "Epic"|"Feature"|"User Story", "title": "…",
     "work_item_type": "Product Backlog Item"|…|null,   # as the process names it; null: not
                                                        # written (a Basic feature)
     "action": "create"|"patch"|"skip"|"blocked",
     "status": "pending"|"existing"|"skipped"|"blocked",   # existing: already in ADO, nothing to do
     "tag": "new"|"extend"|"gap"|"conflict"|"duplicate"|null,   # stories
     "decision": "accept"|…|null,                              # stories (accept when not given)
     "parent_ref": "seg-0001-ft01" | "ado:1002" | null,        # generated parent, or existing one
     "existing_id": 1126 | null,   # the existing story patched / linked (both) / kept / duplicated
     "ado_id": 1203 | null,        # the work item already holding it (status existing)
     "criteria": ["…"],            # patch: the ACs it appends (replace: the new ACs)
     "reason": "…", "error": "…"|null, "signature": "<sha256 hex>",
     "decided_by": "ana@example.org"|"function key"|…|null, "decided_at": "…Z"|null,
     "pending": {"run_id", "story_id", "title"}|null}   # the counterpart is another run's story,
                                                        # reviewed, not yet written

- write → 200 (also when some items failed: see ``counts.failed``)::

    {"run_id": "run-…", "dry_run": false, "write_id": "w-0001-20260101T120000Z",
     "process": "agile"|…, "results": [WriteResult, …], "counts": {"created": 0,
     "modified": 0, "existing": 0, "skipped": 0, "blocked": 0, "failed": 0},
     "created_ids": [..], "modified_ids": [..],
     "index_update": {"status": "updated"|"deferred"|"failed", "indexed_ids", …}}
                     # the project's index after the write (shared/indexing/writes.py)

  WriteResult (also each line of ``runs/{run_id}/ado_write_results.jsonl``)::

    {"run_id", "write_id", "item_id", "type", "work_item_type", "title", "action", "status":
     "created"|"modified"|"existing"|"skipped"|"blocked"|"failed", "tag", "decision",
     "decided_by", "decided_at",        # null in results written before they existed
     "parent_ref", "parent_ado_id", "existing_id", "ado_id", "created_ids": [..],
     "modified_ids": [..], "url": "https://dev.azure.com/…/_workitems/edit/N"|null, "reason",
     "error": "…"|null, "signature", "timestamp",
     "before": {field: value|null}|null,   # patches: each field it changed, as it was
     "after": {field: value|null}|null,    # patches: the same fields as the write left them
     "rev_after": 7|null,                  # created / modified: the item's rev when it ended
     "indexed": true|false|null}           # created / modified / existing: in the index as ADO
                                           # has it after the write

  (``before``, ``after`` and ``rev_after`` are absent, null, in writes made before rollbacks.)

- 400 bad body or decisions (``{"error", "problems": ["…", …]}``); 404 unknown run; 409 the run has
  not completed (``{"error", "status"}``) or a write / retag of it (or another ADO write) is in
  progress; 503 ADO not configured (writes only: a dry run then plans from the files) or its
  process cannot be told (set ``AZURE_DEVOPS_PROCESS``); 502 ADO failed when asked for the
  project's work item types.

``GET /api/runs/{run_id}/write`` → 200 ``{"run_id", "write_id": "…"|null, "results": [WriteResult],
"counts", "created_ids", "modified_ids", "writes": ["w-…", …]}``: the latest write (``results: []``
and ``write_id: null`` if the run was never written); ``writes`` lists every write, oldest first,
each kept at ``runs/{run_id}/parts/writes/{write_id}.jsonl``.

``POST /api/runs/{run_id}/rollback`` with the body ``{"write_id": "w-…", "dry_run": true|false}``
(both optional; ``write_id`` defaults to the latest write; ``dry_run`` defaults to **true**, as
for a write, so undoing needs ``"dry_run": false``; other keys → 400) → 200::

    {"run_id", "write_id": "w-0001-…", "rollback_id": "rb-0001-20260101T120000Z"|null (dry run),
     "dry_run": false, "checked_against_ado": true,   # false: a dry run without ADO, or ADO
     "ado_error": "…",                                 # refused the read (then: only when it did)
     "results": [RollbackRecord, …],   # the write's patches first, then its creates, children first
     "counts": {"pending", "deleted", "reverted", "changed_since_write", "already_gone",
                "already_reverted", "kept", "failed"},
     "deleted_ids": [..], "reverted_ids": [..],
     "index_update": {...}|absent}    # not in a dry run: the project's index after it

  RollbackRecord (also each line of ``runs/{run_id}/parts/rollbacks/{rollback_id}.jsonl``; one
  per item the write created or modified)::

    {"run_id", "rollback_id", "write_id", "item_id", "type", "title", "ado_id",
     "action": "delete"|"revert"|"none",
     "status": "pending"            # dry run: what would be done (action delete / revert)
             | "deleted"            # to ADO's recycle bin (DELETE without destroy)
             | "reverted"           # fields_reverted got their values from before the write
             | "changed_since_write"  # its rev is above the one the write left, or a field
                                      # differs from what it set: left alone (reason says which)
             | "already_gone"       # deleted already (a second rollback; or by a person)
             | "already_reverted"   # the patched fields already hold their old values
             | "kept"               # created, but children it still has stay (not orphaned)
             | "failed",            # error / reason, e.g. "cannot revert: the write recorded
                                    # no previous values" (a write older than rollbacks)
     "fields_reverted": ["System.Description", …], "reason", "error", "rev_after",
     "index": "removed"|"updated"|"failed"|null, "timestamp"}

  400 bad body or malformed ``write_id``; 404 unknown run or write; 409 the run has no write, or a
  write / retag / rollback of it (or another ADO write) is in progress; 503 ADO not configured
  (rollbacks only: a dry run then lists the write's items from its records, unchecked). A second
  rollback of the same write changes nothing (``already_gone`` / ``already_reverted``).

``POST /api/runs/{run_id}/retag`` (no body) → 200::

    {"run_id", "retagged_at": "…", "retag_count": 1, "engine": "offline"|"llm",
     "thresholds": {…}, "story_count": 37, "changed": 2,
     "tag_distribution": {"new": 0, "extend": 0, "gap": 0, "conflict": 0, "duplicate": 0},
     "previous_tag_distribution": {…},
     "changes": [{"story_id", "title", "from", "to", "related_story_ids"}],
     "snapshot": "runs/{run_id}/parts/retag/001/"|null,   # what it replaced (null: nothing changed)
     "usage": {"prompt_tokens", "completion_tokens", "calls"}}

  404 unknown run, 409 not completed or a write / retag of the run in progress.

``GET`` / ``PUT /api/runs/{run_id}/review-state``: the saved review (shared/review/state.py).
``GET /api/runs/{run_id}/export?format=csv|md``: the reviewed backlog as a file (shared/api/export.py).
A saved review that no longer fits the run (it cannot happen through the API) makes a write, a
dry run or an export a 400 with its ``problems``.
"""
