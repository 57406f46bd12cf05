"""Read what ``goldgate score`` scores: a JSONL file of rows, or line-aligned text files."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from goldgate.errors import InputError
from goldgate.io.inputs import open_regular
from goldgate.wording import plural


@dataclass(frozen=True)
class ScoringData:
    """Candidates and their references, aligned by index."""

    candidates: list[str]
    references: list[list[str]]
    #: each row's ``input`` (what an LLM judge may see); None where the data has none
    inputs: list[Any] | None = None


def _iter_lines(path: Path, label: str = "") -> Iterator[tuple[int, str]]:
    """Numbered lines of a UTF-8 file, read as a stream; errors name the file and line.

    Lines end at LF only (as sacrebleu reads them); a CR before the LF and a UTF-8 byte order
    mark at the start of the file are dropped.
    """
    name = f"{label}{path}"
    try:
        # Streamed, so no size cap; but a FIFO or a device would block or never end.
        with open_regular(path, InputError, what="input file", limit=sys.maxsize) as handle:
            yield from _numbered_lines(handle, name)
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None


def _numbered_lines(handle: IO[bytes], name: str) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(handle, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{name}:{number}: invalid UTF-8 (byte {raw[exc.start]:#04x} "
                f"at column {exc.start + 1})"
            ) from None
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if line.endswith("\n"):
            line = line[:-2] if line.endswith("\r\n") else line[:-1]
        yield number, line


def _describe(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _row_references(row: dict[str, Any], where: str) -> list[str]:
    if "references" in row:
        refs = row["references"]
        if not isinstance(refs, list):
            raise InputError(
                f"{where}: 'references' must be a list of strings, not {_describe(refs)}"
            )
    elif "reference" in row:
        refs = [row["reference"]]
    else:
        raise InputError(f"{where}: missing 'references'")
    if not refs:
        raise InputError(f"{where}: 'references' is empty; every row needs at least one")
    for index, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise InputError(f"{where}: reference {index + 1} is {_describe(ref)}, not a string")
    return refs


def read_jsonl(path: Path) -> ScoringData:
    """Rows ``{"candidate": str, "references": [str, ...]}`` (``reference``: str also taken)."""
    candidates: list[str] = []
    references: list[list[str]] = []
    inputs: list[Any] = []
    # Golden sets repeat their references row after row (one set per system or sample); one
    # string object per distinct reference keeps memory to the distinct texts.
    distinct: dict[str, str] = {}
    decode = json.JSONDecoder().decode
    for number, line in _iter_lines(path):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = decode(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: malformed JSON: {exc.msg} (column {exc.colno})") from None
        except (RecursionError, ValueError):
            raise InputError(
                f"{where}: malformed JSON: nested too deeply or a number too long"
            ) from None
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object, got {_describe(row)}")
        if "candidate" not in row:
            raise InputError(f"{where}: missing 'candidate'")
        candidate = row["candidate"]
        if not isinstance(candidate, str):
            raise InputError(f"{where}: 'candidate' is {_describe(candidate)}, not a string")
        candidates.append(candidate)
        inputs.append(row.get("input"))
        references.append([distinct.setdefault(ref, ref) for ref in _row_references(row, where)])
    if not candidates:
        raise InputError(f"{path}: no rows to score")
    has_inputs = any(value is not None for value in inputs)
    return ScoringData(candidates, references, inputs if has_inputs else None)


def read_text_files(hyps: Path, refs: Sequence[Path]) -> ScoringData:
    """One candidate per line of ``hyps``; line i of every ``refs`` file is a reference of it."""
    candidates = [line for _, line in _iter_lines(hyps, "--hyps ")]
    streams = [[line for _, line in _iter_lines(path, "--refs ")] for path in refs]
    for path, stream in zip(refs, streams, strict=True):
        if len(stream) != len(candidates):
            raise InputError(
                f"--hyps {hyps} has {plural(len(candidates), 'line')} but --refs {path} has "
                f"{len(stream)}: the files must be line-aligned"
            )
    if not candidates:
        raise InputError(f"--hyps {hyps}: no lines to score")
    return ScoringData(candidates, [list(row) for row in zip(*streams, strict=True)])
