"""The README's "In your own project" lines, followed literally in a fresh virtual environment.

goldgate is installed from this checkout by the README's own ``pip install`` line; the gate
must end passing. To stay fast, the fresh environment sees this environment's packages
through a ``.pth`` file, so pip finds goldgate's dependencies installed instead of
downloading them (goldgate itself is built and installed from the checkout for real). This
test runs in CI (``.ci/run``); only outside CI does it skip when pip cannot reach an index.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv*", ".ci", ".goldgate", "build", "dist", "*.egg-info", "__pycache__",
    ".*_cache", ".hypothesis", "goldgate-report", "node_modules", "site",
)  # fmt: skip


def readme_lines() -> list[str]:
    """The shell lines of the "In your own project" block that runs in the project."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.split(r"^#+ In your own project.*$", text, maxsplit=1, flags=re.M)[1]
    section = section.split("Then, in your project's directory", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    lines = []
    for line in block.group(1).splitlines():
        command = line.split("  #", 1)[0].strip()
        if command:
            lines.append(command)
    return lines


def test_the_readme_block_is_what_this_test_runs() -> None:
    lines = readme_lines()
    assert lines[0] == "python3 -m venv .venv"
    assert lines[1] == ".venv/bin/pip install /path/to/goldgate"
    assert lines[2:] == [f".venv/bin/goldgate {c}" for c in ("init", "run", "bless", "run")]


def test_in_your_own_project_ends_with_a_passing_gate(tmp_path: Path) -> None:
    # A copy of the checkout: pip builds in the source tree, which must not touch this one.
    checkout = tmp_path / "goldgate"
    shutil.copytree(ROOT, checkout, ignore=_NOT_SOURCE)
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTHON"))}
    env["CI"] = "true"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    done = None
    for line in readme_lines():
        argv = shlex.split(line.replace("/path/to/goldgate", shlex.quote(str(checkout))))
        if argv[0] == "python3":
            argv[0] = sys.executable  # this Python: the .pth below needs the same version
        done = subprocess.run(
            argv, cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        if argv[-1] == str(checkout) and done.returncode != 0 and os.environ.get("CI") != "true":
            pytest.skip(f"pip could not install from the checkout: {done.stderr[-500:]}")
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        if argv[:3] == [sys.executable, "-m", "venv"]:
            _see_installed_dependencies(project / ".venv")
    assert done is not None and "goldgate: PASS" in done.stdout
    where = subprocess.run(
        [
            str(project / ".venv" / "bin" / "python"),
            "-c",
            "import goldgate; print(goldgate.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    # goldgate came from the fresh install, not from this environment's editable one.
    assert where.stdout.startswith(str(project / ".venv"))
    assert (project / "goldgate.baseline.json").is_file()
    _check_the_installed_wheel(project / ".venv" / "bin" / "python", env)


def _check_the_installed_wheel(python: Path, env: dict[str, str]) -> None:
    """What a wheel user gets: ``python -m goldgate``, the notices, the declared Pythons."""
    module = subprocess.run(
        [str(python), "-m", "goldgate", "--version"], capture_output=True, text=True, env=env
    )
    assert module.returncode == 0 and module.stdout.startswith("goldgate "), module.stderr
    probe = (
        "import json; from importlib.metadata import distribution as d; g = d('goldgate');"
        " print(json.dumps([[str(f) for f in g.files or []], g.metadata.get_all('Classifier')]))"
    )
    listed = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    files, classifiers = json.loads(listed.stdout)
    assert any(f.endswith(".dist-info/licenses/THIRD_PARTY_NOTICES.md") for f in files)
    assert any(f.endswith(".dist-info/licenses/LICENSE") for f in files)
    assert "goldgate/metrics/__init__.py" in files
    for version in ("3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers


def test_the_sdist_holds_the_notices_and_no_tests_that_cannot_run(tmp_path: Path) -> None:
    """setuptools shipped tests/test*.py alone (without tests/__init__.py, the helpers and
    the data they read): the sdist prunes them and carries LICENSE and the notices."""
    if importlib.util.find_spec("build") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the build package is missing (it is in the test extra)")
        pytest.skip("the build package is not installed")
    checkout = tmp_path / "goldgate"
    shutil.copytree(ROOT, checkout, ignore=_NOT_SOURCE)
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path / "dist"), "."],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 and os.environ.get("CI") != "true":
        pytest.skip(f"could not build the sdist (no index?): {done.stderr[-500:]}")
    assert done.returncode == 0, done.stdout + done.stderr
    (sdist,) = (tmp_path / "dist").glob("goldgate-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"LICENSE", "THIRD_PARTY_NOTICES.md", "README.md", "pyproject.toml"} <= names
    assert "src/goldgate/__main__.py" in names
    assert not [name for name in names if name.startswith("tests/")]


def _see_installed_dependencies(venv: Path) -> None:
    # A plain path line: its directory is searched after the venv's own site-packages, and
    # the .pth files in it (this environment's editable goldgate) are not run.
    purelib = sysconfig.get_paths()["purelib"]
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "_goldgate_test_dependencies.pth").write_text(purelib + "\n", encoding="utf-8")
