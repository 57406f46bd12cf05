"""``format_break``: the references share a structured shape and the output lost it.

The shapes: a JSON object or array (the whole text parses as JSON), a fenced code block, a
Markdown table (a header row and a ``|---|`` rule) and a list (lines that start with ``-``,
``*``, ``•`` or ``1.``: two or more of them, or all of the text's lines). Present when every
reference has the same shape and the output does not: it is plain text, JSON that no longer
parses (or wrapped in a code fence), or JSON of another top-level type (an array where the
references are objects).
"""

from __future__ import annotations

import json
import re

from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import bounded

_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•+]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE)
_TABLE_RULE = re.compile(
    r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$", re.MULTILINE
)


def shape(text: str) -> str | None:
    """The structured shape of ``text``, or None for plain text."""
    stripped = text.strip()
    if not stripped:
        return None
    first = stripped[0]
    if first in "{[" and stripped[-1] in "}]":
        try:
            parsed = json.loads(stripped)
        except ValueError:
            pass
        else:
            if isinstance(parsed, dict):
                return "a JSON object"
            if isinstance(parsed, list):
                return "a JSON array"
    if "\n" not in stripped:
        return "a list" if _LIST_ITEM.match(stripped) else None
    if "```" in stripped:
        return "a code block"
    if "|" in stripped and _TABLE_RULE.search(stripped):
        return "a table"
    items = len(_LIST_ITEM.findall(stripped))
    if items >= 2 or (items and items == stripped.count("\n") + 1):
        return "a list"
    return None


def _could_be_structured(text: str) -> bool:
    stripped = text.lstrip()
    return bool(stripped) and (stripped[0] in "{[-*•+" or "\n" in stripped or stripped[0].isdigit())


class FormatBreak:
    name = "format_break"
    version = 1
    same_when_unchanged = True

    def __call__(self, example: Example, context: SideContext) -> str | None:
        references = example.references
        if not example.output.strip() or not references:
            return None
        if not all(map(_could_be_structured, references)):
            return None
        shapes = {shape(reference) for reference in references}
        if len(shapes) != 1:
            return None
        (expected,) = shapes
        if expected is None:
            return None
        got = shape(example.output) if _could_be_structured(example.output) else None
        if got == expected:
            return None
        if got is None and expected.startswith("a JSON") and example.output.lstrip()[:1] in "{[":
            return bounded(f"invalid JSON where the references are {expected[2:]}s")
        if got is None:
            return bounded(f"plain text where the references are {expected[2:]}s")
        return bounded(f"{got} where the references are {expected[2:]}s")


FORMAT_BREAK = FormatBreak()
