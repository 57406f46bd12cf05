"""Golden sets: JSONL, YAML or CSV files of inputs with references, validated and hashed.

A record is ``{"id", "input", "references": [...], "tags": [...], "meta": {...}}``;
``reference`` (one string) is accepted for ``references``. Every problem is a
:class:`GoldenSetError` naming the file and the line.

CSV files need a header row with ``id``, ``input`` and one or more reference columns:
``reference``/``references`` (the column name may repeat) or numbered ``reference_1``,
``reference_2``, ...; empty reference cells are skipped, so examples may have different
numbers of references. An optional ``tags`` column holds ``|``-separated tags; every other
column goes into ``meta`` as text. ``input`` is taken as text, never parsed.

The content hash covers each record's id, input, references and tags (sorted by id), not
``meta`` and not the file's formatting, so the same set in JSONL, YAML or CSV hashes the same
and editing a comment or reordering lines does not unfreeze a suite.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldgate._yaml import load_yaml_with_lines
from goldgate.errors import GoldenSetError, GoldgateError, did_you_mean
from goldgate.inputs import loads_json, read_regular

JSONL_SUFFIXES = (".jsonl", ".ndjson")
YAML_SUFFIXES = (".yaml", ".yml")
CSV_SUFFIXES = (".csv",)
#: the longest CSV cell goldgate reads (Python's csv default is 131,072)
MAX_CSV_CELL_CHARS = 16 << 20
RECORD_KEYS = ("id", "input", "references", "reference", "tags", "meta")
_NUMBERED_REFERENCE = re.compile(r"^references?_?\d+$")
TAG_SEPARATOR = "|"


@dataclass(frozen=True, slots=True)
class GoldenRecord:
    """One golden example; ``line`` is its 1-based line (JSONL, CSV) or item number (YAML)."""

    id: str
    input: Any
    references: tuple[str, ...]
    tags: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    line: int = 0


@dataclass(frozen=True)
class GoldenSet:
    """A frozen suite of golden records with the hash that identifies its content."""

    suite: str
    path: Path
    records: tuple[GoldenRecord, ...]
    content_hash: str

    def by_id(self) -> dict[str, GoldenRecord]:
        """Records keyed by id, in file order."""
        return {record.id: record for record in self.records}

    def tags(self) -> list[str]:
        """Every tag used in the set, sorted."""
        return sorted({tag for record in self.records for tag in record.tags})

    def __len__(self) -> int:
        return len(self.records)


#: records hashed per encoder call: bounded memory, the C encoder's speed
_HASH_BATCH = 4096


def content_hash(records: tuple[GoldenRecord, ...] | list[GoldenRecord]) -> str:
    """``sha256:<hex>`` of a canonical JSON of the records' id, input, references and tags.

    The canonical text is the JSON list of ``{"id", "input", "references", "tags"}`` objects
    sorted by id (sorted keys, no spaces); it is fed to the hash a batch of records at a
    time, so a million-record set never holds it whole.
    """
    encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    ordered = sorted(records, key=lambda record: record.id)
    digest = hashlib.sha256(b"[")
    for start in range(0, len(ordered), _HASH_BATCH):
        batch = [
            {
                "id": record.id,
                "input": record.input,
                "references": list(record.references),
                "tags": sorted(record.tags),
            }
            for record in ordered[start : start + _HASH_BATCH]
        ]
        # "[a,b]" → "a,b": the items of the whole list's JSON, joined by the same separator
        text = encoder.encode(batch)[1:-1]
        digest.update(("," + text if start else text).encode("utf-8"))
    digest.update(b"]")
    return "sha256:" + digest.hexdigest()


def is_dataset(location: str) -> bool:
    """Whether a golden set (or predictions) location is a glob of files or a URL
    (``s3://...``, ``file://...``): such sets are read on a Dask cluster (see dask_data)."""
    if "://" in location:
        return True
    return any(char in location for char in "*?[") and not Path(location).exists()


def load_goldens(path: Path, suite: str) -> GoldenSet:
    """Read, validate and hash a golden set (format chosen by the file's suffix)."""
    from goldgate.parquet import PARQUET_SUFFIXES

    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES + YAML_SUFFIXES + CSV_SUFFIXES + PARQUET_SUFFIXES:
        known = ", ".join(JSONL_SUFFIXES + YAML_SUFFIXES + CSV_SUFFIXES + PARQUET_SUFFIXES)
        raise GoldenSetError(f"{path}: unknown golden set format {suffix!r} (use {known})")
    raw: _Raw
    if suffix in PARQUET_SUFFIXES:
        raw = _read_parquet(path)
    else:
        text = read_utf8(path, GoldenSetError, what="golden set")
        if suffix in JSONL_SUFFIXES:
            raw = _read_jsonl(text, path)
        elif suffix in YAML_SUFFIXES:
            raw = _read_yaml(text, path)
        else:
            raw = _read_csv(text, path)
    records, seen = validated_records(raw, path)
    if not records:
        raise GoldenSetError(f"{path}: the golden set is empty")
    frozen = tuple(records)
    try:
        digest = content_hash(frozen)
    except UnicodeEncodeError:
        raise _surrogate_error(frozen, path, seen) from None
    return GoldenSet(suite=suite, path=path, records=frozen, content_hash=digest)


def validated_records(raw: _Raw, path: Path | str) -> tuple[list[GoldenRecord], dict[str, int]]:
    """The records of one file's raw rows, each validated, and id → line; an id twice is an
    error naming both lines."""
    records: list[GoldenRecord] = []
    seen: dict[str, int] = {}
    for where, number, data in raw:
        record = _record(data, path, where, number)
        if record.id in seen:
            raise GoldenSetError(
                f"{path}:{where}: duplicate id {record.id!r} (first on line {seen[record.id]})"
            )
        seen[record.id] = where
        records.append(record)
    return records, seen


def _surrogate_error(
    records: tuple[GoldenRecord, ...], path: Path | str, lines: dict[str, int]
) -> GoldenSetError:
    # A UTF-8 file can still spell a lone surrogate with a JSON or YAML escape (\ud800); it
    # is not text, and nothing downstream (hash, cache, reports) can encode it.
    for record in records:
        try:
            content_hash((record,))
        except UnicodeEncodeError as exc:
            bad = exc.object[exc.start : exc.end].encode("unicode_escape").decode("ascii")
            return GoldenSetError(
                f"{path}:{lines[record.id]}: id {record.id!r}: holds a lone surrogate"
                f" '{bad}', which is not text;"
                " write the character itself or a complete surrogate pair"
            )
    return GoldenSetError(f"{path}: holds a lone surrogate, which is not text")


def read_utf8(path: Path, error: type[GoldgateError], *, what: str) -> str:
    """A file's text; bad UTF-8 names the line and byte offset. A leading BOM is dropped."""
    try:
        data = read_regular(path, error, what=what)
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    return decode_utf8(data, str(path), error)


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


# -- readers: each yields (line, record number, raw record) ---------------------------------

_Raw = Iterator[tuple[int, int, Any]]


def _read_jsonl(text: str, path: Path | str) -> _Raw:
    for number, (line_number, data) in enumerate(json_lines(text, str(path), GoldenSetError), 1):
        yield line_number, number, data


def json_lines(text: str, label: str, error: type[GoldgateError]) -> Iterator[tuple[int, Any]]:
    """``(line, value)`` of every non-blank line of a JSON Lines text read from ``label``;
    a line that is not JSON is ``error`` naming ``label:line``."""
    # Split on "\n" only: str.splitlines also breaks at U+2028 and friends, which JSON strings
    # may hold raw.
    for number, line in enumerate(split_lines(text), start=1):
        if line.strip():
            yield number, loads_json(line, f"{label}:{number}", error)


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


def _read_parquet(path: Path) -> _Raw:
    from goldgate.parquet import iter_rows

    for number, row in iter_rows(path, GoldenSetError, what="golden set"):
        yield number, number, row


def _read_yaml(text: str, path: Path) -> _Raw:
    data, lines = load_yaml_with_lines(text, path, GoldenSetError)
    if data is None:
        return
    prefix: tuple[str, ...] = ()
    if isinstance(data, dict) and set(data) == {"records"}:
        data, prefix = data["records"], ("records",)
    if not isinstance(data, list):
        raise GoldenSetError(f"{path}: a YAML golden set is a list of records")
    for index, item in enumerate(data):
        yield lines.get((*prefix, index), index + 1), index + 1, item


def _read_csv(text: str, path: Path) -> _Raw:
    # Python's csv refuses a cell over 128 KiB (a global setting); a long document or
    # transcript as input is normal, an endless one is not.
    limit = csv.field_size_limit()
    csv.field_size_limit(MAX_CSV_CELL_CHARS)
    try:
        yield from _csv_rows(text, path)
    finally:
        csv.field_size_limit(limit)


def _csv_error(exc: csv.Error, path: Path, line: int) -> GoldenSetError:
    if "field larger than field limit" in str(exc):
        return GoldenSetError(
            f"{path}:{line}: a cell is longer than {MAX_CSV_CELL_CHARS:,} characters,"
            " the most goldgate reads from one CSV cell"
        )
    return GoldenSetError(f"{path}:{line}: malformed CSV: {exc}")


def _csv_rows(text: str, path: Path) -> _Raw:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise _csv_error(exc, path, reader.line_num) from None
    if header is None:
        return
    columns = [name.strip() for name in header]
    _check_csv_header(columns, path)
    start = reader.line_num + 1
    number = 0
    while True:
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise _csv_error(exc, path, reader.line_num) from None
        if row is None:
            return
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in row):
            continue
        number += 1
        if len(row) != len(columns):
            raise GoldenSetError(
                f"{path}:{line}: expected {len(columns)} cells as in the header, got {len(row)}"
            )
        yield line, number, _csv_record(columns, row)


def _check_csv_header(columns: list[str], path: Path) -> None:
    for required in ("id", "input"):
        if required not in columns:
            hint = did_you_mean(required, columns)
            raise GoldenSetError(f"{path}:1: the CSV header has no {required!r} column{hint}")
    if not any(_is_reference_column(name) for name in columns):
        hint = did_you_mean("reference", columns)
        raise GoldenSetError(f"{path}:1: the CSV header has no 'reference' column{hint}")
    for name in ("id", "input", "tags"):
        if columns.count(name) > 1:
            raise GoldenSetError(f"{path}:1: the CSV header repeats the {name!r} column")


def _is_reference_column(name: str) -> bool:
    return name in ("reference", "references") or bool(_NUMBERED_REFERENCE.match(name))


def _csv_record(columns: list[str], row: list[str]) -> dict[str, Any]:
    record: dict[str, Any] = {"references": [], "meta": {}}
    for name, raw_cell in zip(columns, row, strict=True):
        # A quoted cell keeps the file's line ends; a CRLF checkout must not change the hash.
        cell = raw_cell.replace("\r\n", "\n")
        if _is_reference_column(name):
            if cell != "":
                record["references"].append(cell)
        elif name == "tags":
            record["tags"] = [tag.strip() for tag in cell.split(TAG_SEPARATOR) if tag.strip()]
        elif name in ("id", "input"):
            record[name] = cell
        else:
            record["meta"][name] = cell
    return record


# -- validation -------------------------------------------------------------------------------


def _record(data: Any, path: Path | str, line: int, number: int) -> GoldenRecord:
    where = f"{path}:{line}"
    if not isinstance(data, dict):
        raise GoldenSetError(f"{where}: a record must be an object, got {_kind(data)}")
    for key in data:
        if key not in RECORD_KEYS:
            hint = did_you_mean(key, RECORD_KEYS)
            raise GoldenSetError(
                f"{where}: unknown field {key!r}{hint}; put extra data under 'meta'"
            )
    record_id = _record_id(data, where)
    where = f"{where}: id {record_id!r}"
    if "input" not in data or data["input"] is None:
        raise GoldenSetError(f"{where}: no 'input'")
    return GoldenRecord(
        id=record_id,
        input=data["input"],
        references=_references(data, where),
        tags=_tags(data, where),
        meta=_meta(data, where),
        line=number if str(path).lower().endswith(YAML_SUFFIXES) else line,
    )


def _record_id(data: dict[str, Any], where: str) -> str:
    if "id" not in data or data["id"] is None:
        raise GoldenSetError(f"{where}: the record has no 'id'")
    value = data["id"]
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise GoldenSetError(f"{where}: 'id' must be text, got {_kind(value)}")
    record_id = str(value)
    if not record_id.strip():
        raise GoldenSetError(f"{where}: 'id' is empty")
    if record_id != record_id.strip():
        raise GoldenSetError(f"{where}: id {record_id!r} has leading or trailing spaces")
    return record_id


def _references(data: dict[str, Any], where: str) -> tuple[str, ...]:
    if "reference" in data and "references" in data:
        raise GoldenSetError(f"{where}: give 'references' or 'reference', not both")
    if "reference" in data:
        value: Any = [data["reference"]]
        key = "reference"
    elif "references" in data:
        value = data["references"]
        key = "references"
        if isinstance(value, str):
            value = [value]
    else:
        raise GoldenSetError(f"{where}: no 'references'")
    if not isinstance(value, list):
        raise GoldenSetError(f"{where}: '{key}' must be a list of texts, got {_kind(value)}")
    if not value:
        raise GoldenSetError(f"{where}: '{key}' is empty")
    for index, reference in enumerate(value):
        label = key if key == "reference" else f"references[{index}]"
        if not isinstance(reference, str):
            raise GoldenSetError(f"{where}: {label} must be text, got {_kind(reference)}")
        if not reference.strip():
            raise GoldenSetError(f"{where}: {label} is an empty reference")
    return tuple(value)


def _tags(data: dict[str, Any], where: str) -> tuple[str, ...]:
    value = data.get("tags")
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise GoldenSetError(f"{where}: 'tags' must be a list of texts")
    tags = [tag.strip() for tag in value]
    if not all(tags):
        raise GoldenSetError(f"{where}: 'tags' holds an empty tag")
    return tuple(dict.fromkeys(tags))


def _meta(data: dict[str, Any], where: str) -> dict[str, Any]:
    value = data.get("meta")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise GoldenSetError(f"{where}: 'meta' must be an object, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        dict: "an object",
        list: "a list",
        str: "text",
        bool: "true/false",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)
