"""YAML read with line numbers: plain data plus a map from key path to the line it is on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from goldgate.errors import GoldgateError
from goldgate.io.inputs import MAX_NESTING

KeyPath = tuple[str | int, ...]

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_JSON_SCALARS = (str, int, float, bool, type(None))
_MERGE_TAG = "tag:yaml.org,2002:merge"
#: values a document may gain through aliases (its size expanded minus its size as written):
#: a 411-byte "billion laughs" would otherwise expand to hundreds of millions of values
MAX_ALIAS_NODES = 100_000


class _Walk:
    """State of one document's conversion: the loader, where errors point, the lines found."""

    def __init__(self, loader: yaml.SafeLoader, source: Path, error: type[GoldgateError]) -> None:
        self.loader = loader
        self.source = source
        self.error = error
        self.lines: dict[KeyPath, int] = {}
        #: per mapping node, its own keys (not merged in), noted before it is flattened
        self.explicit: dict[int, set[int]] = {}

    def visit(self, node: yaml.Node, path: KeyPath) -> None:
        """Refuse deep nesting."""
        if len(path) > MAX_NESTING:
            raise self.fail(node, f"nested more than {MAX_NESTING} levels deep")

    def fail(self, node: yaml.Node, message: str) -> GoldgateError:
        return self.error(f"{self.source}:{node.start_mark.line + 1}: {message}")

    def check_aliases(self, root: yaml.Node) -> None:
        """Refuse a document whose aliases expand it by more than :data:`MAX_ALIAS_NODES`.

        Sizes are computed on the node graph, each node once, before anything is expanded.
        """
        expanded: dict[int, int] = {}
        # Iterative post-order walk: (node, children done?); nesting is checked later.
        stack: list[tuple[yaml.Node, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            if id(node) in expanded and not done:
                continue
            children = _children(node)
            if not done:
                expanded[id(node)] = 0  # on the stack; a cycle counts nothing more
                stack.append((node, True))
                stack.extend((child, False) for child in children if id(child) not in expanded)
                continue
            expanded[id(node)] = 1 + sum(expanded[id(child)] for child in children)
            if expanded[id(node)] - len(expanded) > MAX_ALIAS_NODES:
                raise self.fail(node, f"aliases expand to more than {MAX_ALIAS_NODES:,} values")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


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
    walk = _Walk(loader, source, error)
    try:
        node = loader.get_single_node()
        if node is not None:
            walk.check_aliases(node)
        data = _convert(walk, node, ()) if node is not None else None
    except RecursionError:
        # PyYAML composes nested collections recursively: hundreds of levels exhaust the stack.
        raise error(f"{source}: nested more than {MAX_NESTING} levels deep") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else str(source)
        problem = " ".join(filter(None, [exc.context, exc.problem]))
        raise error(f"{where}: malformed YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise error(f"{source}: malformed YAML: {exc}") from None
    finally:
        loader.dispose()
    return data, walk.lines


def _convert(walk: _Walk, node: yaml.Node, path: KeyPath) -> Any:
    walk.visit(node, path)
    source, error, loader, lines = walk.source, walk.error, walk.loader, walk.lines
    if isinstance(node, yaml.MappingNode):
        explicit = walk.explicit.setdefault(
            id(node), {id(key) for key, _ in node.value if key.tag != _MERGE_TAG}
        )
        loader.flatten_mapping(node)  # resolves '<<' merge keys the way the constructor would
        result: dict[str, Any] = {}
        merged: set[str] = set()
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise error(f"{source}:{line}: {_dotted(path) or 'top level'}: keys must be text")
            key = _scalar(walk, key_node, path)
            if not isinstance(key, str | int | float | bool) or key is None:
                raise error(f"{source}:{line}: {_dotted(path) or 'top level'}: keys must be text")
            key = str(key) if not isinstance(key, bool) else str(key).lower()
            from_merge = id(key_node) not in explicit
            # A key given explicitly overrides one merged in (as PyYAML does); two explicit
            # ones are a mistake PyYAML would hide.
            if key in result and not from_merge and key not in merged:
                first = lines.get((*path, key), line)
                raise error(
                    f"{source}:{line}: {_dotted((*path, key))}: duplicate key "
                    f"(first defined on line {first})"
                )
            if from_merge:
                merged.add(key)
            else:
                merged.discard(key)
            lines[(*path, key)] = line
            result[key] = _convert(walk, value_node, (*path, key))
        return result
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item_node in enumerate(node.value):
            lines[(*path, index)] = item_node.start_mark.line + 1
            items.append(_convert(walk, item_node, (*path, index)))
        return items
    if node.tag == _TIMESTAMP_TAG:
        return str(node.value)
    value = _scalar(walk, node, path)
    if not isinstance(value, _JSON_SCALARS):
        line = node.start_mark.line + 1
        raise error(
            f"{source}:{line}: {_dotted(path) or 'top level'}: unsupported YAML value "
            f"of type {type(value).__name__}"
        )
    return value


def _scalar(walk: _Walk, node: yaml.Node, path: KeyPath) -> Any:
    try:
        return walk.loader.construct_object(node, deep=True)
    except ValueError as exc:  # int() refuses a number of thousands of digits
        raise walk.fail(node, f"{_dotted(path) or 'top level'}: {exc}") from None


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
