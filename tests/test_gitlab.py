"""GitLab mode end to end: ``goldgate run --gitlab`` against a fake GitLab API on 127.0.0.1.

One note per merge request and configuration, updated in place and never someone else's;
the token only ever sent to CI_API_V4_URL's host and in no output; a note that cannot be
written is a warning that leaves the verdict alone; the JUnit and metrics artifacts parse.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.forge.rest import MAX_PAGES
from goldgate.forge.sticky import comment_marker
from goldgate.report.markdown import MARKER
from tests.fake_gitlab import FakeGitLab, fake_gitlab

TOKEN = "glpat-fake_gitlab_token_0123456789"
OTHER = "glpat-someone_else_token_987654321"
IID = 12
ME = (41, "project_7_bot")
XSD = Path(__file__).parent / "report" / "junit.xsd"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scaffolded project inside a GitLab merge-request pipeline (GitHub's variables unset)."""
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_ACTIONS", "GITLAB_CI", "CI_JOB_TOKEN", "GOLDGATE_COMMENT_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CI", "true")
    assert main(["init"]) == 0
    monkeypatch.setenv("CI_PROJECT_ID", "7")
    monkeypatch.setenv("CI_MERGE_REQUEST_PROJECT_ID", "7")
    monkeypatch.setenv("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "7")
    monkeypatch.setenv("CI_MERGE_REQUEST_IID", str(IID))
    monkeypatch.setenv("CI_MERGE_REQUEST_PROJECT_URL", "https://gitlab.example/acme/app")
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    monkeypatch.setenv("GOLDGATE_GITLAB_TOKEN", TOKEN)
    return tmp_path


def run(api: FakeGitLab, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    monkeypatch.setenv("CI_API_V4_URL", f"{api.url}/api/v4")
    return main(["run", "--gitlab", *extra])


def note(ident: int, user: tuple[int, str], body: str, **more: object) -> dict[str, object]:
    return {"id": ident, "author": {"id": user[0], "username": user[1]}, "body": body, **more}


def outputs(capsys: pytest.CaptureFixture[str], project: Path) -> str:
    out, err = capsys.readouterr()
    files = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in (project / "goldgate-report").iterdir()
        if p.is_file() and p.suffix != ".gz"
    )
    return out + err + files


def test_one_note_created_then_updated_never_someone_elses(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = comment_marker("goldgate.yaml")
    with fake_gitlab(users={TOKEN: ME, OTHER: (99, "mallory")}) as api:
        api.notes[IID] = [
            note(1, (99, "mallory"), f"{marker}\n{MARKER}\nfake verdict"),
            note(2, (5, "reviewer"), "looks good"),
            note(3, ME, "merged main into this branch", system=True),
        ]
        assert run(api, monkeypatch) == 0
        first = capsys.readouterr().out
        assert run(api, monkeypatch) == 0
        second = capsys.readouterr().out
    assert (
        "merge-request note created: https://gitlab.example/acme/app/-/merge_requests/12#note_"
        in first
    )
    assert "merge-request note updated" in second
    ours = [n for n in api.notes[IID] if n["author"]["id"] == ME[0] and not n.get("system")]
    assert len(ours) == 1 and ours[0]["body"].startswith(marker + "\n")
    assert "goldgate: pass" in ours[0]["body"].lower() or "PASS" in ours[0]["body"]
    assert api.notes[IID][0]["body"].endswith("fake verdict")  # mallory's note is untouched
    assert [c.method for c in api.calls if c.method in ("POST", "PUT")] == ["POST", "PUT"]
    # three notes then ours: pages of two, so the second run read page 2
    assert any("page=2" in c.path for c in api.calls)
    assert all(c.token == TOKEN for c in api.calls)
    assert TOKEN not in first + second


def test_gitlab_mode_is_on_by_itself_inside_gitlab_ci(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_CI", "true")
    with fake_gitlab(users={TOKEN: ME}) as api:
        monkeypatch.setenv("CI_API_V4_URL", f"{api.url}/api/v4")
        assert main(["run"]) == 0
    assert len(api.notes[IID]) == 1
    assert (project / "goldgate-report" / "metrics.txt").is_file()


def test_two_configurations_keep_two_notes(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_gitlab(users={TOKEN: ME}) as api:
        assert run(api, monkeypatch) == 0
        monkeypatch.setenv("GOLDGATE_COMMENT_KEY", "nightly")
        assert run(api, monkeypatch) == 0
        assert run(api, monkeypatch) == 0
    firsts = sorted(b.split("\n", 1)[0] for b in api.bodies(IID))
    assert firsts == sorted([comment_marker("goldgate.yaml"), comment_marker("nightly")])


@pytest.mark.parametrize(
    ("settings", "token", "why"),
    [
        ({}, "glpat-not_a_known_token_000", "HTTP 401"),
        ({"write_status": 403}, TOKEN, "HTTP 403"),
        ({"list_status": 404}, TOKEN, "HTTP 404"),
    ],
)
def test_a_note_that_cannot_be_written_is_a_warning_and_the_verdict_stands(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    settings: dict[str, int],
    token: str,
    why: str,
) -> None:
    # a gate the scores cannot meet: the run regresses, and must still exit 1
    config = project / "goldgate.yaml"
    config.write_text(
        config.read_text().replace("chrf: {min: 30.0}", "chrf: {min: 99.0}"), encoding="utf-8"
    )
    monkeypatch.setenv("GOLDGATE_GITLAB_TOKEN", token)
    with fake_gitlab(users={TOKEN: ME}, echo_token=True, **settings) as api:
        assert run(api, monkeypatch) == 1
    text = outputs(capsys, project)
    assert f"goldgate: warning: no merge-request note ({why}" in text
    assert "CI_JOB_TOKEN cannot write merge-request notes" in text
    assert "(PRIVATE-TOKEN: ***)" in text or why != "HTTP 401"
    assert token not in text
    assert (project / "goldgate-report" / "junit.xml").is_file()


def test_without_a_user_every_run_writes_a_new_note_and_edits_none(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token that may not read GET /user cannot tell its notes from anyone's."""
    with fake_gitlab(users={TOKEN: ME}, user_status=403) as api:
        assert run(api, monkeypatch) == 0
        assert run(api, monkeypatch) == 0
    assert [c.method for c in api.calls if c.method in ("POST", "PUT")] == ["POST", "POST"]


def test_a_refused_update_falls_back_to_a_new_note(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fake_gitlab(users={TOKEN: ME}, put_status=403) as api:
        assert run(api, monkeypatch) == 0
        assert run(api, monkeypatch) == 0
    assert [c.method for c in api.calls if c.method in ("POST", "PUT")] == ["POST", "PUT", "POST"]


@pytest.mark.parametrize("how", ["link", "redirect"])
def test_a_second_server_receives_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    with fake_gitlab(users={TOKEN: ME}) as elsewhere, fake_gitlab(users={TOKEN: ME}) as api:
        target = f"{elsewhere.url}/api/v4/projects/7/merge_requests/{IID}/notes?page=2"
        if how == "link":
            api.next_url = target
        else:
            api.redirect_to = target
        assert run(api, monkeypatch) == 0
    assert elsewhere.calls == []
    assert not [c for c in api.calls if c.method in ("POST", "PUT")]
    text = outputs(capsys, project)
    assert "refusing to follow" in text and TOKEN not in text


def test_endless_pages_are_a_bounded_warning(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_gitlab(users={TOKEN: ME}, endless_pages=True) as api:
        assert run(api, monkeypatch) == 0
    assert len([c for c in api.calls if "/notes" in c.path]) == MAX_PAGES
    assert "the API kept paginating" in capsys.readouterr().err


def test_a_forks_merge_request_without_a_token_falls_back_to_log_and_artifacts(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GOLDGATE_GITLAB_TOKEN")
    monkeypatch.setenv("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "8")
    with fake_gitlab(users={TOKEN: ME}) as api:
        assert run(api, monkeypatch) == 0
    assert api.calls == []
    out, err = capsys.readouterr()
    assert "goldgate: PASS" in out  # the report is in the job log
    assert "a fork's merge-request pipeline gets none of the project's variables" in err
    assert {"junit.xml", "metrics.txt"} <= {p.name for p in (project / "goldgate-report").iterdir()}


def test_a_branch_pipeline_writes_the_artifacts_and_calls_no_api(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CI_MERGE_REQUEST_IID")
    with fake_gitlab(users={TOKEN: ME}) as api:
        assert run(api, monkeypatch) == 0
    assert api.calls == []
    out, err = capsys.readouterr()
    assert "GitLab report artifact" in out and "note" not in err


def test_the_artifacts_parse(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    parser = pytest.importorskip("prometheus_client.openmetrics.parser")
    with fake_gitlab(users={TOKEN: ME}) as api:
        assert main(["bless"]) == 0
        assert run(api, monkeypatch) == 0
    report = project / "goldgate-report"
    xmlschema.XMLSchema(str(XSD)).validate(str(report / "junit.xml"))
    properties = {
        p.get("name"): p.get("value") for p in ET.parse(report / "junit.xml").iter("property")
    }
    assert properties["metric.exact_match.score"] == "80.00"
    assert properties["metric.exact_match.baseline"] == "80.00"
    assert properties["metric.exact_match.delta"] == "0.00"
    assert "metric.exact_match.interval_low" in properties
    families = {
        f.name: f
        for f in parser.text_string_to_metric_families(
            (report / "metrics.txt").read_text(encoding="utf-8")
        )
    }
    assert {"goldgate_score", "goldgate_passed", "goldgate_checks_failed"} <= set(families)
    scores = {
        (s.labels["suite"], s.labels.get("slice"), s.labels["metric"]): s.value
        for s in families["goldgate_score"].samples
    }
    assert scores[("qa", None, "exact_match")] == 80.0
    assert families["goldgate_passed"].samples[0].value == 1.0
