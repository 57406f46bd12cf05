"""GitHub mode under attack, through ``goldgate report --github`` and ``run --github``.

A fake REST API on 127.0.0.1 plays a hostile or broken GitHub: comments by other users
carrying goldgate's marker, error bodies echoing the token, endless or off-host pagination,
answers that are not JSON; and the runner's environment points at things that are not files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.forge.rest import MAX_PAGES
from goldgate.github.pull_request import ACTIONS_BOT, comment_marker
from goldgate.report.markdown import MARKER as COMMENT_MARKER
from tests.fake_github import FakeGitHub, fake_github
from tests.test_github import regressed_result

TOKEN = "ghs_hardening_token_0123456789abcdef"
PAT = "ghp_personal_token_0123456789abcdef"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A saved regressed result and a GitHub Actions environment for pull request 7."""
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_TOKEN", "GOLDGATE_GITHUB_TOKEN", "GOLDGATE_PR_NUMBER", "CI"):
        monkeypatch.delenv(name, raising=False)
    result = regressed_result()
    result.config = "goldgate.yaml"
    (tmp_path / "result.json").write_text(result.to_json(), encoding="utf-8")
    (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": 7}}))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/app")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "event.json"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output.txt"))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    yield tmp_path


def publish(api: FakeGitHub, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    monkeypatch.setenv("GITHUB_API_URL", api.url)
    return main(["report", "result.json", "--github", "-o", "report.md", *extra])


def comment(ident: int, login: str, body: str) -> dict[str, object]:
    return {"id": ident, "user": {"login": login}, "body": body, "html_url": f"c/{ident}"}


# -- 2. the sticky comment is ours alone --------------------------------------------------------


def test_a_comment_by_someone_else_with_the_marker_is_never_edited(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bait = f"{comment_marker('goldgate.yaml')}\n{COMMENT_MARKER}\nclick here"
    with fake_github() as api:
        api.comments[7] = [comment(1, "mallory", bait), comment(2, "mallory", COMMENT_MARKER)]
        assert publish(api, monkeypatch) == 0
    assert [c.method for c in api.calls if c.method != "GET"] == ["POST"]
    assert api.comments[7][0]["body"] == bait and api.comments[7][1]["body"] == COMMENT_MARKER
    ours = api.comments[7][2]
    assert ours["user"] == {"login": ACTIONS_BOT}
    assert ours["body"].startswith(comment_marker("goldgate.yaml") + "\n")
    assert "pull-request comment created" in capsys.readouterr().out


def test_a_refused_update_falls_back_to_a_new_comment(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = f"{comment_marker('goldgate.yaml')}\nold report"
    with fake_github(patch_status=403) as api:
        api.comments[7] = [comment(1, ACTIONS_BOT, mine)]
        assert publish(api, monkeypatch) == 0
    assert [c.method for c in api.calls if c.method != "GET"] == ["PATCH", "POST"]
    assert len(api.comments[7]) == 2 and "goldgate" in api.comments[7][1]["body"]


def test_a_personal_token_updates_only_its_user_s_comment(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", PAT)
    marker = comment_marker("goldgate.yaml")
    with fake_github(users={PAT: "alice"}) as api:
        api.comments[7] = [comment(1, ACTIONS_BOT, f"{marker}\nbot"), comment(2, "alice", marker)]
        assert publish(api, monkeypatch) == 0
    (patch,) = [c for c in api.calls if c.method == "PATCH"]
    assert patch.path.endswith("/comments/2")
    assert api.comments[7][0]["body"] == f"{marker}\nbot"


def test_two_configurations_keep_two_comments(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fake_github() as api:
        for key in ("models/a.yaml", "models/b.yaml", "models/a.yaml"):
            monkeypatch.setenv("GOLDGATE_COMMENT_KEY", key)
            assert publish(api, monkeypatch) == 0
    assert [c.method for c in api.calls if c.method != "GET"] == ["POST", "POST", "PATCH"]
    firsts = [c["body"].split("\n", 1)[0] for c in api.comments[7]]
    assert firsts == [comment_marker("models/a.yaml"), comment_marker("models/b.yaml")]


def test_a_key_cannot_close_the_hidden_marker() -> None:
    marker = comment_marker("x --> <img src=y>\n-->")
    assert marker.count("-->") == 1 and marker.endswith(" -->") and "\n" not in marker


# -- 3. the token never shows -------------------------------------------------------------------


@pytest.mark.parametrize("status", [403, 500])
def test_an_error_body_echoing_the_token_is_redacted_everywhere(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    status: int,
) -> None:
    with fake_github(write_status=status, echo_authorization=True) as api:
        assert publish(api, monkeypatch) == 0
    out, err = capsys.readouterr()
    summary = (project / "summary.md").read_text(encoding="utf-8")
    assert "request had Authorization: Bearer ***" in err + summary
    # goldgate's first line masks the token for the runner; nothing else carries it.
    assert out.startswith(f"::add-mask::{TOKEN}\n")
    assert TOKEN not in out.removeprefix(f"::add-mask::{TOKEN}\n") + err + summary


def test_no_mask_line_outside_github_actions(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Elsewhere (``--github`` on a laptop, another CI) the mask line would print the token."""
    monkeypatch.delenv("GITHUB_ACTIONS")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN + "-other")
    with fake_github() as api:
        assert publish(api, monkeypatch) == 0
    out, err = capsys.readouterr()
    assert TOKEN not in out + err


# -- 5. pagination that never ends, or leaves the host ------------------------------------------


def test_endless_pagination_is_a_warning_not_a_hang(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_github(endless_pages=True) as api:
        assert publish(api, monkeypatch) == 0
    gets = [c for c in api.calls if c.method == "GET" and "/comments" in c.path]
    assert len(gets) == MAX_PAGES
    assert not [c for c in api.calls if c.method in ("POST", "PATCH")]
    out = capsys.readouterr().out
    assert "::warning title=goldgate::could not comment: the API kept paginating" in out


def test_a_page_linking_to_itself_stops_at_once(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_github() as api:
        api.next_url = f"{api.url}/repos/acme/app/issues/7/comments?per_page=100"
        assert publish(api, monkeypatch) == 0
    assert len([c for c in api.calls if "/comments" in c.path]) == 1
    assert "link back to one already read" in capsys.readouterr().out


def test_the_token_never_follows_a_link_to_another_host(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_github() as elsewhere, fake_github() as api:
        # Same address, another port: another host as far as the token is concerned.
        api.next_url = f"{elsewhere.url}/repos/acme/app/issues/7/comments?page=2"
        assert publish(api, monkeypatch) == 0
    assert elsewhere.calls == []
    assert api.calls and all(c.authorization == f"Bearer {TOKEN}" for c in api.calls)
    assert "refusing to follow a link to another host" in capsys.readouterr().out


# -- item 11: a broken API or runner environment is a clear message, not a traceback ------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [(b"<html>rate limited</html>", "not JSON"), (b'{"message": "x"}', "not a list")],
)
def test_an_answer_that_is_not_a_comment_list_is_a_warning(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    raw: bytes,
    message: str,
) -> None:
    with fake_github(raw_comments=raw) as api:
        assert publish(api, monkeypatch) == 0
    out = capsys.readouterr().out
    assert "::warning title=goldgate::could not comment:" in out and message in out


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"[1, 2]", "not a JSON object"),
        (b'{"pull_request": ', "not valid JSON"),
        (b"\xff\xfe{}", "not valid JSON"),
        (b'{"pull_request": {"number": true}}', "not an integer"),
        (b'{"pull_request": "7"}', "this run is not for a pull request"),
    ],
)
def test_a_malformed_event_payload_is_a_warning(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    payload: bytes,
    message: str,
) -> None:
    (project / "event.json").write_bytes(payload)
    with fake_github() as api:
        assert publish(api, monkeypatch) == 0
    out, err = capsys.readouterr()
    assert message in out + err
    assert not [c for c in api.calls if c.method in ("POST", "PATCH")]


def test_a_huge_pull_request_number_override_is_ignored(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOLDGATE_PR_NUMBER", "9" * 5000)
    with fake_github() as api:
        assert publish(api, monkeypatch) == 0
    assert [c.path for c in api.calls if c.method == "POST"] == [
        "/repos/acme/app/issues/7/comments"
    ]


@pytest.mark.parametrize("name", ["GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"])
@pytest.mark.parametrize("where", ["missing/dir/file", "."])
def test_runner_files_that_cannot_be_appended_to_are_a_usage_error(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    where: str,
) -> None:
    monkeypatch.setenv(name, str(project / where))
    with fake_github() as api:
        assert publish(api, monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"goldgate: error: {name}=") and "Traceback" not in err
    assert "does not exist" in err or "is a directory" in err
    assert api.calls == [], "nothing is published before the environment is known to be sound"


def test_an_api_url_that_is_not_a_url_is_a_warning(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_API_URL", "not a url")
    assert main(["report", "result.json", "--github", "-o", "report.md"]) == 0
    out = capsys.readouterr().out
    assert "GITHUB_API_URL=not a url is not an http(s) URL" in out


def test_pagination_stops_when_its_time_is_up(project: Path) -> None:
    """The time budget, with a clock that jumps a minute per look (no real waiting)."""
    from goldgate.forge.rest import MAX_SEARCH_S, ApiError
    from goldgate.github.pull_request import _api

    ticks = iter(range(0, 10_000, 60))
    with fake_github(endless_pages=True) as api:
        client = _api(api.url, TOKEN)
        with pytest.raises(ApiError, match="kept paginating"):
            list(
                client.pages("/repos/acme/app/issues/7/comments", clock=lambda: float(next(ticks)))
            )
    assert len(api.calls) == int(MAX_SEARCH_S // 60)
