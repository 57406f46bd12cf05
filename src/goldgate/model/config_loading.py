"""Finding and reading the configuration: goldgate.yaml, else ``[tool.goldgate]`` in pyproject.toml.

:func:`load_config` looks from a directory up to the filesystem's root, reads the file (YAML
with the line of each key; TOML scanned for them) and validates it into a :class:`Config`;
every mistake is a :class:`ConfigError` (see :mod:`goldgate.model.config_errors`).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from goldgate.errors import ConfigError
from goldgate.io.inputs import MAX_CONFIG_BYTES, read_regular
from goldgate.io.user_code import importable_from
from goldgate.io.yaml import KeyPath, dotted, load_yaml_with_lines
from goldgate.model.config import FILE_ONLY_KEYS, Config
from goldgate.model.config_errors import (
    raise_at,
    translate_error,
    unknown_key_message,
    value_kind,
)

CONFIG_FILENAMES = ("goldgate.yaml", "goldgate.yml")
PYPROJECT = "pyproject.toml"


def load_config(
    path: str | os.PathLike[str] | None = None, *, cwd: str | os.PathLike[str] | None = None
) -> Config:
    """Read and validate the configuration (goldgate.yaml, else [tool.goldgate] in pyproject)."""
    base = Path.cwd() if cwd is None else Path(cwd)
    if path is not None:
        path = Path(path)
        if not path.is_absolute():
            path = base / path
    if path is None or path.is_dir():
        path = _find_config(path or base)
    text = _read_config_text(path)

    prefix: KeyPath = ()
    lines: dict[KeyPath, int] = {}
    if path.suffix == ".toml":
        data = _tool_table(_parse_toml(text, path), path).get("goldgate")
        if data is None:
            raise ConfigError(f"{path}: no [tool.goldgate] table")
        prefix = ("tool", "goldgate")
        lines = toml_key_lines(text, prefix)
    else:
        data, lines = load_yaml_with_lines(text, path, ConfigError)
        if data is None:
            raise ConfigError(f"{path}: the configuration is empty (start with 'version: 1')")
    if not isinstance(data, dict):
        where = dotted(prefix) or "the top level"
        raise ConfigError(f"{path}: {where} must be a mapping of keys, not {value_kind(data)}")
    for key in FILE_ONLY_KEYS:
        if key in data:
            raise_at(path, lines, prefix, (key,), unknown_key_message(key, Config))
    return parse_config(data, root=path.parent, source=path, lines=lines, prefix=prefix)


def parse_config(
    data: Mapping[str, Any],
    *,
    root: Path,
    source: Path,
    lines: Mapping[KeyPath, int] | None = None,
    prefix: KeyPath = (),
) -> Config:
    """Validate already-parsed configuration data; errors name ``source`` and the key path.

    ``root`` goes on ``sys.path`` (see :func:`importable_from`).
    """
    importable_from(root)
    try:
        return Config.model_validate({**data, "root": root, "source": source})
    except ValidationError as exc:
        raise translate_error(exc, data, source, dict(lines or {}), prefix) from None


def _read_config_text(path: Path) -> str:
    """A configuration file's text: a regular file, of bounded size, in UTF-8."""
    try:
        raw = read_regular(path, ConfigError, what="configuration file", limit=MAX_CONFIG_BYTES)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from None


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: malformed TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: malformed TOML: nested too deeply") from None


#: A TOML key: bare, "basic" or 'literal' parts joined by dots (the spec's grammar).
_TOML_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_TOML_DOTTED = rf"{_TOML_KEY}(?:[ \t]*\.[ \t]*{_TOML_KEY})*"
_TOML_HEADER = re.compile(rf"[ \t]*(\[\[?)[ \t]*({_TOML_DOTTED})[ \t]*\]\]?[ \t]*(?:#.*)?$")
_TOML_ASSIGN = re.compile(rf"[ \t]*({_TOML_DOTTED})[ \t]*=")
_TOML_STRING_OR_COMMENT = re.compile(r""""(?:[^"\\]|\\.)*"|'[^']*'|#.*""")


def toml_key_lines(text: str, prefix: KeyPath) -> dict[KeyPath, int]:
    """The line of every table header and ``key =`` under ``prefix``, keyed by the path
    below ``prefix`` (what ``line_of`` reads for the YAML configuration).

    ``tomllib`` keeps no positions, so the text is scanned once, line by line: headers
    (``[a.b]``, ``[[a.b]]``, counted per path as array elements) and assignments at the
    start of a line, outside multi-line strings and arrays. Each key is decoded by
    ``tomllib`` itself. Keys inside inline tables or multi-line arrays get no line of their
    own: an error there points at the line of the key that holds them.
    """
    found: dict[KeyPath, int] = {}
    table: KeyPath = ()  # the current table's path from the document's root
    counts: dict[KeyPath, int] = {}
    in_string: str | None = None  # the closing quotes of a multi-line string we are in
    depth = 0  # open brackets of a multi-line array
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2:
                in_string = None
            continue
        if depth == 0:
            header = _TOML_HEADER.match(line)
            if header:
                table = _toml_key(header.group(2))
                if header.group(1) == "[[":
                    index = counts.get(table, 0)
                    counts[table] = index + 1
                    table = (*table, index)
                for end in range(1, len(table) + 1):
                    found.setdefault(table[:end], number)  # and the tables it implies
                continue
            assign = _TOML_ASSIGN.match(line)
            if assign:
                path = (*table, *_toml_key(assign.group(1)))
                for end in range(len(table) + 1, len(path)):
                    found.setdefault(path[:end], number)  # the tables a dotted key makes
                found[path] = number
                line = line[assign.end() :]
        for quotes in ('"""', "'''"):
            if line.count(quotes) % 2:
                in_string = quotes
                break
        else:
            # Brackets outside strings and comments: an array may go on below.
            bare = _TOML_STRING_OR_COMMENT.sub("", line)
            depth = max(0, depth + bare.count("[") - bare.count("]"))
    return {
        path[len(prefix) :]: number
        for path, number in found.items()
        if len(path) > len(prefix) and path[: len(prefix)] == prefix
    }


def _toml_key(key: str) -> KeyPath:
    """``a."b c".d`` → ``('a', 'b c', 'd')``, decoded by ``tomllib`` as TOML decodes it."""
    try:
        node: Any = tomllib.loads(f"{key} = 0")
    except tomllib.TOMLDecodeError:  # not a key after all: the line gets no entry
        return ("",)
    path: list[str | int] = []
    while isinstance(node, dict) and len(node) == 1:
        ((name, node),) = node.items()
        path.append(name)
    return tuple(path)


def _tool_table(document: dict[str, Any], path: Path) -> dict[str, Any]:
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: 'tool' is not a table (it is {value_kind(tool)})")
    return tool


def _find_config(base: Path) -> Path:
    # The nearest directory, from here up to the filesystem's root, as pytest and ruff look.
    for directory in (base, *base.resolve().parents):
        found = _config_in(directory)
        if found is not None:
            return found
    raise ConfigError(
        f"{base}: no goldgate.yaml here or in a parent directory (nor a [tool.goldgate] table"
        " in pyproject.toml); 'goldgate init' writes one"
    )


def _config_in(directory: Path) -> Path | None:
    for name in CONFIG_FILENAMES:
        candidate = directory / name
        if candidate.exists():
            return candidate
    pyproject = directory / PYPROJECT
    if pyproject.exists():
        # A pyproject.toml that cannot be read is reported as such: it may well hold the
        # [tool.goldgate] table the user means.
        tool = _tool_table(_parse_toml(_read_config_text(pyproject), pyproject), pyproject)
        if "goldgate" in tool:
            return pyproject
    return None
