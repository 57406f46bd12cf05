"""Golden set files, format by format: JSON Lines, YAML, CSV and Parquet, read and validated.

A record is ``{"id", "input", "references": [...], "tags": [...], "meta": {...}}``;
``reference`` (one string) is accepted for ``references``. Every problem is a
:class:`GoldenSetError` naming the file and the line.

CSV files need a header row with ``id``, ``input`` and one or more reference columns:
``reference``/``references`` (the column name may repeat) or numbered ``reference_1``,
``reference_2``, ...; empty reference cells are skipped, so examples may have different
numbers of references. An optional ``tags`` column holds ``|``-separated tags; every other
column goes into ``meta`` as text. ``input`` is taken as text, never parsed.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from goldgate.errors import GoldenSetError, did_you_mean
from goldgate.io.text_inputs import decode_utf8, json_line_batches, json_lines, read_bytes
from goldgate.io.yaml import load_yaml_with_lines
from goldgate.model.golden_records import NO_META, GoldenRecord, RecordPacker, quick_record

JSONL_SUFFIXES = (".jsonl", ".ndjson")
YAML_SUFFIXES = (".yaml", ".yml")
CSV_SUFFIXES = (".csv",)
#: the longest CSV cell goldgate reads (Python's csv default is 131,072)
MAX_CSV_CELL_CHARS = 16 << 20
RECORD_KEYS = ("id", "input", "references", "reference", "tags", "meta")
_NUMBERED_REFERENCE = re.compile(r"^references?_?\d+$")
TAG_SEPARATOR = "|"


def golden_suffixes() -> dict[str, tuple[str, ...]]:
    from goldgate.io.parquet import PARQUET_SUFFIXES

    return {
        "jsonl": JSONL_SUFFIXES,
        "yaml": YAML_SUFFIXES,
        "csv": CSV_SUFFIXES,
        "parquet": PARQUET_SUFFIXES,
    }


def golden_format(name: str) -> str | None:
    """The reader a golden set file of this name is read with, by its suffix (the choice
    :func:`load_goldens` makes); None for a suffix no reader takes."""
    suffix = Path(name).suffix.lower()
    return next((kind for kind, suffixes in golden_suffixes().items() if suffix in suffixes), None)


def read_golden_file(
    path: Path, kind: str, packer: RecordPacker
) -> tuple[dict[str, int], str | None]:
    """Read the golden set file at ``path`` with the reader of ``kind`` (see
    :func:`golden_format`), validating each record into ``packer``'s pending records; returns
    id → line, and the ``sha256:`` hash of the file's bytes (None for Parquet)."""
    if kind == "parquet":
        return _validate_into(_read_parquet(path), path, packer.pending, packer), None
    data = read_bytes(path, GoldenSetError, what="golden set")
    file_hash = _file_hash(data)
    text = decode_utf8(data, str(path), GoldenSetError)
    del data
    if kind == "jsonl":
        seen = _jsonl_into(text, path, packer.pending, packer)
    elif kind == "yaml":
        seen = _validate_into(_read_yaml(text, path), path, packer.pending, packer)
    else:
        seen = _validate_into(_read_csv(text, path), path, packer.pending, packer)
    del text
    return seen, file_hash


def _file_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def validated_records(raw: _Raw, path: Path | str) -> tuple[list[GoldenRecord], dict[str, int]]:
    """The records of one file's raw rows, each validated, and id → line; an id twice is an
    error naming both lines."""
    records: list[GoldenRecord] = []
    return records, _validate_into(raw, path, records)


def _validate_into(
    raw: _Raw, path: Path | str, records: list[GoldenRecord], packer: RecordPacker | None = None
) -> dict[str, int]:
    """:func:`validated_records`, appending the records to ``records``; returns id → line.
    With a ``packer`` (whose pending list ``records`` is), full blocks are packed as read."""
    seen: dict[str, int] = {}
    for where, number, data in raw:
        _keep(_record(data, path, where, number), where, path, records, seen)
        if packer is not None and len(records) >= _PACK_EVERY:
            packer.settle()
    return seen


#: records a reader lets pile up before it has a packer pack the full blocks among them
_PACK_EVERY = 8192


def _keep(
    record: GoldenRecord,
    where: int,
    path: Path | str,
    records: list[GoldenRecord],
    seen: dict[str, int],
) -> None:
    """Append ``record`` (from line ``where``); an id seen before is an error naming both."""
    if record.id in seen:
        raise GoldenSetError(
            f"{path}:{where}: duplicate id {record.id!r} (first on line {seen[record.id]})"
        )
    seen[record.id] = where
    records.append(record)


# -- readers: each yields (line, record number, raw record) ---------------------------------

_Raw = Iterator[tuple[int, int, Any]]


#: the fields of a record that the quick path of :func:`jsonl_records` reads
_QUICK_KEYS = frozenset(("id", "input", "references", "tags"))


def jsonl_records(text: str, path: Path) -> tuple[list[GoldenRecord], dict[str, int]]:
    """:func:`validated_records` of a JSON Lines golden set, with a quick path for the usual
    record (text id, input, references and tags, nothing else) that makes the same record
    :func:`_record` would; any other record goes through :func:`_record`, which words every
    problem as it always has."""
    records: list[GoldenRecord] = []
    return records, _jsonl_into(text, path, records)


def _jsonl_into(
    text: str, path: Path, records: list[GoldenRecord], packer: RecordPacker | None = None
) -> dict[str, int]:
    """:func:`jsonl_records`, appending the records to ``records``; returns id → line.
    With a ``packer`` (whose pending list ``records`` is), full blocks are packed as read."""
    seen: dict[str, int] = {}
    #: one object per distinct tag and per distinct tuple of tags, however many records
    #: carry it (a str never equals a tuple: one dict holds both)
    shared: dict[Any, Any] = {}
    for numbers, values in json_line_batches(text, str(path), GoldenSetError):
        for number, data in zip(numbers, values, strict=True):
            record = _quick_record(data, number, shared)
            if record is None:
                record = _record(data, path, number, number)
            _keep(record, number, path, records, seen)
        if packer is not None:
            packer.settle()
    return seen


def _quick_record(data: Any, number: int, shared: dict[Any, Any]) -> GoldenRecord | None:
    """The record :func:`_record` would make of ``data`` when it is the usual one, else None."""
    if type(data) is not dict or not data.keys() <= _QUICK_KEYS:
        return None
    record_id = data.get("id")
    value = data.get("input")
    references = data.get("references")
    tags = data.get("tags")
    if (
        type(record_id) is not str
        or not record_id
        or record_id.strip() != record_id
        or type(value) is not str
        or type(references) is not list
        or not references
    ):
        return None
    for reference in references:
        if type(reference) is not str or not reference.strip():
            return None
    kept: tuple[str, ...] = ()
    if tags is not None:
        if type(tags) is not list:
            return None
        stripped = []
        for tag in tags:
            if type(tag) is not str:
                return None
            tag = tag.strip()
            if not tag:
                return None
            stripped.append(shared.setdefault(tag, tag))
        kept = tuple(dict.fromkeys(stripped))
        kept = shared.setdefault(kept, kept)
    return quick_record(record_id, value, tuple(references), kept, NO_META, number)


def _read_jsonl(text: str, path: Path | str) -> _Raw:
    for number, (line_number, data) in enumerate(json_lines(text, str(path), GoldenSetError), 1):
        yield line_number, number, data


def _read_parquet(path: Path) -> _Raw:
    from goldgate.io.parquet import iter_rows

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


def _meta(data: dict[str, Any], where: str) -> Mapping[str, Any]:
    value = data.get("meta")
    if value is None:
        return NO_META
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
