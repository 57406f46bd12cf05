"""The recipes for other CIs (ci/jenkins, ci/buildkite, ci/circleci): each checked for syntax
with a tool of its ecosystem (Buildkite and CircleCI: their JSON Schemas as check-jsonschema
ships them; the Jenkinsfile: a Groovy 3 grammar), and shown in the docs as they are."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
YAML_RECIPES = {
    "buildkite": ROOT / "ci" / "buildkite" / "pipeline.yml",
    "circle-ci": ROOT / "ci" / "circleci" / "config.yml",
}
JENKINSFILE = ROOT / "ci" / "jenkins" / "Jenkinsfile"
DOC = ROOT / "docs" / "how-to" / "other-ci.md"


def errors(schema_name: str, document: object) -> list[str]:
    jsonschema = pytest.importorskip("jsonschema")
    vendor = resources.files("check_jsonschema") / "builtin_schemas" / "vendor"
    schema: dict[str, Any] = json.loads((vendor / f"{schema_name}.json").read_text("utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [e.message for e in validator.iter_errors(document)]


@pytest.mark.parametrize("name", sorted(YAML_RECIPES))
def test_yaml_recipes_are_valid_for_their_ci(name: str) -> None:
    document = yaml.safe_load(YAML_RECIPES[name].read_text(encoding="utf-8"))
    assert errors(name, document) == []
    # and the check can fail: a step without what it must have
    broken = json.loads(json.dumps(document))
    if name == "buildkite":
        broken["steps"][0]["artifact_paths"] = {"not": "a list"}
    else:
        broken["jobs"]["goldgate"]["steps"].append({"store_test_results": {}})
    assert errors(name, broken)


def test_the_jenkinsfile_parses_as_groovy() -> None:
    parser = pytest.importorskip("groovy_parser.parser")
    text = JENKINSFILE.read_text(encoding="utf-8")
    parser.parse_groovy_content(text)
    with pytest.raises(Exception, match="Unexpected"):
        parser.parse_groovy_content(text.replace("stage('goldgate') {", "stage('goldgate' {"))
    assert "junit 'goldgate-report/junit.xml'" in text


def test_the_docs_show_the_recipes_as_they_are() -> None:
    doc = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:groovy|yaml)[^\n]*\n(.*?)```", doc, re.S)
    for path in (JENKINSFILE, *YAML_RECIPES.values()):
        assert path.read_text(encoding="utf-8") in blocks, path
