"""Pydantic's validation errors of the configuration, turned into messages a user can act on.

Each names the file, the line (YAML only: TOML gives no positions), the key path
(``suites.qa.gate.exact_macth``) and, for an unknown key, the nearest valid spelling.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from goldgate.errors import ConfigError, GoldgateError, MetricError, did_you_mean
from goldgate.io.yaml import KeyPath, dotted, line_of
from goldgate.model.config import (
    FILE_ONLY_KEYS,
    AnchorConfig,
    Config,
    GateRule,
    HistoryConfig,
    KeyedError,
    ReportConfig,
    SignificanceConfig,
    SuiteConfig,
    SystemConfig,
)


def translate_error(
    exc: ValidationError,
    data: Any,
    source: Path,
    lines: dict[KeyPath, int],
    prefix: KeyPath,
) -> GoldgateError:
    errors = exc.errors()
    # An unknown key is usually a misspelt known one, which is then reported missing too:
    # name the typo, not its consequence.
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    path, present = _data_path(error["loc"], data)
    message = _message(error, path, present)
    error_type: type[ConfigError] = ConfigError
    keyed = (error.get("ctx") or {}).get("error")
    if isinstance(keyed, KeyedError):
        path = path + keyed.subpath
        message = keyed.message
        if keyed.metric:
            error_type = MetricError
    return _error_at(error_type, source, lines, prefix, path, message)


def _data_path(loc: tuple[int | str, ...], data: Any) -> tuple[KeyPath, bool]:
    """Keep the parts of pydantic's loc that exist in the data (drops union member labels).

    Returns the path and whether its last part is present in the data (False for a
    missing key, whose name is kept so the message can say which).
    """
    path: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, Mapping) and str(part) in node:
            path.append(str(part))
            node = node[str(part)]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(part)
            node = node[part]
        elif isinstance(node, Mapping) and _is_field_name(part):
            path.append(str(part))
            return tuple(path), False
        else:
            continue
    return tuple(path), True


def _is_field_name(part: int | str) -> bool:
    return isinstance(part, str) and any(
        part in model.model_fields
        for model in (
            Config,
            SystemConfig,
            SuiteConfig,
            GateRule,
            SignificanceConfig,
            ReportConfig,
            HistoryConfig,
            AnchorConfig,
        )
    )


def _message(error: ErrorDetails, path: KeyPath, present: bool) -> str:
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        return unknown_key_message(str(path[-1]), _model_at(path[:-1]))
    if kind == "missing" or not present:
        return "required key is missing"
    if kind == "literal_error" and isinstance(value, str):
        expected = str((error.get("ctx") or {}).get("expected", ""))
        choices = re.findall(r"'([^']*)'", expected)
        return f"{value!r} is not one of {expected}{did_you_mean(value, choices)}"
    msg = error["msg"].removeprefix("Value error, ")
    return f"{msg[:1].lower()}{msg[1:]} (got {_short(value)})"


def unknown_key_message(key: str, model: type[BaseModel] | None) -> str:
    if model is None:
        return f"unknown key {key!r}"
    valid = [name for name in model.model_fields if name not in FILE_ONLY_KEYS]
    return f"unknown key {key!r}{did_you_mean(key, valid)}; valid keys: {', '.join(valid)}"


def _model_at(path: KeyPath) -> type[BaseModel] | None:
    """The model that validates the mapping at ``path`` (to list its valid keys)."""
    annotation: Any = Config
    for part in path:
        model = _as_model(annotation)
        if model is not None:
            field = model.model_fields.get(str(part))
            if field is None:
                return None
            annotation = field.annotation
            continue
        if typing.get_origin(annotation) is dict:
            annotation = typing.get_args(annotation)[1]
            continue
        return None
    return _as_model(annotation)


def _as_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return None
    for arg in typing.get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def raise_at(
    source: Path, lines: Mapping[KeyPath, int], prefix: KeyPath, path: KeyPath, message: str
) -> typing.NoReturn:
    raise _error_at(ConfigError, source, lines, prefix, path, message)


def _error_at(
    error_type: type[ConfigError],
    source: Path,
    lines: Mapping[KeyPath, int],
    prefix: KeyPath,
    path: KeyPath,
    message: str,
) -> ConfigError:
    line = line_of(dict(lines), path)
    where = f"{source}:{line}" if line is not None else str(source)
    key = dotted(prefix + path)
    return error_type(f"{where}: {key}: {message}" if key else f"{where}: {message}")


def value_kind(value: Any) -> str:
    return {list: "a list", str: "text", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
