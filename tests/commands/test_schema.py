"""``goldgate schema``: JSON Schemas of the configuration, result and baseline."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from goldgate.cli import main
from goldgate.report import write_reports
from goldgate.result import EXAMPLES_FILE
from tests.report.fixtures import make_result


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


def test_the_result_schema_describes_result_json_and_its_examples_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    assert main(["schema", "result"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "goldgate result (goldgate.result/2)"
    assert "examples_file" in schema["properties"]
    write_reports(make_result("regressed"), tmp_path, ["json"])
    jsonschema.validate(json.loads((tmp_path / "result.json").read_text("utf-8")), schema)
    example = {"$defs": schema["$defs"], **schema["$defs"]["ExampleResult"]}
    lines = gzip.decompress((tmp_path / EXAMPLES_FILE).read_bytes()).decode().splitlines()
    for line in lines:
        row = json.loads(line)
        assert isinstance(row.pop("suite"), str)
        jsonschema.validate(row, example)
