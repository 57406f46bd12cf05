"""A scaffolded project (``goldgate init``) in a temporary working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldgate.cli.main import main


@pytest.fixture
def scaffold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main(["init"]) == 0
    return tmp_path


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty temporary working directory, outside GitHub mode, for a hand-made project."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return tmp_path
