"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 that scripts its replies.

Tests queue replies (valid, malformed, slow, an HTTP status) in ``script``; when the queue
is empty, ``grade(candidate)`` decides a valid reply from the answer being graded. Every
request's headers and body are recorded.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PROMPT_TOKENS = 120
COMPLETION_TOKENS = 30


@dataclass
class Reply:
    """One scripted reply: ``content`` as the message text, or an HTTP ``status``."""

    content: str | None = None
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    #: send the response a few bytes at a time, this many seconds apart: from its first byte
    #: ("status") or, the headers sent at once, only its body ("body"); every pause is far
    #: shorter than a test's timeout_s, the whole far longer
    trickle: str | None = None
    trickle_pause_s: float = 0.05


def valid(score: float, rationale: str = "ok") -> Reply:
    return Reply(content=json.dumps({"score": score, "rationale": rationale}))


@dataclass
class Seen:
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def candidate(self) -> str:
        user = self.body["messages"][1]["content"]
        match = re.search(r"## Answer to grade\n(.*?)(?:\n\n## |\Z)", user, re.S)
        return match.group(1) if match else ""


class FakeJudge:
    """The server's state: the script, the grading rule and what it was sent."""

    def __init__(self, grade: Callable[[Seen], Reply] | None = None) -> None:
        self.script: deque[Reply] = deque()
        self.grade = grade or (lambda seen: valid(3, f"graded {seen.candidate[:20]}"))
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        self.url = ""
        #: a trickled reply ended: the client hung up before its end, or it was all sent
        self.hung_up = threading.Event()
        self.trickled_to_the_end = threading.Event()

    def trickle_outcome(self) -> str:
        """ "hung up" or "sent", once a trickled reply has ended (waits up to 30 s)."""
        for _ in range(300):
            if self.hung_up.is_set():
                return "hung up"
            if self.trickled_to_the_end.is_set():
                return "sent"
            time.sleep(0.1)
        return "still trickling"

    def next_reply(self, seen: Seen) -> Reply:
        with self.lock:
            self.requests.append(seen)
            if self.script:
                return self.script.popleft()
        return self.grade(seen)


def _handler(state: FakeJudge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": "not found"}', {})
                return
            reply = state.next_reply(Seen(dict(self.headers.items()), body))
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.status != 200:
                self._send(reply.status, reply.body.encode(), reply.headers)
                return
            document = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": PROMPT_TOKENS,
                    "completion_tokens": COMPLETION_TOKENS,
                    "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
                },
            }
            self._send(200, json.dumps(document).encode(), reply.headers, reply)

        def _send(
            self, status: int, data: bytes, headers: dict[str, str], reply: Reply | None = None
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                if reply is None or reply.trickle is None:
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if reply.trickle == "body":
                    self.end_headers()
                    pending = data
                else:  # the status line and headers are still buffered: trickle them too
                    pending = b"".join([*self._headers_buffer, b"\r\n", data])  # type: ignore[attr-defined]
                    self._headers_buffer = []  # type: ignore[attr-defined]
                try:
                    for start in range(0, len(pending), 8):
                        self.wfile.write(pending[start : start + 8])
                        self.wfile.flush()
                        time.sleep(reply.trickle_pause_s)
                except (OSError, ssl.SSLError):
                    state.hung_up.set()
                    raise
                state.trickled_to_the_end.set()
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass  # the client gave up (a timeout test)

    return Handler


@contextmanager
def fake_judge(
    grade: Callable[[Seen], Reply] | None = None, *, tls: tuple[Path, Path] | None = None
) -> Iterator[FakeJudge]:
    """Serve a :class:`FakeJudge` on an ephemeral port; ``state.url`` is its base_url.

    ``tls`` (a certificate and its key) serves https instead of http.
    """
    state = FakeJudge(grade)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    scheme = "http"
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tls[0]), str(tls[1]))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"{scheme}://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
