"""The JSON Schema of goldgate.yaml for editors, with the known metric names and their options."""

from __future__ import annotations

from typing import Any

from goldgate.errors import GoldgateError
from goldgate.metrics.base import Metric
from goldgate.model.config import CALLABLE_PATH, FILE_ONLY_KEYS, Config

SCHEMA_ID = "https://goldgate.dev/schema/goldgate.schema.json"


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema of goldgate.yaml, with the known metric names and their options."""
    schema = Config.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "goldgate configuration"
    for key in FILE_ONLY_KEYS:
        schema["properties"].pop(key, None)
    defs = schema["$defs"]
    defs["SuiteConfig"]["properties"]["metrics"] = _metrics_schema()
    significance = schema["properties"]["significance"]
    significance["anyOf"] = [
        *significance.get("anyOf", []),
        {"const": False},
        {"const": "off"},
    ]
    significance.pop("default", None)
    history = schema["properties"]["history"]
    history["anyOf"] = [*history.get("anyOf", []), {"const": False}, {"const": "off"}]
    history.pop("default", None)
    diagnose = schema["properties"]["diagnose"]
    diagnose["anyOf"] = [*diagnose.get("anyOf", []), {"const": False}, {"const": "off"}]
    diagnose.pop("default", None)
    from goldgate.diagnosis.registry import builtin_detector_names

    disable = defs["DiagnoseConfig"]["properties"]["disable"]
    disable["items"] = {"enum": builtin_detector_names()}
    return schema


def _metrics_schema() -> dict[str, Any]:
    from goldgate.metrics.registry import metric_names

    properties: dict[str, Any] = {}
    names = metric_names()
    for name in names:
        options = _options_schema(name)
        properties[name] = {"anyOf": [options, {"type": "null"}]}
    return {
        "type": "object",
        "description": "metric name (or package.module:function) → options",
        "minProperties": 1,
        "propertyNames": {"anyOf": [{"enum": names}, {"pattern": CALLABLE_PATH.pattern}]},
        "properties": properties,
        "additionalProperties": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    }


def _options_schema(name: str) -> dict[str, Any]:
    """A metric's options schema when its module imports; a plain object otherwise."""
    from goldgate.metrics.registry import _BUILTINS, _load_object

    target = _BUILTINS.get(name)
    try:
        cls = _load_object(target, name) if target else None
    except GoldgateError:
        cls = None
    if isinstance(cls, type) and issubclass(cls, Metric):
        return cls.Options.json_schema()
    return {"type": "object"}
