"""The review page: static HTML, CSS and JavaScript served by the Functions app (no build step).

``GET /api/ui`` serves ``index.html`` (function auth level: open it as ``/api/ui?code=<key>``; the
page reads ``code`` from its own address and sends it as ``x-functions-key`` on every API call).
``GET /api/ui/{asset}`` serves the whitelisted ``app.js``, ``app.css`` and ``favicon.svg``, at
function auth level too: a ``<script src>`` cannot send a header, so the page is served with the ``code`` it was opened
with appended to its asset URLs (URL-encoded and HTML-escaped, and only when it looks like a
function key). Nothing is fetched from anywhere else; the Content-Security-Policy allows scripts,
styles and connections to this origin only, no inline script or style, no framing, no forms posting
elsewhere, and ``Referrer-Policy: no-referrer`` keeps the key in the address out of Referer headers.

Every piece of run data is inserted into the page with ``textContent`` (app.js never assigns
``innerHTML``), so model text such as ``<img onerror=...>`` shows as text.
"""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path
from urllib.parse import quote

from shared.api import ApiResponse, error_response

UI_DIR = Path(__file__).resolve().parent
ASSETS: dict[str, str] = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
# what a function key can look like (Azure's are base64-like); anything else is not echoed
KEY_RE = re.compile(r"[A-Za-z0-9_\-=+/.~]{1,512}")
ASSET_QUERY = "{{asset_query}}"
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@cache
def _read(name: str) -> bytes:
    return (UI_DIR / name).read_bytes()


def page(code: str | None = None) -> ApiResponse:
    """GET /api/ui: ``code`` is the request's ``?code=`` (the host has checked it already)."""
    query = f"?code={quote(code, safe='')}" if code and KEY_RE.fullmatch(code) else ""
    body = _read("index.html").decode("utf-8").replace(ASSET_QUERY, html.escape(query, quote=True))
    return ApiResponse(
        200, body.encode("utf-8"), "text/html; charset=utf-8", dict(SECURITY_HEADERS)
    )


def asset(name: str) -> ApiResponse:
    """GET /api/ui/{asset}: only the names in ASSETS (anything else is a 404, never a path)."""
    content_type = ASSETS.get(name)
    if content_type is None:
        return error_response(404, f"no ui asset {name!r}")
    return ApiResponse(200, _read(name), content_type, dict(SECURITY_HEADERS))
