"""The Azure DevOps REST 7.1 client (work item tracking) used by the backlog loader and the writer.

- Auth: ``Authorization: Basic base64(":" + PAT)``; ``X-TFS-FedAuthRedirect: Suppress`` so a bad
  token is a 401 rather than a 203 sign-in page (both, and any HTML answer, raise AdoAuthError).
- ``api-version=7.1`` on every request; the organization URL is taken whole from settings
  (``https://dev.azure.com/{org}``, a Server collection URL, or a local stand-in).
- Reads: WIQL (its ``asOf``; ``timePrecision`` for date-time comparisons, which the sync's
  ``[System.ChangedDate] >=`` needs) with id-window keyset paging past the 20,000-result cap
  (VS402337), then
  ``workitemsbatch`` in batches of 200 with ``$expand=relations`` (which returns all fields);
  the project's work item types (``workitemtypes``), from which its process is told.
- Writes: create (``POST .../workitems/${type}``) and update (``PATCH .../workitems/{id}``) with
  ``application/json-patch+json``; parent links are ``Hierarchy-Reverse`` relations. Delete
  (``DELETE .../workitems/{id}``, never ``destroy=true``) moves an item to the recycle bin.
- Backoff (shared.ado.retry): reads retry 429/500/502/503/504, writes only 429/503 (an answered
  500 may have been applied); 1, 2, 4, 8, 16 s, or exactly what ``Retry-After`` says. A 200 with
  ``Retry-After`` (ADO's soft throttling) delays the next request by that much.
"""

from __future__ import annotations

import base64
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import requests
from requests.adapters import HTTPAdapter

from shared.ado import ops
from shared.ado.errors import (
    AdoConnectionError,
    AdoError,
    AdoQueryTooLarge,
    error_from_response,
    mask_secrets,
)
from shared.ado.retry import READ_RETRY_STATUSES, WRITE_RETRY_STATUSES, AdoRetry, make_retry
from shared.errors import ConfigurationError

if TYPE_CHECKING:
    from shared.settings import Settings

log = logging.getLogger("shared.ado")

API_VERSION = "7.1"
BATCH_LIMIT = 200  # workitemsbatch accepts at most 200 ids
WIQL_CAP = 20_000  # VS402337 above this many results
JSON_PATCH = "application/json-patch+json"


@dataclass(frozen=True)
class WiqlResult:
    """What a WIQL query returned: the work item ids, and ``asOf``, the server time it ran at
    (ADO's own clock, as an ISO string; None when the answer did not say)."""

    ids: list[int]
    as_of: str | None = None


class AdoClient:
    """One organization + project. Thread-safe for reads; create one per loader or writer run."""

    def __init__(
        self,
        org_url: str,
        project: str,
        pat: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 5,
        backoff_factor: float = 1.0,
        backoff_max: float = 16.0,
        retry_after_max: int = 300,
        suppress_sign_in_redirect: bool = True,
        sleep: Callable[[float], None] = time.sleep,
        wiql_page_size: int = WIQL_CAP,
    ) -> None:
        parts = urlsplit(org_url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigurationError(
                "AZURE_DEVOPS_ORG_URL must be a full URL such as https://dev.azure.com/your-org"
            )
        if not project.strip():
            raise ConfigurationError("AZURE_DEVOPS_PROJECT is empty")
        if not pat:
            raise ConfigurationError("AZURE_DEVOPS_PAT is empty")
        self.org_url = org_url.strip().rstrip("/")
        self.project = project.strip()
        self.timeout = timeout
        self.wiql_page_size = max(1, min(int(wiql_page_size), WIQL_CAP))
        self._sleep = sleep
        token = base64.b64encode(f":{pat}".encode()).decode()
        self._secrets = (pat, token)
        headers = {
            "Authorization": f"Basic {token}",
            "Accept": "application/json",
            "User-Agent": "backlog-synthesizer",
        }
        if suppress_sign_in_redirect:
            headers["X-TFS-FedAuthRedirect"] = "Suppress"
        retry = functools.partial(
            make_retry,
            max_retries=max_retries,
            backoff_factor=backoff_factor,
            backoff_max=backoff_max,
            retry_after_max=retry_after_max,
            sleeper=sleep,
        )
        self._reads = self._session(headers, retry(statuses=READ_RETRY_STATUSES))
        self._writes = self._session(
            headers, retry(statuses=WRITE_RETRY_STATUSES, read_errors=False)
        )
        self._pace_lock = threading.Lock()
        self._not_before = 0.0

    @staticmethod
    def _session(headers: dict[str, str], retry: AdoRetry) -> requests.Session:
        session = requests.Session()
        session.headers.update(headers)
        adapter = HTTPAdapter(max_retries=retry)
        session.mount("https://", adapter)
        session.mount("http://", adapter)
        return session

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> AdoClient:
        """From AZURE_DEVOPS_ORG_URL, AZURE_DEVOPS_PROJECT and AZURE_DEVOPS_PAT."""
        pat = settings.azure_devops_pat.get_secret_value() if settings.azure_devops_pat else ""
        org_url = settings.azure_devops_org_url or ""
        project = settings.azure_devops_project or ""
        missing = [
            name
            for name, value in (
                ("AZURE_DEVOPS_ORG_URL", org_url),
                ("AZURE_DEVOPS_PROJECT", project),
                ("AZURE_DEVOPS_PAT", pat),
            )
            if not value
        ]
        if missing:
            raise ConfigurationError(
                "the Azure DevOps REST source needs " + ", ".join(missing) + " (or give an "
                "export file instead)"
            )
        return cls(org_url, project, pat, **kwargs)

    def __repr__(self) -> str:
        return f"AdoClient({self.org_url!r}, {self.project!r})"

    def close(self) -> None:
        self._reads.close()
        self._writes.close()

    def __enter__(self) -> AdoClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- URLs ----------------------------------------------------------------------------------
    def _project_url(self, route: str) -> str:
        return f"{self.org_url}/{quote(self.project, safe='')}/_apis/wit/{route}"

    def work_item_url(self, work_item_id: int) -> str:
        """The API URL ADO uses in relations (``.../_apis/wit/workItems/{id}``)."""
        return f"{self.org_url}/_apis/wit/workItems/{int(work_item_id)}"

    def web_url(self, work_item_id: int) -> str:
        """Where a person opens the item in the browser."""
        return f"{self.org_url}/{quote(self.project, safe='')}/_workitems/edit/{int(work_item_id)}"

    # -- transport -----------------------------------------------------------------------------
    def _request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        content_type: str = "application/json",
        write: bool = False,
    ) -> Any:
        query = {"api-version": API_VERSION, **(params or {})}
        session = self._writes if write else self._reads
        self._pace()
        path = urlsplit(url).path
        try:
            response = session.request(
                method,
                url,
                params=query,
                json=json_body,
                headers={"Content-Type": content_type} if json_body is not None else None,
                timeout=self.timeout,
            )
        except requests.RequestException as err:
            # requests' messages hold the URL (no secret: the PAT is only in a header)
            raise AdoConnectionError(
                mask_secrets(f"no response from Azure DevOps: {err}", self._secrets),
                method=method,
                url=path,
            ) from None
        self._remember_pace(response)
        content = response.headers.get("Content-Type", "")
        if response.status_code == 203 or response.status_code >= 400 or "html" in content:
            raise error_from_response(
                response.status_code,
                response.text,
                method=method,
                url=path,
                content_type=content,
                secrets=self._secrets,
            )
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise AdoError(
                "Azure DevOps answered with a body that is not JSON",
                status=response.status_code,
                method=method,
                url=path,
            ) from None

    def _pace(self) -> None:
        with self._pace_lock:
            wait = self._not_before - time.monotonic()
        if wait > 0:
            self._sleep(wait)

    def _remember_pace(self, response: requests.Response) -> None:
        """ADO delays rather than blocks first: a success with Retry-After asks us to slow down."""
        retry_after = response.headers.get("Retry-After")
        if retry_after and response.status_code < 400:
            try:
                seconds = min(float(retry_after), 300.0)
            except ValueError:
                return
            log.info("Azure DevOps asked to slow down: next request in %.1f s", seconds)
            with self._pace_lock:
                self._not_before = max(self._not_before, time.monotonic() + seconds)

    # -- reads ---------------------------------------------------------------------------------
    def project_info(self) -> dict[str, Any]:
        """``GET {org}/_apis/projects/{project}``: the project as ADO describes it (id, name,
        state); what the deep health check asks (any PAT scope may read it)."""
        result = self._request(
            "GET", f"{self.org_url}/_apis/projects/{quote(self.project, safe='')}"
        )
        return dict(result or {})

    def work_item_types(self) -> list[dict[str, Any]]:
        """The project's work item types (``GET .../wit/workitemtypes``: name, referenceName,
        isDisabled, ...), from which shared.ado.process tells the project's process."""
        result = self._request("GET", self._project_url("workitemtypes"))
        return [t for t in (result or {}).get("value") or [] if isinstance(t, dict)]

    def query(
        self, wiql: str, *, top: int | None = None, time_precision: bool = False
    ) -> WiqlResult:
        """Run one WIQL query: the ids of the work items it returns and ``asOf``, the server time
        it ran at. ``time_precision``: date-time literals compare to the second
        (``timePrecision=true``; without it WIQL compares dates by day)."""
        params: dict[str, Any] = {}
        if top:
            params["$top"] = int(top)
        if time_precision:
            params["timePrecision"] = "true"
        result = self._request(
            "POST", self._project_url("wiql"), params=params or None, json_body={"query": wiql}
        )
        return WiqlResult(
            [int(w["id"]) for w in (result or {}).get("workItems") or []],
            str((result or {}).get("asOf") or "") or None,
        )

    def query_ids(self, wiql: str, *, top: int | None = None) -> list[int]:
        """Run one WIQL query; the ids of the work items it returns."""
        return self.query(wiql, top=top).ids

    def iter_ids(
        self,
        work_item_types: Sequence[str] = (),
        *,
        tag: str | None = None,
        conditions: Sequence[str] = (),
        time_precision: bool = False,
    ) -> Iterator[int]:
        """Every matching id in ascending order, however many there are (``_pages``)."""
        for page in self._pages(work_item_types, tag, conditions, time_precision):
            yield from page.ids

    def listing(
        self,
        work_item_types: Sequence[str] = (),
        *,
        conditions: Sequence[str] = (),
        time_precision: bool = False,
    ) -> WiqlResult:
        """Every matching id, and the ``asOf`` of the first page: anything changed after it may
        be missing from the listing (later pages saw at least as much)."""
        ids: list[int] = []
        as_of: str | None = None
        for page in self._pages(work_item_types, None, conditions, time_precision):
            ids.extend(page.ids)
            as_of = as_of or page.as_of
        return WiqlResult(ids, as_of)

    def _pages(
        self,
        work_item_types: Sequence[str],
        tag: str | None,
        conditions: Sequence[str],
        time_precision: bool,
    ) -> Iterator[WiqlResult]:
        """The matching ids page by page, in ascending order.

        Keyset paging: ``[System.Id] > last`` with ``$top`` = the page size. If the server still
        counts every match against the cap (VS402337), it switches to bounded id windows
        ``last < id <= last + w`` (a window of w ids cannot exceed w results): w halves when a
        window is still too large and doubles when it comes back sparse; the unbounded query is
        tried again whenever a window has taken items off, and ends the listing once it fits.
        """
        page = self.wiql_page_size
        last = 0
        window = page
        try_unbounded = True
        while True:
            if try_unbounded:
                query = ops.work_items_query(
                    work_item_types, after_id=last, tag=tag, conditions=conditions
                )
                try:
                    found = self.query(query, top=page, time_precision=time_precision)
                except AdoQueryTooLarge:
                    log.info(
                        "WIQL: more than %d items above id %d; paging by id window", page, last
                    )
                else:
                    yield found
                    if len(found.ids) < page:
                        return
                    last = found.ids[-1]
                    continue
            query = ops.work_items_query(
                work_item_types,
                after_id=last,
                up_to_id=last + window,
                tag=tag,
                conditions=conditions,
            )
            try:
                found = self.query(query, time_precision=time_precision)
            except AdoQueryTooLarge:
                if window == 1:
                    raise
                window = max(1, window // 2)
                try_unbounded = False
                continue
            yield found
            last += window
            try_unbounded = bool(found.ids)
            if len(found.ids) < page // 4:
                window *= 2

    def ids_with_tag(self, tag: str, work_item_types: Sequence[str] = ()) -> list[int]:
        """Work items of this project carrying ``tag`` (WIQL ``[System.Tags] CONTAINS``)."""
        return list(self.iter_ids(work_item_types, tag=tag))

    def get_work_items(
        self, ids: Iterable[int], *, batch_size: int = BATCH_LIMIT
    ) -> Iterator[dict[str, Any]]:
        """Items as REST JSON (all fields + relations), ``batch_size`` (≤ 200) per request.
        Ids that no longer exist are left out (``errorPolicy: omit``)."""
        size = max(1, min(batch_size, BATCH_LIMIT))
        batch: list[int] = []
        for work_item_id in ids:
            batch.append(int(work_item_id))
            if len(batch) == size:
                yield from self._batch(batch)
                batch = []
        if batch:
            yield from self._batch(batch)

    def _batch(self, ids: list[int]) -> list[dict[str, Any]]:
        # `fields` and `$expand` cannot be combined (400); $expand=relations returns all fields
        body = {"ids": ids, "$expand": "relations", "errorPolicy": "omit"}
        result = self._request("POST", self._project_url("workitemsbatch"), json_body=body)
        return [item for item in (result or {}).get("value") or [] if item]

    def get_work_item(self, work_item_id: int) -> dict[str, Any]:
        return self._request(
            "GET",
            self._project_url(f"workitems/{int(work_item_id)}"),
            params={"$expand": "relations"},
        )

    # -- writes --------------------------------------------------------------------------------
    def create_work_item(
        self,
        work_item_type: str,
        fields: Mapping[str, Any],
        *,
        parent_id: int | None = None,
        operations: Sequence[Mapping[str, Any]] = (),
        validate_only: bool = False,
    ) -> dict[str, Any]:
        """Create an item of ``work_item_type`` with ``fields`` (values sent as given: escape model
        text for HTML fields before), linked to ``parent_id``; the created item comes back."""
        body = ops.fields_ops(fields)
        if parent_id is not None:
            body.append(ops.parent_op(self.work_item_url(parent_id)))
        body.extend(dict(op) for op in operations)
        params = {"validateOnly": "true"} if validate_only else None
        route = "workitems/$" + quote(work_item_type, safe="")
        return self._request(
            "POST",
            self._project_url(route),
            params=params,
            json_body=body,
            content_type=JSON_PATCH,
            write=True,
        )

    def update_work_item(
        self,
        work_item_id: int,
        operations: Sequence[Mapping[str, Any]],
        *,
        expected_rev: int | None = None,
        validate_only: bool = False,
    ) -> dict[str, Any]:
        """Apply JSON Patch ``operations``; with ``expected_rev`` a ``test /rev`` goes first, so a
        concurrent change fails with AdoConflict (412) instead of being overwritten."""
        body = [dict(op) for op in operations]
        if expected_rev is not None:
            body.insert(0, ops.expect_rev_op(expected_rev))
        params = {"validateOnly": "true"} if validate_only else None
        return self._request(
            "PATCH",
            self._project_url(f"workitems/{int(work_item_id)}"),
            params=params,
            json_body=body,
            content_type=JSON_PATCH,
            write=True,
        )

    def delete_item(self, work_item_id: int) -> dict[str, Any] | None:
        """Delete a work item: ADO moves it to the project's recycle bin (restorable; ``destroy`` is
        never sent). A later read of it is a 404 (AdoNotFound), and so is deleting it again.
        Retried like every write: on 429/503 only."""
        return self._request(
            "DELETE",
            self._project_url(f"workitems/{int(work_item_id)}"),
            write=True,
        )
