"""Input files read as text: their bytes, their UTF-8, and JSON Lines a batch at a time.

Golden sets, predictions and the Dask readers share these: bad UTF-8 and a line that is not
JSON are errors naming the file, the line and (for UTF-8) the byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

from goldgate.errors import GoldgateError
from goldgate.io.inputs import MAX_NESTING, free_of_duplicates, loads_json, nesting, read_regular


def read_utf8(path: Path, error: type[GoldgateError], *, what: str) -> str:
    """A file's text; bad UTF-8 names the line and byte offset. A leading BOM is dropped."""
    return decode_utf8(read_bytes(path, error, what=what), str(path), error)


def read_bytes(path: Path, error: type[GoldgateError], *, what: str) -> bytes:
    """A regular file's bytes (see :func:`read_regular`); a missing one is ``error``."""
    try:
        return read_regular(path, error, what=what)
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None


def decode_utf8(data: bytes, label: str, error: type[GoldgateError]) -> str:
    """Bytes read from ``label`` as text; bad UTF-8 names the line and byte offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(
            f"{label}:{line}:{column}: not valid UTF-8 (byte offset {exc.start}: "
            f"{data[exc.start : exc.start + 1]!r}); save the file as UTF-8"
        ) from None


def json_lines(text: str, label: str, error: type[GoldgateError]) -> Iterator[tuple[int, Any]]:
    """``(line, value)`` of every non-blank line of a JSON Lines text read from ``label``;
    a line that is not JSON is ``error`` naming ``label:line``."""
    for numbers, values in json_line_batches(text, label, error):
        yield from zip(numbers, values, strict=True)


def json_line_batches(
    text: str, label: str, error: type[GoldgateError]
) -> Iterator[tuple[Sequence[int], list[Any]]]:
    """:func:`json_lines` a batch at a time: the line numbers and the values of the
    non-blank lines of about :data:`_BATCH_CHARS` characters.

    Each value is what :func:`~goldgate.io.inputs.loads_json` gives for its line (the same
    value, or the same error, raised when its batch is reached); lines that are one object
    each are parsed a batch in one call (see :func:`_batch_objects`), the rest one by one.
    """
    # Split on "\n" only: str.splitlines also breaks at U+2028 and friends, which JSON strings
    # may hold raw. A final newline ends the last line; it does not start a blank one.
    body = text[:-1] if text.endswith("\n") else text
    number = 0
    for chunk in _chunks(body):
        lines = chunk.split("\n")
        first = number + 1
        number += len(lines)
        values = _batch_objects(chunk, lines)
        if values is not None and _UNPARSED not in values:
            yield range(first, number + 1), values
            continue
        numbers: list[int] = []
        parsed: list[Any] = []
        for offset, line in enumerate(lines):
            value = values[offset] if values is not None else _UNPARSED
            if value is _UNPARSED:
                if not line.strip():
                    continue
                try:
                    value = loads_json(line, f"{label}:{first + offset}", error)
                except GoldgateError:
                    # the lines before it first: a problem in one of them is reported first
                    yield numbers, parsed
                    raise
            numbers.append(first + offset)
            parsed.append(value)
        yield numbers, parsed


#: about how many characters of JSON Lines are parsed in one call
_BATCH_CHARS = 1 << 20
#: a line of a batch that must be parsed on its own
_UNPARSED: Any = object()


def _chunks(text: str) -> Iterator[str]:
    """``text`` cut at newlines into pieces of about :data:`_BATCH_CHARS` characters."""
    start = 0
    while True:
        end = text.find("\n", start + _BATCH_CHARS)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _batch_objects(chunk: str, lines: list[str]) -> list[Any] | None:
    """The value of each line of ``chunk`` (``lines``, its lines) parsed in one ``json`` call,
    or None when that cannot be proved to equal parsing each line on its own; an item is
    :data:`_UNPARSED` where a repeated key cannot be ruled out.

    The lines are joined as ``[line,\\nline,...]``. When that parses to as many objects as
    lines, every line starts with ``{`` and the batch holds no other ``{`` (counted), each
    line's value is its object: JSON strings cannot hold a raw newline, so each line's ``{``
    opens an object; there are no other objects, so none nests in another, each item of the
    list is one of them and starts a line, and a line's object is all the line holds (but
    blanks after it, which a line on its own may have too).
    """
    n = len(lines)
    if not chunk.startswith("{") or chunk.count("\n{") != n - 1 or chunk.count("{") != n:
        return None
    try:
        values: list[Any] = json.loads("[" + ",\n".join(lines) + "]")
    except (ValueError, RecursionError):  # the lines one by one find the first problem
        return None
    if len(values) != n or set(map(type, values)) != {dict}:
        return None
    # No object nests in another, so each line's colons are at least its keys; equal totals
    # mean equal counts for each line, and no key was repeated (see free_of_duplicates).
    if chunk.count(":") != sum(map(len, values)):
        for index, line in enumerate(lines):
            if line.count(":") != len(values[index]) and not free_of_duplicates(
                line, values[index]
            ):
                values[index] = _UNPARSED
    if chunk.count("[") + 1 > MAX_NESTING:
        # as loads_json does: only a line with that many brackets can nest too deep
        for index, brackets in enumerate(map(str.count, lines, repeat("["))):
            if brackets + 1 > MAX_NESTING and nesting(values[index]) > MAX_NESTING:
                values[index] = _UNPARSED
    return values


def split_lines(text: str) -> Iterator[str]:
    """``text.split("\\n")``, lazily: a list of every line would double the text in memory."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1
