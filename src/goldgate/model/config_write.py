"""Small, comment-preserving edits of goldgate.yaml: set a gate threshold in place.

A YAML round trip through a parser would drop the user's comments and layout, so the value is
changed on the line where the key is written (found by the same line-aware loader that
reports configuration errors), and the edited text is validated before it replaces the file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from goldgate.errors import ConfigError, UsageError
from goldgate.io.atomic import write_text_atomic
from goldgate.io.yaml import load_yaml_with_lines
from goldgate.model.config_loading import parse_config

_NUMBER = r"[-+0-9.eE]+|\.inf|\.nan|null|~"


def set_gate_values(path: Path, values: Mapping[tuple[str, str, str], float]) -> list[str]:
    """Set ``suites.<suite>.gate.<metric>.<rule>`` to each value; returns the keys not written.

    A key is written where it already is, or added to a flow mapping (``{min: 80}``) of its
    metric; a block-style rule without the key is left to the user (and returned).
    """
    if path.suffix not in (".yaml", ".yml"):
        raise UsageError(f"{path}: --write edits goldgate.yaml only; set the values by hand")
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    _, where = load_yaml_with_lines(text, path, ConfigError)
    skipped: list[str] = []
    for (suite, metric, rule), value in values.items():
        number = f"{value:g}"
        key = ("suites", suite, "gate", metric, rule)
        dotted = ".".join(key)
        if key in where:
            index = where[key] - 1
            pattern = re.compile(rf"(\b{re.escape(rule)}\s*:\s*)({_NUMBER})")
            # number is digits, '.', 'e', '+', '-' only: safe in a replacement template
            edited, count = pattern.subn(rf"\g<1>{number}", lines[index], count=1)
            if count:
                lines[index] = edited
                continue
        elif key[:-1] in where:
            index = where[key[:-1]] - 1
            pattern = re.compile(rf"(\b{re.escape(metric)}\s*:\s*\{{)(\s*)(\}}?)")
            match = pattern.search(lines[index])
            if match:
                joiner = "" if match.group(3) else ", "
                insert = f"{match.group(1)}{rule}: {number}{joiner}{match.group(3)}"
                lines[index] = lines[index][: match.start()] + insert + lines[index][match.end() :]
                continue
        skipped.append(dotted)
    new_text = "".join(lines)
    data, new_where = load_yaml_with_lines(new_text, path, ConfigError)
    parse_config(data, root=path.parent, source=path, lines=new_where)  # never write a bad file
    try:
        # A linked goldgate.yaml (shared between checkouts) is written through: the link stays.
        write_text_atomic(path, new_text)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}; nothing changed") from None
    return skipped
