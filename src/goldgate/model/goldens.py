"""Golden sets: a suite's records read, validated, hashed and frozen (:func:`load_goldens`).

Each format's reader is in :mod:`goldgate.model.golden_formats`, the hashes in
:mod:`goldgate.model.golden_hashing`. A set read here is remembered by content hash while it
is in use, so its record digests need not be computed again (:func:`loaded_digests`).
"""

from __future__ import annotations

import hashlib
import itertools
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from goldgate.errors import GoldenSetError
from goldgate.io.inputs import open_regular, paused_gc
from goldgate.model.golden_formats import golden_format, golden_suffixes, read_golden_file
from goldgate.model.golden_hashing import (
    RecordDigests,
    RecordHashes,
    content_hash,
    digest_bytes,
    record_hashes,
)
from goldgate.model.golden_records import (
    GoldenRecord,
    RecordPacker,
    record_ids,
    record_tags,
    reference_counts,
)


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


def is_dataset(location: str) -> bool:
    """Whether a golden set (or predictions) location is a glob of files or a URL
    (``s3://...``, ``file://...``): such sets are read on a Dask cluster (see dask_data)."""
    if "://" in location:
        return True
    return any(char in location for char in "*?[") and not Path(location).exists()


def load_goldens(path: Path, suite: str) -> GoldenSet:
    """Read, validate and hash a golden set (format chosen by the file's suffix)."""
    kind = golden_format(path.name)
    if kind is None:
        known = ", ".join(itertools.chain.from_iterable(golden_suffixes().values()))
        raise GoldenSetError(
            f"{path}: unknown golden set format {path.suffix.lower()!r} (use {known})"
        )
    # records are hashed and packed a block at a time as they are read (see RecordPacker)
    hashes = RecordHashes()
    packer = RecordPacker(hashes.add_as_read)
    with paused_gc():
        seen, file_hash = read_golden_file(path, kind, packer)
        frozen = packer.records()
        if not frozen:
            raise GoldenSetError(f"{path}: the golden set is empty")
        if hashes.unencodable:
            raise _surrogate_error(frozen, path, seen)
        # ids out of order: the content hash is computed again, in the order of the ids
        found = hashes.result() or record_hashes(frozen)
        digest, digests = found
    golden = GoldenSet(suite=suite, path=path, records=frozen, content_hash=digest)
    object.__setattr__(golden, "_digest_bytes", digests)
    if file_hash is not None:
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

#: golden sets read by this process and still in use, by content hash
_LOADED: weakref.WeakValueDictionary[str, GoldenSet] = weakref.WeakValueDictionary()


def loaded_digests(golden_hash: str) -> RecordDigests | None:
    """The record digests of a golden set with this content hash that this process read
    and still holds, else None. The content hash covers every record's id, input,
    references and tags, and nothing else goes into a digest: the same hash, the same
    digests, so a run's history need not compute them again."""
    golden = _LOADED.get(golden_hash)
    return golden.digests() if golden is not None else None


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
