"""YAML read with line numbers: plain data plus a map from key path to the line it is on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from goldgate.errors import GoldgateError

KeyPath = tuple[str | int, ...]

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_JSON_SCALARS = (str, int, float, bool, type(None))


def load_yaml_with_lines(
    text: str, source: Path, error: type[GoldgateError]
) -> tuple[Any, dict[KeyPath, int]]:
    """Parse one YAML document into JSON-like data and ``{key path: 1-based line}``.

    Unlike ``yaml.safe_load`` it refuses duplicate keys (PyYAML silently keeps the last one)
    and keeps timestamps as the strings they were written as, so data stays JSON-shaped.
    """
    try:
        loader = yaml.SafeLoader(text)  # checks every character up front
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise error(f"{source}:{line}: malformed YAML: {exc.reason}") from None
    try:
        node = loader.get_single_node()
        lines: dict[KeyPath, int] = {}
        data = _convert(loader, node, (), lines, source, error) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else str(source)
        problem = " ".join(filter(None, [exc.context, exc.problem]))
        raise error(f"{where}: malformed YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise error(f"{source}: malformed YAML: {exc}") from None
    finally:
        loader.dispose()
    return data, lines


def _convert(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: KeyPath,
    lines: dict[KeyPath, int],
    source: Path,
    error: type[GoldgateError],
) -> Any:
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves '<<' merge keys the way the constructor would
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool) or key is None:
                raise error(f"{source}:{line}: {_dotted(path) or 'top level'}: keys must be text")
            key = str(key) if not isinstance(key, bool) else str(key).lower()
            if key in result:
                first = lines.get((*path, key), line)
                raise error(
                    f"{source}:{line}: {_dotted((*path, key))}: duplicate key "
                    f"(first defined on line {first})"
                )
            lines[(*path, key)] = line
            result[key] = _convert(loader, value_node, (*path, key), lines, source, error)
        return result
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item_node in enumerate(node.value):
            lines[(*path, index)] = item_node.start_mark.line + 1
            items.append(_convert(loader, item_node, (*path, index), lines, source, error))
        return items
    if node.tag == _TIMESTAMP_TAG:
        return str(node.value)
    value = loader.construct_object(node, deep=True)
    if not isinstance(value, _JSON_SCALARS):
        line = node.start_mark.line + 1
        raise error(
            f"{source}:{line}: {_dotted(path) or 'top level'}: unsupported YAML value "
            f"of type {type(value).__name__}"
        )
    return value


def _dotted(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def dotted(path: KeyPath) -> str:
    """``('suites', 'qa', 'gate', 0)`` → ``suites.qa.gate[0]``."""
    return _dotted(path)


def line_of(lines: dict[KeyPath, int], path: KeyPath) -> int | None:
    """The line of ``path`` or of its nearest ancestor that has one."""
    for end in range(len(path), 0, -1):
        line = lines.get(path[:end])
        if line is not None:
            return line
    return None
