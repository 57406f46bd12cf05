"""The judge against a hostile endpoint and a hostile cache: the key stays home, reads are
bounded, hostile numbers are damage (exit 2), never a crash (exit 3)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from goldgate.errors import GoldgateError
from tests.metrics.fake_openai import Reply, fake_judge, valid
from tests.metrics.test_judge import KEY, judge, score


class Recorder:
    """A second server on 127.0.0.1 that answers anything and records every request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.url = ""


@contextmanager
def recorder() -> Iterator[Recorder]:
    state = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _any(self) -> None:
            state.requests.append((self.command, dict(self.headers.items())))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_PUT = _any

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_refused_and_the_other_host_receives_nothing(
    tmp_path: Any, status: int
) -> None:
    with recorder() as other, fake_judge() as server:
        target = f"{other.url}/latest/meta-data/v1/chat/completions"
        server.grade = lambda seen: Reply(status=status, headers={"Location": target})
        metric = judge(server, tmp_path, concurrency=1)
        with pytest.raises(GoldgateError) as raised:
            score(metric)
        assert other.requests == []  # neither the key nor anything else went there
        assert metric.calls.retries == 0  # refused at once, not retried
    message = str(raised.value)
    assert message.startswith("llm_judge: example 'a': ")
    assert f"HTTP {status}: the endpoint redirects to {target}" in message
    assert "never follows a redirect" in message and KEY not in message


def test_a_reply_past_what_max_tokens_can_take_is_not_read_whole(tmp_path: Any) -> None:
    # max_tokens=16: a reply may hold about 1 MiB and 4 KiB; this one holds 3 MiB.
    with fake_judge() as server:
        server.grade = lambda seen: valid(3, "x" * (3 << 20))
        metric = judge(server, tmp_path, max_tokens=16, max_retries=1)
        with pytest.raises(GoldgateError, match=r"larger than 1,052,672 bytes.*2 attempts"):
            score(metric)


@contextmanager
def endless(status: int) -> Iterator[str]:
    """A server answering ``status`` with a body that never ends (until the client hangs up)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            chunk = b"0" * (64 << 10)
            stop = time.monotonic() + 30  # ~13 MB/s for 30 s at most, should the client read on
            try:
                while time.monotonic() < stop:
                    self.wfile.write(chunk)
                    time.sleep(0.005)
            except OSError:
                pass  # the client hung up: what a bounded read does

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "message"),
    [(200, "larger than"), (400, "HTTP 400: 0000"), (500, "HTTP 500: 0000")],
)
def test_an_endless_body_is_cut_short_not_read_until_the_deadline(
    tmp_path: Any, status: int, message: str
) -> None:
    with endless(status) as url, fake_judge() as server:
        server.url = url
        metric = judge(server, tmp_path, timeout_s=5, max_retries=0, concurrency=1)
        with pytest.raises(GoldgateError) as raised:
            score(metric)
    # Unbounded, the body was read until timeout_s cut it: "no reply within timeout_s=5".
    assert message in str(raised.value)


def usage_reply(prompt_tokens: Any) -> bytes:
    document = {
        "choices": [{"message": {"content": json.dumps({"score": 4, "rationale": "fine"})}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 3},
    }
    return json.dumps(document).encode()


@contextmanager
def raw_endpoint(body: bytes) -> Iterator[str]:
    """A server answering every POST with 200 and exactly ``body``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (usage_reply(10**400), "usage.prompt_tokens is a 401-digit number, not a token count"),
        (usage_reply(-5), "usage.prompt_tokens is -5, not a token count"),
        (usage_reply(10**12), "usage.prompt_tokens is 1000000000000, not a token count"),
        (b"[" * 200_000, "not a chat completion"),  # deeper than the parser's stack
        (b'{"choices": [{"message": {"content": "' + b"[" * 200_000 + b'"}}]}', "not a JSON"),
    ],
    ids=["10**400", "negative", "10**12", "deep-reply", "deep-content"],
)
def test_hostile_numbers_in_a_reply_are_damage_not_a_crash(
    tmp_path: Any, body: bytes, message: str
) -> None:
    with raw_endpoint(body) as url, fake_judge() as server:
        server.url = url
        metric = judge(server, tmp_path, max_retries=1)
        with pytest.raises(GoldgateError) as raised:
            score(metric)
    assert message in str(raised.value) and "after 2 attempts" in str(raised.value)


def test_a_sane_usage_is_still_counted(tmp_path: Any) -> None:
    with raw_endpoint(usage_reply(10**9)) as url, fake_judge() as server:
        server.url = url
        result = score(judge(server, tmp_path))
    assert result.corpus_score().components["prompt_tokens"] == 3 * 10**9
