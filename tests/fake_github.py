"""A fake GitHub REST API on 127.0.0.1 that records every call (issue comments and the user)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_http import JsonHandler, serving


@dataclass
class Call:
    method: str
    path: str
    body: Any
    authorization: str | None


@dataclass
class FakeGitHub:
    """State of the fake: comments per issue, recorded calls, and how to misbehave."""

    url: str = ""
    calls: list[Call] = field(default_factory=list)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: status code for writes (POST/PATCH); 403 imitates a fork's read-only token
    write_status: int = 200
    page_size: int = 2
    next_id: int = 1000
    #: token -> login of a personal access token; any other token is the workflow's
    #: GITHUB_TOKEN, which cannot read GET /user and comments as github-actions[bot]
    users: dict[str, str] = field(default_factory=dict)
    #: status code for PATCH alone (None: write_status), e.g. 403 for another user's comment
    patch_status: int | None = None
    #: error bodies quote the request's Authorization header, as some proxies do
    echo_authorization: bool = False
    #: every comment page links to a next one, forever
    endless_pages: bool = False
    #: the Link header's next URL, whatever the page (another host, say)
    next_url: str | None = None
    #: raw bytes served for the comment list instead of JSON (a broken proxy)
    raw_comments: bytes | None = None
    #: pull request number -> its head commit (GET /repos/OWNER/REPO/pulls/N)
    heads: dict[int, str] = field(default_factory=dict)

    def comment_bodies(self, issue: int) -> list[str]:
        return [c["body"] for c in self.comments.get(issue, [])]


def _handler(state: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def _login(self) -> str:
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            return state.users.get(token, "github-actions[bot]")

        def _refuse(self, status: int) -> None:
            message = "Resource not accessible by integration"
            if state.echo_authorization:
                message += f" (request had Authorization: {self.headers.get('Authorization')})"
            self._send(status, {"message": message})

        def _record(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            state.calls.append(
                Call(self.command, self.path, body, self.headers.get("Authorization"))
            )
            return body

        def do_GET(self) -> None:
            self._record()
            path, _, query = self.path.partition("?")
            parts = path.strip("/").split("/")
            if path == "/user":
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                if token in state.users:
                    self._send(200, {"login": state.users[token]})
                else:
                    self._refuse(403)
                return
            if len(parts) == 5 and parts[3] == "pulls" and int(parts[4]) in state.heads:
                self._send(
                    200, {"number": int(parts[4]), "head": {"sha": state.heads[int(parts[4])]}}
                )
                return
            # /repos/OWNER/REPO/issues/N/comments
            if len(parts) == 6 and parts[3] == "issues" and parts[5] == "comments":
                issue = int(parts[4])
                page = 1
                for item in query.split("&"):
                    if item.startswith("page="):
                        page = int(item[5:])
                if state.raw_comments is not None:
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(state.raw_comments)))
                    self.end_headers()
                    self.wfile.write(state.raw_comments)
                    return
                items = state.comments.get(issue, [])
                start = (page - 1) * state.page_size
                chunk = items[start : start + state.page_size]
                headers = {}
                if state.next_url is not None:
                    headers["Link"] = f'<{state.next_url}>; rel="next"'
                elif state.endless_pages or start + state.page_size < len(items):
                    headers["Link"] = (
                        f'<{state.url}{path}?per_page=100&page={page + 1}>; rel="next"'
                    )
                self._send(200, chunk, headers)
                return
            self._send(404, {"message": "Not Found"})

        def do_POST(self) -> None:
            body = self._record()
            parts = self.path.strip("/").split("?")[0].split("/")
            if state.write_status != 200:
                self._refuse(state.write_status)
                return
            issue = int(parts[4])
            state.next_id += 1
            comment = {
                "id": state.next_id,
                "body": body["body"],
                "html_url": f"c/{state.next_id}",
                "user": {"login": self._login()},
            }
            state.comments.setdefault(issue, []).append(comment)
            self._send(201, comment)

        def do_PATCH(self) -> None:
            body = self._record()
            status = state.write_status if state.patch_status is None else state.patch_status
            if status != 200:
                self._refuse(status)
                return
            comment_id = int(self.path.strip("/").split("/")[-1])
            for comments in state.comments.values():
                for comment in comments:
                    if comment["id"] == comment_id:
                        comment["body"] = body["body"]
                        self._send(200, comment)
                        return
            self._send(404, {"message": "Not Found"})

    return Handler


@contextmanager
def fake_github(**settings: Any) -> Iterator[FakeGitHub]:
    """Serve a FakeGitHub on an ephemeral loopback port for the duration of the block."""
    state = FakeGitHub(**settings)
    with serving(state, _handler(state)):
        yield state
