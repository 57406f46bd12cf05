"""goldgate.yaml and [tool.goldgate]: typed models, and errors that name file, line, key path."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldgate.errors import ConfigError, GoldgateError, MetricError
from goldgate.model.config import Config, GateRule, SignificanceConfig, SystemConfig
from goldgate.model.config_loading import load_config, parse_config
from goldgate.model.config_schema import config_json_schema

VALID = """\
version: 1
system:
  callable: app:answer
  timeout_s: 5
suites:
  qa:
    goldens: goldens/qa.jsonl
    metrics:
      exact_match: {normalizer: squad}
      token_f1: {normalizer: squad}
    gate:
      exact_match: {min: 80.0, max_drop: 2.0, max_flips: 3}
  sizes:
    goldens: goldens/sizes.csv
    metrics:
      length_ratio:
    system:
      command: python -m app.generate --fast
significance: {method: paired_bootstrap, resamples: 500, alpha: 0.1, seed: 7}
baseline: goldgate.baseline.json
report: {dir: out/report, formats: [md, json]}
"""


def custom_metric(candidate: str, references: Sequence[str]) -> float:
    """A user metric loaded as tests.test_config:custom_metric."""
    return 100.0 if candidate in references else 0.0


def write(tmp_path: Path, text: str, name: str = "goldgate.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert "pydantic" not in message and "validation error" not in message.lower()
    return message


def test_valid_config_becomes_typed_models_with_absolute_paths(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VALID))
    assert config.version == 1
    assert config.root == tmp_path
    assert config.source == tmp_path / "goldgate.yaml"
    assert config.baseline == tmp_path / "goldgate.baseline.json"
    assert config.cache_dir == tmp_path / ".goldgate"
    assert config.report.dir == tmp_path / "out" / "report"
    assert config.report.formats == ["md", "json"]
    assert config.suites["qa"].goldens == tmp_path / "goldens" / "qa.jsonl"
    assert config.suites["qa"].gate["exact_match"] == GateRule(min=80.0, max_drop=2.0, max_flips=3)
    assert config.suites["sizes"].metrics == {"length_ratio": {}}
    assert config.significance == SignificanceConfig(resamples=500, alpha=0.1, seed=7)
    assert config.system_for("qa").callable == "app:answer"
    assert config.system_for("qa").timeout_s == 5
    sizes = config.system_for("sizes")
    assert sizes.kind == "command"
    assert sizes.argv() == ["python", "-m", "app.generate", "--fast"]
    assert set(config.suites["qa"].create_metrics()) == {"exact_match", "token_f1"}


def test_paths_may_be_strings_as_in_any_python_api(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    assert load_config(str(path)).source == path
    assert load_config(str(tmp_path)).source == path
    assert load_config("goldgate.yaml", cwd=str(tmp_path)).source == path


def test_models_are_frozen(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, VALID))
    with pytest.raises(ValueError):
        config.version = 2  # type: ignore[misc]


def test_defaults(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """\
            version: 1
            system: {predictions: "out/{suite}.jsonl"}
            suites:
              qa: {goldens: qa.jsonl, metrics: {exact_match: {}}}
            """,
        )
    )
    assert config.significance == SignificanceConfig()
    assert config.significance.resamples == 1000 and config.significance.alpha == 0.05
    assert config.report.formats == ["md", "html", "json", "junit"]
    assert config.report.dir == tmp_path / "goldgate-report"
    system = config.system_for("qa")
    assert (system.concurrency, system.timeout_s, system.samples) == (8, 60.0, 1)
    assert system.predictions_path("qa", tmp_path) == tmp_path / "out" / "qa.jsonl"
    assert config.suites["qa"].slices is True


@pytest.mark.parametrize("value", ["off", "false", "'off'", '"off"', "no"])
def test_significance_off(tmp_path: Path, value: str) -> None:
    text = VALID.replace(
        "significance: {method: paired_bootstrap, resamples: 500, alpha: 0.1, seed: 7}",
        f"significance: {value}",
    )
    assert load_config(write(tmp_path, text)).significance is None


def test_pyproject_table(tmp_path: Path) -> None:
    write(
        tmp_path,
        """\
        [project]
        name = "x"

        [tool.goldgate]
        version = 1
        significance = "off"

        [tool.goldgate.system]
        predictions = "out/{suite}.jsonl"

        [tool.goldgate.suites.qa]
        goldens = "goldens/qa.jsonl"
        metrics = {exact_match = {normalizer = "squad"}}
        """,
        "pyproject.toml",
    )
    config = load_config(cwd=tmp_path)
    assert config.source == tmp_path / "pyproject.toml"
    assert config.significance is None
    assert config.suites["qa"].metrics == {"exact_match": {"normalizer": "squad"}}


def test_pyproject_error_names_the_tool_table(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        [tool.goldgate]
        version = 1
        [tool.goldgate.system]
        predictions = "p.jsonl"
        concurency = 3
        [tool.goldgate.suites.qa]
        goldens = "qa.jsonl"
        metrics = {exact_match = {}}
        """,
        "pyproject.toml",
    )
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}:5: tool.goldgate.system.concurency: unknown key")
    assert "did you mean 'concurrency'?" in message


_PYPROJECT = """\
[project]
name = "x"
description = '''
[tool.goldgate.system]
concurency = 1
'''
[tool.goldgate]
version = 1
significance = "off"  # [ not an array
[tool.goldgate.system]
predictions = "p.jsonl"
[tool.goldgate.suites."q.a"]
goldens = "qa.jsonl"
metrics = {exact_match = {}, token_f1 = {}}
gate.exact_match = {min = 80.0, max_drop = 2.0}
[tool.goldgate.report]
formats = [
  "md",
  "json",
]
dir = "out"
"""


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("version = 1", "version = 2", ":8: tool.goldgate.version:"),
        ('predictions = "p.jsonl"', "predictions = 3", ":11: tool.goldgate.system.predictions:"),
        ("max_drop = 2.0", 'max_drop = "x"', ":15: tool.goldgate.suites.q.a.gate.exact_match"),
        ("token_f1 =", "token_f2 =", ":14: tool.goldgate.suites.q.a.metrics"),
        ("[tool.goldgate.report]", "[tool.goldgate.reprot]", ":16: tool.goldgate.reprot:"),
        ('"json",', '"jsn",', ":17: tool.goldgate.report.formats"),
        ('dir = "out"', "dir = 3", ":21: tool.goldgate.report.dir:"),
    ],
)
def test_pyproject_errors_name_the_line(tmp_path: Path, old: str, new: str, where: str) -> None:
    """As goldgate.yaml's do: tomllib gives no positions, so the key's line is found in the
    text (and a [tool.goldgate.system] inside a multi-line string is not a table)."""
    assert old in _PYPROJECT
    path = write(tmp_path, _PYPROJECT.replace(old, new, 1), "pyproject.toml")
    (tmp_path / "ok").mkdir()
    assert load_config(write(tmp_path / "ok", _PYPROJECT, "pyproject.toml"))  # valid as written
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}{where}"), message


def test_goldgate_yaml_wins_over_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "[tool.goldgate]\nversion = 7\n", "pyproject.toml")
    write(tmp_path, VALID)
    assert load_config(cwd=tmp_path).source == tmp_path / "goldgate.yaml"
    assert load_config(tmp_path).source == tmp_path / "goldgate.yaml"  # a directory
    assert load_config(Path("goldgate.yaml"), cwd=tmp_path).root == tmp_path


def test_no_config_anywhere(tmp_path: Path) -> None:
    write(tmp_path, "[project]\nname = 'x'\n", "pyproject.toml")
    with pytest.raises(ConfigError, match=r"no goldgate\.yaml.*goldgate init"):
        load_config(cwd=tmp_path)
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match=r"no \[tool.goldgate\] table"):
        load_config(tmp_path / "pyproject.toml")


@pytest.mark.parametrize(
    ("old", "new", "line", "path", "suggestion"),
    [
        ("version: 1", "version: 1\nsuits: {}", 2, "suits", "suites"),
        ("  timeout_s: 5", "  timeot_s: 5", 4, "system.timeot_s", "timeout_s"),
        ("    goldens: goldens/qa.jsonl", "    golden: goldens/qa.jsonl", 7, "suites.qa.golden",
         "goldens"),
        ("{min: 80.0, max_drop", "{minimum: 80.0, max_drop", 12,
         "suites.qa.gate.exact_match.minimum", "min"),
        ("resamples: 500", "resample: 500", 19, "significance.resample", "resamples"),
        ("{dir: out/report", "{dirs: out/report", 21, "report.dirs", "dir"),
    ],
)  # fmt: skip
def test_unknown_key_names_line_path_and_nearest_spelling(
    tmp_path: Path, old: str, new: str, line: int, path: str, suggestion: str
) -> None:
    assert old in VALID
    message = load_error(tmp_path, VALID.replace(old, new))
    assert f"goldgate.yaml:{line}: {path}: unknown key" in message
    assert f"(did you mean {suggestion!r}?)" in message


def test_gate_key_must_name_a_configured_metric(tmp_path: Path) -> None:
    message = load_error(
        tmp_path, VALID.replace("      exact_match: {min", "      exact_macth: {min")
    )
    assert "goldgate.yaml:12: suites.qa.gate.exact_macth:" in message
    assert "did you mean 'exact_match'?" in message


def test_unknown_metric_is_a_metric_error_with_nearest_name(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("token_f1: {normalizer", "token_f2: {normalizer"))
    with pytest.raises(MetricError) as info:
        load_config(path)
    message = str(info.value)
    assert f"{path}:10: suites.qa.metrics.token_f2: unknown metric 'token_f2'" in message
    assert "did you mean 'token_f1'?" in message


def test_unknown_metric_option_names_the_metric(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("exact_match: {normalizer", "exact_match: {normaliser"))
    with pytest.raises(MetricError) as info:
        load_config(path)
    message = str(info.value)
    assert "goldgate.yaml:9: suites.qa.metrics.exact_match:" in message
    assert "unknown option 'normaliser'" in message and "did you mean 'normalizer'?" in message


def test_bad_metric_option_value(tmp_path: Path) -> None:
    message = load_error(tmp_path, VALID.replace("length_ratio:", "length_ratio: {tokenize: 13a}"))
    assert "suites.sizes.metrics.length_ratio:" in message and "tokenize" in message


def test_custom_metric_by_module_path(tmp_path: Path) -> None:
    config = load_config(
        write(tmp_path, VALID.replace("length_ratio:", "tests.test_config:custom_metric:"))
    )
    metrics = config.suites["sizes"].create_metrics()
    assert list(metrics) == ["tests.test_config:custom_metric"]
    message = load_error(tmp_path, VALID.replace("length_ratio:", "tests.test_config:nope: {}"))
    assert "suites.sizes.metrics.tests.test_config:nope" in message


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("resamples: 500", "resamples: many", "significance.resamples: input should be a valid"),
        ("timeout_s: 5", "timeout_s: -1", "system.timeout_s: input should be greater than 0"),
        ("timeout_s: 5", "timeout_s: 5\n  samples: 0", "system.samples: input should be greater"),
        ("timeout_s: 5", "timeout_s: .inf", "system.timeout_s: input should be less than or equal"),
        ("seed: 7", "seed: -1", "significance.seed: input should be greater than or equal to 0"),
        ("{min: 80.0,", "{min: .nan,", "suites.qa.gate.exact_match.min: input should be a finite"),
        ("max_flips: 3", "max_flips: 2.5", "suites.qa.gate.exact_match.max_flips:"),
        ("formats: [md, json]", "formats: [md, htm]", "report.formats[1]: 'htm' is not one of"),
        ("version: 1", "version: 2", "version: input should be 1"),
        ("  callable: app:answer", "  callable: app", "system.callable: expected"),
        ("  callable: app:answer", "  command: [python, 3]", "system.command: input should be"),
        ("  callable: app:answer", "  command: \"a 'b\"", "system.command: cannot split"),
        ("  callable: app:answer", "  command: '  '", "system.command: the command is empty"),
        ("  callable: app:answer", "  callable: app:answer\n  command: x",
         "system: set exactly one of predictions, command, callable (found command and"),
        ("  callable: app:answer", "  concurrency: 3", "system: set exactly one of"),
        ("{min: 80.0, max_drop: 2.0, max_flips: 3}", "{}", "needs at least one of min"),
        ("{min: 80.0,", "{min: 80.0, max: 10,", "min (80.0) is above max (10.0)"),
        ("  qa:\n", "  q a:\n", "suites.q a: suite name 'q a' may only hold"),
        ("report: {dir", "env: {}\nreport: {dir", "env: unknown key 'env'"),
        ("      token_f1: {normalizer: squad}\n", "      token_f1: {normalizer: squad}\n"
         "      token_f1: {}\n", "suites.qa.metrics.token_f1: duplicate key (first defined on"),
    ],
)  # fmt: skip
def test_mistakes_are_config_errors(tmp_path: Path, old: str, new: str, expected: str) -> None:
    assert old in VALID
    assert expected in load_error(tmp_path, VALID.replace(old, new))


def test_missing_keys(tmp_path: Path) -> None:
    message = load_error(tmp_path, VALID.replace("    goldens: goldens/qa.jsonl\n", ""))
    assert "goldgate.yaml:6: suites.qa.goldens: required key is missing" in message
    assert "version: required key is missing" in load_error(tmp_path, VALID[len("version: 1\n") :])


def test_suite_needs_a_system(tmp_path: Path) -> None:
    text = VALID.replace("system:\n  callable: app:answer\n  timeout_s: 5\n", "")
    message = load_error(tmp_path, text)
    assert "suites.qa: suite 'qa' has no system" in message


def test_root_and_source_cannot_be_set_in_the_file(tmp_path: Path) -> None:
    message = load_error(tmp_path, VALID + "root: /elsewhere\n")
    assert ":22: root: unknown key 'root'" in message


def test_malformed_yaml_names_line_and_column(tmp_path: Path) -> None:
    message = load_error(tmp_path, VALID.replace("{min: 80.0,", "{min: [80.0,"))
    assert "goldgate.yaml:12:" in message and "malformed YAML" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "the configuration is empty"),
        ("- a\n- b\n", "must be a mapping of keys, not a list"),
        ("version: 1\n\x00", "malformed YAML"),
    ],
)
def test_degenerate_files(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in load_error(tmp_path, text)


def test_bad_utf8_names_line(tmp_path: Path) -> None:
    path = tmp_path / "goldgate.yaml"
    path.write_bytes(b"version: 1\nsystem:\n  command: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"goldgate.yaml:3: not valid UTF-8 \(byte 33\)"):
        load_config(path)


def test_yaml_merge_keys_and_timestamps(tmp_path: Path) -> None:
    text = """\
    version: 1
    defaults: &sys {callable: app:answer, timeout_s: 9}
    """
    # 'defaults' is not a key goldgate knows: anchors must live inside known keys.
    assert "defaults: unknown key" in load_error(tmp_path, text)
    config = load_config(
        write(
            tmp_path,
            """\
            version: 1
            suites:
              a: {goldens: a.jsonl, metrics: {exact_match: {}}, system: &s {callable: m:f}}
              b:
                goldens: b.jsonl
                metrics: {exact_match: {}}
                system: {<<: *s, timeout_s: 2}
            """,
        )
    )
    assert config.system_for("b") == SystemConfig(callable="m:f", timeout_s=2)


def test_custom_metric_in_the_users_repository_imports(tmp_path: Path) -> None:
    (tmp_path / "my_gg_metrics.py").write_text(
        "def overlap(candidate, references):\n    return 50.0\n", encoding="utf-8"
    )
    text = VALID.replace("length_ratio:", "my_gg_metrics:overlap: {}")
    config = load_config(write(tmp_path, text))
    assert list(config.suites["sizes"].create_metrics()) == ["my_gg_metrics:overlap"]


def test_python_construction_validates_too() -> None:
    with pytest.raises(ValueError):
        SystemConfig()
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        Config.model_validate(
            {
                "version": 1,
                "system": {"callable": "m:f"},
                "suites": {"a": {"goldens": "a.jsonl", "metrics": {"nope": {}}}},
            }
        )


def test_schema_describes_every_key() -> None:
    schema = config_json_schema()
    json.dumps(schema)  # serialisable
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert set(schema["properties"]) == {
        "version",
        "system",
        "suites",
        "systems",
        "significance",
        "baseline",
        "on_golden_change",
        "max_removed",
        "report",
        "engine",
        "cache_dir",
        "history",
        "anchor",
        "confirm",
        "budget",
        "diagnose",
    }
    assert schema["required"] == ["version", "suites"]
    defs = schema["$defs"]
    assert set(defs["SystemConfig"]["properties"]) >= {"predictions", "command", "callable"}
    assert defs["SystemConfig"]["additionalProperties"] is False
    metrics = defs["SuiteConfig"]["properties"]["metrics"]
    names = metrics["propertyNames"]["anyOf"][0]["enum"]
    assert {"bleu", "rougeLsum", "exact_match", "token_f1", "length_ratio"} <= set(names)
    exact = metrics["properties"]["exact_match"]["anyOf"][0]
    assert "normalizer" in exact["properties"]
    assert "$ref" not in json.dumps(metrics)  # metric option schemas are self-contained
    significance = schema["properties"]["significance"]["anyOf"]
    assert {"const": False} in significance and {"const": "off"} in significance


def _schema_accepts(schema: dict[str, Any], value: Any, defs: dict[str, Any]) -> bool:
    """A small checker for the parts of JSON Schema pydantic emits (enough for this test)."""
    if "$ref" in schema:
        return _schema_accepts(defs[schema["$ref"].split("/")[-1]], value, defs)
    if "anyOf" in schema:
        return any(_schema_accepts(s, value, defs) for s in schema["anyOf"])
    if "const" in schema:
        return bool(value == schema["const"])
    if "enum" in schema:
        return value in schema["enum"]
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return False
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub = properties.get(key, extra)
            if sub is False or (isinstance(sub, dict) and not _schema_accepts(sub, item, defs)):
                return False
        return all(key in value for key in schema.get("required", []))
    if kind == "array":
        return isinstance(value, list) and all(
            _schema_accepts(schema.get("items", {}), item, defs) for item in value
        )
    types = {"string": str, "integer": int, "number": (int, float), "boolean": bool}
    if kind in types:
        return isinstance(value, types[kind]) and not (
            kind != "boolean" and isinstance(value, bool)
        )
    return kind is None or (kind == "null" and value is None)


def test_schema_accepts_the_valid_config_and_rejects_typos(tmp_path: Path) -> None:
    import yaml

    schema = config_json_schema()
    data = yaml.safe_load(VALID)
    assert _schema_accepts(schema, data, schema["$defs"])
    data["system"]["timeot_s"] = 3
    assert not _schema_accepts(schema, data, schema["$defs"])


# -- robustness: whatever the data, a ConfigError or a Config, never a raw exception ---------

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-1, 2) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8,
)  # fmt: skip
_keys = st.sampled_from(
    ["version", "system", "suites", "significance", "report", "baseline", "gate", "metrics",
     "goldens", "min", "max_drop", "callable", "command", "samples", "formats", "slices"]
)  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(_keys, _json, max_size=5),
    st.dictionaries(_keys, _json, max_size=4),
    st.dictionaries(_keys, _json, max_size=4),
)
def test_any_data_gives_a_config_or_a_config_error(
    top: dict[str, Any], system: dict[str, Any], suite: dict[str, Any]
) -> None:
    data: dict[str, Any] = {
        "version": 1,
        "system": {"callable": "m:f", **system},
        "suites": {"qa": {"goldens": "qa.jsonl", "metrics": {"exact_match": {}}, **suite}},
        **top,
    }
    try:
        parse_config(data, root=Path("/r"), source=Path("/r/goldgate.yaml"))
    except GoldgateError as exc:
        assert str(exc).startswith("/r/goldgate.yaml")


def test_the_bundled_example_config_loads_and_fits_the_schema() -> None:
    import yaml

    example = Path(__file__).resolve().parents[1] / "goldgate.yaml"
    if not example.is_file():
        pytest.skip("no bundled goldgate.yaml")
    config = load_config(example)
    assert config.suites
    schema = config_json_schema()
    assert _schema_accepts(schema, yaml.safe_load(example.read_text("utf-8")), schema["$defs"])
