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
import itertools
import json
import re
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from json.encoder import encode_basestring
from operator import itemgetter
from pathlib import Path
from typing import Any

from goldgate.errors import GoldenSetError, GoldgateError, did_you_mean
from goldgate.io.inputs import (
    MAX_NESTING,
    free_of_duplicates,
    loads_json,
    nesting,
    open_regular,
    paused_gc,
    read_regular,
)
from goldgate.io.yaml import load_yaml_with_lines

# a record's names stay importable from here, where they were first defined
from goldgate.model.golden_records import NO_META as NO_META
from goldgate.model.golden_records import GoldenRecord as GoldenRecord
from goldgate.model.golden_records import (
    RecordFields,
    RecordPacker,
    quick_record,
    record_ids,
    record_tags,
    reference_counts,
)

JSONL_SUFFIXES = (".jsonl", ".ndjson")
YAML_SUFFIXES = (".yaml", ".yml")
CSV_SUFFIXES = (".csv",)
#: the longest CSV cell goldgate reads (Python's csv default is 131,072)
MAX_CSV_CELL_CHARS = 16 << 20
RECORD_KEYS = ("id", "input", "references", "reference", "tags", "meta")
_NUMBERED_REFERENCE = re.compile(r"^references?_?\d+$")
TAG_SEPARATOR = "|"


@dataclass(frozen=True)
class GoldenSet:
    """A frozen suite of golden records with the hash that identifies its content."""

    suite: str
    path: Path
    records: Sequence[GoldenRecord]
    content_hash: str

    def by_id(self) -> dict[str, GoldenRecord]:
        """Records keyed by id, in file order."""
        return {record.id: record for record in self.records}

    def digest_bytes(self) -> bytes:
        """Each record's :func:`record_digest` as 8 raw bytes, in record order.

        Computed once per set (reading a golden set computes it beside the content hash);
        kept in the instance, not a field, so that ``replace(golden, records=...)`` never
        carries digests of other records.
        """
        cached: bytes | None = self.__dict__.get("_digest_bytes")
        if cached is None:
            cached = digest_bytes(self.records)
            object.__setattr__(self, "_digest_bytes", cached)
        return cached

    def digests(self) -> RecordDigests:
        """id → :func:`record_digest` of every record, in record order (computed once)."""
        cached: RecordDigests | None = self.__dict__.get("_digests")
        if cached is None:
            cached = RecordDigests(record_ids(self.records), self.digest_bytes())
            object.__setattr__(self, "_digests", cached)
        return cached

    def file_hash(self) -> str | None:
        """The SHA-256 of the bytes these records were read from (one JSONL, YAML or CSV
        file), else None (Parquet, many files, records made or cut down here).

        Kept in the instance, not a field, for the reason :meth:`digest_bytes` is.
        """
        found: str | None = self.__dict__.get("_file_hash")
        return found

    def ids(self) -> list[str]:
        """Every record's id, in record order."""
        return record_ids(self.records)

    def reference_counts(self) -> list[int]:
        """How many references each record has, in record order."""
        return reference_counts(self.records)

    def tags(self) -> list[str]:
        """Every tag used in the set, sorted."""
        return sorted({tag for tags in set(record_tags(self.records)) for tag in tags})

    def __len__(self) -> int:
        return len(self.records)


def hex_digests(raw: bytes) -> list[str]:
    """Digests kept as 8 raw bytes each, as the 16 hex digits :func:`record_digest` gives."""
    hexed = raw.hex()
    return [hexed[start : start + 16] for start in range(0, len(hexed), 16)]


class RecordDigests(Mapping[str, str]):
    """id → :func:`record_digest` (16 hex digits) of a golden set's records, in their order.

    Kept as the ids and the digests' raw bytes (8 per record); the mapping of hex strings
    is built on the first lookup. Comparing with a baseline that stored the same ids in
    the same order compares ``raw`` with its bytes, and builds nothing.
    """

    def __init__(self, ids: list[str], raw: bytes) -> None:
        if len(raw) != 8 * len(ids):
            raise ValueError(f"{len(raw)} digest bytes for {len(ids)} ids")
        self.ids = ids
        self.raw = raw
        self._by_id: dict[str, str] | None = None

    def _table(self) -> dict[str, str]:
        if self._by_id is None:
            self._by_id = dict(zip(self.ids, hex_digests(self.raw), strict=True))
        return self._by_id

    def of(self, ids: Sequence[str]) -> list[str] | None:
        """The digests of ``ids``, in that order; None when one of them is not here."""
        if len(ids) == len(self.ids) and list(ids) == self.ids:
            return hex_digests(self.raw)
        table = self._table()
        try:
            return [table[record_id] for record_id in ids]
        except KeyError:
            return None

    def __getitem__(self, record_id: str) -> str:
        return self._table()[record_id]

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._table()

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self.ids)  # a golden set's ids are distinct: no table to count them


#: records hashed per update of the whole set's hash: bounded memory
_HASH_BATCH = 4096
#: the canonical JSON of every hash: sorted keys, no spaces, text as itself
_CONTENT_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
#: a record digest's, which also writes what JSON cannot hold (a YAML date) as text
_DIGEST_ENCODER = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
)


#: a record in the content hash (keys sorted) and in its digest, from JSON pieces
_CONTENT = '{"id":%s,"input":%s,"references":[%s],"tags":[%s]}'
_CANONICAL = "[%s,[%s],[%s]]"


def content_hash(records: Sequence[GoldenRecord]) -> str:
    """``sha256:<hex>`` of a canonical JSON of the records' id, input, references and tags.

    The canonical text is the JSON list of ``{"id", "input", "references", "tags"}`` objects
    sorted by id (sorted keys, no spaces); it is fed to the hash a batch of records at a
    time, so a million-record set never holds it whole.
    """
    return _hashes(records)[0]


def record_digest(input_value: Any, references: Sequence[str], tags: Sequence[str]) -> str:
    """A short, stable hash of one golden record's content (not its id, line or meta): the
    first 16 hex digits of the SHA-256 of the canonical JSON ``[input, references, tags]``
    (tags sorted)."""
    canonical = _DIGEST_ENCODER.encode([input_value, list(references), sorted(tags)])
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def digest_bytes(records: Sequence[GoldenRecord]) -> bytes:
    """Each record's :func:`record_digest` as 8 raw bytes, in record order."""
    return _hashes(records)[1]


def _hashes(records: Sequence[GoldenRecord]) -> tuple[str, bytes]:
    """The :func:`content_hash` of ``records`` and each one's :func:`record_digest` (8 raw
    bytes each, in record order), in one pass over their canonical JSON.

    Both texts are built from the same pieces: each string is written by the encoder's own
    string encoder (what the C encoder writes inside a list or object), so the text is the
    encoder's, byte for byte, without building a dict and a list per record for it.
    """
    ids = record_ids(records)
    ascending = all(map(str.__lt__, ids, ids[1:])) if all(type(i) is str for i in ids) else False
    if ascending:  # the content hash's text is in file order: fed as the digests are
        hashes = _RecordHashes()
        for start in range(0, len(ids), _HASH_BATCH):
            hashes.add(records[start : start + _HASH_BATCH])
        found = hashes.result()
        assert found is not None  # the ids ascend
        return found
    order = sorted(range(len(ids)), key=ids.__getitem__)
    digests = [b""] * len(ids)
    whole = hashlib.sha256(b"[")
    sha256 = hashlib.sha256
    texts_of = _record_texts
    #: the JSON items of each distinct tuple of tags (sets use a few), sorted
    tag_texts: dict[tuple[str, ...], str] = {}
    for start in range(0, len(order), _HASH_BATCH):
        parts = []
        for index in order[start : start + _HASH_BATCH]:
            content, canonical = texts_of(records[index], tag_texts)
            parts.append(content)
            digests[index] = sha256(canonical.encode("utf-8")).digest()[:8]
        # the items of the whole list's JSON, joined by the same separator
        text = ",".join(parts)
        whole.update(("," + text if start else text).encode("utf-8"))
    whole.update(b"]")
    return "sha256:" + whole.hexdigest(), b"".join(digests)


class _RecordHashes:
    """:func:`_hashes` of records fed in order a batch at a time, such as a golden set's
    while it is read (hashing them then, as objects, costs less than building them again
    from packed text): every record's digest, and the content hash while the ids ascend
    (its text is sorted by id, so fed in file order it is that text only then)."""

    def __init__(self) -> None:
        self._whole = hashlib.sha256(b"[")
        self._fed = False
        self._digests: list[bytes] = []
        self._tag_texts: dict[tuple[str, ...], str] = {}
        self._last: str | None = None
        self.ascending = True
        #: a record held text that UTF-8 cannot encode (a lone surrogate): nothing hashes
        self.unencodable = False

    def add(self, records: Iterable[GoldenRecord]) -> None:
        """Hash the next records (``UnicodeEncodeError`` for one with a lone surrogate)."""
        parts = []
        digests, sha256, tag_texts = self._digests, hashlib.sha256, self._tag_texts
        last, ascending = self._last, self.ascending
        for record in records:
            content, canonical = _record_texts(record, tag_texts)
            digests.append(sha256(canonical.encode("utf-8")).digest()[:8])
            if ascending:
                record_id = record.id
                if type(record_id) is str and (last is None or last < record_id):
                    last = record_id
                    parts.append(content)
                else:
                    ascending = False
        self._last, self.ascending = last, ascending
        if ascending and parts:
            # the items of the whole list's JSON, joined by the same separator
            text = ",".join(parts)
            self._whole.update(("," + text if self._fed else text).encode("utf-8"))
            self._fed = True

    def add_as_read(self, records: Sequence[GoldenRecord]) -> None:
        """:meth:`add`, noting a lone surrogate instead of raising (the reader goes on, so
        that a problem on a later line is still the error, as when hashing came after)."""
        if not self.unencodable:
            try:
                self.add(records)
            except UnicodeEncodeError:
                self.unencodable = True

    def result(self) -> tuple[str, bytes] | None:
        """The content hash and the digests' raw bytes; None when the ids did not ascend."""
        if not self.ascending or self.unencodable:
            return None
        whole = self._whole.copy()
        whole.update(b"]")
        return "sha256:" + whole.hexdigest(), b"".join(self._digests)


def records_hash(records: Sequence[GoldenRecord]) -> str:
    """The SHA-256 (hex) of the records' piece of the :func:`content_hash` text, sorted by id:
    the same for the same records in any order (and any file's bytes)."""
    return fields_hash(
        (record.id, record.input, record.references, record.tags) for record in records
    )


def fields_hash(fields: Iterable[RecordFields]) -> str:
    """:func:`records_hash` of records given by their fields (see ``record_fields``)."""
    tag_texts: dict[tuple[str, ...], str] = {}
    parts = []
    for record_id, value, references, tags in sorted(fields, key=itemgetter(0)):
        try:
            parts.append(_field_texts(record_id, value, references, tags, tag_texts)[0])
        except TypeError:  # see _record_texts
            record = GoldenRecord(record_id, value, tuple(references), tags)
            parts.append(_canonical_texts(record)[0])
    return hashlib.sha256(",".join(parts).encode("utf-8")).hexdigest()


def _record_texts(record: GoldenRecord, tag_texts: dict[tuple[str, ...], str]) -> tuple[str, str]:
    """A record's piece of the content hash's text and its digest's text; ``tag_texts``
    keeps the JSON items of each tuple of tags met so far (sets use a few), sorted."""
    try:
        return _field_texts(record.id, record.input, record.references, record.tags, tag_texts)
    except TypeError:  # not text where text belongs (records built by hand): the
        # encoders themselves write it, or refuse it as they always did
        return _canonical_texts(record)


def _field_texts(
    record_id: str,
    value: Any,
    references: Sequence[str],
    tags: tuple[str, ...],
    tag_texts: dict[tuple[str, ...], str],
) -> tuple[str, str]:
    """:func:`_record_texts` of a record's fields (``TypeError`` where text is not text)."""
    text_of = encode_basestring
    if type(value) is str:
        content_input = digest_input = text_of(value)
    else:
        content_input = _CONTENT_ENCODER.encode(value)
        digest_input = _DIGEST_ENCODER.encode(value)
    references_text = ",".join(map(text_of, references))
    tags_text = tag_texts.get(tags)
    if tags_text is None:
        tags_text = tag_texts[tags] = ",".join(map(text_of, sorted(tags)))
    content = _CONTENT % (text_of(record_id), content_input, references_text, tags_text)
    return content, _CANONICAL % (digest_input, references_text, tags_text)


def _canonical_texts(record: GoldenRecord) -> tuple[str, str]:
    """A record's piece of the content hash's text and its digest's text, by the encoders."""
    content = _CONTENT_ENCODER.encode(
        {
            "id": record.id,
            "input": record.input,
            "references": list(record.references),
            "tags": sorted(record.tags),
        }
    )
    digest = _DIGEST_ENCODER.encode([record.input, list(record.references), sorted(record.tags)])
    return content, digest


def is_dataset(location: str) -> bool:
    """Whether a golden set (or predictions) location is a glob of files or a URL
    (``s3://...``, ``file://...``): such sets are read on a Dask cluster (see dask_data)."""
    if "://" in location:
        return True
    return any(char in location for char in "*?[") and not Path(location).exists()


def _golden_formats() -> dict[str, tuple[str, ...]]:
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
    return next((kind for kind, suffixes in _golden_formats().items() if suffix in suffixes), None)


def load_goldens(path: Path, suite: str) -> GoldenSet:
    """Read, validate and hash a golden set (format chosen by the file's suffix)."""
    kind = golden_format(path.name)
    if kind is None:
        known = ", ".join(itertools.chain.from_iterable(_golden_formats().values()))
        raise GoldenSetError(
            f"{path}: unknown golden set format {path.suffix.lower()!r} (use {known})"
        )
    # records are hashed and packed a block at a time as they are read (see RecordPacker)
    hashes = _RecordHashes()
    packer = RecordPacker(hashes.add_as_read)
    with paused_gc():
        if kind == "parquet":
            seen = _validate_into(_read_parquet(path), path, packer.pending, packer)
        else:
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
        frozen = packer.records()
        if not frozen:
            raise GoldenSetError(f"{path}: the golden set is empty")
        if hashes.unencodable:
            raise _surrogate_error(frozen, path, seen)
        # ids out of order: the content hash is computed again, in the order of the ids
        found = hashes.result() or _hashes(frozen)
        digest, digests = found
    golden = GoldenSet(suite=suite, path=path, records=frozen, content_hash=digest)
    object.__setattr__(golden, "_digest_bytes", digests)
    if kind != "parquet":
        object.__setattr__(golden, "_file_hash", file_hash)
    _LOADED[digest] = golden
    return golden


def golden_file_hash(path: Path) -> str:
    """The :meth:`GoldenSet.file_hash` the golden set file at ``path`` has now, without
    parsing it or holding it whole (a missing or unreadable file is the error reading it
    would be)."""
    digest = hashlib.sha256()
    try:
        with open_regular(path, GoldenSetError, what="golden set") as handle:
            for block in iter(lambda: handle.read(_HASH_BLOCK), b""):
                digest.update(block)
    except FileNotFoundError:
        raise GoldenSetError(f"{path}: golden set not found") from None
    return "sha256:" + digest.hexdigest()


#: bytes of a golden set file hashed at a time by :func:`golden_file_hash`
_HASH_BLOCK = 1 << 20


def _file_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


#: golden sets read by this process and still in use, by content hash
_LOADED: weakref.WeakValueDictionary[str, GoldenSet] = weakref.WeakValueDictionary()


def loaded_digests(golden_hash: str) -> RecordDigests | None:
    """The record digests of a golden set with this content hash that this process read
    and still holds, else None. The content hash covers every record's id, input,
    references and tags, and nothing else goes into a digest: the same hash, the same
    digests, so a run's history need not compute them again."""
    golden = _LOADED.get(golden_hash)
    return golden.digests() if golden is not None else None


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


def _surrogate_error(
    records: Sequence[GoldenRecord], path: Path | str, lines: dict[str, int]
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
