"""A fake GitLab REST API (v4) on 127.0.0.1 that records every call: merge-request notes and
the user, with ways to misbehave (refusals, endless or off-host pages, redirects)."""

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
    token: str | None


@dataclass
class FakeGitLab:
    """State of the fake: notes per merge request iid, recorded calls, misbehaviours."""

    url: str = ""
    calls: list[Call] = field(default_factory=list)
    notes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    #: token -> (user id, username); any other token is refused with 401
    users: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: status of GET /user for a known token (200, or 403/404 for a token that may not)
    user_status: int = 200
    #: status for writes (POST/PUT), e.g. 403 for a token without the api scope
    write_status: int = 200
    #: status for PUT alone (None: write_status)
    put_status: int | None = None
    #: status of every notes list request (404: no such project or merge request)
    list_status: int = 200
    page_size: int = 2
    next_id: int = 5000
    endless_pages: bool = False
    #: the Link header's next URL, whatever the page
    next_url: str | None = None
    #: answer the notes list with a redirect to this URL
    redirect_to: str | None = None
    #: error bodies quote the request's token, as a broken proxy might
    echo_token: bool = False

    def bodies(self, iid: int) -> list[str]:
        return [n["body"] for n in self.notes.get(iid, [])]


def _handler(state: FakeGitLab) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def _token(self) -> str | None:
            return self.headers.get("PRIVATE-TOKEN")

        def _refuse(self, status: int) -> None:
            message = {401: "401 Unauthorized", 403: "403 Forbidden", 404: "404 Not Found"}.get(
                status, f"{status} Error"
            )
            if state.echo_token:
                message += f" (PRIVATE-TOKEN: {self._token()})"
            self._send(status, {"message": message})

        def _record(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            state.calls.append(Call(self.command, self.path, body, self._token()))
            return body

        def _user(self) -> tuple[int, str] | None:
            token = self._token()
            return state.users.get(token) if token else None

        def _iid(self) -> int | None:
            # /api/v4/projects/ID/merge_requests/IID/notes[/NOTE]
            parts = self.path.split("?")[0].strip("/").split("/")
            if len(parts) >= 7 and parts[4] == "merge_requests" and parts[6] == "notes":
                return int(parts[5])
            return None

        def do_GET(self) -> None:
            self._record()
            path, _, query = self.path.partition("?")
            user = self._user()
            if user is None:
                self._refuse(401)
                return
            if path == "/api/v4/user":
                if state.user_status != 200:
                    self._refuse(state.user_status)
                else:
                    self._send(200, {"id": user[0], "username": user[1]})
                return
            iid = self._iid()
            if iid is None or state.list_status != 200:
                self._refuse(404 if iid is None else state.list_status)
                return
            if state.redirect_to is not None:
                self.send_response(302)
                self.send_header("Location", state.redirect_to)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            page = 1
            for item in query.split("&"):
                if item.startswith("page="):
                    page = int(item[5:])
            items = state.notes.get(iid, [])
            start = (page - 1) * state.page_size
            headers = {}
            if state.next_url is not None:
                headers["Link"] = f'<{state.next_url}>; rel="next"'
            elif state.endless_pages or start + state.page_size < len(items):
                headers["Link"] = f'<{state.url}{path}?per_page=100&page={page + 1}>; rel="next"'
            self._send(200, items[start : start + state.page_size], headers)

        def do_POST(self) -> None:
            body = self._record()
            user, iid = self._user(), self._iid()
            if user is None:
                self._refuse(401)
                return
            if state.write_status != 200 or iid is None:
                self._refuse(state.write_status if iid is not None else 404)
                return
            state.next_id += 1
            note = {
                "id": state.next_id,
                "body": body["body"],
                "system": False,
                "author": {"id": user[0], "username": user[1]},
            }
            state.notes.setdefault(iid, []).append(note)
            self._send(201, note)

        def do_PUT(self) -> None:
            body = self._record()
            user, iid = self._user(), self._iid()
            status = state.write_status if state.put_status is None else state.put_status
            if user is None:
                self._refuse(401)
                return
            if status != 200 or iid is None:
                self._refuse(status if iid is not None else 404)
                return
            note_id = int(self.path.split("?")[0].rstrip("/").split("/")[-1])
            for note in state.notes.get(iid, []):
                if note["id"] == note_id:
                    if note["author"]["id"] != user[0]:
                        self._refuse(403)
                        return
                    note["body"] = body["body"]
                    self._send(200, note)
                    return
            self._refuse(404)

    return Handler


@contextmanager
def fake_gitlab(**settings: Any) -> Iterator[FakeGitLab]:
    """Serve a FakeGitLab on an ephemeral loopback port for the duration of the block."""
    state = FakeGitLab(**settings)
    with serving(state, _handler(state)):
        yield state
