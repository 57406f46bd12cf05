"""One judgment from an OpenAI-compatible chat-completions endpoint: retries, timeout, parsing.

Standard library only (``urllib``), imported when a judge first calls, so that no other
metric pays for it. ``timeout_s`` is a deadline for the whole call — connecting, sending, the
reply's headers and its body — not urllib's per-read socket timeout, which a server trickling a
byte at a time would never trip: a watchdog shuts the call's socket down when the deadline
passes. A call is retried with exponential backoff on 429 and 5xx (honouring a
``Retry-After`` of up to a minute), on a timeout or a refused connection, and on a reply that
does not parse; any other HTTP status fails at once. Every message this module produces has
the API key replaced by ``***`` and untrusted text cut short: the key never reaches an error,
a log or a report.

A redirect is never followed: urllib would resend the ``Authorization`` header to wherever
it points (another host, a cloud metadata address), and a POST redirected becomes a GET that
cannot be a chat completion anyway. What is read of a reply is bounded: a judgment's reply by
what ``max_tokens`` tokens can take (:func:`reply_limit`), an error's body by its excerpt.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from goldgate.errors import GoldgateError

_RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
_MAX_RETRY_AFTER_S = 60.0
_EXCERPT = 200
#: the most read of an error reply's body: only an excerpt of it is shown
_MAX_ERROR_BYTES = 64 << 10
#: what a reply may hold besides its completion's text: the envelope, usage, metadata
_REPLY_ENVELOPE_BYTES = 1 << 20
#: what one completion token may take in a reply: a token of up to 32 characters, each
#: escaped in JSON as ``\uXXXX`` (6 bytes), rounded up
_BYTES_PER_TOKEN = 256
#: the most tokens one call may report using: past any model's context, a hostile number
#: (10**400 overflows every float it is summed into)
MAX_TOKEN_COUNT = 10**9


def reply_limit(max_tokens: int) -> int:
    """The most bytes read of a reply to a request allowed ``max_tokens`` completion tokens."""
    return _REPLY_ENVELOPE_BYTES + _BYTES_PER_TOKEN * max_tokens


class JudgeCallError(GoldgateError):
    """A judgment could not be obtained; the message says why, never with the key."""


class _Retryable(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


@dataclass(frozen=True)
class Judgment:
    """A parsed judgment: the score on the judge's scale, its rationale, the tokens it cost."""

    score: float
    rationale: str
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Endpoint:
    """Where and how to call: ``POST {base_url}/chat/completions``."""

    base_url: str
    api_key: str | None
    timeout_s: float
    max_retries: int
    backoff_s: float
    #: the most bytes read of a reply (a longer one is no judgment: see :func:`reply_limit`)
    max_reply_bytes: int = _REPLY_ENVELOPE_BYTES

    def redact(self, text: str) -> str:
        """``text`` with the API key replaced, cut to a short excerpt."""
        if self.api_key:
            text = text.replace(self.api_key, "***")
        return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "..."


@dataclass
class CallStats:
    """What calling cost this run: requests sent and retried (cached judgments send none)."""

    requests: int = 0
    retries: int = 0


def judge_once(
    endpoint: Endpoint,
    body: dict[str, Any],
    parse: Callable[[str], tuple[float, str]],
    stats: CallStats,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Judgment:
    """Send ``body`` until a reply parses, retrying what may pass; ``JudgeCallError`` else."""
    attempt = 0
    while True:
        try:
            return _attempt(endpoint, body, parse, stats)
        except _Retryable as exc:
            if attempt >= endpoint.max_retries:
                tries = attempt + 1
                raise JudgeCallError(
                    f"{endpoint.redact(exc.reason)} (after {tries} attempt{'s' * (tries > 1)})"
                ) from None
            wait = endpoint.backoff_s * (2**attempt)
            if exc.wait is not None:
                wait = max(wait, min(exc.wait, _MAX_RETRY_AFTER_S))
            attempt += 1
            stats.retries += 1
            sleep(wait)


class _Deadline:
    """A call's deadline: at it, every socket the call opened is shut down, ending any read."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        """Seconds left (a little at least, so a socket timeout is never zero: non-blocking)."""
        return max(0.001, self._at - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    # A blocked recv returns at once; closing stays urllib's. OSError: already closed.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


@functools.cache
def _tls_context() -> Any:
    """The system's default TLS context, made once: loading the CA store costs ~20 ms."""
    import ssl

    return ssl.create_default_context()


#: The deadline of the call running on this thread (calls run concurrently, one per thread).
_CALL = threading.local()


@functools.cache
def _opener() -> Any:
    """One urllib opener whose connections take their socket timeout from, and are watched
    by, the calling thread's deadline (built on first use: urllib is imported only when a
    judge calls; building it per call would cost more than the rest of the call)."""
    import http.client
    import urllib.request

    class Watched(http.client.HTTPConnection):
        def connect(self) -> None:
            deadline: _Deadline = _CALL.deadline
            # Bounds each step of connecting (the TLS handshake included) by what is left...
            self.timeout = deadline.remaining()
            super().connect()
            # ...and from here the socket (the TLS one, wrapped last) is shut at the deadline.
            deadline.watch(self.sock)

    class WatchedTLS(Watched, http.client.HTTPSConnection):
        pass  # Watched.connect runs first and around HTTPSConnection.connect

    class HTTP(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(Watched, req)

    class HTTPS(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(WatchedTLS, req, context=_tls_context())

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any) -> None:
            # Following would send the Authorization header to wherever the reply points;
            # None lets the 3xx reach _post as an HTTPError, which refuses it.
            return None

    # Given a subclass of a default handler, build_opener leaves the default out.
    return urllib.request.build_opener(HTTP(), HTTPS(), NoRedirect())


def _attempt(
    endpoint: Endpoint,
    body: dict[str, Any],
    parse: Callable[[str], tuple[float, str]],
    stats: CallStats,
) -> Judgment:
    deadline = _CALL.deadline = _Deadline(endpoint.timeout_s)
    try:
        raw = _post(endpoint, body, stats, deadline)
    except Exception:
        if deadline.expired:  # whatever the shut-down socket raised: it was the deadline
            raise _Retryable(_late(endpoint)) from None
        raise
    finally:
        deadline.cancel()
        _CALL.deadline = None
    if deadline.expired:  # a reply cut short at the deadline is no reply
        raise _Retryable(_late(endpoint))
    return _read_reply(raw, parse)


def _late(endpoint: Endpoint) -> str:
    return f"no reply within timeout_s={endpoint.timeout_s:g}"


def _post(endpoint: Endpoint, body: dict[str, Any], stats: CallStats, deadline: _Deadline) -> bytes:
    import http.client
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    request = urllib.request.Request(
        endpoint.base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode("utf-8"),
        headers=headers,
        method="POST",
    )
    stats.requests += 1
    try:
        with _opener().open(request, timeout=deadline.remaining()) as response:
            raw: bytes = response.read(endpoint.max_reply_bytes + 1)
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            raise JudgeCallError(_redirected(endpoint, exc)) from None
        detail = _body_excerpt(exc)
        if exc.code in _RETRY_STATUSES:
            raise _Retryable(f"HTTP {exc.code}{detail}", _retry_after(exc)) from None
        raise JudgeCallError(endpoint.redact(f"HTTP {exc.code}{detail}")) from None
    except TimeoutError:
        raise _Retryable(_late(endpoint)) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise _Retryable(_late(endpoint)) from None
        raise _Retryable(f"cannot reach {endpoint.base_url}: {reason}") from None
    except (ConnectionError, OSError, http.client.HTTPException) as exc:
        raise _Retryable(f"connection failed: {type(exc).__name__}: {exc}") from None
    if len(raw) > endpoint.max_reply_bytes:
        raise _Retryable(
            f"the endpoint's reply is larger than {endpoint.max_reply_bytes:,} bytes, more than"
            " a judgment of max_tokens tokens can take"
        )
    return raw


def _redirected(endpoint: Endpoint, exc: Any) -> str:
    location = exc.headers.get("Location") if exc.headers is not None else None
    where = f" to {endpoint.redact(location)}" if location else ""
    return (
        f"HTTP {exc.code}: the endpoint redirects{where}; goldgate never follows a redirect"
        " (it would carry the API key to another address): set base_url to the address"
        " that answers"
    )


def _read_reply(raw: bytes, parse: Callable[[str], tuple[float, str]]) -> Judgment:
    try:
        document = json.loads(raw.decode("utf-8"))
        content = document["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError, RecursionError):
        # ValueError: bad JSON or UTF-8, or an integer of more than 4,300 digits;
        # RecursionError: arrays nested deeper than the parser's stack.
        raise _Retryable("the endpoint's reply is not a chat completion") from None
    if not isinstance(content, str):
        raise _Retryable("the chat completion has no text content")
    try:
        score, rationale = parse(content)
    except ValueError as exc:
        raise _Retryable(f"the judge's reply does not parse: {exc}") from None
    usage = document.get("usage") if isinstance(document, dict) else None
    return Judgment(
        score=score,
        rationale=rationale,
        prompt_tokens=_count(usage, "prompt_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
    )


def _count(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    if not isinstance(value, int) or isinstance(value, bool):
        return 0  # not reported: usage is optional, and some servers leave it out
    if not 0 <= value <= MAX_TOKEN_COUNT:
        shown = str(value) if abs(value) < 10**20 else f"a {len(str(abs(value)))}-digit number"
        raise _Retryable(
            f"the reply's usage.{key} is {shown}, not a token count (0 to {MAX_TOKEN_COUNT:,})"
        )
    return value


def _body_excerpt(exc: Any) -> str:
    try:
        text = exc.read(_MAX_ERROR_BYTES).decode("utf-8", "replace").strip()
    except Exception:  # a broken error body is no reason to lose the status
        return ""
    return f": {text}" if text else ""


def _retry_after(exc: Any) -> float | None:
    value = exc.headers.get("Retry-After") if exc.headers is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None
