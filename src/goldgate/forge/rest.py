"""A small REST client for a code host's API: the token stays on the API's own origin.

The token goes in a header to the base URL's scheme, host and port only: a ``Link`` header or
a redirect pointing anywhere else is refused, never followed. Every message built from a
response has the token redacted (an error body may echo the request's headers). Pages are
followed through ``Link: rel="next"`` within a page count and a time budget.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from goldgate.terminal import console

TIMEOUT_S = 30
#: a ``Link: rel="next"`` chain longer than this (10,000 items) is a misbehaving API
MAX_PAGES = 100
#: and so is a search that takes longer than this, whatever the page count
MAX_SEARCH_S = 120.0


class ApiError(Exception):
    """A call that did not work; ``status`` is the HTTP status, 0 when there was none."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status = status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer, never a request to another URL with the token in it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


class RestApi:
    """The few calls a face makes to ``base_url``, authenticated by ``headers``.

    ``name`` says which API in messages (``GitHub``); ``url_variable`` names the setting the
    base URL came from, for the message when it is not an http(s) URL.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        headers: Mapping[str, str],
        *,
        name: str,
        url_variable: str,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ApiError(0, f"{url_variable}={console.inline(base_url)!s} is not an http(s) URL")
        self.base_url = base_url.rstrip("/")
        self.name = name
        self._token = token
        self._headers = dict(headers)
        self._origin = (parts.scheme, parts.netloc)

    def redact(self, text: str) -> str:
        """``text`` without the token."""
        return text.replace(self._token, console.REDACTED) if self._token else text

    def absolute(self, url: str) -> str:
        """``url`` itself, or the API's base URL joined with a path."""
        return url if url.startswith(("http://", "https://")) else self.base_url + url

    def request(
        self, method: str, url: str, body: Mapping[str, Any] | None = None
    ) -> tuple[Any, dict[str, str]]:
        """The JSON answer (None when empty) and the response headers, lower-cased."""
        url = self.absolute(url)
        # Never send the token to another host, or over another scheme (a crafted Link header).
        parts = urllib.parse.urlsplit(url)
        if (parts.scheme, parts.netloc) != self._origin:
            raise ApiError(0, "refusing to follow a link to another host")
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        for header, value in self._headers.items():
            request.add_header(header, value)
        request.add_header("User-Agent", "goldgate")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        what = f"{method} {parts.path}"
        try:
            with _OPENER.open(request, timeout=TIMEOUT_S) as response:
                payload = response.read()
                headers = {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:
                raise ApiError(exc.code, f"{what}: refusing to follow a redirect") from None
            raise ApiError(exc.code, self.redact(_api_message(exc))[:200]) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = self.redact(str(exc))[:200]
            raise ApiError(0, f"cannot reach the {self.name} API: {reason}") from None
        try:
            return (json.loads(payload) if payload else None), headers
        except (ValueError, RecursionError):
            raise ApiError(0, f"{what}: the API answered with something that is not JSON") from None

    def pages(
        self, path: str, *, clock: Callable[[], float] = time.monotonic
    ) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list, page by page; a chain that never ends is an error."""
        separator = "&" if "?" in path else "?"
        url: str | None = self.absolute(f"{path}{separator}per_page=100")
        seen: set[str] = set()
        started = clock()
        while url:
            if len(seen) >= MAX_PAGES or clock() - started > MAX_SEARCH_S:
                raise ApiError(
                    0,
                    f"the API kept paginating ({len(seen)} pages in {clock() - started:.0f} s);"
                    " stopped looking for goldgate's comment",
                )
            if url in seen:
                raise ApiError(0, "the API's pages link back to one already read; stopped")
            seen.add(url)
            page, headers = self.request("GET", url)
            if not isinstance(page, list) or not all(isinstance(c, dict) for c in page):
                raise ApiError(0, f"GET {path}: the API answered with something that is not a list")
            yield from page
            url = next_link(headers)


def _api_message(exc: urllib.error.HTTPError) -> str:
    try:
        document = json.loads(exc.read())
        message = document.get("message", "") if isinstance(document, dict) else ""
    except (ValueError, RecursionError, OSError):
        message = ""
    return str(message or exc.reason)


def next_link(headers: Mapping[str, str]) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header, if any."""
    for part in headers.get("link", "").split(","):
        url, _, rel = part.partition(";")
        if 'rel="next"' in rel:
            return url.strip().strip("<>")
    return None
