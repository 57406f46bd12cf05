"""``goldgate schema``: JSON Schemas of the configuration, result and baseline."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.model.examples_file import EXAMPLES_FILE
from goldgate.report import write_reports
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


def test_the_config_schema_knows_the_semantic_metrics_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An editor validating goldgate.yaml sees llm_judge's and embedding_similarity's options:
    a right configuration passes, a misspelled option or a value off a choice does not."""
    jsonschema = pytest.importorskip("jsonschema")
    assert main(["schema", "config"]) == 0
    schema = json.loads(capsys.readouterr().out)
    metrics = schema["$defs"]["SuiteConfig"]["properties"]["metrics"]["properties"]
    judge = {"$defs": schema["$defs"], **metrics["llm_judge"]}
    embed = {"$defs": schema["$defs"], **metrics["embedding_similarity"]}
    good_judge = {
        "base_url": "http://localhost:11434/v1",
        "model": "llama3",
        "api_key_env": "OPENAI_API_KEY",
        "rubric_file": "rubrics/qa.md",
        "fields": ["input", "candidate"],
        "samples": 3,
        "response_format": "json_schema",
        "timeout_s": 30,
    }
    jsonschema.validate(good_judge, judge)
    jsonschema.validate({"encoder": "sentence_transformers", "model": "models/st"}, embed)
    for bad, where in [
        ({**good_judge, "api_key": "sk-..."}, judge),  # the key itself is not an option
        ({**good_judge, "response_format": "xml"}, judge),
        ({**good_judge, "samples": 0}, judge),
        ({**good_judge, "fields": ["answer"]}, judge),
        ({"encoder": "bert", "model": "m"}, embed),
    ]:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, where)
