"""``goldgate init`` writes a working example and refuses to overwrite one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.cli.commands.init import files
from goldgate.cli.main import main
from goldgate.model.config_loading import load_config
from goldgate.model.goldens import load_goldens


def test_init_writes_a_valid_project(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in files():
        assert (scaffold / name).is_file(), name
    config = load_config(scaffold / "goldgate.yaml")
    assert list(config.suites) == ["qa", "translate"]
    for name, suite in config.suites.items():
        golden = load_goldens(suite.goldens, name)
        predictions = [
            json.loads(line)
            for line in (scaffold / "predictions" / f"{name}.jsonl").read_text().splitlines()
        ]
        assert [p["id"] for p in predictions] == [r.id for r in golden.records]
        assert any(record.tags for record in golden.records)
    assert ".goldgate/" in (scaffold / ".gitignore").read_text().splitlines()


def test_init_refuses_to_overwrite(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    (scaffold / "goldgate.yaml").write_text("mine\n")
    assert main(["init"]) == 2
    assert "would overwrite goldgate.yaml" in capsys.readouterr().err
    assert (scaffold / "goldgate.yaml").read_text() == "mine\n"
    assert main(["init", "--force"]) == 0
    assert (scaffold / "goldgate.yaml").read_text() != "mine\n"
    # the .gitignore lines are not repeated
    assert (scaffold / ".gitignore").read_text().count(".goldgate/") == 1


def test_init_into_a_new_directory_keeps_an_existing_gitignore(tmp_path: Path) -> None:
    target = tmp_path / "new"
    target.mkdir()
    (target / ".gitignore").write_text("*.pyc")
    assert main(["init", str(target)]) == 0
    assert (target / ".gitignore").read_text().splitlines() == [
        "*.pyc",
        ".goldgate/",
        "goldgate-report/",
        ".venv/",
    ]


def test_init_writes_no_made_up_address(scaffold: Path) -> None:
    """The configuration named https://github.com/goldgate/goldgate, which is no one's."""
    for path in scaffold.rglob("*"):
        if path.is_file():
            assert "://" not in path.read_text(encoding="utf-8"), path
