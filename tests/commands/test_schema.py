"""``goldgate schema``: JSON Schemas of the configuration, result and baseline."""

from __future__ import annotations

import json

import pytest

from goldgate.cli import main


@pytest.mark.parametrize(
    ("which", "field"),
    [("config", "suites"), ("result", "verdict"), ("baseline", "suites")],
)
def test_schema(which: str, field: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", which]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert field in schema["properties"]
    assert schema["$schema"].startswith("https://json-schema.org/")


def test_default_is_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert "goldgate" in json.loads(capsys.readouterr().out)["title"]
