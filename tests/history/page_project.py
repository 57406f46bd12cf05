"""A project with recorded runs, blesses, a regression, a flaky example and hostile text."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldgate.cli.main import main
from tests.history.project import GitProject

HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'


def build(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs and blesses over a few commits; returns the written history page.

    The predictions are not committed (a model's outputs, made anew by each run), and three
    runs share one commit: there, answers that changed with nothing else changed are the
    flaky examples (q030 to q036); across commits a change may be on purpose.
    """
    monkeypatch.chdir(root)
    project = GitProject(root, n=40, gate="{min: 80, max_drop: 5.0}", significance="{seed: 0}")
    with (root / ".gitignore").open("a") as ignore:
        ignore.write("preds/\n")
    project._git("rm", "-r", "-q", "--cached", "preds")
    project.set_right(38)
    assert main(["bless", "-q"]) == 0
    project.commit("first bless")
    for step, right in enumerate((37, 36, 37, 36, 30, 38, 39)):
        project.set_right(right)
        if step not in (3, 4):  # steps 2, 3 and 4 run at one commit
            project.commit(HOSTILE if step == 2 else f"change {step}")
        assert main(["run", "-q"]) in (0, 1)
        if step in (1, 6):
            assert main(["bless", "-q"]) == 0
            project.commit(f"bless at step {step}")
    page = root / "history.html"
    assert main(["history", "--html", str(page), "--last", "0"]) == 0
    return page
