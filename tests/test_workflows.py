"""Everyday workflows end to end, through the installed command in a temporary git repository.

A pull request that adds and edits golden examples is gated on the shared examples and the
change is reported (exit 0 or 1 by the rules, never 2); removals are flagged and capped.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_end_to_end import Project


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Project:
    """A project on branch main with a committed, blessed baseline."""
    project = Project(tmp_path)
    assert project.goldgate("init").returncode == 0
    (tmp_path / ".gitignore").write_text("goldgate-report/\n.goldgate/\n")
    git(tmp_path, "init", "-q", "-b", "main")
    blessed = project.goldgate("bless")
    assert blessed.returncode == 0, blessed.stdout + blessed.stderr
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "goldens and baseline")
    git(tmp_path, "checkout", "-q", "-b", "pr")
    return project


def _add_examples(project: Project, count: int, *, right: bool = True) -> list[str]:
    goldens = project.rows("goldens/qa.jsonl")
    predictions = project.rows("predictions/qa.jsonl")
    ids = []
    for k in range(count):
        example_id = f"qa-new-{k}"
        ids.append(example_id)
        goldens.append(
            {"id": example_id, "input": f"What is {k} plus one?", "references": [str(k + 1)]}
        )
        predictions.append({"id": example_id, "output": str(k + 1) if right else "no idea"})
    project.write_rows("goldens/qa.jsonl", goldens)
    project.write_rows("predictions/qa.jsonl", predictions)
    return ids


def _edit_reference(project: Project, index: int) -> str:
    goldens = project.rows("goldens/qa.jsonl")
    goldens[index]["references"] = [*goldens[index]["references"], "another accepted answer"]
    project.write_rows("goldens/qa.jsonl", goldens)
    return str(goldens[index]["id"])


def _suite(project: Project, name: str = "qa") -> dict[str, Any]:
    return next(s for s in project.result()["suites"] if s["name"] == name)


def test_a_pull_request_adding_and_editing_examples_is_gated_on_the_shared_ones(
    repo: Project,
) -> None:
    added = _add_examples(repo, 5)
    edited = _edit_reference(repo, 3)
    git(repo.root, "commit", "-q", "-am", "five new examples, one edited")

    done = repo.goldgate("run", "--baseline-ref", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "golden set changed since the baseline (5 added, 1 edited, 0 removed)" in done.stdout
    assert "compared on 29 shared examples" in done.stdout
    suite = _suite(repo)
    change = suite["golden_change"]
    assert change["added"] == added
    assert [item["id"] for item in change["edited"]] == [edited]
    assert change["edited"][0]["baseline_scores"]["exact_match"] == 100.0
    assert change["removed"] == []
    assert change["n_shared"] == 29
    assert suite["n_examples"] == 35
    new = {ex["id"] for ex in suite["examples"] if ex["new"]}
    assert new == {*added, edited}
    # The translate suite did not change: no change recorded there.
    assert _suite(repo, "translate")["golden_change"] is None
    markdown = (repo.root / "goldgate-report" / "report.md").read_text()
    assert "5 added, 1 edited, 0 removed" in markdown
    html = (repo.root / "goldgate-report" / "report.html").read_text()
    assert "compared on 29 shared examples" in html


def test_a_regression_on_the_shared_examples_still_fails(repo: Project) -> None:
    _add_examples(repo, 5)
    predictions = repo.rows("predictions/qa.jsonl")
    for row in predictions[:10]:
        row["output"] = "I cannot answer that"
    repo.write_rows("predictions/qa.jsonl", predictions)
    done = repo.goldgate("run", "--baseline-ref", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL: qa: exact_match dropped beyond max_drop" in done.stdout
    assert _suite(repo)["golden_change"]["n_shared"] == 30


def test_min_rules_judge_the_whole_current_set(repo: Project) -> None:
    # 30 wrong new answers pull exact match below its min of 60 while every shared one holds.
    _add_examples(repo, 30, right=False)
    done = repo.goldgate("run", "--baseline-ref", "main")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL: qa: exact_match" in done.stdout and "below the minimum 60.00" in done.stdout
    checks = {(c["rule"], c["status"]) for c in _suite(repo)["checks"] if c["slice"] is None}
    assert ("max_drop", "pass") in checks


def test_removed_examples_are_flagged_and_capped(repo: Project) -> None:
    predictions = repo.rows("predictions/qa.jsonl")
    repo.write_rows("goldens/qa.jsonl", repo.rows("goldens/qa.jsonl")[2:])
    repo.write_rows("predictions/qa.jsonl", predictions[2:])
    done = repo.goldgate("run", "--baseline-ref", "main")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 added, 0 edited, 2 removed" in done.stdout
    assert "a removal can hide a regression" in done.stdout
    removed = _suite(repo)["golden_change"]["removed"]
    assert [item["id"] for item in removed] == ["qa-001", "qa-002"]
    # with their blessed outputs, the predictions as blessed
    assert [item["baseline_output"] for item in removed] == [
        predictions[0]["output"],
        predictions[1]["output"],
    ]

    config = repo.root / "goldgate.yaml"
    config.write_text(config.read_text() + "max_removed: 1\n")
    capped = repo.goldgate("run", "--baseline-ref", "main")
    assert capped.returncode == 1, capped.stdout + capped.stderr
    assert "FAIL: qa: 2 golden examples removed or edited" in capped.stdout
    failed = [c for c in _suite(repo)["checks"] if c["status"] == "fail"]
    assert [(c["metric"], c["rule"]) for c in failed] == [("goldens", "max_removed")]


def test_on_golden_change_refuse_keeps_the_strict_behaviour(repo: Project) -> None:
    _add_examples(repo, 1)
    config = repo.root / "goldgate.yaml"
    config.write_text(config.read_text() + "on_golden_change: refuse\n")
    done = repo.goldgate("run", "--baseline-ref", "main")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "suite 'qa': the golden set changed" in done.stderr
    checked = repo.goldgate("check")
    assert checked.returncode == 2


def test_check_reports_the_change_without_failing(repo: Project) -> None:
    _add_examples(repo, 2)
    done = repo.goldgate("check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "suite qa: 32 examples, golden set changed since the baseline (2 added" in done.stdout


def test_result_json_round_trips_the_change(repo: Project) -> None:
    _add_examples(repo, 1)
    assert repo.goldgate("run").returncode == 0
    rerendered = repo.goldgate("report", "goldgate-report/result.json", "--format", "md")
    assert rerendered.returncode == 0, rerendered.stderr
    assert "1 added, 0 edited, 0 removed" in rerendered.stdout
    data = json.loads((repo.root / "goldgate-report" / "result.json").read_text())
    assert data["suites"][0]["golden_change"]["added"] == ["qa-new-0"]


# -- a command system that answers from the predictions files and logs every call -----------

ANSWER = """\
import json, os, sys

suite = os.environ["GOLDGATE_SUITE"]
with open(f"predictions/{suite}.jsonl", encoding="utf-8") as handle:
    answers = {row["id"]: row["output"] for row in map(json.loads, handle)}
crash_after = -1
if os.path.exists("crash.txt"):  # "SUITE COUNT": exit after COUNT outputs of SUITE
    crash_suite, count = open("crash.txt").read().split()
    crash_after = int(count) if crash_suite == suite else -1
for count, line in enumerate(sys.stdin):
    if count == crash_after:
        sys.exit("crashed on purpose")
    example_id = json.loads(line)["id"]
    with open("calls.log", "a", encoding="utf-8") as log:
        log.write(example_id + "\\n")
    print(json.dumps({"id": example_id, "output": answers[example_id]}), flush=True)
"""


def use_command(project: Project, *, env: str = "") -> None:
    """Switch the project to a command system (answer.py) that logs each call to calls.log."""
    (project.root / "answer.py").write_text(ANSWER)
    config = project.root / "goldgate.yaml"
    text = config.read_text().replace(
        "  predictions: predictions/{suite}.jsonl",
        f"  command: {shlex.quote(sys.executable)} answer.py\n  concurrency: 1{env}",
    )
    config.write_text(text)


def calls(project: Project) -> list[str]:
    """The ids the command was called for since the last call of this function."""
    log = project.root / "calls.log"
    if not log.exists():
        return []
    ids = log.read_text().split()
    log.unlink()
    return ids


def test_bless_new_only_calls_the_system_for_new_examples_only(tmp_path: Path) -> None:
    project = Project(tmp_path)
    assert project.goldgate("init").returncode == 0
    use_command(project)
    assert project.goldgate("bless").returncode == 0
    assert len(calls(project)) == 46
    added = _add_examples(project, 3)
    done = project.goldgate("bless", "--new-only")
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls(project) == added
    baseline = json.loads((tmp_path / "goldgate.baseline.json").read_text())
    assert set(added) <= set(baseline["suites"]["qa"]["examples"])
    assert project.goldgate("run").returncode == 0


# -- 2. the cache never serves stale outputs ------------------------------------------------


@pytest.fixture
def command_repo(tmp_path: Path) -> Project:
    """A project whose system is a command (answer.py), committed in git."""
    project = Project(tmp_path)
    assert project.goldgate("init").returncode == 0
    use_command(project)
    (tmp_path / ".gitignore").write_text("goldgate-report/\n.goldgate/\ncalls.log\ncrash.txt\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "a project")
    return project


def _crash_qa_after(project: Project, count: int) -> None:
    (project.root / "crash.txt").write_text(f"qa {count}")
    crashed = project.goldgate("run")
    assert crashed.returncode == 2, crashed.stdout + crashed.stderr
    assert f"exited with code 1 after {count} of 30" in crashed.stderr
    assert len([i for i in calls(project) if i.startswith("qa-")]) == count
    (project.root / "crash.txt").unlink()


def test_a_rerun_after_a_code_edit_does_not_resume_and_says_why(command_repo: Project) -> None:
    _crash_qa_after(command_repo, 6)
    script = command_repo.root / "answer.py"
    script.write_text(script.read_text() + "# fixed the bug\n")
    done = command_repo.goldgate("run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len([i for i in calls(command_repo) if i.startswith("qa-")]) == 30
    assert (
        "6 cached outputs of an earlier run not reused: uncommitted changes differ (answer.py)"
        in done.stdout
    )
    cache = _suite(command_repo)["cache"]
    assert cache["reused"] == 0 and cache["dropped"] == 6
    assert "resumed" not in done.stderr


def test_a_second_edit_of_a_dirty_file_does_not_resume(command_repo: Project) -> None:
    script = command_repo.root / "answer.py"
    script.write_text(script.read_text() + "# a first try\n")  # dirty before the crash
    _crash_qa_after(command_repo, 6)
    script.write_text(script.read_text() + "# a second try\n")  # the same file, edited again
    done = command_repo.goldgate("run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len([i for i in calls(command_repo) if i.startswith("qa-")]) == 30
    assert (
        "6 cached outputs of an earlier run not reused: uncommitted changes differ (answer.py)"
        in done.stdout
    )


def test_a_new_untracked_file_does_not_resume(command_repo: Project) -> None:
    _crash_qa_after(command_repo, 6)
    (command_repo.root / "prompts.py").write_text("PROMPT = 'answer briefly'\n")
    done = command_repo.goldgate("run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len([i for i in calls(command_repo) if i.startswith("qa-")]) == 30
    assert (
        "6 cached outputs of an earlier run not reused: uncommitted changes differ (prompts.py)"
        in done.stdout
    )


def test_a_rerun_without_an_edit_resumes_and_says_so(command_repo: Project) -> None:
    _crash_qa_after(command_repo, 6)
    done = command_repo.goldgate("run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len([i for i in calls(command_repo) if i.startswith("qa-")]) == 24
    cache = _suite(command_repo)["cache"]
    assert cache["reused"] == 6 and cache["total"] == 30 and cache["source"] == "cache"
    assert cache["since"] and cache["dropped"] == 0
    assert "6 of 30 outputs reused from the output cache of" in done.stdout
    assert "qa: command (6 resumed from the cache of" in done.stderr  # the progress line
    markdown = (command_repo.root / "goldgate-report" / "report.md").read_text()
    assert "6 of 30 outputs reused from the output cache" in markdown
    html = (command_repo.root / "goldgate-report" / "report.html").read_text()
    assert "6 of 30 outputs reused from the output cache" in html
    # The next run calls the system for everything again: a finished run is not reused.
    again = command_repo.goldgate("run")
    assert again.returncode == 0
    assert len([i for i in calls(command_repo) if i.startswith("qa-")]) == 30
    assert _suite(command_repo)["cache"] is None


def test_a_new_commit_does_not_resume(command_repo: Project) -> None:
    _crash_qa_after(command_repo, 4)
    git(command_repo.root, "commit", "-q", "--allow-empty", "-m", "another commit")
    done = command_repo.goldgate("run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 cached outputs of an earlier run not reused: git HEAD moved from" in done.stdout


def test_no_cache_and_cache_key(command_repo: Project) -> None:
    _crash_qa_after(command_repo, 5)
    fresh = command_repo.goldgate("run", "--no-cache")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert len([i for i in calls(command_repo) if i.startswith("qa-")]) == 30
    assert _suite(command_repo)["cache"] is None

    config = command_repo.root / "goldgate.yaml"
    config.write_text(
        config.read_text().replace("  concurrency: 1", "  concurrency: 1\n  cache_key: model-v2")
    )
    (command_repo.root / "crash.txt").write_text("qa 5")
    assert command_repo.goldgate("run").returncode == 2
    calls(command_repo)
    (command_repo.root / "crash.txt").unlink()
    config.write_text(config.read_text().replace("model-v2", "model-v3"))
    done = command_repo.goldgate("run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cache_key changed from 'model-v2' to 'model-v3'" in done.stdout


def test_outside_git_the_command_files_decide(tmp_path: Path) -> None:
    project = Project(tmp_path)
    assert project.goldgate("init").returncode == 0
    use_command(project)
    _crash_qa_after(project, 6)
    resumed = project.goldgate("run")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len([i for i in calls(project) if i.startswith("qa-")]) == 24

    _crash_qa_after(project, 6)
    script = tmp_path / "answer.py"
    script.write_text(script.read_text() + "# fixed\n")
    done = project.goldgate("run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len([i for i in calls(project) if i.startswith("qa-")]) == 30
    assert "not reused: the command's files changed" in done.stdout
    assert "answer.py" in done.stdout


# -- 3. bless is a decision ------------------------------------------------------------------


def test_bless_refuses_a_regression_unless_allowed(tmp_path: Path) -> None:
    project = Project(tmp_path)
    assert project.goldgate("init").returncode == 0
    assert project.goldgate("bless").returncode == 0
    baseline = tmp_path / "goldgate.baseline.json"
    before = baseline.read_bytes()
    original = (tmp_path / "predictions" / "qa.jsonl").read_text()
    rows = project.rows("predictions/qa.jsonl")
    for row in rows:
        row["output"] = "no idea"
    project.write_rows("predictions/qa.jsonl", rows)

    refused = project.goldgate("bless")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "goldgate: REGRESSED" in refused.stdout
    assert "exact_match" in refused.stdout and "-80.00" in refused.stdout  # the table
    assert "bless refused" in refused.stderr and "--allow-regression" in refused.stderr
    assert baseline.read_bytes() == before

    forced = project.goldgate("bless", "--allow-regression")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "forced past qa" in forced.stdout
    written = json.loads(baseline.read_text())
    assert any("below the minimum" in m for m in written["suites"]["qa"]["forced"])
    assert "forced" not in written["suites"]["translate"]
    # A clean bless afterwards drops the record.
    (tmp_path / "predictions" / "qa.jsonl").write_text(original)
    assert project.goldgate("bless").returncode == 0
    assert "forced" not in json.loads(baseline.read_text())["suites"]["qa"]


def test_bless_without_a_baseline_still_checks_min(tmp_path: Path) -> None:
    project = Project(tmp_path)
    assert project.goldgate("init").returncode == 0
    project.write_rows(
        "predictions/qa.jsonl",
        [{"id": r["id"], "output": "no idea"} for r in project.rows("predictions/qa.jsonl")],
    )
    refused = project.goldgate("bless")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "FAIL: qa: exact_match 0.00 is below the minimum 60.00" in refused.stdout
    assert not (tmp_path / "goldgate.baseline.json").exists()


def test_bless_after_run_makes_no_system_calls(command_repo: Project) -> None:
    assert command_repo.goldgate("run").returncode == 0
    assert len(calls(command_repo)) == 46
    blessed = command_repo.goldgate("bless")
    assert blessed.returncode == 0, blessed.stdout + blessed.stderr
    assert calls(command_repo) == []
    assert "30 of 30 outputs reused from the run just reviewed (result.json)" in blessed.stdout
    assert (command_repo.root / "goldgate.baseline.json").is_file()

    rerun = command_repo.goldgate("bless", "--rerun")
    assert rerun.returncode == 0
    assert len(calls(command_repo)) == 46

    # Changed code: the reviewed outputs no longer stand for it.
    assert command_repo.goldgate("run").returncode == 0
    calls(command_repo)
    script = command_repo.root / "answer.py"
    script.write_text(script.read_text() + "# changed\n")
    changed = command_repo.goldgate("bless")
    assert changed.returncode == 0
    assert len(calls(command_repo)) == 46
