"""Reading files goldgate does not control: regular files only, bounded in size and nesting.

A golden set, a predictions file, a baseline or a saved result may come from a pull request.
A path that is a FIFO would block forever, one that is a symlink to ``/dev/zero`` would fill
memory, a 100,000-deep JSON array exhausts the interpreter's stack, and a 5,000-digit number
is refused by ``int()``. Each of these is an error naming the file here, never a hang or a
traceback.
"""

from __future__ import annotations

import gc
import json
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from goldgate.errors import GoldgateError

#: the most goldgate reads from one input file (a golden set, predictions, a baseline, a result)
MAX_INPUT_BYTES = 1 << 30
#: the most it reads from a configuration file or pyproject.toml
MAX_CONFIG_BYTES = 16 << 20
#: how deep lists and mappings may nest in any input (JSON or YAML)
MAX_NESTING = 100

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


@contextmanager
def open_regular(
    path: Path, error: type[GoldgateError], *, what: str, limit: int | None = None
) -> Iterator[IO[bytes]]:
    """Open ``path`` for reading only if it is a regular file (symlinks followed) within ``limit``.

    ``FileNotFoundError`` propagates, so callers keep their own "not found" advice; every other
    problem is ``error`` naming the file. Opening never blocks (a FIFO is refused, not waited on).
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise error(f"{path}: {what} is a directory, not a file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise error(f"{path}: {what} is {kind}; goldgate reads only regular files")
        if info.st_size > limit:
            raise error(_too_big(path, what, limit))
        # Back to blocking reads: O_NONBLOCK was only there so that opening a FIFO cannot hang.
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as handle:
        yield handle


def read_regular(
    path: Path, error: type[GoldgateError], *, what: str, limit: int | None = None
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (see :func:`open_regular`)."""
    limit = MAX_INPUT_BYTES if limit is None else limit
    with open_regular(path, error, what=what, limit=limit) as handle:
        data = handle.read(limit + 1)  # a file that grows while it is read is still bounded
    if len(data) > limit:
        raise error(_too_big(path, what, limit))
    return data


def _too_big(path: Path, what: str, limit: int) -> str:
    return f"{path}: {what} is larger than {limit:,} bytes, the most goldgate reads"


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def loads_json(
    text: str | bytes,
    where: str,
    error: type[GoldgateError],
    *,
    allow_duplicates: bool = False,
    describe: Callable[[json.JSONDecodeError], str] | None = None,
) -> Any:
    """Parse JSON; every way it can fail is ``error`` starting with ``where``.

    Unless ``allow_duplicates``, a key repeated in one object is an error (``json`` keeps the
    last, silently). Nesting deeper than :data:`MAX_NESTING` is refused; so is a number
    ``int()`` refuses to convert. ``describe`` words a syntax error (default: the column, for
    one line of JSONL).
    """
    if not allow_duplicates and isinstance(text, str):
        # The fast way: the C parser builds dicts itself, and a count proves that no key
        # was repeated; anything else (a syntax error too: a repeated key may come first)
        # is parsed again below, the careful way, which words every problem.
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            if free_of_duplicates(text, value) and not (
                _openings(text) > MAX_NESTING and nesting(value) > MAX_NESTING
            ):
                return value
    return loads_json_carefully(
        text, where, error, allow_duplicates=allow_duplicates, describe=describe
    )


def loads_json_carefully(
    text: str | bytes,
    where: str,
    error: type[GoldgateError],
    *,
    allow_duplicates: bool = False,
    describe: Callable[[json.JSONDecodeError], str] | None = None,
) -> Any:
    """:func:`loads_json` without its quick way: a hook sees every object's keys. The
    reference that the quick ways are tested against."""
    try:
        value = json.loads(text, object_pairs_hook=None if allow_duplicates else _refuse_duplicates)
    except _DuplicateKey as exc:
        raise error(f"{where}: key {exc.key!r} appears twice in one object") from None
    except json.JSONDecodeError as exc:
        if describe is not None:
            raise error(f"{where}: {describe(exc)}") from None
        # One line of JSONL: ``where`` names the line, the column follows.
        raise error(f"{where}:{exc.colno}: malformed JSON: {exc.msg}") from None
    except RecursionError:
        raise error(_too_deep(where)) from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        raise error(f"{where}: malformed JSON: {exc}") from None
    # Each level of nesting opens a bracket: a text with few of them (every JSONL line of a
    # usual golden set) cannot nest too deep, and is not walked.
    if _openings(text) > MAX_NESTING and nesting(value) > MAX_NESTING:
        raise error(_too_deep(where))
    return value


def free_of_duplicates(text: str, value: Any) -> bool:
    """Whether ``value``, parsed from the JSON ``text``, provably lost no repeated key.

    ``json`` keeps the last of a repeated key silently. Every key-value pair of the text has
    one ``:`` outside strings, so the text's colons are the pairs plus those inside strings;
    a parsed value that kept every pair has as many keys, and (unless an escape spells a
    colon, ``\\u003a``) its strings hold those same string colons. Equal counts prove that no
    pair was dropped; unequal ones (or an escaped colon) prove nothing, and the caller
    parses the careful way. Cheap when, as on a usual JSONL line, every colon is one of the
    top object's keys.
    """
    colons = text.count(":")
    if type(value) is dict and colons == len(value):
        return True  # colons >= pairs >= keys kept >= the top object's keys: all equal
    if "\\u003a" in text or "\\u003A" in text:
        return False
    found = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            found += item.count(":")
        elif type(item) is dict:
            found += len(item)
            for key, child in item.items():
                found += key.count(":")
                stack.append(child)
        elif type(item) is list:
            stack.extend(item)
    return found == colons


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a large input is read into new objects.

    Reading a million records allocates millions of containers, none in a cycle; each
    allocation burst would otherwise set off a collection that walks every object read so
    far (over half the time of reading a golden set).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _openings(text: str | bytes) -> int:
    """How many ``[`` and ``{`` a JSON text holds (in strings too): a bound on its nesting."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def json_problem(exc: json.JSONDecodeError) -> str:
    """``truncated JSON`` when the text ended early, else ``invalid JSON``, at line:column."""
    kind = "truncated JSON" if exc.pos >= len(exc.doc.rstrip()) else "invalid JSON"
    return f"{kind} at line {exc.lineno} column {exc.colno} ({exc.msg})"


def _too_deep(where: str) -> str:
    return f"{where}: nested more than {MAX_NESTING} levels deep"


def nesting(value: Any) -> int:
    """How deep lists and mappings nest in ``value`` (0 for a scalar); iterative, no recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest
