"""The hashes of golden records: the set's content hash and each record's digest.

The content hash covers each record's id, input, references and tags (sorted by id), not
``meta`` and not the file's formatting, so the same set in JSONL, YAML or CSV hashes the same
and editing a comment or reordering lines does not unfreeze a suite. A record's digest (16
hex digits) covers its input, references and tags: the baseline keeps one per example to tell
which examples changed. Both are computed in one pass, from the same canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any

from goldgate.model.golden_records import GoldenRecord, RecordFields, record_ids


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
    return record_hashes(records)[0]


def record_digest(input_value: Any, references: Sequence[str], tags: Sequence[str]) -> str:
    """A short, stable hash of one golden record's content (not its id, line or meta): the
    first 16 hex digits of the SHA-256 of the canonical JSON ``[input, references, tags]``
    (tags sorted)."""
    canonical = _DIGEST_ENCODER.encode([input_value, list(references), sorted(tags)])
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def digest_bytes(records: Sequence[GoldenRecord]) -> bytes:
    """Each record's :func:`record_digest` as 8 raw bytes, in record order."""
    return record_hashes(records)[1]


def record_hashes(records: Sequence[GoldenRecord]) -> tuple[str, bytes]:
    """The :func:`content_hash` of ``records`` and each one's :func:`record_digest` (8 raw
    bytes each, in record order), in one pass over their canonical JSON.

    Both texts are built from the same pieces: each string is written by the encoder's own
    string encoder (what the C encoder writes inside a list or object), so the text is the
    encoder's, byte for byte, without building a dict and a list per record for it.
    """
    ids = record_ids(records)
    ascending = all(map(str.__lt__, ids, ids[1:])) if all(type(i) is str for i in ids) else False
    if ascending:  # the content hash's text is in file order: fed as the digests are
        hashes = RecordHashes()
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


class RecordHashes:
    """:func:`record_hashes` of records fed in order a batch at a time, such as a golden set's
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
