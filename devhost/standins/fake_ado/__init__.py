"""A fake Azure DevOps REST 7.1 server (work item tracking), over real HTTP, for tests and
benchmarks.

The loader's and the writer's tests drive the real client (requests) against it. It behaves like
ADO where the client depends on it (as Microsoft's REST 7.1 specification describes it:
MicrosoftDocs/vsts-rest-api-specs, ``specification/wit/7.1/workItemTracking.json``):

- **Auth**: ``Authorization: Basic base64(user:PAT)`` (user ignored). A wrong or missing PAT gets
  **203 with an HTML sign-in page**, or **401** when ``X-TFS-FedAuthRedirect: Suppress`` is sent.
  ``api-version`` must be given (400 otherwise); the project must exist (404 VS800075).
- **WIQL** ``POST {org}/{project}/_apis/wit/wiql[?$top=N]``: ``SELECT ... FROM WorkItems WHERE
  c1 AND c2 ... ORDER BY [field] [ASC|DESC]`` with conditions ``[Field] op value``, op one of
  ``= <> > >= < <= IN NOT IN CONTAINS NOT CONTAINS``, values ``'text'``, numbers, ``@project``,
  ``(list)``. Date fields (``System.ChangedDate``, ``System.CreatedDate``) compare as dates: by day,
  unless the request says ``timePrecision=true``; a literal with a time of day without it is a 400
  (ADO does not compare times without that parameter; this message is the fake's own). The answer
  carries ``asOf``, the fake's clock when the query ran (the clock every write's ChangedDate comes
  from). ``[System.Tags] CONTAINS 'x'`` matches a whole tag, case-insensitively. OR and
  parentheses are refused (400), so a client relying on them fails loudly here. Result cap
  ``wiql_cap`` (ADO: 20,000) → 400 **VS402337**; by default every match counts against the cap
  even with ``$top`` (the pessimistic reading of ADO); ``cap_counts_before_top=False`` applies
  ``$top`` first.
- **workitemsbatch** ``POST .../wit/workitemsbatch``: ≤ 200 ids (400 VS403474 above), ``fields``
  and ``$expand`` together → 400, ``errorPolicy: omit`` → null for missing ids (else 404 TF401232).
- **GET** ``.../wit/workitems/{id}[?$expand=relations]``, ``GET .../wit/workitems?ids=1,2``;
  ``GET {org}/_apis/projects/{project}`` (id, name, state; 404 VS800075 for another name).
- **Process** (``process``: agile, the default, scrum, cmmi or basic): ``GET .../wit/workitemtypes``
  lists that process's work item types (name, referenceName, isDisabled; ``disabled_types`` are
  marked disabled), a create of a type the process lacks answers **404 VS402323** as ADO does (a
  "User Story" in a Scrum project), states are the process's (Basic: To Do, Doing, Done; new
  items start in its first state), and ``Microsoft.VSTS.Common.AcceptanceCriteria`` on a type
  without that field (every Basic type, Task) is **400 TF51535** "Cannot find field".
  ``sample_items(process)`` is the sample backlog as such a project holds it.
- **Create** ``POST .../wit/workitems/${type}`` and **update** ``PATCH .../wit/workitems/{id}``:
  ``Content-Type: application/json-patch+json`` (415 otherwise); ops ``add``/``replace``/
  ``remove`` on ``/fields/{ref}`` (``add`` on System.Tags merges, ``replace`` overwrites), ``add``
  on ``/relations/-``, ``remove`` on ``/relations/{i}``, ``test`` on ``/rev`` (412 when stale).
  Hierarchy links are kept on both ends (a parent gets the Hierarchy-Forward link, its rev
  increments); a second parent → 400 TF201036. Rules: a non-empty Title, a known State
  (TF401320 RuleValidationException). New ids count up from the highest id, each write bumps
  ``rev``/``System.Rev`` and ``System.ChangedDate``; a patch that changes nothing makes no revision.
  ``validateOnly=true`` checks without saving. All-or-nothing: a failing op changes nothing.
- **Delete** ``DELETE .../wit/workitems/{id}``: the item moves to the recycle bin (``recycle_bin``;
  ``destroy=true`` deletes it for good) and answers ADO's WorkItemDelete (``id, code, deletedBy,
  deletedDate, name, project, type, url, resource``); links to it vanish from the other items
  (no new revision there), and a later GET, PATCH or DELETE of it is a 404 TF401232, as in ADO.

Knobs: ``fail_next`` (any status, e.g. 5xx; ``applied=True``: done, then answered with the
error, as when a 500 or a lost answer follows a write that happened), ``throttle_next`` (429 + Retry-After, TF400733),
``slow_down_next`` (200 + Retry-After: ADO's delay), ``reject_writes`` (400 rule violation for one
item or title), ``wiql_cap`` / ``cap_counts_before_top``, ``pat``. Direct edits that a person would
make in ADO: ``edit_item``, ``remove_item``. Every request is in ``log`` (time, method, route,
path, query, headers without Authorization, body, status); ``count()`` filters it.

Error bodies have ADO's shape (``$id, innerException, message, typeName, typeKey, errorCode,
eventId``). Codes and messages named in ADO_REST.md are ADO's; the typeKeys of 412, VS402337 and
the link errors are representative.

The package: ``server`` (``FakeAdo``: lifecycle, state, faults, the request log, routing),
``reads`` and ``writes`` (the routes), ``wiql`` (the query language), ``schema`` (processes, types,
states, links), ``replies`` (ADO's error bodies) and ``samples`` (backlogs to seed it with).
``from devhost.standins.fake_ado import FakeAdo`` is the usual import.
"""

from __future__ import annotations

from devhost.standins.fake_ado.samples import REPO, SAMPLE_REST, generate_items, sample_items
from devhost.standins.fake_ado.schema import (
    AC_FIELD,
    CHILD,
    PARENT,
    PROCESSES,
    STATES,
    TYPES,
    ProcessSpec,
)
from devhost.standins.fake_ado.server import FakeAdo, LoggedRequest
from devhost.standins.fake_ado.wiql import Wiql, WiqlError, parse_wiql

__all__ = [
    "AC_FIELD",
    "CHILD",
    "PARENT",
    "PROCESSES",
    "REPO",
    "SAMPLE_REST",
    "STATES",
    "TYPES",
    "FakeAdo",
    "LoggedRequest",
    "ProcessSpec",
    "Wiql",
    "WiqlError",
    "generate_items",
    "parse_wiql",
    "sample_items",
]
