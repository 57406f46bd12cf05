"""The judge against a hostile endpoint and a hostile cache: the key stays home, reads are
bounded, hostile numbers are damage (exit 2), never a crash (exit 3)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from goldgate.cli.main import main
from goldgate.errors import GoldgateError
from tests.metrics.fake_openai import Reply, fake_judge, valid
from tests.metrics.test_judge import KEY, by_answer, judge, score


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


# -- the judge cache: validated on read, bounded, never written through a link ---------------


def cached_rows(tmp_path: Any) -> tuple[Any, list[dict[str, Any]]]:
    """The judge cache file after one run of the three examples, and its rows."""
    (path,) = (tmp_path / ".goldgate" / "judge").iterdir()
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    return path, rows


def write_rows(path: Any, rows: list[dict[str, Any] | str]) -> None:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("prompt_tokens", "1e400", "prompt_tokens Infinity is not a token count"),
        ("prompt_tokens", str(10**400), "prompt_tokens a 401-digit number is not a token count"),
        ("completion_tokens", "-3", "completion_tokens -3 is not a token count"),
        ("completion_tokens", "true", "completion_tokens true is not a token count"),
        ("score", "1e9", "score 1000000000.0 is off the judge's scale 1-5"),
        ("score", "NaN", "score NaN is off the judge's scale 1-5"),
        ("score", '"5"', 'score "5" is not a number'),
        ("rationale", "[1]", "its rationale is not text"),
    ],
)
def test_a_damaged_cache_row_is_set_aside_and_asked_again(
    tmp_path: Any, caplog: pytest.LogCaptureFixture, field: str, value: str, reason: str
) -> None:
    with fake_judge(by_answer) as server:
        expected = score(judge(server, tmp_path)).per_example()
        path, rows = cached_rows(tmp_path)
        text = [json.dumps(r) for r in rows]
        text[0] = text[0].replace(f'"{field}": {json.dumps(rows[0][field])}', f'"{field}": {value}')
        assert text[0] != json.dumps(rows[0])
        write_rows(path, text)
        again = judge(server, tmp_path)
        with caplog.at_level("WARNING"):
            assert score(again).per_example() == expected
        assert again.cache_hits == 2 and len(server.requests) == 4  # the damaged one re-asked
        warning = caplog.text
        assert str(path) in warning and rows[0]["key"] in warning and reason in warning
        # The judgment asked again follows the damaged row: the next run is quiet, all cached.
        caplog.clear()
        third = judge(server, tmp_path)
        with caplog.at_level("WARNING"):
            assert score(third).per_example() == expected
        assert third.cache_hits == 3 and "damaged" not in caplog.text


def cache_path(tmp_path: Any, url: str) -> Any:
    stem = hashlib.sha256(f"{url}\njudge-1".encode()).hexdigest()[:16]
    return tmp_path / ".goldgate" / "judge" / f"{stem}.jsonl"


def test_the_cache_is_never_written_through_a_symbolic_link(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    with fake_judge(by_answer) as server:
        path = cache_path(tmp_path, server.url)
        path.parent.mkdir(parents=True)
        path.symlink_to(victim)
        with caplog.at_level("WARNING"):
            assert score(judge(server, tmp_path)).per_example() == [100.0, 0.0, 100.0]
    assert victim.read_text() == "precious\n"
    assert caplog.text.count("cannot write the judge cache") == 1  # once, not per judgment
    assert "is a symbolic link; goldgate does not write through it" in caplog.text


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_cache_that_is_not_a_regular_file_is_an_error_naming_it(tmp_path: Any, kind: str) -> None:
    with fake_judge(by_answer) as server:
        path = cache_path(tmp_path, server.url)
        path.parent.mkdir(parents=True)
        if kind == "fifo":
            os.mkfifo(path)  # unbounded, reading it waited for a writer forever
        else:
            path.symlink_to("/dev/zero")
        with pytest.raises(GoldgateError) as raised:
            score(judge(server, tmp_path))
        assert server.requests == []
    expected = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert str(raised.value) == (
        f"{path}: the llm_judge cache is {expected}; goldgate reads only regular files"
    )


def test_a_cache_row_longer_than_its_reply_could_make_it_is_set_aside(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with fake_judge(by_answer) as server:
        expected = score(judge(server, tmp_path, max_tokens=16)).per_example()
        path, rows = cached_rows(tmp_path)
        rows[0]["rationale"] = "x" * (7 << 20)  # a reply of max_tokens=16 holds ~1 MiB at most
        # A row no judgment wanted is skipped unparsed, however deep or long.
        write_rows(path, ['{"key": "' + "0" * 64 + '", "x": ' + "[" * 100_000, *rows])
        again = judge(server, tmp_path, max_tokens=16)
        with caplog.at_level("WARNING"):
            assert score(again).per_example() == expected
        assert again.cache_hits == 2
    assert f"{rows[0]['key']} is damaged (a row longer than 6,317,056 bytes)" in caplog.text


@pytest.mark.parametrize("where", ["reply", "cache"])
def test_prompt_tokens_of_10_to_the_400_is_never_exit_3(
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    where: str,
) -> None:
    """Through `goldgate score`: a damaged reply is exit 2; a damaged cached row is asked again."""
    monkeypatch.setenv("JUDGE_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data.jsonl"
    row = {"candidate": "Paris", "references": ["Paris"], "input": "Capital of France?"}
    data.write_text(json.dumps(row) + "\n")

    def spec(url: str) -> str:
        return f"llm_judge:base_url={url},model=judge-1,api_key_env=JUDGE_KEY,rubric=Be fair."

    if where == "reply":
        with raw_endpoint(usage_reply(10**400)) as url:
            code = main(["score", str(data), "--metric", spec(url) + ",max_retries=0"])
        err = capsys.readouterr().err
        assert code == 2 and "usage.prompt_tokens is a 401-digit number" in err
        return
    with fake_judge(by_answer) as server:
        assert main(["score", str(data), "--metric", spec(server.url)]) == 0
        (path,) = (tmp_path / ".goldgate" / "judge").iterdir()
        path.write_text(
            path.read_text().replace('"prompt_tokens": 120', f'"prompt_tokens": {10**400}')
        )
        capsys.readouterr()
        with caplog.at_level("WARNING"):
            code = main(["score", str(data), "--metric", spec(server.url), "--json"])
        err = capsys.readouterr().err
    assert code == 0, err
    assert "is damaged (prompt_tokens a 401-digit number" in caplog.text
    assert len(server.requests) == 2
